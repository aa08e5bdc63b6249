"""tf.data: each Dataset method against numpy oracles, the fast paths (positions, vmap) against the element-by-
element path, shuffle's permutation properties, iteration inside tf.function, and bad input."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import tapejax as tf
from tapejax import data as data_pkg


def values(ds):
    return [tf.nest.map_structure(lambda a: np.asarray(a).tolist(), e) for e in ds.as_numpy_iterator()]


def test_no_data_module_is_over_the_line_limit():
    root = pathlib.Path(data_pkg.__file__).parent
    long = {p.name: n for p in root.glob("*.py") if (n := len(p.read_text().splitlines())) > 450}
    assert not long, long


def test_from_tensor_slices_nests_and_specs():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = tf.data.Dataset.from_tensor_slices({"x": x, "y": (np.arange(6), [1.0] * 6)})
    assert ds.element_spec == {"x": tf.TensorSpec((2,), tf.float32),
                               "y": (tf.TensorSpec((), tf.int64), tf.TensorSpec((), tf.float32))}
    got = list(ds)
    assert len(got) == 6 and isinstance(got[0]["x"], tf.Tensor)
    np.testing.assert_array_equal(np.stack([e["x"].numpy() for e in got]), x)
    assert len(ds) == 6 and int(ds.cardinality()) == 6


def test_batch_specs_and_remainder():
    ds = tf.data.Dataset.range(10)
    assert ds.batch(4).element_spec == tf.TensorSpec((None,), tf.int64)
    assert ds.batch(4, drop_remainder=True).element_spec == tf.TensorSpec((4,), tf.int64)
    assert values(ds.batch(4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert values(ds.batch(4, drop_remainder=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(ds.batch(4)) == 3 and len(ds.batch(4, drop_remainder=True)) == 2


def _pipeline(fast: bool):
    """A map with random ops before a batch: by positions and vmap (fast), or over a generator (no positions,
    so element by element); both must give the same elements."""
    images = np.random.RandomState(0).rand(50, 4, 4).astype(np.float32)

    def prep(img, label):
        flip = tf.random.uniform(()) < 0.5
        img = tf.where(flip, tf.reverse(img, axis=[1]), img)
        return img / 2.0, tf.one_hot(label, 3)

    tf.random.set_seed(5)
    if fast:
        base = tf.data.Dataset.from_tensor_slices((images, np.arange(50) % 3))
    else:
        base = tf.data.Dataset.from_generator(lambda: ((images[i], i % 3) for i in range(50)),
                                              output_signature=(tf.TensorSpec((4, 4), tf.float32),
                                                                tf.TensorSpec((), tf.int64)))
    return base.map(prep).batch(8)


def test_vectorised_map_equals_element_by_element():
    fast, slow = _pipeline(True), _pipeline(False)
    assert fast._input._can_view() and not slow._input._can_view()
    for (a, b), (c, d) in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a.numpy(), c.numpy())
        np.testing.assert_array_equal(b.numpy(), d.numpy())
    flips = [e[0].numpy() for e in fast]
    assert 0 < sum(bool((f != f[:, :, ::-1]).any()) for f in flips)  # the random flip drew different values


def test_map_draws_anew_each_epoch_and_per_element():
    tf.random.set_seed(1)
    ds = tf.data.Dataset.range(6).map(lambda x: tf.random.uniform(()))
    first, second = values(ds), values(ds)
    assert len(set(first)) == 6 and first != second


def test_shuffle_is_a_permutation_reproducible_by_seed():
    ds = tf.data.Dataset.range(100).shuffle(20, seed=3)
    a, b = values(ds), values(ds)
    assert sorted(a) == list(range(100)) and a != list(range(100)) and a != b  # reshuffled per iteration
    assert values(tf.data.Dataset.range(100).shuffle(20, seed=3)) == a
    fixed = tf.data.Dataset.range(100).shuffle(20, seed=3, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    assert values(tf.data.Dataset.range(10).shuffle(1)) == list(range(10))


def test_shuffle_buffer_bounds_how_far_an_element_moves_ahead():
    # with a buffer of k, output i is one of the first i + k inputs
    out = values(tf.data.Dataset.range(200).shuffle(5, seed=0))
    assert all(v < i + 5 for i, v in enumerate(out))


def test_shuffle_by_positions_equals_shuffle_of_elements():
    tf.random.set_seed(7)
    fast = values(tf.data.Dataset.range(40).shuffle(10).batch(7))
    tf.random.set_seed(7)
    gen = tf.data.Dataset.from_generator(lambda: iter(range(40)), output_signature=tf.TensorSpec((), tf.int64))
    assert values(gen.shuffle(10).batch(7)) == fast


def test_repeat_take_skip_shard_enumerate_zip_concatenate():
    r = tf.data.Dataset.range
    assert values(r(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert int(r(3).repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert values(r(3).repeat().take(5)) == [0, 1, 2, 0, 1]
    assert values(r(10).skip(8)) == [8, 9] and values(r(10).take(-1)) == list(range(10))
    assert values(r(10).shard(4, 1)) == [1, 5, 9] and len(r(10).shard(4, 1)) == 3
    assert values(r(3).enumerate(10)) == [(10, 0), (11, 1), (12, 2)]
    assert values(tf.data.Dataset.zip((r(3), r(5)))) == [(0, 0), (1, 1), (2, 2)]
    assert values(r(2).concatenate(r(3))) == [0, 1, 0, 1, 2]
    assert values(r(7).repeat(2).batch(4)) == [[0, 1, 2, 3], [4, 5, 6, 0], [1, 2, 3, 4], [5, 6]]


def test_filter_unbatch_padded_batch_flat_map_interleave():
    r = tf.data.Dataset.range
    assert values(r(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert int(r(10).filter(lambda x: True).cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert values(r(5).batch(2).unbatch()) == [0, 1, 2, 3, 4]
    assert values(r(4).map(lambda x: tf.fill([x], x)).padded_batch(2)) == [[[0], [1]], [[2, 2, 0], [3, 3, 3]]]
    assert values(r(3).flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(x))) == [1, 2, 2]
    got = values(r(3).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=3))
    assert got == [0, 1, 2, 0, 1, 2]


def test_scan_reduce_unique_cache_window():
    r = tf.data.Dataset.range
    assert values(r(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s))) == [0, 0, 1, 3, 6]
    assert r(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x).numpy() == 10
    assert values(tf.data.Dataset.from_tensor_slices([3, 1, 3, 2, 1]).unique()) == [3, 1, 2]
    calls = []
    gen = tf.data.Dataset.from_generator(lambda: (calls.append(1) or i for i in range(3)),
                                         output_signature=tf.TensorSpec((), tf.int64)).cache()
    assert values(gen) == values(gen) == [0, 1, 2] and len(calls) == 3
    windows = r(5).window(3, shift=2)
    assert [values(w) for w in windows] == [[0, 1, 2], [2, 3, 4], [4]]


def test_apply_options_and_experimental_aliases():
    ds = tf.data.Dataset.range(4).apply(tf.data.experimental.enumerate_dataset(1))
    assert values(ds) == [(1, 0), (2, 1), (3, 2), (4, 3)]
    assert tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1
    options = tf.data.Options()
    options.experimental_deterministic = False
    assert ds.with_options(options).options().experimental_deterministic is False
    assert int(tf.data.experimental.cardinality(ds)) == 4


def test_prefetch_keeps_order_and_raises_the_producers_error():
    assert values(tf.data.Dataset.range(50).prefetch(3)) == list(range(50))

    def gen():
        yield 1
        raise RuntimeError("source failed")

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32)).prefetch(2)
    it = iter(ds)
    assert int(next(it)) == 1
    with pytest.raises(RuntimeError, match="source failed"):
        next(it)


def test_exhausted_iterator_errors():
    it = iter(tf.data.Dataset.range(1))
    next(it)
    with pytest.raises(StopIteration):
        next(it)
    it = iter(tf.data.Dataset.range(1))
    it.get_next()
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()


def test_bad_input():
    with pytest.raises(ValueError, match="Dimensions 3 and 4 are not compatible"):
        tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))

    def boom(x):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        tf.data.Dataset.range(3).map(boom)
    with pytest.raises(ValueError, match="predicate"):
        tf.data.Dataset.range(3).filter(lambda x: x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        list(tf.data.Dataset.range(3).map(lambda x: tf.fill([x], x)).batch(3))
    with pytest.raises(TypeError, match="infinite"):
        len(tf.data.Dataset.range(3).repeat())
    assert tf.data.Dataset.from_tensor_slices(["a", "b"]).element_spec.dtype == tf.string  # strings: test_strings.py


def test_a_step_per_batch_traces_once_more_for_the_short_batch():
    ds = tf.data.Dataset.from_tensor_slices(np.ones((10, 3), np.float32)).batch(4)
    step = tf.function(lambda x: tf.reduce_sum(x))
    total = sum(float(step(x)) for _ in range(3) for x in ds)
    assert total == 90.0 and step.experimental_get_tracing_count() == 2


def test_iterator_passed_to_a_tf_function_gives_a_new_element_per_call():
    it = iter(tf.data.Dataset.range(5).batch(2, drop_remainder=True))
    step = tf.function(lambda it: tf.reduce_sum(next(it)))
    assert [int(step(it)), int(step(it))] == [1, 5]
    assert step.experimental_get_tracing_count() == 1


def test_a_dataset_loop_inside_a_tf_function():
    ds = tf.data.Dataset.range(6).batch(4)

    @tf.function
    def total(d):
        s = tf.constant(0, tf.int64)
        for x in d:
            s += tf.reduce_sum(x)
        return s

    assert int(total(ds)) == 15


def test_a_vectorised_map_after_a_partial_batch_maps_element_by_element():
    # range(3).batch(2) gives [0, 1] and [2]: shapes that do not stack, so the map after it cannot run under one
    # vmap over a block of them (it raised "Cannot batch tensors with different shapes"). By hand: sums 1 and 2,
    # batched to [1, 2], summed to 3; and [0, 2, 4], [6, 8, 10], [12] doubled, batched in twos.
    ds = tf.data.Dataset.range(3).batch(2).map(lambda x: tf.reduce_sum(x)).batch(2).map(lambda x: tf.reduce_sum(x))
    assert [int(x) for x in ds.as_numpy_iterator()] == [3]
    ds = tf.data.Dataset.range(7).batch(3).map(lambda x: x * 2).batch(2)
    assert [e.tolist() for e in ds.as_numpy_iterator()] == [[[0, 2, 4], [6, 8, 10]], [[12]]]
