"""A repeated gradient call (repeated.py) answers from the plan the plain path learnt, and only where the plain path
would give the same answer: each case that must fall back is checked against the plain path's answer."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import checking, executables, repeated

W0 = np.linspace(-0.5, 1.0, 16, dtype=np.float32)


def _chain(h, op=tf.tanh):
    for i in range(6):
        h = op(h) if i % 2 == 0 else h * 1.5
    return h


def _grad_jnp(w):
    def f(h):
        for i in range(6):
            h = jnp.tanh(h) if i % 2 == 0 else h * np.float32(1.5)
        return jnp.sum(h)

    return np.asarray(jax.grad(f)(jnp.asarray(w)))


@pytest.fixture
def answered(monkeypatch):
    """The calls the plan answered (in checking mode the plain path then runs too, and must agree)."""
    calls = []
    plan_gradient = repeated.gradient

    def counted(*args):
        out = plan_gradient(*args)
        if out is not None:
            calls.append(out)
        return out

    monkeypatch.setattr(repeated, "gradient", counted)
    repeated.clear()
    executables.CACHE.clear()
    return calls


def _step(w, op=tf.tanh):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(_chain(w, op))
    return tape.gradient(loss, w), loss


def test_a_training_step_takes_the_plan_once_compiled(answered):
    w = tf.Variable(W0)
    for k in range(6):
        g, loss = _step(w)
        np.testing.assert_allclose(g.numpy(), _grad_jnp(W0 - 0.1 * k), rtol=1e-5)
        np.testing.assert_allclose(loss.numpy(), np.sum(_chain(tf.constant(W0 - 0.1 * k)).numpy()), rtol=1e-6)
        w.assign_sub(0.1 * np.ones_like(W0))
    assert len(answered) == 4  # run 1: the sweep; run 2: compiled (and learnt); runs 3-6: the plan
    assert executables.CACHE.stats["compiled"] == 1


def test_the_plan_gives_exactly_the_plain_paths_values(answered, monkeypatch):
    w = tf.Variable(W0)
    for _ in range(3):
        fast, fast_loss = _step(w)
    monkeypatch.setattr(repeated, "gradient", lambda *args: None)
    plain, plain_loss = _step(w)
    np.testing.assert_array_equal(fast.numpy(), plain.numpy())  # the same executable, on the same arguments
    np.testing.assert_array_equal(fast_loss.numpy(), plain_loss.numpy())


def test_sources_as_a_nest_and_variables_read_twice(answered):
    a, b = tf.Variable(W0), tf.Variable(2.0)
    for _ in range(4):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(a * b) + a * b)  # `a` and `b` are read twice
        grads = tape.gradient(loss, {"a": a, "b": [b]})
    t = np.tanh(W0 * 2.0)
    np.testing.assert_allclose(grads["a"].numpy(), 2.0 * (1 - t ** 2) + 2.0, rtol=1e-5)
    np.testing.assert_allclose(grads["b"][0].numpy(), np.sum(W0 * (1 - t ** 2) + W0), rtol=1e-5)
    assert len(answered) == 2


@pytest.mark.parametrize("case", ["new shape", "intermediate kept", "output_gradients", "outer tape",
                                  "watched tensor", "unconnected", "variable target", "caches cleared"])
def test_calls_the_plan_does_not_cover_take_the_plain_path(answered, case):
    w = tf.Variable(W0)
    for _ in range(3):
        _step(w)
    assert len(answered) == 1
    if case == "new shape":
        v = tf.Variable(W0[:5])
        g, _ = _step(v)
        np.testing.assert_allclose(g.numpy(), _grad_jnp(W0[:5]), rtol=1e-5)
    elif case == "intermediate kept":  # another deferred value wanted: another executable
        with tf.GradientTape() as tape:
            h = _chain(w)
            loss = tf.reduce_sum(h)
        g = tape.gradient(loss, w)
        np.testing.assert_allclose(g.numpy(), _grad_jnp(W0), rtol=1e-5)
        np.testing.assert_allclose(h.numpy(), _chain(tf.constant(W0)).numpy(), rtol=1e-6)
    elif case == "output_gradients":
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(_chain(w))
        g = tape.gradient(loss, w, output_gradients=tf.constant(3.0))
        np.testing.assert_allclose(g.numpy(), 3.0 * _grad_jnp(W0), rtol=1e-5)
    elif case == "outer tape":  # the call is recorded on the outer tape: a second derivative through it
        with tf.GradientTape() as outer:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(_chain(w))
            g = tape.gradient(loss, w)
            s = tf.reduce_sum(g)
        hess_sum = outer.gradient(s, w)
        expected = jax.grad(lambda x: jnp.sum(jax.grad(lambda h: jnp.sum(_chain_jnp(h)))(x)))(jnp.asarray(W0))
        np.testing.assert_allclose(hess_sum.numpy(), expected, rtol=1e-4)
    elif case == "watched tensor":
        x = tf.constant(W0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(_chain(x))
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), _grad_jnp(W0), rtol=1e-5)
    elif case == "unconnected":
        other = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(_chain(w))
        g, none = tape.gradient(loss, [w, other])
        assert none is None
        np.testing.assert_allclose(g.numpy(), _grad_jnp(W0), rtol=1e-5)
    elif case == "variable target":
        with tf.GradientTape() as tape:
            _chain(w)
        np.testing.assert_array_equal(tape.gradient(w, w).numpy(), np.ones_like(W0))
    elif case == "caches cleared":  # the plain path's Lowered is new: op by op again, as the policy says
        tf.debugging.clear_caches()
        executables.CACHE.clear()
        g, _ = _step(w)
        np.testing.assert_allclose(g.numpy(), _grad_jnp(W0), rtol=1e-5)
        assert executables.CACHE.stats["eager: history"] == 1
    assert len(answered) == 1


def _chain_jnp(h):
    for i in range(6):
        h = jnp.tanh(h) if i % 2 == 0 else h * np.float32(1.5)
    return h


def test_inside_tf_function_the_trace_takes_the_plain_path(answered):
    w = tf.Variable(W0)
    for _ in range(3):
        _step(w)
    g = tf.function(lambda: _step(w)[0])()
    np.testing.assert_allclose(g.numpy(), _grad_jnp(W0), rtol=1e-5)


def test_a_persistent_tape_asked_twice(answered):
    w = tf.Variable(W0)
    for _ in range(4):
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_sum(_chain(w))
        first, second = tape.gradient(loss, w), tape.gradient(loss, w)
        np.testing.assert_array_equal(first.numpy(), second.numpy())
    np.testing.assert_allclose(first.numpy(), _grad_jnp(W0), rtol=1e-5)


def test_checking_mode_compares_the_plan_with_the_plain_path(answered, monkeypatch):
    w = tf.Variable(W0)
    for _ in range(3):
        _step(w)
    monkeypatch.setattr(checking.FLAG, "on", True)
    _step(w)  # both run, and agree
    # A plan that calls another structure's executable must be caught: the sin chain's plan under the tanh chain's
    for _ in range(3):
        _step(w, tf.sin)
    (tanh_key, tanh_plan), (_, sin_plan) = [(k, p) for k, p in repeated._PLANS.items()]
    repeated._PLANS[tanh_key] = sin_plan
    with pytest.raises(checking.CheckError, match="repeated gradient call"):
        _step(w)
    assert tanh_plan is not sin_plan
