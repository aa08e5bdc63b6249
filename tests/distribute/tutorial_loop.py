"""TF's "Custom training with tf.distribute.Strategy" tutorial loop, small: run as a script by the tests (in a
fresh process, with 8 virtual CPU devices set before JAX starts). Prints, as JSON, each strategy's per-step losses,
final weights and metrics, for `--replicas 1 8` and `--mode eager|function`."""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import numpy as np  # noqa: E402

import tapejax as tf  # noqa: E402

GLOBAL_BATCH = 32
EPOCHS = 2


def create_model() -> tf.keras.Model:
    regularizer = tf.keras.regularizers.L2(1e-3)
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(4, 3, activation="relu", kernel_regularizer=regularizer),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(16, activation="relu", kernel_regularizer=regularizer),
        tf.keras.layers.Dense(10, kernel_regularizer=regularizer),
    ])


def train(strategy: tf.distribute.Strategy, mode: str, images: np.ndarray, labels: np.ndarray) -> dict:
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(GLOBAL_BATCH)
    dist_dataset = strategy.experimental_distribute_dataset(dataset)
    with strategy.scope():
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

        def compute_loss(labels, predictions, model_losses):
            per_example_loss = loss_object(labels, predictions)
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
    losses = []
    for _ in range(EPOCHS):
        for x in dist_dataset:
            losses.append(float(distributed_train_step(x)))
    return {"losses": losses, "weights": [w.tolist() for w in model.get_weights()],
            "accuracy": float(train_accuracy.result()), "iterations": int(optimizer.iterations.numpy())}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="eager")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    images = rng.normal(size=(128, 8, 8, 1)).astype(np.float32)
    labels = rng.integers(0, 10, size=(128,)).astype(np.int64)
    results = {}
    for n in args.replicas:
        strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(n)])
        results[n] = train(strategy, args.mode, images, labels)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
