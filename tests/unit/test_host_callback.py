"""tf.numpy_function and tf.py_function: values against numpy, gradients against JAX, how often `func` runs, the
static shapes inside tf.function, and TF's exception classes (host_callback.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tapejax as tf
from tapejax._src import errors

ARRAYS = hnp.arrays(np.float32, hnp.array_shapes(max_dims=2, max_side=4),
                    # XLA:CPU flushes denormals to zero (README, "Differences from TensorFlow"): a traced step's
                    # result may be 0 where numpy's is 1e-40
                    elements=st.floats(-3, 3, width=32, allow_subnormal=False))


@settings(max_examples=20, deadline=None)
@given(ARRAYS)
def test_numpy_function_matches_numpy_eagerly_and_traced(a):
    expected = np.tanh(a) * 2
    eager = tf.numpy_function(lambda v: np.tanh(v) * 2, [tf.constant(a)], tf.float32)
    traced = tf.function(lambda x: tf.numpy_function(lambda v: np.tanh(v) * 2, [x], tf.float32))(tf.constant(a))
    np.testing.assert_allclose(eager.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(traced.numpy(), expected, rtol=1e-6)
    assert traced.shape == a.shape


def _cubic(a):
    return a * a * a + tf.sin(a)


@pytest.mark.parametrize("where", ["eager", "function_outside", "function_inside"])
def test_py_function_gradient_is_jax_gradient(where):
    x = tf.constant([0.3, -1.2, 2.0])
    expected = jax.grad(lambda v: jnp.sum(v ** 3 + jnp.sin(v)))(jnp.asarray(x.numpy()))
    if where == "function_inside":
        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(tf.py_function(_cubic, [x], tf.float32))
            return tape.gradient(y, x)
        got = step(x)
    else:
        call = (lambda v: tf.py_function(_cubic, [v], tf.float32))
        call = tf.function(call) if where == "function_outside" else call
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(call(x))
        got = tape.gradient(y, x)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)


def test_py_function_jacobian_and_second_gradient_of_a_persistent_tape():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a * a * a, [x], tf.float32)
    first, second = tape.gradient(y, x), tape.gradient(y, x)  # TF's tape cache fails the second one
    np.testing.assert_allclose(first.numpy(), second.numpy())
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag(3 * x.numpy() ** 2))


def test_func_runs_once_per_call_plus_one_trial_per_trace():
    calls = []

    def func(a):
        calls.append(1)
        return a + 1

    f = tf.function(lambda x: tf.numpy_function(func, [x], tf.float32))
    for _ in range(3):
        f(tf.constant([1.0]))
    assert len(calls) == 1 + 3
    calls.clear()
    g = tf.function(lambda x: tf.numpy_function(func, [x], tf.TensorSpec([1], tf.float32)))
    for _ in range(3):
        g(tf.constant([1.0]))
    assert len(calls) == 3  # full shapes in Tout: no trial call


def test_trial_call_uses_zeros_and_a_changed_shape_raises():
    f = tf.function(lambda x: tf.numpy_function(lambda a: a[a > 0], [x], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        f(tf.constant([1.0, -1.0]))  # zeros gave shape (0,), the real call (1,)


def test_stateless_and_constant_inputs_still_run_at_call_time():
    calls = []
    f = tf.function(lambda: tf.numpy_function(lambda: calls.append(1) or np.float32(2), [], tf.float32,
                                              stateful=False))
    assert float(f()) == 2.0 and float(f()) == 2.0
    assert len(calls) == 3  # the trial, then each call


def test_input_signature_with_unknown_dimensions():
    f = tf.function(lambda x: tf.py_function(lambda a: a * 2, [x], tf.float32),
                    input_signature=[tf.TensorSpec([None], tf.float32)])
    for n in (2, 3):
        np.testing.assert_allclose(f(tf.ones([n])).numpy(), np.full(n, 2.0))


@pytest.mark.parametrize("error, expected", [(ValueError, tf.errors.InvalidArgumentError),
                                             (TypeError, tf.errors.InvalidArgumentError),
                                             (StopIteration, tf.errors.OutOfRangeError),
                                             (NotImplementedError, tf.errors.UnimplementedError),
                                             (KeyError, tf.errors.UnknownError)])
def test_exceptions_at_run_time_get_tfs_class(error, expected):
    state = {"fail": False}

    def func(a):
        if state["fail"]:
            raise error("boom")
        return a

    f = tf.function(lambda x: tf.py_function(func, [x], tf.float32))
    f(tf.constant(1.0))  # traced: the trial passes
    state["fail"] = True
    with pytest.raises(expected, match="boom"):
        f(tf.constant(1.0))
    assert not errors.HOST_FAILURES  # each failure is handed back once


def test_host_failures_are_bounded():
    for _ in range(errors._MAX_HOST_FAILURES + 10):
        errors.host_failure(errors.UnknownError(None, None, "x"))
    assert len(errors.HOST_FAILURES) == errors._MAX_HOST_FAILURES
    errors.HOST_FAILURES.clear()


def test_second_derivative_through_py_function_is_zero():
    # TF gives None (no higher derivatives through EagerPyFunc); tapejax's backward callback is a constant to JAX
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.py_function(lambda a: a * a * a, [x], tf.float32)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_array_equal(outer.gradient(g, x).numpy(), [0.0, 0.0])
