"""State that differs per replica inside `strategy.run`, under either library (`--lib tensorflow|tapejax`) on 4 CPU
replicas: BatchNormalization's statistics (per replica, or the global batch's with `synchronized=True`) and a
`tf.random.Generator`'s numbers (each replica its own). Prints, as JSON, values to compare between the libraries
(the random numbers themselves differ: TF's Philox against JAX's ThreeFry, so only their properties)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tests.distribute._programs import library  # noqa: E402

import numpy as np  # noqa: E402


def outcomes(tf) -> dict:
    s = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(4)])

    def local(v):
        return [np.asarray(x).round(5).tolist() for x in s.experimental_local_results(v)]

    x = np.arange(16, dtype=np.float32).reshape(8, 2) ** 1.5
    batch = next(iter(s.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(x).batch(8))))
    found = {}
    for synchronized in (False, True):
        for mode in ("eager", "function"):
            with s.scope():
                bn = tf.keras.layers.BatchNormalization(synchronized=synchronized, momentum=0.5)
                bn.build((None, 2))

            def step(t):
                return s.run(lambda t: bn(t, training=True), args=(t,))

            step = tf.function(step) if mode == "function" else step
            first = local(step(batch))
            second = local(step(batch))  # normalised again: moving statistics do not enter training outputs
            key = f"bn_sync_{synchronized}_{mode}"
            found[key] = {"outputs": first, "again": second == first,
                          "moving_mean": np.asarray(bn.moving_mean).round(4).tolist(),
                          "moving_variance": np.asarray(bn.moving_variance).round(3).tolist(),
                          "inference": np.asarray(bn(tf.constant(x[:2]), training=False)).round(3).tolist()}
    for where in ("inside", "outside"):
        if where == "inside":
            with s.scope():
                g = tf.random.Generator.from_seed(1)
        else:
            g = tf.random.Generator.from_seed(1)
        for mode in ("eager", "function"):
            draw = (lambda: s.run(lambda: g.normal([3])))
            draw = tf.function(draw) if mode == "function" else draw
            a, b = local(draw()), local(draw())
            found[f"generator_{where}_{mode}"] = {
                "distinct_replicas": len({tuple(v) for v in a}) == 4, "new_draws": a != b,
                "shapes": [len(v) for v in a]}
    return found


def main() -> None:
    print(json.dumps(outcomes(library(4))))

if __name__ == "__main__":
    main()
