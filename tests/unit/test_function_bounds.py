"""tf.function's bounds (issue 17): retracing warns as TF does, reduce_retracing relaxes shapes, traces are
bounded, concurrent first calls trace once, and traces hold variables weakly."""

from __future__ import annotations

import gc
import logging
import threading
import weakref

import numpy as np
import pytest

import tapejax as tf
from tapejax._src import function as function_lib


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def _warnings(caplog, needle: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "tensorflow" and needle in r.getMessage()]


def test_frequent_retracing_warns_twice_at_most(caplog):
    @tf.function
    def f(x):
        return x * 2.0

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for n in range(1, 4):
            f(tf.ones([n]))
        assert not _warnings(caplog, "retracing")
        for n in range(4, 12):
            f(tf.ones([n]))
    found = _warnings(caplog, "triggered tf.function retracing")
    assert len(found) == 2
    assert found[0].startswith(f"5 out of the last 5 calls to {f.python_function!r} triggered")
    assert "reduce_retracing=True" in found[0]


def test_calls_that_do_not_trace_do_not_warn(caplog):
    @tf.function
    def f(x):
        return x * 2.0

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for n in (1, 2, 3, 4):  # 4 traces, then many calls without tracing: 4 of the last 10 calls traced
            f(tf.ones([n]))
            for _ in range(3):
                f(tf.ones([n]))
    assert not _warnings(caplog, "retracing")


def test_reduce_retracing_traces_a_relaxed_shape():
    shapes = []

    @tf.function(reduce_retracing=True)
    def f(x):
        shapes.append(x.shape.as_list())
        return tf.reduce_sum(x * x)

    for n in range(1, 30):
        np.testing.assert_allclose(f(tf.range(float(n))).numpy(), sum(i * i for i in range(n)))
    assert f.experimental_get_tracing_count() == 2
    assert shapes == [[1], [None]]
    f(tf.ones([3, 4]))  # another rank: traced for an unknown shape (here, per rank)
    f(tf.ones([5, 6]))
    assert f.experimental_get_tracing_count() == 3


def test_reduce_retracing_falls_back_to_sizes_when_the_step_needs_them():
    @tf.function(reduce_retracing=True)
    def f(x):
        return tf.reshape(x, [2, -1])  # XLA needs a concrete size here

    for n in (2, 4, 6, 8):
        assert f(tf.ones([n])).shape == [2, n // 2]
    assert f.experimental_get_tracing_count() == 2


def test_traces_are_bounded_and_forgetting_warns(caplog):
    @tf.function
    def f(x):
        return x + 1.0

    n = function_lib.MAX_TRACES + 5
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for k in range(1, n + 1):
            f(tf.ones([k]))
    assert len(f._concrete) <= function_lib.MAX_TRACES
    assert len(_warnings(caplog, "the least recently used traces are dropped")) == 1
    assert f.experimental_get_tracing_count() == n
    np.testing.assert_allclose(f(tf.ones([1])).numpy(), [2.0])  # forgotten, traced again: TF counts it once
    assert f.experimental_get_tracing_count() == n


def test_a_thousand_shapes_stay_under_100_mb(caplog):
    @tf.function
    def f(x):
        return x * 2.0 + 1.0

    for k in range(1, 4):
        f(tf.ones([k]))
    gc.collect()
    before = _rss_mib()
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for k in range(10, 1010):
            f(tf.constant(np.ones(k, np.float32)))
    gc.collect()
    assert _rss_mib() - before < 100
    assert _warnings(caplog, "triggered tf.function retracing")
    assert _warnings(caplog, "the least recently used traces are dropped")


def test_a_storm_of_training_steps_stops_growing():
    """A step with a gradient and an update fills JAX's staging caches with about 3 MB per new shape (the rows'
    jax.numpy calls, their linearizations and transposes, per shape); while a function retraces frequently,
    retracing.py empties them every CLEAR_EVERY traces, so memory levels off instead of growing by gigabytes
    over a long storm. Measured after the level is reached (the first shapes fill the kept traces)."""
    v = tf.Variable(1.0)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(x * v) ** 2) + tf.reduce_mean(x)
        v.assign_sub(0.01 * tape.gradient(loss, v))
        return loss

    quiet = logging.getLogger("tensorflow")
    level, quiet.level = quiet.level, logging.ERROR
    try:
        for k in range(1, 81):
            step(tf.constant(np.ones(k, np.float32)))
        gc.collect()
        before = _rss_mib()
        for k in range(81, 141):
            step(tf.constant(np.ones(k, np.float32)))
        gc.collect()
    finally:
        quiet.setLevel(level)
    assert _rss_mib() - before < 40  # 60 shapes: about 180 MB when JAX's caches are never emptied
    assert np.isfinite(v.numpy())


def test_concurrent_first_calls_trace_once():
    traces = []

    @tf.function
    def f(x):
        traces.append(1)
        return tf.reduce_sum(x * 3.0)

    x = tf.ones([5])
    barrier = threading.Barrier(6)
    results = []

    def call():
        barrier.wait()
        results.append(float(f(x)))

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [15.0] * 6
    assert len(traces) == 1 and f.experimental_get_tracing_count() == 1


def test_a_function_reused_by_models_holds_their_variables_weakly():
    x = tf.ones([2, 3])

    @tf.function
    def step(model, x):
        return tf.reduce_sum(model(x))

    refs, values = [], []
    for _ in range(12):
        model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
        expected = float(tf.reduce_sum(model(x)))
        values.append((float(step(model, x)), expected))
        refs.extend(weakref.ref(v) for v in model.trainable_variables)
        del model
    gc.collect()
    assert all(np.isclose(got, expected) for got, expected in values)
    assert step.experimental_get_tracing_count() == 12  # one trace per model, none redone (TF: 12)
    assert not [r for r in refs if r() is not None]


def test_a_trace_whose_variables_died_is_traced_again():
    x = tf.ones([3])

    @tf.function
    def step(v, x):
        return tf.reduce_sum(v * x)

    for value in (1.0, 2.0, 3.0):  # each variable may reuse the last one's address
        v = tf.Variable(value)
        assert float(step(v, x)) == 3.0 * value
        del v
        gc.collect()


class _Scaled(tf.Module):
    def __init__(self, scale):
        super().__init__()
        self.v = tf.Variable([scale, 2 * scale])

    @tf.function
    def __call__(self, x):
        return self.v * x


def test_a_tf_function_method_does_not_keep_its_instances_alive():
    refs = []
    for scale in range(1, 6):
        m = _Scaled(float(scale))
        np.testing.assert_allclose(m(tf.constant(2.0)).numpy(), [2 * scale, 4 * scale])
        refs.append(weakref.ref(m))
        del m
    gc.collect()
    assert [r() for r in refs] == [None] * 5


def test_a_copied_instance_runs_its_method_on_itself():
    import copy

    m = _Scaled(1.0)
    m(tf.constant(1.0))
    for c in (copy.copy(m), copy.deepcopy(m)):
        c.v = tf.Variable([10.0, 20.0])
        np.testing.assert_allclose(c(tf.constant(1.0)).numpy(), [10.0, 20.0])
    np.testing.assert_allclose(m(tf.constant(1.0)).numpy(), [1.0, 2.0])
