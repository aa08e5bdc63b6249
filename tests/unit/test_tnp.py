"""tf.experimental.numpy on tapejax: NumPy's dtype rules (numpy is the oracle), gradients through its functions
(JAX's), and tracing inside tf.function."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

tnp = tf.experimental.numpy


@pytest.mark.parametrize("operands", [(np.int32, 2.5), (np.int32, np.float32), (np.float32, 2.0), (np.float32, np.float64),
                                      (np.int8, np.uint8), (np.int32, 2)])
def test_binary_promotion_is_numpys(operands):
    values = [np.ones(2, x) if isinstance(x, type) else x for x in operands]
    ours = tnp.add(*[tf.constant(v) if isinstance(v, np.ndarray) else v for v in values])
    assert ours.dtype.name == np.add(*values).dtype.name


@pytest.mark.parametrize("name", ["sin", "exp", "sqrt", "mean", "sum", "cumsum", "true_divide", "std"])
def test_integer_inputs_take_numpys_result_dtype(name):
    x = np.arange(1, 5, dtype=np.int32)
    args = (x, x) if name == "true_divide" else (x,)
    ours = getattr(tnp, name)(*[tf.constant(a) for a in args])
    expected = getattr(np, name)(*args)
    assert ours.dtype.name == np.asarray(expected).dtype.name
    np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-12)


def test_python_values_become_float64_and_int64():
    assert tnp.asarray([1.0, 2.0]).dtype == tf.float64
    assert tnp.asarray([[1, 2]]).dtype == tf.int64
    assert tnp.ones(3).dtype == tf.float64 and tnp.arange(3).dtype == tf.int64


def _loss_tnp(x):
    y = tnp.matmul(x, tnp.transpose(x))
    return tnp.sum(tnp.square(tnp.tanh(y)) + tnp.logaddexp(x[:, :1], 0.5)) + tnp.mean(tnp.sinc(x)) + tnp.std(x)


def _loss_jnp(x):
    y = x @ x.T
    return jnp.sum(jnp.tanh(y) ** 2 + jnp.logaddexp(x[:, :1], 0.5)) + jnp.mean(jnp.sinc(x)) + jnp.std(x)


def test_gradient_through_tnp_is_jaxs():
    value = np.random.default_rng(0).normal(size=(3, 4))
    x = tf.Variable(value)
    with tf.GradientTape() as tape:
        loss = _loss_tnp(x)
    np.testing.assert_allclose(loss.numpy(), _loss_jnp(jnp.asarray(value)), rtol=1e-10)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), jax.grad(_loss_jnp)(jnp.asarray(value)), rtol=1e-10)


def test_tnp_inside_tf_function_equals_eager():
    value = np.random.default_rng(1).normal(size=(3, 4))
    step = tf.function(lambda x: _loss_tnp(x))
    np.testing.assert_allclose(step(tf.constant(value)).numpy(), _loss_tnp(tf.constant(value)).numpy(), rtol=1e-12)


def test_random_is_seeded_and_numpy_typed():
    tnp.random.seed(3)
    a = tnp.random.randn(2, 3)
    tnp.random.seed(3)
    b = tnp.random.randn(2, 3)
    assert a.dtype == tf.float64 and a.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    ints = tnp.random.randint(2, 5, size=(100,)).numpy()
    assert ints.dtype == np.int64 and ints.min() >= 2 and ints.max() < 5


def test_missing_name_says_so():
    with pytest.raises(AttributeError, match="tf.experimental.numpy.no_such_function"):
        tnp.no_such_function  # noqa: B018
