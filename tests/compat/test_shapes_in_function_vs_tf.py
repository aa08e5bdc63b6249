"""Shapes under tf.function side by side with TensorFlow: shapes, sizes and ranks computed inside a tf.function
(traced for the arguments' shapes, and under an input_signature with None dimensions) used as the shapes, depths,
bounds and axes of other ops give TF's values, dtypes and shapes."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

RNG = np.random.default_rng(1)
X = RNG.normal(size=(2, 3, 4)).astype(np.float32)
LABELS = np.array([1, 0], np.int32)


def _patterns(tf, x, labels):
    shape = tf.shape(x)
    return (
        tf.reshape(x, tf.concat([shape[:-1] * 2, [-1]], 0)[1:]),
        tf.zeros([shape[0], 7], tf.int64),
        tf.fill(shape[1:], 2.5),
        tf.tile(x, [1, shape[0], 1]),
        tf.broadcast_to(x[:, :1], shape),
        tf.one_hot(labels, depth=shape[-1]),
        tf.range(shape[0] * 3, delta=shape[0]),
        x[:shape[0] - 1, 1:shape[1]],
        tf.pad(x, [[0, shape[0]], [0, 0], [1, 0]]),
        tf.transpose(x, tf.range(tf.rank(x))[::-1]),
        tf.reduce_sum(x, axis=tf.rank(x) - 1),
        tf.split(x, [1, shape[2] - 1], axis=2),
        tf.shape(x, out_type=tf.int64),
        tf.size(x),
        tf.rank(x),
        tf.sequence_mask(labels + 1, shape[-1]),
        tf.linspace(0.0, 1.0, shape[2]),
        tf.shape(tf.random.normal(shape)),
        tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, tf.reshape(x, [shape[0], -1])),
    )


@pytest.mark.parametrize("signature", ["shapes", "none_dims"])
def test_shape_patterns_inside_tf_function_agree_with_tf(signature):
    def run(tf):
        specs = None
        if signature == "none_dims":
            specs = [tf.TensorSpec([None, None, None], tf.float32), tf.TensorSpec([None], tf.int32)]
        f = tf.function(lambda x, labels: _patterns(tf, x, labels), input_signature=specs)
        return f(tf.constant(X), tf.constant(LABELS))

    assert_same(run(tapejax), run(tf_real), any_sequence=True)


def test_a_partially_known_static_shape_raises_value_error_in_both():
    def run(tf):
        f = tf.function(lambda x: tf.zeros(x.shape), input_signature=[tf.TensorSpec([None, 4], tf.float32)])
        with pytest.raises(ValueError, match=r"Cannot convert a partially known TensorShape \(None, 4\)"):
            f(tf.constant(X[0]))
        return True

    assert run(tapejax) and run(tf_real)
