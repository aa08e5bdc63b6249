"""tf.numpy_function and tf.py_function against TensorFlow: values, dtypes, gradients (None where TF's is None) and
the exception classes TF's py_func kernel gives, eagerly and inside tf.function. Each snippet takes the module
(`tf`) and runs unchanged on both."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same_outcome  # noqa: E402


def _both(snippet):
    assert_same_outcome(snippet, tapejax, tf_real)


def _wrap(tf, body, compiled):
    return tf.function(body) if compiled else body


VALUES = {
    "numpy_sinh": lambda tf: tf.numpy_function(np.sinh, [tf.constant([0.0, 1.0])], tf.float32),
    "numpy_list": lambda tf: tf.numpy_function(lambda a: (a, a.sum()), [tf.constant([1.0, 2.0])],
                                               [tf.float32, tf.float32]),
    "numpy_int": lambda tf: tf.numpy_function(lambda a: a * 2, [tf.constant([1, 2])], tf.int32),
    "numpy_bool": lambda tf: tf.numpy_function(lambda a: a > 1.5, [tf.constant([1.0, 2.0])], tf.bool),
    "py_square": lambda tf: tf.py_function(lambda a: a * a, [tf.constant([1.0, 2.0])], tf.float32),
    "py_list": lambda tf: tf.py_function(lambda a: (a, tf.reduce_sum(a)), [tf.constant([1.0, 2.0])],
                                         [tf.float32, tf.float32]),
    "py_python_float": lambda tf: tf.py_function(lambda a: 2.5, [tf.constant(1.0)], tf.float32),
    "py_numpy_f64_to_f32": lambda tf: tf.py_function(lambda a: np.float64(2.5), [tf.constant(1.0)], tf.float32),
    "py_int_input": lambda tf: tf.py_function(lambda a, n: a * tf.cast(n, tf.float32), [tf.constant(2.0), 3],
                                              tf.float32),
    "py_no_inputs": lambda tf: tf.py_function(lambda: 3.0, [], tf.float32),
    "py_extra_results_dropped": lambda tf: tf.py_function(lambda a: (a, a, a), [tf.constant(1.0)],
                                                          [tf.float32, tf.float32]),
}


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values(name, compiled):
    snippet = VALUES[name]
    _both(lambda tf: _wrap(tf, lambda: snippet(tf), compiled)())


def test_eager_numpy_function_keeps_numpy_dtypes():
    # eagerly TF converts func's results as they are: Tout is not applied, a tuple gives a list
    _both(lambda tf: tf.numpy_function(lambda a: a.astype(np.float64), [tf.constant([1.0])], tf.float32))
    _both(lambda tf: tf.numpy_function(lambda a: (a, a), [tf.constant([1.0])], tf.float32))
    _both(lambda tf: tf.numpy_function(lambda a, b: a + b, [1.5, 2], tf.float64))
    # (inside tf.function TF's py_function with Tout=[] returns an Operation, which the function cannot return)
    _both(lambda tf: tf.py_function(lambda a: None, [tf.constant(1.0)], []))


MISMATCHES = {
    "numpy_dtype": lambda tf: tf.numpy_function(lambda a: a.astype(np.float64), [tf.constant([1.0])], tf.float32),
    "numpy_python_float": lambda tf: tf.numpy_function(lambda a: 2.5, [tf.constant([1.0])], tf.float32),
    "numpy_count": lambda tf: tf.numpy_function(lambda a: (a, a), [tf.constant([1.0])], tf.float32),
    "numpy_too_few": lambda tf: tf.numpy_function(lambda a: a, [tf.constant([1.0])], [tf.float32, tf.float32]),
    "py_dtype": lambda tf: tf.py_function(lambda a: tf.cast(a, tf.float64), [tf.constant([1.0])], tf.float32),
    "py_too_few": lambda tf: tf.py_function(lambda a: a, [tf.constant([1.0])], [tf.float32, tf.float32]),
    "py_none": lambda tf: tf.py_function(lambda a: None, [tf.constant([1.0])], tf.float32),
}


@pytest.mark.parametrize("name", sorted(MISMATCHES))
def test_results_that_do_not_fit_tout_inside_tf_function(name):
    snippet = MISMATCHES[name]
    _both(lambda tf: tf.function(lambda: snippet(tf))())


def _raiser(error):
    def func(*args):
        raise error("boom")
    return func


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("kind", ["numpy_function", "py_function"])
@pytest.mark.parametrize("error", [ValueError, TypeError, StopIteration, MemoryError, NotImplementedError, KeyError,
                                   ZeroDivisionError, RuntimeError])
def test_exceptions_of_func(error, kind, compiled):
    def snippet(tf):
        return getattr(tf, kind)(_raiser(error), [tf.constant([1.0, 2.0])], tf.float32)
    _both(lambda tf: _wrap(tf, lambda: snippet(tf), compiled)())


def test_argument_errors():
    _both(lambda tf: tf.py_function(lambda a: a, [tf.constant(1.0)], None))
    _both(lambda tf: tf.numpy_function(lambda a: a, [tf.constant(1.0)], None))
    _both(lambda tf: tf.py_function(3, [tf.constant(1.0)], tf.float32))
    _both(lambda tf: tf.py_function(lambda a: a, None, tf.float32))
    _both(lambda tf: tf.py_function(Tout=tf.float32)(lambda a: a * 3)(tf.constant(2.0)))
    _both(lambda tf: tf.numpy_function(Tout=tf.float32)(lambda a: a * 3)(tf.constant(2.0)))


def _gradient(tf, kind, compiled, persistent=False):
    x = tf.constant([1.0, 2.0])

    def call(x):
        return getattr(tf, kind)(lambda a: a * a * a, [x], tf.float32)

    call = tf.function(call) if compiled else call
    with tf.GradientTape(persistent=persistent) as tape:
        tape.watch(x)
        y = call(x)
    return tape.gradient(y, x)


@pytest.mark.parametrize("compiled", [False, True])
def test_py_function_gradient(compiled):
    _both(lambda tf: _gradient(tf, "py_function", compiled))


def test_numpy_function_has_no_gradient():
    _both(lambda tf: _gradient(tf, "numpy_function", False))


def test_py_function_gradient_with_a_tape_inside_tf_function():
    def snippet(tf):
        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(tf.py_function(lambda a: tf.sin(a) * a, [x], tf.float32))
            return tape.gradient(y, x)
        return step(tf.constant([0.5, 1.5]))
    _both(snippet)


def test_py_function_gradient_goes_to_inputs_only():
    def snippet(tf):
        v = tf.Variable([3.0, 4.0])
        c = tf.constant([5.0, 6.0])
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, c])
            y = tf.py_function(lambda a: a * v * c, [x], tf.float32)
            z = tf.py_function(lambda a: a * a, [v], tf.float32)
        return tape.gradient(y, [x, v, c]), tape.gradient(z, v)
    _both(snippet)


def _scaled_sum(a, k):
    return np.sum(a.numpy()) * float(k.numpy())


def test_py_function_in_a_traced_loop():
    def snippet(tf):
        @tf.function
        def f(x):
            s = tf.constant(0.0)
            for i in tf.range(3):
                s += tf.reshape(tf.py_function(_scaled_sum, [x, i], tf.float32), [])  # TF: unknown shape
            return s
        return f(tf.constant([1.0, 2.0]))
    _both(snippet)
