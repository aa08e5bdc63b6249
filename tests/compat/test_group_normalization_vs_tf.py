"""GroupNormalization in tapejax and in TensorFlow's Keras from the same weights: outputs, weights' names and
shapes, errors, and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax
from tests.compat.compare import assert_same, assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

RNG = np.random.default_rng(0)
CASES = [
    ({"groups": 2}, (3, 5, 4)), ({"groups": 4, "epsilon": 0.1}, (2, 3, 3, 8)), ({"groups": -1}, (2, 6, 3)),
    ({"groups": 1, "center": False}, (2, 4, 6)), ({"groups": 3, "scale": False}, (2, 6)),
    ({"groups": 2, "axis": 1}, (2, 4, 5)), ({"groups": 2}, (2, 3, 4), "float16"),
]


def _run(tf, kwargs, shape, dtype, x, weights):
    layer = tf.keras.layers.GroupNormalization(**kwargs, dtype=None if dtype == "float32" else "float32")
    layer.build(shape)
    layer.set_weights([w.astype("float32") for w in weights])
    xt = tf.constant(x.astype(dtype))
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt)
        loss = tf.reduce_sum(tf.cast(y, tf.float32) * np.arange(y.shape[-1], dtype="float32"))
    grads = tape.gradient(loss, [xt] + layer.trainable_weights)
    traced = tf.function(lambda v: layer(v))(xt)
    return (y.numpy(), traced.numpy(), [g.numpy() for g in grads],
            [(w.name, tuple(w.shape)) for w in layer.weights])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_outputs_and_gradients_match_keras(case):
    kwargs, shape, *rest = CASES[case]
    dtype = rest[0] if rest else "float32"
    x = RNG.normal(size=shape) * 3 + 1
    probe = tf_real.keras.layers.GroupNormalization(**kwargs)
    probe.build(shape)
    weights = [RNG.normal(size=w.shape) for w in probe.get_weights()]
    got = _run(tapejax, kwargs, shape, dtype, x, weights)
    expected = _run(tf_real, kwargs, shape, dtype, x, weights)
    tolerance = 2e-3 if dtype == "float16" else 2e-5
    for g, e in zip(got[:2], expected[:2]):
        np.testing.assert_allclose(g, e, rtol=tolerance, atol=tolerance)
    for g, e in zip(got[2], expected[2]):
        np.testing.assert_allclose(g, e, rtol=tolerance, atol=tolerance * 10)
    assert got[3] == expected[3]
    assert got[0].dtype == expected[0].dtype


@pytest.mark.parametrize("snippet", [
    lambda tf: tf.keras.layers.GroupNormalization(groups=0),
    lambda tf: tf.keras.layers.GroupNormalization(groups=2.0),
    lambda tf: tf.keras.layers.GroupNormalization(groups=8)(np.zeros((1, 4), "float32")),
    lambda tf: tf.keras.layers.GroupNormalization(groups=3)(np.zeros((1, 4), "float32")),
    lambda tf: tf.keras.layers.GroupNormalization(groups=2)(np.ones((2, 4), "float32")).numpy(),
])
def test_errors_and_constant_inputs_match_keras(snippet):
    assert_same_outcome(snippet, tapejax, tf_real)


def test_in_a_functional_model_as_keras():
    def build(tf):
        inputs = tf.keras.Input((4, 4, 6))
        return tf.keras.Model(inputs, tf.keras.layers.GroupNormalization(3)(inputs)).output_shape

    assert_same(build(tapejax), build(tf_real))
