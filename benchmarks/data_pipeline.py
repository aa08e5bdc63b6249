"""tf.data throughput: 60,000 28x28 float32 images, a per-element map (normalise, random flip, one-hot),
shuffled (buffer 10,000), batched by 128, one epoch; tapejax or TF, in this process.

    python -m benchmarks.data_pipeline tapejax     # or: tf
    python -m benchmarks.data_pipeline tapejax train   # end to end: the pipeline feeding a tf.function MLP step
Prints examples/sec of a warm epoch (the first epoch also traces and compiles; it is reported separately).
`train` times a training epoch two ways: a Python loop over the dataset calling a `tf.function` step per batch,
and the whole epoch as one `tf.function` whose `for` loop runs over the dataset (a graph loop).
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


def model(tf):
    """A 784-256-10 MLP trained by SGD, as a per-batch `tf.function` step and as a whole-epoch one."""
    rng = np.random.RandomState(1)
    w1 = tf.Variable(rng.randn(784, 256).astype(np.float32) * 0.05)
    b1 = tf.Variable(np.zeros(256, np.float32))
    w2 = tf.Variable(rng.randn(256, 10).astype(np.float32) * 0.05)
    b2 = tf.Variable(np.zeros(10, np.float32))
    params = [w1, b1, w2, b2]

    def loss_and_update(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.reshape(x, [-1, 784]) @ w1 + b1)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, h @ w2 + b2))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.1 * g)
        return loss

    step = tf.function(loss_and_update)

    @tf.function
    def whole_epoch(ds):
        loss = tf.constant(0.0)
        for x, y in ds:
            loss = loss_and_update(x, y)
        return loss

    return step, whole_epoch


def train_epoch(ds, step) -> tuple[int, float]:
    start, n = time.perf_counter(), 0
    for x, y in ds:
        loss = step(x, y)
        n += int(x.shape[0])
    float(loss)  # the last step is computed
    return n, time.perf_counter() - start


def graph_epoch(ds, whole_epoch) -> float:
    start = time.perf_counter()
    float(whole_epoch(ds))
    return time.perf_counter() - start


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
    if argv[1:] == ["train"]:
        step, whole_epoch = model(tf)
        n, first = train_epoch(ds, step)
        best = min(train_epoch(ds, step)[1] for _ in range(3))
        print(f"{lib} train, step per batch: first epoch {first:.3f} s; warm epoch {best:.3f} s (best of 3) = "
              f"{n / best:,.0f} examples/sec")
        first = graph_epoch(ds, whole_epoch)
        best = min(graph_epoch(ds, whole_epoch) for _ in range(3))
        print(f"{lib} train, epoch in one tf.function: first epoch {first:.3f} s; warm epoch {best:.3f} s "
              f"(best of 3) = {n / best:,.0f} examples/sec")
        return
    n, first = epoch(ds)
    runs = [epoch(ds)[1] for _ in range(3)]
    best = min(runs)
    print(f"{lib}: {n} examples; first epoch {first:.3f} s; warm epoch {best:.3f} s "
          f"(best of 3) = {n / best:,.0f} examples/sec")


if __name__ == "__main__":
    main(sys.argv[1:])
