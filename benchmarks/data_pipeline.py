"""tf.data throughput: 60,000 28x28 float32 images, a per-element map (normalise, random flip, one-hot),
shuffled (buffer 10,000), batched by 128, one epoch; tapejax or TF, in this process.

    python -m benchmarks.data_pipeline tapejax     # or: tf
Prints examples/sec of a warm epoch (the first epoch also traces and compiles; it is reported separately).
"""

from __future__ import annotations

import sys
import time

import numpy as np


def pipeline(tf, images, labels):
    def prep(image, label):
        image = (image - 0.5) / 0.25
        flip = tf.random.uniform(()) < 0.5
        image = tf.where(flip, tf.reverse(image, axis=[1]), image)
        return image, tf.one_hot(label, 10)

    ds = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(10_000, seed=0)
    return ds.map(prep, num_parallel_calls=tf.data.AUTOTUNE).batch(128).prefetch(tf.data.AUTOTUNE)


def epoch(ds) -> tuple[int, float]:
    start, n = time.perf_counter(), 0
    for x, y in ds:
        n += int(x.shape[0])
    np.asarray(x)  # the last batch is computed
    return n, time.perf_counter() - start


def main(argv: list[str]) -> None:
    lib = argv[0] if argv else "tapejax"
    if lib == "tf":
        import tensorflow as tf
    else:
        import tapejax as tf
    rng = np.random.RandomState(0)
    images = rng.rand(60_000, 28, 28).astype(np.float32)
    labels = rng.randint(0, 10, 60_000).astype(np.int64)
    ds = pipeline(tf, images, labels)
    n, first = epoch(ds)
    runs = [epoch(ds)[1] for _ in range(3)]
    best = min(runs)
    print(f"{lib}: {n} examples; first epoch {first:.3f} s; warm epoch {best:.3f} s "
          f"(best of 3) = {n / best:,.0f} examples/sec")


if __name__ == "__main__":
    main(sys.argv[1:])
