"""Issue 17's thread test: 8 threads of mixed work (eager ops with gradients, shared and per-thread tf.functions,
name-scoped variables, a small Keras model trained with an optimizer and a schedule) give the names and values
of the same work run one thread at a time.

Each job runs in a fresh thread in both runs: Keras 3 numbers layer names per thread (`dense`, `dense_1`, ...), as
TF scopes names per thread, so a job's names do not depend on what other threads made.
"""

from __future__ import annotations

import threading

import numpy as np

import tapejax as tf

THREADS = 8
ROUNDS = 20


@tf.function
def _shared_cubes(x):
    """One tf.function shared by every thread, called with three input shapes (so traced under contention)."""
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x ** 3)
    return y, tape.gradient(y, x)


@tf.function
def _accumulate(counter, v):
    """A shared tf.function that assigns a variable of the calling thread's own."""
    counter.assign_add(tf.reduce_sum(v))
    return counter.read_value()


def _job(i: int) -> dict:
    rng = np.random.default_rng(i)
    out: dict = {}
    # eager ops and gradients
    x = tf.Variable(rng.normal(size=(3,)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.sin(x) * x)
        z = tf.tanh(x) * 2.0
    out["eager"] = (float(y), tape.gradient(y, x).numpy(), tape.jacobian(z, x).numpy())
    # a tf.function shared between threads, and one of this thread's own that assigns a variable
    value, grad = _shared_cubes(tf.constant(rng.normal(size=(i % 3 + 1, 2)).astype(np.float32)))
    out["shared"] = (float(value), grad.numpy())
    counter = tf.Variable(0.0, name="counter")
    out["own"] = [float(_accumulate(counter, tf.constant([float(i), 1.0]))) for _ in range(3)]
    # name-scoped variables
    with tf.name_scope(f"worker{i}"):
        with tf.name_scope("inner"):
            out["scoped"] = [tf.Variable(float(k), name="w").name for k in range(3)]
        out["scoped"].append(counter.name)
    # a small Keras model, trained by a custom loop with an optimizer and a learning-rate schedule
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
    features = rng.normal(size=(8, 3)).astype(np.float32)
    targets = rng.normal(size=(8, 1)).astype(np.float32)
    model(tf.constant(features))
    for variable in model.variables:
        variable.assign(rng.normal(size=variable.shape).astype(np.float32))
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
    optimizer = tf.keras.optimizers.Adam(schedule)
    losses = []
    for _ in range(4):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(tf.constant(features)) - targets) ** 2)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        losses.append(float(loss))
    out["keras"] = ([layer.name for layer in model.layers], [v.name for v in model.variables],
                    [v.numpy() for v in model.variables], losses, int(optimizer.iterations))
    return out


def _run(jobs: int, concurrently: bool) -> list:
    results: list = [None] * jobs
    errors: list = []
    barrier = threading.Barrier(jobs if concurrently else 1)

    def run(i):
        try:
            barrier.wait()
            results[i] = _job(i)
        except BaseException as e:  # noqa: BLE001 - reported below with the thread's index
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(jobs)]
    for t in threads:
        t.start()
        if not concurrently:
            t.join()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def _assert_same(got, expected, path="job"):
    if isinstance(expected, dict):
        assert got.keys() == expected.keys(), path
        for k in expected:
            _assert_same(got[k], expected[k], f"{path}[{k!r}]")
    elif isinstance(expected, list | tuple):
        assert type(got) is type(expected) and len(got) == len(expected), path
        for k, (g, e) in enumerate(zip(got, expected)):
            _assert_same(g, e, f"{path}[{k}]")
    elif isinstance(expected, np.ndarray):
        # the same work on the same inputs: equal up to the rounding of a compiled vs op-by-op first run
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=path)
    elif isinstance(expected, float):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=path)
    else:
        assert got == expected, (path, got, expected)


def test_mixed_work_in_8_threads_matches_the_same_work_run_one_thread_at_a_time():
    expected = _run(THREADS, concurrently=False)
    assert expected[1]["scoped"] == ["worker1/inner/w:0"] * 3 + ["counter:0"]
    assert expected[1]["keras"][0] == ["dense", "dense_1"]
    for round_ in range(ROUNDS):
        got = _run(THREADS, concurrently=True)
        for i in range(THREADS):
            _assert_same(got[i], expected[i], f"round {round_}, thread {i}")
