"""tf.data behaviour that real programs (tests/programs/data_performance.py, data_guide_windows.py) need: generator
values under a leaf of the signature, generator arguments as numpy scalars, a returned list as a tuple of
components, string zeros, window datasets' repr and iterator checkpoints."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tapejax as tf


def values(ds):
    return [tf.nest.map_structure(lambda a: np.asarray(a).tolist(), e) for e in ds.as_numpy_iterator()]


def test_a_generator_may_yield_a_tuple_where_the_signature_has_one_tensor():
    ds = tf.data.Dataset.from_generator(lambda: ((i,) for i in range(3)),
                                        output_signature=tf.TensorSpec((1,), tf.int64))
    assert values(ds) == [[0], [1], [2]]
    nested = tf.data.Dataset.from_generator(
        lambda: iter([({"a": (1, 2)}, ("x",))]),
        output_signature=({"a": tf.TensorSpec((2,), tf.int32)}, tf.TensorSpec((1,), tf.string)))
    assert values(nested) == [({"a": [1, 2]}, [b"x"])]


@pytest.mark.parametrize("value", [(1, 2, 3), [[1, 2], 3], 5])
def test_a_generator_value_that_does_not_fit_the_signature_above_its_leaves_raises(value):
    ds = tf.data.Dataset.from_generator(lambda: iter([value]),
                                        output_signature=(tf.TensorSpec((), tf.int64), tf.TensorSpec((), tf.int64)))
    with pytest.raises(TypeError, match="did not match the expected structure"):
        list(ds)


def test_generator_args_arrive_as_numpy_scalars_and_arrays():
    seen = []

    def gen(*args):
        seen.append(args)
        yield 0

    list(tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32),
                                        args=(3, 1.5, "s", [1, 2], tf.constant(7, tf.int64))))
    count, rate, text, pair, seven = seen[0]
    assert type(count) is np.int32 and count == 3
    assert type(rate) is np.float32 and rate == 1.5
    assert text == b"s"
    assert isinstance(pair, np.ndarray) and pair.dtype == np.int32 and pair.tolist() == [1, 2]
    assert type(seven) is np.int64 and {seven: "hashable"}[7] == "hashable"


def test_a_function_that_returns_a_list_gives_a_tuple_of_components():
    ds = tf.data.Dataset.range(3).map(lambda x: [x, tf.cast(x, tf.float32) * 2.0])
    assert ds.element_spec == (tf.TensorSpec((), tf.int64), tf.TensorSpec((), tf.float32))
    assert values(ds) == [(0, 0.0), (1, 2.0), (2, 4.0)]
    strings = tf.data.Dataset.from_tensor_slices(["ab", "c"]).map(
        lambda s: tf.py_function(lambda t: (t, tf.strings.length(t)), [s], (tf.string, tf.int32)))
    assert values(strings) == [(b"ab", 2), (b"c", 1)]
    # A list given as data is still one tensor.
    assert values(tf.data.Dataset.from_tensors([1, 2])) == [[1, 2]]


def test_string_zeros_are_empty_strings():
    z = tf.zeros([0, 1], dtype=tf.string)
    assert z.dtype == tf.string and z.shape == (0, 1)
    grown = tf.concat((tf.concat((z, [["a"]]), axis=0), tf.constant([["b"]])), axis=0)
    assert grown.numpy().tolist() == [[b"a"], [b"b"]]
    assert tf.zeros([2], tf.string).numpy().tolist() == [b"", b""]
    assert tf.zeros_like(tf.constant(["x", "y"])).numpy().tolist() == [b"", b""]
    assert tf.zeros_like(tf.constant([1.5]), dtype=tf.string).numpy().tolist() == [b""]
    assert tf.zeros_like(tf.constant([1.5])).numpy().tolist() == [0.0]


def test_a_window_is_a_variant_dataset():
    window = next(iter(tf.data.Dataset.range(4).window(2)))
    assert repr(window) == "<_VariantDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert [int(x) for x in window] == [0, 1]


def test_an_iterator_checkpoint_restores_its_position(tmp_path):
    iterator = iter(tf.data.Dataset.range(20).map(lambda x: x * 10).batch(2))
    ckpt = tf.train.Checkpoint(step=tf.Variable(0), iterator=iterator)
    assert [int(next(iterator)[0]) for _ in range(3)] == [0, 20, 40]
    path = ckpt.save(os.path.join(tmp_path, "ckpt"))
    assert [int(next(iterator)[0]) for _ in range(2)] == [60, 80]
    ckpt.restore(path)
    assert int(next(iterator)[0]) == 60
    # A new iterator of the same pipeline, restored, resumes where the saved one was.
    fresh = iter(tf.data.Dataset.range(20).map(lambda x: x * 10).batch(2))
    tf.train.Checkpoint(step=tf.Variable(0), iterator=fresh).restore(path).assert_consumed()
    assert [int(x[0]) for x in fresh] == [60, 80, 100, 120, 140, 160, 180]


def test_an_iterator_restored_past_its_end_is_exhausted(tmp_path):
    iterator = iter(tf.data.Dataset.range(3))
    ckpt = tf.train.Checkpoint(iterator=iterator)
    assert [int(x) for x in iterator] == [0, 1, 2]
    path = ckpt.save(os.path.join(tmp_path, "ckpt"))
    short = iter(tf.data.Dataset.range(2))
    tf.train.Checkpoint(iterator=short).restore(path)
    with pytest.raises(StopIteration):
        next(short)
