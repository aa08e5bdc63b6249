"""GroupNormalization against a NumPy reference of the formula, eagerly and in tf.function."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf


def _reference(x, groups, gamma, beta, epsilon):
    n, c = x.shape[0], x.shape[-1]
    grouped = x.reshape(n, -1, groups, c // groups)
    mean = grouped.mean(axis=(1, 3), keepdims=True)
    var = grouped.var(axis=(1, 3), keepdims=True)
    return ((grouped - mean) / np.sqrt(var + epsilon)).reshape(x.shape) * gamma + beta


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("groups,shape", [(2, (3, 5, 4)), (4, (2, 3, 3, 8)), (-1, (2, 7, 3))])
def test_matches_the_formula(groups, shape, compiled):
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype("float32")
    layer = tf.keras.layers.GroupNormalization(groups=groups, epsilon=1e-3)
    layer.build(shape)
    gamma, beta = rng.normal(size=shape[-1]), rng.normal(size=shape[-1])
    layer.set_weights([gamma.astype("float32"), beta.astype("float32")])
    run = tf.function(layer) if compiled else layer
    expected = _reference(x.astype("float64"), shape[-1] if groups == -1 else groups, gamma, beta, 1e-3)
    np.testing.assert_allclose(run(tf.constant(x)).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_bad_groups_raise():
    with pytest.raises(ValueError, match="groups"):
        tf.keras.layers.GroupNormalization(groups=0)
    with pytest.raises(ValueError, match="multiple"):
        tf.keras.layers.GroupNormalization(groups=3)(tf.zeros([1, 4]))
