"""The cost of tf.distribute's mapping: a data-parallel training step on 8 replicas, written with
`tf.distribute.MirroredStrategy` (a Keras MLP, SGD, `compute_average_loss`, `strategy.run` and `strategy.reduce` in
a `tf.function`), against the same step written directly in JAX (`jax.shard_map` inside `jax.jit`: each device's
loss over the global batch, `psum` of the gradients, the SGD update, `psum` of the loss).

    python benchmarks/distribute.py            # 8 virtual CPU devices unless XLA_FLAGS says otherwise

Both steps take one global batch already split over the devices (a `PerReplica` from
`experimental_distribute_dataset`, a sharded array for JAX) and update replicated weights, so what is timed is
the step: tapejax's dispatch of the `tf.function` call (arguments, variables in and out) over the same XLA
program's run. Prints the median time per step of each and the ratio (the issue's target: at most 1.1x). On
GPUs or TPUs the same script runs on JAX's devices of that backend.
"""

from __future__ import annotations

import os
import pathlib
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import tapejax as tf  # noqa: E402
from benchmarks.harness import block_jax, time_interleaved  # noqa: E402

LEARNING_RATE = 0.01


def tapejax_step(strategy: tf.distribute.Strategy, sizes: tuple[int, int, int]) -> tuple:
    features, hidden, outputs = sizes
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((features,)), tf.keras.layers.Dense(hidden, activation="relu"),
                                     tf.keras.layers.Dense(outputs)])
        optimizer = tf.keras.optimizers.SGD(LEARNING_RATE)

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            per_example = tf.reduce_sum(tf.square(model(x) - y), axis=-1)
            loss = tf.nn.compute_average_loss(per_example)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def step(x, y):
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_step, args=(x, y)), axis=None)

    return step, model


def jax_step(mesh: jax.sharding.Mesh, global_batch: int) -> object:
    def loss_fn(params, x, y):
        (w1, b1), (w2, b2) = params
        pred = jnp.maximum(x @ w1 + b1, 0.0) @ w2 + b2
        return jnp.sum(jnp.square(pred - y)) / global_batch

    def body(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.lax.psum(grads, "replica")
        params = jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)
        return params, jax.lax.psum(loss, "replica")

    mapped = jax.shard_map(body, mesh=mesh, in_specs=(P(), P("replica"), P("replica")), out_specs=(P(), P()))
    return jax.jit(mapped)


def main() -> None:
    devices = jax.devices()
    strategy = tf.distribute.MirroredStrategy()
    mesh = jax.sharding.Mesh(np.array(devices), ("replica",))
    print(f"jax {jax.__version__}, {len(devices)} {devices[0].platform} devices")
    for sizes, batch in [((32, 64, 10), 256), ((256, 1024, 10), 2048)]:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(batch, sizes[0])).astype(np.float32)
        y = rng.normal(size=(batch, sizes[2])).astype(np.float32)
        step, model = tapejax_step(strategy, sizes)
        dist = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(batch))
        xs, ys = next(iter(dist))
        split = NamedSharding(mesh, P("replica"))
        params = jax.device_put([(w, b) for w, b in zip(model.get_weights()[::2],
                                                                       model.get_weights()[1::2])],
                                NamedSharding(mesh, P()))
        jx, jy = jax.device_put(x, split), jax.device_put(y, split)
        jstep = jax_step(mesh, batch)
        state = {"params": params}

        def run_jax():
            state["params"], loss = jstep(state["params"], jx, jy)
            return loss

        times = time_interleaved({"tapejax": (lambda: step(xs, ys), block_jax), "jax": (run_jax, block_jax)},
                                 budget_s=0.05, repeats=15)
        print(f"MLP {sizes}, global batch {batch}: tapejax {times['tapejax']:.0f} us/step, jax shard_map "
              f"{times['jax']:.0f} us/step, ratio {times['tapejax'] / times['jax']:.2f}x")


if __name__ == "__main__":
    main()
