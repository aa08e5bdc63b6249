"""A small custom training loop under MultiWorkerMirroredStrategy (a dense model, Adam, a tf.function step with
`strategy.run` and `strategy.reduce`), then Keras `fit`, a checkpoint saved and restored. `python multi_worker.py worker CKPT_DIR` is one worker (configured by
TF_CONFIG); `python multi_worker.py single CKPT_DIR` runs the same global batches in one process without a
strategy. Prints, as JSON, the losses, the weights and what the worker saw of its replicas."""

from __future__ import annotations

import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tapejax as tf  # noqa: E402

GLOBAL_BATCH = 8
STEPS = 4


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    x = rng.randn(GLOBAL_BATCH * STEPS, 5).astype(np.float32)
    y = (x @ rng.randn(5, 2) + 0.1 * rng.randn(GLOBAL_BATCH * STEPS, 2)).astype(np.float32)
    return x, y


def main(mode: str, ckpt_dir: str) -> dict:
    if mode == "worker":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    x, y = data()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(8, activation="tanh", kernel_initializer=tf.keras.initializers.GlorotUniform(1)),
            tf.keras.layers.Dense(2, kernel_initializer=tf.keras.initializers.GlorotUniform(2))])
        model.build((None, 5))
        optimizer = tf.keras.optimizers.Adam(0.05)

    def replica_step(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            per_example = tf.reduce_sum(tf.square(model(xb) - yb), axis=1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def step(inputs):
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_step, args=(inputs,)), axis=None)

    out: dict = {"losses": [], "local_x": []}
    batches = strategy.experimental_distribute_dataset(dataset) if mode == "worker" else dataset
    for inputs in batches:
        if mode == "worker":
            out["local_x"].append([v.numpy()[:, 0].tolist() for v in
                                   strategy.experimental_local_results(inputs[0])])
        out["losses"].append(float(step(inputs)))
    out["weights"] = [w.tolist() for w in model.get_weights()]
    out["iterations"] = int(optimizer.iterations.numpy())
    # Keras fit under the same strategy: the workers' history and weights are one process's
    with strategy.scope():
        fitted = tf.keras.Sequential([
            tf.keras.layers.Dense(4, activation="tanh", kernel_initializer=tf.keras.initializers.GlorotUniform(3)),
            tf.keras.layers.Dense(2, kernel_initializer=tf.keras.initializers.GlorotUniform(4))])
        fitted.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    out["fit_loss"] = fitted.fit(dataset, epochs=2, verbose=0).history["loss"]
    out["fit_weights"] = [w.tolist() for w in fitted.get_weights()]
    if mode == "worker":
        # eager reduce and gather across the hosts, of each replica's id
        ids = strategy.run(lambda: tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group,
                                           tf.float32) + 1.0)
        out["reduce_ids"] = float(strategy.reduce("SUM", ids, axis=None))
        out["gather_ids"] = strategy.gather(strategy.run(lambda: tf.reshape(tf.cast(
            tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32), [1])), axis=0).numpy().tolist()
        out["replicas"] = strategy.num_replicas_in_sync
        out["should_checkpoint"] = strategy.extended.should_checkpoint
        # TF's multi-worker tutorial: the chief writes the checkpoint, the others a temporary copy
        resolver = strategy.cluster_resolver
        where = ckpt_dir if strategy.extended.should_checkpoint else os.path.join(
            ckpt_dir, f"workertemp_{resolver.task_id}")
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), where, max_to_keep=1)
        out["saved"] = manager.save()
        for v in model.trainable_variables:
            v.assign(tf.zeros_like(v))
        tf.train.Checkpoint(model=model).restore(out["saved"])
        out["restored"] = [w.tolist() for w in model.get_weights()] == out["weights"]
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])), flush=True)
