"""A small custom training loop under MultiWorkerMirroredStrategy (a dense model, Adam, a tf.function step with
`strategy.run` and `strategy.reduce`), then Keras `fit`, a checkpoint saved and restored. `python multi_worker.py worker CKPT_DIR` is one worker (configured by
TF_CONFIG); `python multi_worker.py single CKPT_DIR` runs the same global batches in one process without a
strategy. Prints, as JSON, the losses, the weights and what the worker saw of its replicas; then the same for loops
whose last batch splits unevenly over the 2 replicas (`uneven`), which the single process also runs under a
MirroredStrategy of 2 CPU devices and on one device."""

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
    model, optimizer, replica_step = dense_model(strategy)

    @tf.function
    def step(inputs):
        losses, _ = strategy.run(replica_step, args=(inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

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
    out["uneven"] = uneven(strategy if mode == "worker" else tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    if mode == "single":
        out["uneven_one_device"] = uneven(tf.distribute.OneDeviceStrategy("/cpu:0"))
    return out


UNEVEN_EXAMPLES = 13  # global batches of 8 and 5: the last split 3, 2 over the 2 replicas
DFF_EXAMPLES = 9  # per-replica batches of 4 from each worker's shard (5 and 4 examples): 4, 4 then 1, 0


def uneven(strategy) -> dict:
    """Training loops whose last batch splits unevenly over the 2 replicas: `experimental_distribute_dataset`
    with an eager and a tf.function step, `distribute_datasets_from_function` (a worker's pipeline runs out
    first: its replica gets an empty batch, as in TF), and Keras `fit`."""
    x, y = data()
    out = {}
    dataset = tf.data.Dataset.from_tensor_slices((x[:UNEVEN_EXAMPLES], y[:UNEVEN_EXAMPLES])).batch(GLOBAL_BATCH)
    for step_mode in ("eager", "function"):
        out[step_mode] = custom_loop(strategy, strategy.experimental_distribute_dataset(dataset), step_mode)
    # each worker's shard of DFF_EXAMPLES, in per-replica batches of 4: worker 0 has examples 0, 2, 4, 6 and 8,
    # worker 1 1, 3, 5, 7; one pipeline (one process) deals the same batches to the replicas in turn
    order = [0, 2, 4, 6, 1, 3, 5, 7, 8]

    def dataset_fn(context):
        if context.num_input_pipelines == 2:
            ids = list(range(context.input_pipeline_id, DFF_EXAMPLES, 2))
        else:
            ids = order if context.num_replicas_in_sync == 2 else list(range(DFF_EXAMPLES))
        size = context.get_per_replica_batch_size(GLOBAL_BATCH)
        return tf.data.Dataset.from_tensor_slices((x[ids], y[ids])).batch(size)

    if strategy.num_replicas_in_sync == 2:
        out["dff"] = custom_loop(strategy, strategy.distribute_datasets_from_function(dataset_fn), "function")
    else:  # one device: the global batches the two replicas get
        out["dff"] = custom_loop(strategy, strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices((x[order], y[order])).batch(GLOBAL_BATCH)), "function")
    with strategy.scope():
        fitted = tf.keras.Sequential([
            tf.keras.layers.Dense(4, activation="tanh", kernel_initializer=tf.keras.initializers.GlorotUniform(3)),
            tf.keras.layers.Dense(2, kernel_initializer=tf.keras.initializers.GlorotUniform(4))])
        fitted.build((None, 5))
        fitted.set_weights(_weights(fitted, 3))
        fitted.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    out["fit_loss"] = fitted.fit(dataset, epochs=2, verbose=0).history["loss"]
    out["fit_weights"] = [w.tolist() for w in fitted.get_weights()]
    return out


def _weights(model, seed: int) -> list[np.ndarray]:
    """The same starting weights whatever the strategy (and however many models were made before)."""
    rng = np.random.RandomState(seed)
    return [rng.normal(0, 0.5, w.shape).astype(np.float32) for w in model.get_weights()]


def dense_model(strategy, weights_seed: int | None = None) -> tuple:
    """A dense model and Adam made in `strategy`'s scope (weights from numpy with a seed), and the replica step
    that trains them: its scaled loss and its replica's first inputs."""
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(8, activation="tanh", kernel_initializer=tf.keras.initializers.GlorotUniform(1)),
            tf.keras.layers.Dense(2, kernel_initializer=tf.keras.initializers.GlorotUniform(2))])
        model.build((None, 5))
        if weights_seed is not None:
            model.set_weights(_weights(model, weights_seed))
        optimizer = tf.keras.optimizers.Adam(0.05)

    def replica_step(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            per_example = tf.reduce_sum(tf.square(model(xb) - yb), axis=1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, xb[:, 0]

    return model, optimizer, replica_step


def custom_loop(strategy, batches, step_mode: str) -> dict:
    """Two epochs of a dense model with Adam over `batches`; the per-step losses, final weights and each step's
    local results (this worker's replicas' losses and first inputs)."""
    model, optimizer, replica_step = dense_model(strategy, weights_seed=1)

    def step(inputs):
        losses, firsts = strategy.run(replica_step, args=(inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None), losses, firsts

    if step_mode == "function":
        step = tf.function(step)
    out: dict = {"losses": [], "local_losses": [], "local_x": [], "gathered_x": []}
    for _ in range(2):
        for inputs in batches:
            loss, losses, firsts = step(inputs)
            out["losses"].append(float(loss))
            out["local_losses"].append([float(v) for v in strategy.experimental_local_results(losses)])
            out["local_x"].append([v.numpy().tolist() for v in strategy.experimental_local_results(firsts)])
            out["gathered_x"].append(strategy.gather(firsts, axis=0).numpy().tolist())
    out["weights"] = [w.tolist() for w in model.get_weights()]
    out["iterations"] = int(optimizer.iterations.numpy())
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])), flush=True)
