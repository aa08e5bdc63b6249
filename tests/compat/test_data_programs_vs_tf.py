"""tf.data behaviour that the corpus programs data_performance.py and data_guide_windows.py need, side by side with
TensorFlow: generator values under a leaf of the signature, generator arguments, a returned list, string zeros,
a window's repr and an iterator checkpoint's resumed position."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _leaf(value):
    array = np.asarray(value)
    return repr(array.tolist()) if array.dtype.kind in "OSU" else array  # strings: compared as text


def _elements(tf, ds):
    return [tf.nest.map_structure(_leaf, e) for e in ds.as_numpy_iterator()]


def _spec(tf, ds):
    return tf.nest.map_structure(lambda s: (tuple(s.shape.as_list()), s.dtype.name), ds.element_spec)


PIPELINES = {
    "generator_tuple_leaf": lambda tf: tf.data.Dataset.from_generator(
        lambda: ((i,) for i in range(3)), output_signature=tf.TensorSpec((1,), tf.int64)),
    "generator_nested_leaves": lambda tf: tf.data.Dataset.from_generator(
        lambda: iter([({"a": (1, 2)}, [("x",), ("y",)])]),
        output_signature=({"a": tf.TensorSpec((2,), tf.int32)}, tf.TensorSpec((2, 1), tf.string))),
    "map_returns_list": lambda tf: tf.data.Dataset.range(3).map(lambda x: [x, tf.cast(x, tf.float32) * 2.0]),
    "map_returns_list_of_strings": lambda tf: tf.data.Dataset.from_tensor_slices(["ab", "c"]).map(
        lambda s: [s, tf.strings.length(s)]),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_agrees(name):
    ours, theirs = PIPELINES[name](tapejax), PIPELINES[name](tf_real)
    assert_same(_elements(tapejax, ours), _elements(tf_real, theirs))
    assert _spec(tapejax, ours) == _spec(tf_real, theirs)


def _generator_args(tf):
    seen = []

    def gen(*args):
        seen.append(args)
        yield 0

    list(tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32),
                                        args=(3, 1.5, "s", [1, 2], tf.constant(7, tf.int64), True)))
    return [(type(a).__name__, str(getattr(a, "dtype", "")), np.asarray(a).tolist()) for a in seen[0]]


def test_generator_args_agree():
    assert _generator_args(tapejax) == _generator_args(tf_real)


def _string_zeros(tf):
    grown = tf.concat((tf.zeros([0, 1], dtype=tf.string), [["Train"]]), axis=0)
    return (grown.numpy(), tf.zeros([2], tf.string).numpy(), tf.zeros_like(tf.constant(["x"])).numpy(),
            tf.tile([[["1st map"]]], [2, 1, 1]).numpy())


def test_string_zeros_agree():
    assert [a.tolist() for a in _string_zeros(tapejax)] == [a.tolist() for a in _string_zeros(tf_real)]


def test_window_repr_agrees():
    assert repr(next(iter(tapejax.data.Dataset.range(4).window(2)))) == \
        repr(next(iter(tf_real.data.Dataset.range(4).window(2))))


def _resumed(tf, directory):
    iterator = iter(tf.data.Dataset.range(20).map(lambda x: x * 10).batch(3))
    ckpt = tf.train.Checkpoint(step=tf.Variable(0), iterator=iterator)
    manager = tf.train.CheckpointManager(ckpt, os.path.join(directory, "ckpt"), max_to_keep=3)
    first = [next(iterator).numpy().tolist() for _ in range(2)]
    manager.save()
    second = [next(iterator).numpy().tolist() for _ in range(2)]
    ckpt.restore(manager.latest_checkpoint)
    again = [next(iterator).numpy().tolist() for _ in range(2)]
    fresh = iter(tf.data.Dataset.range(20).map(lambda x: x * 10).batch(3))
    tf.train.Checkpoint(step=tf.Variable(0), iterator=fresh).restore(manager.latest_checkpoint)
    return first, second, again, [x.numpy().tolist() for x in fresh]


def test_iterator_checkpoint_resumes_where_tf_does(tmp_path):
    assert _resumed(tapejax, tmp_path / "tapejax") == _resumed(tf_real, tmp_path / "tf")
