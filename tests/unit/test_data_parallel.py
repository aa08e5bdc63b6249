"""`map(num_parallel_calls)` and `interleave(num_parallel_calls)`: worker threads that give the sequential
elements in the sequential order, raise errors where they fall, and stop when the iteration does. Concurrency is
shown with barriers (a sequential run would break them), never with timings."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tapejax as tf
from tapejax.data import mapping

AUTOTUNE = tf.data.AUTOTUNE


def _values(ds: tf.data.Dataset) -> list:
    return [tf.nest.map_structure(lambda a: np.asarray(a).tolist(), e) for e in ds.as_numpy_iterator()]


def _threads(prefix: str) -> int:
    return sum(t.name.startswith(prefix) for t in threading.enumerate())


def _until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


@pytest.mark.parametrize("calls", [1, 2, 3, AUTOTUNE])
def test_a_parallel_map_gives_the_sequential_elements(calls):
    def fn(x):
        noise = tf.random.uniform([2], seed=3)
        return x * 2, tf.cast(x, tf.float32) + noise

    ds = tf.data.Dataset.range(13)
    tf.random.set_seed(11)
    expected = ds.map(fn)
    tf.random.set_seed(11)
    parallel = ds.map(fn, num_parallel_calls=calls, deterministic=False)
    assert parallel.element_spec == expected.element_spec
    for _ in range(2):  # each pass draws anew, alike
        assert _values(parallel) == _values(expected)


def test_parallel_map_calls_run_at_once():
    barrier: list = []

    def meet(x):
        if barrier:
            barrier[0].wait()  # two calls must be running together to pass (BrokenBarrierError otherwise)
        return x

    ds = tf.data.Dataset.range(4).map(lambda x: tf.py_function(meet, [x], tf.int64), num_parallel_calls=2)
    assert _values(ds) == [0, 1, 2, 3]  # the first calls compile the function (one thread compiles, one waits)
    barrier.append(threading.Barrier(2, timeout=10))
    assert _values(ds) == [0, 1, 2, 3]


def test_an_error_is_raised_after_the_elements_before_it():
    def fails_at_3(x):
        if int(x) == 3:
            raise ValueError("three")
        return x

    for calls in (None, 3):
        got = []
        with pytest.raises(tf.errors.InvalidArgumentError, match="three"):
            for x in tf.data.Dataset.range(6).map(lambda x: tf.py_function(fails_at_3, [x], tf.int64),
                                                  num_parallel_calls=calls):
                got.append(int(x))
        assert got == [0, 1, 2]

    def generate():
        yield 1
        yield 2
        raise KeyError("the input failed")

    source = tf.data.Dataset.from_generator(generate, output_signature=tf.TensorSpec((), tf.int32))
    got = []
    with pytest.raises(KeyError, match="the input failed"):
        for x in source.map(lambda x: x * 10, num_parallel_calls=4):
            got.append(int(x))
    assert got == [10, 20]


def test_leaving_a_parallel_map_early_stops_its_workers():
    def slow(x):
        time.sleep(0.01)
        return x

    before = _threads("tf.data parallel call")
    it = iter(tf.data.Dataset.range(10**6).map(lambda x: tf.py_function(slow, [x], tf.int64), num_parallel_calls=3))
    assert [int(next(it)) for _ in range(5)] == [0, 1, 2, 3, 4]
    del it
    assert _until(lambda: _threads("tf.data parallel call") <= before)


def test_a_map_that_runs_eagerly_keeps_one_call_at_a_time_on_the_iterating_thread():
    v = tf.Variable(2, dtype=tf.int64)
    seen = []

    def scaled(x):
        seen.append(threading.current_thread().name)
        return x * v  # reads a variable: runs eagerly, per element

    ds = tf.data.Dataset.range(5).map(scaled, num_parallel_calls=4)
    seen.clear()
    assert _values(ds) == [0, 2, 4, 6, 8]
    v.assign(3)
    assert _values(ds) == [0, 3, 6, 9, 12]  # the variable's value when each element is computed
    assert set(seen) == {threading.current_thread().name}


def _ragged_lengths(x):
    return tf.data.Dataset.range(x % 4).map(lambda y: x * 10 + y)


@pytest.mark.parametrize("cycle", [1, 2, 3, 5])
@pytest.mark.parametrize("block", [1, 2, 3])
def test_a_parallel_interleave_gives_the_sequential_order(cycle, block):
    ds = tf.data.Dataset.range(11)  # datasets of 0 to 3 elements: empty slots, refills, uneven ends
    expected = _values(ds.interleave(_ragged_lengths, cycle_length=cycle, block_length=block))
    for calls in sorted({1, cycle}):
        assert _values(ds.interleave(_ragged_lengths, cycle_length=cycle, block_length=block,
                                     num_parallel_calls=calls)) == expected


def test_parallel_interleave_reads_the_cycle_and_the_next_datasets_at_once():
    for cycle in (2, 1):  # with one slot, the next input elements' datasets are read ahead
        barrier = threading.Barrier(2, timeout=10)

        def generate(i):
            barrier.wait()  # both datasets must be read together to pass
            yield i

        def one(x):
            return tf.data.Dataset.from_generator(generate, args=(x,), output_signature=tf.TensorSpec((), tf.int64))

        ds = tf.data.Dataset.range(2).interleave(one, cycle_length=cycle, num_parallel_calls=cycle)
        assert sorted(_values(ds)) == [0, 1]


def test_leaving_a_parallel_interleave_early_stops_its_threads():
    before = _threads("tf.data prefetch")
    it = iter(tf.data.Dataset.range(10**6).interleave(lambda x: tf.data.Dataset.range(10**6), cycle_length=2,
                                                      num_parallel_calls=2))
    assert [int(next(it)) for _ in range(4)] == [0, 0, 1, 1]
    assert _threads("tf.data prefetch") > before
    del it
    assert _until(lambda: _threads("tf.data prefetch") <= before)


def test_an_autotuned_cycle_follows_tf_parallel_interleave(monkeypatch):
    # TF: a parallel interleave without cycle_length takes min(num_parallel_calls, cores), or for AUTOTUNE a
    # third of the cores (rounded up), so that its threads ahead fit them; the sequential one takes the cores.
    monkeypatch.setattr(mapping, "_cpu_count", lambda: 8)
    ds = tf.data.Dataset.range(10)

    def fn(x):
        return tf.data.Dataset.from_tensors(x).repeat(3)

    def order(**kwargs):
        return _values(ds.interleave(fn, **kwargs))

    assert order(num_parallel_calls=AUTOTUNE) == order(cycle_length=3)
    assert order(num_parallel_calls=5) == order(cycle_length=5)
    assert order() == order(cycle_length=8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="`num_parallel_calls` is 9 and `cycle_length` is 8"):
        order(num_parallel_calls=9)  # raised when iterated, as TF's (the cycle is known then)
