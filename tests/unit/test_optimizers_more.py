"""Nadam, Adamax, Lion, Adadelta: each step is the documented Keras formula (a NumPy reference below), eagerly
and inside tf.function; Nadam's momentum-schedule product advances only with a step that succeeds."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf


def _nadam(w, gs, lr=0.01, b1=0.9, b2=0.999, eps=1e-7):
    m = v = np.zeros_like(w)
    product = 1.0
    for t, g in enumerate(gs, start=1):
        u_t, u_next = b1 * (1 - 0.5 * 0.96 ** t), b1 * (1 - 0.5 * 0.96 ** (t + 1))
        product *= u_t
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        m_hat = u_next * m / (1 - product * u_next) + (1 - u_t) * g / (1 - product)
        w = w - lr * m_hat / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return w


def _adamax(w, gs, lr=0.01, b1=0.9, b2=0.999, eps=1e-7):
    m = u = np.zeros_like(w)
    for t, g in enumerate(gs, start=1):
        m, u = b1 * m + (1 - b1) * g, np.maximum(b2 * u, np.abs(g))
        w = w - lr * m / ((1 - b1 ** t) * (u + eps))
    return w


def _lion(w, gs, lr=0.01, b1=0.9, b2=0.99):
    m = np.zeros_like(w)
    for g in gs:
        w = w - lr * np.sign(b1 * m + (1 - b1) * g)
        m = b2 * m + (1 - b2) * g
    return w


def _adadelta(w, gs, lr=0.01, rho=0.95, eps=1e-7):
    a = d = np.zeros_like(w)
    for g in gs:
        a = rho * a + (1 - rho) * g * g
        delta = -np.sqrt(d + eps) * g / np.sqrt(a + eps)
        d = rho * d + (1 - rho) * delta * delta
        w = w + lr * delta
    return w


REFERENCES = {"Nadam": _nadam, "Adamax": _adamax, "Lion": _lion, "Adadelta": _adadelta}


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_steps_follow_the_documented_formula(name, compiled):
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(4,))
    grads = [rng.normal(size=(4,)) for _ in range(4)]
    var = tf.Variable(w0.astype("float32"))
    optimizer = getattr(tf.keras.optimizers, name)(learning_rate=0.01)

    def step(g):
        optimizer.apply_gradients([(g, var)])

    run = tf.function(step) if compiled else step
    for g in grads:
        run(tf.constant(g.astype("float32")))
    np.testing.assert_allclose(var.numpy(), REFERENCES[name](w0, grads), rtol=2e-5, atol=1e-6)
    assert int(optimizer.iterations) == 4
    assert isinstance(tf.keras.optimizers.get(name.lower()), getattr(tf.keras.optimizers, name))


def test_nadam_schedule_product_advances_only_with_a_successful_step():
    var = tf.Variable([1.0, 2.0])
    optimizer = tf.keras.optimizers.Nadam(0.1)
    optimizer.apply_gradients([(tf.constant([1.0, 1.0]), var)])
    product = float(optimizer._u_product.numpy())
    np.testing.assert_allclose(product, 0.9 * (1 - 0.5 * 0.96), rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError):
        optimizer.apply_gradients([(tf.constant([1.0]), var)])
    assert float(optimizer._u_product.numpy()) == product and int(optimizer.iterations) == 1
    assert any(v is optimizer._u_product for v in optimizer.variables)


@pytest.mark.parametrize("name", ["Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"])
def test_legacy_optimizers_raise_keras3s_import_error(name):
    with pytest.raises(ImportError, match="tf_keras"):
        getattr(tf.keras.optimizers.legacy, name)(learning_rate=0.1)


@pytest.mark.parametrize("branch", [False, True])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_in_a_loop_inside_tf_function_is_the_eager_loop(name, branch):
    # a tf.range loop (and a tf.cond branch) inside tf.function is captured and replayed: Nadam's schedule product
    # must advance in the replayed steps too
    def run(compiled):
        w = tf.Variable([1.0, -2.0])
        optimizer = getattr(tf.keras.optimizers, name)(0.1)

        def step(i):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(w * w * tf.cast(i + 1, tf.float32))
            grads = tape.gradient(loss, [w])
            if branch:
                tf.cond(i % 2 == 0, lambda: optimizer.apply_gradients(zip(grads, [w])), lambda: optimizer.iterations)
            else:
                optimizer.apply_gradients(zip(grads, [w]))

        def loop(n):
            for i in tf.range(n):
                step(i)

        (tf.function(loop) if compiled else loop)(tf.constant(4))
        return [v.numpy() for v in (w, *optimizer.variables)]

    for got, want in zip(run(True), run(False), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
