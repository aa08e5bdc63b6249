"""tf.Module and the Keras layers the guides use: naming, weight discovery, building, statistics."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf


class _Inner(tf.Module):
    def __init__(self):
        super().__init__()
        self.b = tf.Variable(1.0, name="b")
        self.a = [tf.Variable(2.0, name="a"), {"z": tf.Variable(3.0, name="z", trainable=False)}]


class _Outer(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.inner = _Inner()
        self.same_inner_again = self.inner
        self.w = tf.Variable(4.0, name="w")


def test_module_finds_variables_in_sorted_attribute_order_breadth_first_once():
    outer = _Outer()
    assert outer.name == "_outer"
    assert [v.name for v in outer.variables] == ["w:0", "a:0", "z:0", "b:0"]
    assert [v.name for v in outer.trainable_variables] == ["w:0", "a:0", "b:0"]
    assert [v.name for v in outer.non_trainable_variables] == ["z:0"]
    assert [m.name for m in outer.submodules] == ["_inner"]


def test_module_name_scope_names_variables():
    module = _Outer(name="model")
    with module.name_scope:
        v = tf.Variable(1.0, name="kernel")
    assert v.name == "model/kernel:0"


def test_dense_layers_get_unique_names_and_build_on_first_call():
    first, second = tf.keras.layers.Dense(2), tf.keras.layers.Dense(3, activation="relu", use_bias=False)
    assert first.name != second.name and second.name.startswith("dense_")
    assert not first.built and first.trainable_variables == []
    x = tf.constant(np.ones((4, 5), np.float32))
    assert first(x).shape == (4, 2) and second(x).shape == (4, 3)
    assert [v.path for v in first.trainable_variables] == [f"{first.name}/kernel", f"{first.name}/bias"]
    assert [v.name for v in first.trainable_variables] == ["kernel", "bias"]  # Keras 3's short names
    assert first.kernel.shape == (5, 2) and len(second.weights) == 1
    assert float(tf.reduce_min(second(x))) >= 0.0  # relu by name


def test_dense_is_what_it_says():
    layer = tf.keras.layers.Dense(3, activation=tf.nn.elu)
    x0 = np.random.default_rng(0).normal(size=(4, 2)).astype(np.float32)
    y = layer(tf.constant(x0)).numpy()
    z = x0 @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(y, np.where(z > 0, z, np.expm1(z)), rtol=1e-5, atol=1e-6)


def test_glorot_uniform_is_seeded_and_bounded():
    tf.random.set_seed(3)
    a = tf.keras.initializers.GlorotUniform()([50, 30]).numpy()
    tf.random.set_seed(3)
    b = tf.keras.initializers.GlorotUniform()([50, 30]).numpy()
    np.testing.assert_array_equal(a, b)
    assert np.abs(a).max() <= np.sqrt(6 / 80) and a.std() > 0.5 * np.sqrt(6 / 80) / np.sqrt(3)


def test_batch_normalization_training_and_inference():
    bn = tf.keras.layers.BatchNormalization(momentum=0.5)
    x0 = np.random.default_rng(1).normal(3.0, 2.0, size=(16, 4)).astype(np.float32)
    y = bn(tf.constant(x0), training=True).numpy()
    np.testing.assert_allclose(y.mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(y.var(axis=0), x0.var(axis=0) / (x0.var(axis=0) + 1e-3), rtol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.5 * x0.mean(axis=0), rtol=1e-5)
    assert [v.name for v in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]
    inference = bn(tf.constant(x0), training=False).numpy()
    expected = (x0 - bn.moving_mean.numpy()) / np.sqrt(bn.moving_variance.numpy() + 1e-3)
    np.testing.assert_allclose(inference, expected, rtol=1e-5, atol=1e-5)


def test_unknown_names_fail_clearly():
    with pytest.raises(ValueError, match="Could not interpret activation function identifier: rellu"):
        tf.keras.layers.Dense(2, activation="rellu")
    with pytest.raises(ValueError, match="Unknown initializer"):
        tf.keras.layers.Dense(2, kernel_initializer="glorot")(tf.ones([1, 2]))
