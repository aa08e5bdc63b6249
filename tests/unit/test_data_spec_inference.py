"""How a dataset's element_spec is found without running the pipeline: a map of strings whose function only
routes its inputs into tf.py_function or tf.numpy_function (spec_only.py), specs of unknown rank, and the
unknown sizes a flat_map's input leaves (the specs themselves are compared with TF's in
tests/compat/test_data_vs_tf.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf


def _counting_source(opened: list) -> tf.data.Dataset:
    def generate():
        opened.append(1)
        yield from (b"ab", b"c", b"def")

    return tf.data.Dataset.from_generator(generate, output_signature=tf.TensorSpec((), tf.string))


def test_a_py_function_map_of_strings_runs_nothing_when_it_is_built():
    opened, calls = [], []

    def length(t):
        calls.append(t)
        return t, tf.strings.length(t)

    ds = _counting_source(opened).map(lambda s: tf.py_function(length, [s], (tf.string, tf.int32)))
    assert opened == [] and calls == []  # TF traces the function; it neither opens the source nor calls func
    assert ds.element_spec == (tf.TensorSpec(None, tf.string), tf.TensorSpec(None, tf.int32))
    assert [(t, int(n)) for t, n in ds.as_numpy_iterator()] == [(b"ab", 2), (b"c", 1), (b"def", 3)]
    assert len(opened) == 1 and len(calls) == 3  # one pass, func once per element


def test_a_numpy_function_map_of_strings_runs_nothing_when_it_is_built():
    opened = []
    ds = _counting_source(opened).map(lambda s: tf.numpy_function(lambda t: t + b"!", [s], tf.string))
    assert opened == []
    assert ds.element_spec == tf.TensorSpec(None, tf.string)
    assert list(ds.as_numpy_iterator()) == [b"ab!", b"c!", b"def!"]


def test_set_shape_narrows_the_unknown_shape_and_refuses_a_contradiction():
    def fixed(s):
        out = tf.py_function(lambda t: tf.stack([t, t]), [s], tf.string)
        out.set_shape([2])
        return out

    ds = tf.data.Dataset.from_tensor_slices(["a", "b"]).map(fixed)
    assert ds.element_spec == tf.TensorSpec((2,), tf.string)
    assert ds.batch(2).element_spec == tf.TensorSpec((None, 2), tf.string)

    def contradicts(s):
        out = tf.py_function(lambda t: t, [s], tf.string)
        out.set_shape([2])
        out.set_shape([3])
        return out

    with pytest.raises(ValueError, match="not compatible"):
        tf.data.Dataset.from_tensor_slices(["a"]).map(contradicts)


def test_a_function_that_needs_values_still_gets_its_spec_from_the_first_element():
    opened = []
    ds = _counting_source(opened).map(lambda s: tf.strings.upper(s))
    assert ds.element_spec == tf.TensorSpec((), tf.string)  # a string op: shape inference by a call
    assert list(ds.as_numpy_iterator()) == [b"AB", b"C", b"DEF"]


def test_a_py_function_dataset_feeds_next_inside_a_tf_function():
    def load(p):
        i = int(p.numpy().decode()[3:])
        return np.full([4], i, np.float32), np.float32(i % 2)

    ds = tf.data.Dataset.from_tensor_slices([f"img{i}" for i in range(8)]).map(
        lambda p: tf.py_function(load, [p], (tf.float32, tf.float32))).batch(4)
    assert ds.element_spec[0].shape.rank is None
    it = iter(ds)

    @tf.function
    def step(it):
        x, y = next(it)
        return tf.reduce_sum(x), tf.reduce_sum(y)

    # the element's shapes come from a look at the first element, taken outside the trace
    assert [float(v) for v in step(it)] == [24.0, 2.0]
    assert [float(v) for v in step(it)] == [88.0, 2.0]


def test_a_dataset_of_unknown_rank_batches_maps_and_trains():
    def generate():
        for i in range(6):
            yield np.full([3], i, np.float32)

    ds = tf.data.Dataset.from_generator(generate, output_types=tf.float32)
    assert ds.element_spec.shape.rank is None
    batched = ds.map(lambda x: x * 2.0).batch(3)
    assert batched.element_spec.shape.rank is None
    np.testing.assert_array_equal(next(iter(batched)).numpy(), np.repeat([[0.0], [2.0], [4.0]], 3, axis=1))
    pairs = tf.data.Dataset.zip((batched, batched.map(lambda x: tf.reduce_sum(x, axis=1))))
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(pairs, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_flat_map_learns_which_dimensions_follow_the_input_size():
    calls = []

    def one(x):
        calls.append(1)
        return tf.data.Dataset.from_tensors((x, tf.shape(x)))

    ds = tf.data.Dataset.range(5).batch(2).flat_map(one)
    assert ds.element_spec == (tf.TensorSpec((None,), tf.int64), tf.TensorSpec((1,), tf.int32))
    assert len(calls) == 2  # called at two sizes of the unknown dimension
    assert [list(x) for x, _ in ds.as_numpy_iterator()] == [[0, 1], [2, 3], [4]]
    known = tf.data.Dataset.range(3).flat_map(one)
    assert known.element_spec == (tf.TensorSpec((), tf.int64), tf.TensorSpec((0,), tf.int32))
    assert len(calls) == 2 + 1 + 3  # a known input: one call to learn the spec (then one per element)
