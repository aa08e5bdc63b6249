"""The engine's per-thread state (context.py): each thread records, scopes and seeds on its own, as in TF."""

from __future__ import annotations

import threading

import numpy as np

import tapejax as tf


def _in_threads(fn, n=8):
    results, errors = [None] * n, []
    barrier = threading.Barrier(n)

    def run(i):
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as e:  # surfaced below, with the thread's index
            errors.append((i, e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_name_scopes_are_per_thread():
    def make(i):
        names = []
        for _ in range(20):
            with tf.name_scope(f"thread{i}"):
                with tf.name_scope("layer"):
                    names.append(tf.Variable(1.0, name="kernel").name)
        return names

    for i, names in enumerate(_in_threads(make)):
        assert names == [f"thread{i}/layer/kernel:0"] * 20


def test_tapes_record_only_their_own_threads_ops():
    def step(i):
        x = tf.constant(float(i + 1))
        grads = []
        for _ in range(10):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x * x * x
            grads.append(tape.gradient(y, x).numpy())
        return grads

    for i, grads in enumerate(_in_threads(step)):
        assert grads == [3.0 * (i + 1) ** 2] * 10


def test_seeded_random_ops_are_reproducible_per_thread():
    def draw(i):
        tf.random.set_seed(1234)
        return np.stack([tf.random.normal([3]).numpy() for _ in range(4)])

    tf.random.set_seed(1234)
    alone = np.stack([tf.random.normal([3]).numpy() for _ in range(4)])
    for drawn in _in_threads(draw):
        np.testing.assert_array_equal(drawn, alone)
