"""TF's "Custom training with tf.distribute.Strategy" tutorial loop, small: run as a script by the tests (in a
fresh process, with 8 virtual CPU devices set before JAX starts). Prints, as JSON, each strategy's per-step losses,
final weights and metrics, for `--replicas 1 8` and `--mode eager|function`.

`--samples` and `--batch` leave a partial last batch when the samples are not a multiple of the batch (split as
TF splits it: 5 examples over 8 replicas are 1, 1, 1, 1, 1, 0, 0, 0). `--loss-batch global` passes the global
batch size to `tf.nn.compute_average_loss` (the tutorial's earlier form), which keeps one device's loss on a
partial batch; the default (`replica`) lets it divide by the replica's batch size times the replicas, as TF does,
which differs from one device's mean on a batch split unevenly. `--lib tensorflow` runs it under TF, on logical
CPUs."""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import numpy as np  # noqa: E402

from tests.distribute._programs import library  # noqa: E402

tf = library(8)

GLOBAL_BATCH = 32
EPOCHS = 2
LOSS_BATCH = "replica"
LOCAL_STEP = False
DENSE = False


def create_model() -> "tf.keras.Model":
    regularizer = tf.keras.regularizers.L2(1e-3)
    # TF's Conv2D fails on a replica's empty batch (eagerly a wrong output shape, in a tf.function a crash of a
    # dtype check): `--dense` leaves the convolution out, to compare with TF's own MirroredStrategy there
    conv = [] if DENSE else [tf.keras.layers.Conv2D(4, 3, activation="relu", kernel_regularizer=regularizer),
                             tf.keras.layers.MaxPooling2D()]
    return tf.keras.Sequential(conv + [
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(16, activation="relu", kernel_regularizer=regularizer),
        tf.keras.layers.Dense(10, kernel_regularizer=regularizer),
    ])


def train(strategy: "tf.distribute.Strategy", mode: str, images: np.ndarray, labels: np.ndarray) -> dict:
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(GLOBAL_BATCH)
    dist_dataset = strategy.experimental_distribute_dataset(dataset)
    with strategy.scope():
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

        def compute_loss(labels, predictions, model_losses):
            per_example_loss = loss_object(labels, predictions)
            if LOSS_BATCH == "global":
                loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH)
            else:
                loss = tf.nn.compute_average_loss(per_example_loss)
            if model_losses:
                loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))
            return loss

        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
        model = create_model()
        model.build((None, 8, 8, 1))
        rng = np.random.default_rng(0)  # the same weights for every strategy
        model.set_weights([rng.normal(0, 0.3, w.shape).astype(np.float32) for w in model.get_weights()])
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
        if tf.__name__ == "tensorflow":
            # TF's Keras fails to build the optimizer's slots inside a replicated tf.function step ("You must feed a
            # value for placeholder tensor"); tapejax builds them there, and keeps that path tested
            optimizer.build(model.trainable_variables)

    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = compute_loss(labels, predictions, model.losses)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_accuracy.update_state(labels, predictions)
        return loss

    def distributed_train_step(dataset_inputs):
        per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    if mode == "function":
        distributed_train_step = tf.function(distributed_train_step)
    losses, local = [], []
    for _ in range(EPOCHS):
        for x in dist_dataset:
            losses.append(float(distributed_train_step(x)))
    if LOCAL_STEP:  # one more step on the first batch: each replica's own loss (TF's local results)
        def local_step(x):
            return strategy.run(train_step, args=(x,))

        if mode == "function":
            local_step = tf.function(local_step)
        local = [float(v) for v in strategy.experimental_local_results(local_step(next(iter(dist_dataset))))]
    return {"losses": losses, "weights": [w.tolist() for w in model.get_weights()], "local": local,
            "accuracy": float(train_accuracy.result()), "iterations": int(optimizer.iterations.numpy())}


def main() -> None:
    global GLOBAL_BATCH, EPOCHS, LOSS_BATCH, LOCAL_STEP, DENSE
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="tapejax")
    parser.add_argument("--mode", default="eager")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--samples", type=int, default=128)
    parser.add_argument("--batch", type=int, default=GLOBAL_BATCH)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--loss-batch", choices=["replica", "global"], default=LOSS_BATCH)
    parser.add_argument("--local-step", action="store_true")
    parser.add_argument("--dense", action="store_true")
    args = parser.parse_args()
    DENSE = args.dense
    GLOBAL_BATCH, EPOCHS, LOSS_BATCH, LOCAL_STEP = args.batch, args.epochs, args.loss_batch, args.local_step
    rng = np.random.default_rng(1)
    images = rng.normal(size=(args.samples, 8, 8, 1)).astype(np.float32)
    labels = rng.integers(0, 10, size=(args.samples,)).astype(np.int64)
    results = {}
    for n in args.replicas:
        strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(n)])
        results[n] = train(strategy, args.mode, images, labels)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
