"""GradientTape semantics side by side with TensorFlow: values, None versus zeros, structures, warnings, errors."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _intermediate_sources(tf):
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    return t.gradient(z, [x, y]), t.gradient(z, z), t.gradient(x, x), t.gradient(y, [x, x])


def _output_gradients(tf):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = tf.reduce_sum(y)
    return t.gradient(y, x, output_gradients=tf.constant([2.0, -1.0])), t.gradient([y, z], x)


def _variable_reads_with_assignment(tf):
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        a = v * v  # read at 2.0
        v.assign(5.0)
        b = v * 1.0  # read at 5.0
        y = a + b
    return t.gradient(y, v)


def _variable_target(tf):
    v = tf.Variable(1.0)
    with tf.GradientTape() as t:
        pass
    return t.gradient(v, v)


def _unconnected(tf):
    x = tf.Variable([2.0, 2.0])
    y = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        z = y**2
    return (t.gradient(z, x), t.gradient(z, x, unconnected_gradients="zero"),
            t.gradient(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO))


def _non_trainable(tf):
    v = tf.Variable(2.0, trainable=False)
    w = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = v * w
    return t.gradient(y, [v, w]), [x.name for x in t.watched_variables()]


def _explicit_watch_of_non_trainable(tf):
    v = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as t:
        t.watch(v)
        y = v * v
    return t.gradient(y, v)


def _gradient_inside_context(tf):
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x**3
        g = t.gradient(y, x)
        h = g * 2.0  # not recorded: the non-persistent tape stopped recording
    return g, h


def _persistent_higher_order_in_context(tf):
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x**3
        g = t.gradient(y, x)
    return g, t.gradient(g, x)


def _third_order(tf):
    x = tf.Variable(1.5)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = tf.sin(x) * x**2
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    return d1, d2, t3.gradient(d2, x)


def _hessian_by_components(tf):
    x = tf.constant([0.5, -1.0, 2.0])
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.exp(x) * tf.reduce_prod(x))
        g = inner.gradient(y, x)
        parts = tf.unstack(g)
    return [outer.gradient(p, x) for p in parts]


def _structures(tf):
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)
    c = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(c)
        y = a * b * c
    return t.gradient(y, {"x": [a, (b, c)], "y": {"z": a}})


def _slices_and_stack(tf):
    x = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape() as t:
        y = tf.stack([x[0, ::-1], x[1, 1:] * 2.0 if False else x[1]], axis=0)
        z = tf.reduce_sum(y[:, :2] ** 2) + tf.reduce_sum(tf.concat(tf.split(x, 3, axis=1), 0))
    return t.gradient(z, x)


def _ops_through_integers(tf):
    x = tf.Variable(2.5)
    with tf.GradientTape() as t:
        i = tf.cast(x, tf.int32)
        y = tf.cast(i, tf.float32) * x
    return t.gradient(y, x)


def _ties(tf):
    a = tf.constant(1.0)
    b = tf.constant(1.0)
    v = tf.constant([1.0, 3.0, 3.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([a, b, v])
        m, n, r, ab = tf.maximum(a, b), tf.minimum(a, b), tf.nn.relu(a - b), abs(a - b)
        c, r6, mx = tf.clip_by_value(a, 1.0, 2.0), tf.nn.relu6(a - b), tf.reduce_max(v)
    return (t.gradient(m, [a, b]), t.gradient(n, [a, b]), t.gradient(r, a), t.gradient(ab, a), t.gradient(c, a),
            t.gradient(r6, a), t.gradient(mx, v))


def _complex(tf):
    z = tf.constant(1 + 1j, tf.complex64)
    c = tf.constant(2 + 3j, tf.complex64)
    with tf.GradientTape(persistent=True) as t:
        t.watch(z)
        y = tf.math.real(z * tf.math.conj(z))
        w = z * c
    return t.gradient(y, z), t.gradient(w, z), t.gradient(w, z, output_gradients=tf.constant(1j, tf.complex64))


def _float64(tf):
    x = tf.Variable(np.array([0.5, 1.5]))
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.math.log1p(x) * tf.exp(x))
    return t.gradient(y, x)


def _shuffle_is_not_differentiable(tf):
    x = tf.constant([0.3, 0.5])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.random.shuffle(x) + tf.stop_gradient(x)
    return t.gradient(y, x)


def _imag_of_a_real_tensor(tf):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        i = tf.math.imag(x)
        y = i + tf.math.real(x)
    return t.gradient(i, x), t.gradient(y, x)


def _multiple_tapes(tf):
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = tf.reduce_sum(tf.math.sin(x0) + tf.nn.sigmoid(x1))
    return tape0.gradient(ys, x0), tape1.gradient(ys, x1), tape0.watched_variables()


SNIPPETS = [_intermediate_sources, _output_gradients, _variable_reads_with_assignment, _variable_target,
            _unconnected, _non_trainable, _explicit_watch_of_non_trainable, _gradient_inside_context,
            _persistent_higher_order_in_context, _third_order, _hessian_by_components, _structures,
            _slices_and_stack, _ops_through_integers, _ties, _complex, _float64, _shuffle_is_not_differentiable,
            _imag_of_a_real_tensor, _multiple_tapes]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda f: f.__name__.strip("_"))
def test_gradients_agree_with_tensorflow(snippet):
    assert_same(snippet(tapejax), snippet(tf_real))


@pytest.mark.parametrize("error_case", ["second_call", "watch_float", "stop_recording_outside", "no_gradient"])
def test_errors_agree_with_tensorflow(error_case):
    def run(tf):
        x = tf.constant([0.3, 0.5])
        if error_case == "second_call":
            with tf.GradientTape() as t:
                t.watch(x)
                y = x * x
            t.gradient(y, x)
            t.gradient(y, x)
        elif error_case == "watch_float":
            with tf.GradientTape() as t:
                t.watch(3.0)
        elif error_case == "stop_recording_outside":
            t = tf.GradientTape()
            with t.stop_recording():
                pass
        elif error_case == "no_gradient":
            x0 = tf.Variable([[[0.5, 0.0, 0.0]]])
            with tf.GradientTape() as t:
                y = tf.image.adjust_contrast(x0, 0.1)
            t.gradient(y, x0)

    with pytest.raises(Exception) as expected:
        run(tf_real)
    with pytest.raises(type(expected.value)) as got:
        run(tapejax)
    if error_case != "watch_float":  # tapejax's message adds how to fix it
        assert str(got.value).split(".")[0] == str(expected.value).split(".")[0]


def test_tape_stack_is_per_thread():
    x = tapejax.constant(2.0)
    results = {}
    with tapejax.GradientTape() as t:
        t.watch(x)

        def other_thread():
            results["other"] = x * x  # another thread: not on this thread's tape

        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        y = x * x
    assert t.gradient(results["other"], x) is None
    with tapejax.GradientTape() as t2:
        t2.watch(x)
        y = x * x
    assert float(t2.gradient(y, x)) == 4.0
