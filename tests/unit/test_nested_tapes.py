"""Nested tapes cost what TF's do: a gradient recorded on an outer tape is the pruned jaxpr of that call, so
the k-th derivative by k nested tapes has a program that grows linearly in k (issue 16), not 2^k."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

import tapejax as tf


def _kth_derivative(k: int, x0: float = 1.0):
    """sin's k-th derivative by k nested tapes, and the eqn count of each recorded gradient call in the order
    they ran, innermost first (recorded on an extra persistent tape that watches x throughout)."""
    x = tf.constant(x0)
    spy = tf.GradientTape(persistent=True)
    tapes = [tf.GradientTape() for _ in range(k)]
    with spy:
        spy.watch(x)
        for t in tapes:
            t.__enter__()
            t.watch(x)
        y = tf.sin(x)
        for t in reversed(tapes):
            t.__exit__(None, None, None)
            y = t.gradient(y, x)
    sizes = [len(jax.make_jaxpr(e.op.impl)(*e.in_vals).jaxpr.eqns)
             for e in spy._tape.entries if e.op.op_type == "Gradient"]
    return y, sizes


@pytest.mark.parametrize("k", [1, 2, 3, 7, 25])
def test_the_kth_derivative_of_sin(k):
    y, _ = _kth_derivative(k)
    assert y.numpy() == pytest.approx(math.sin(1.0 + k * math.pi / 2), abs=1e-5)


def test_the_recorded_gradient_calls_grow_linearly():
    _, sizes = _kth_derivative(24)
    assert len(sizes) == 24
    # each level's recorded call is the derivative of the one before, pruned: a few equations more per level
    growth = [b - a for a, b in zip(sizes, sizes[1:])]
    assert max(sizes) <= 8 * 24, sizes
    assert max(growth) <= 8, sizes


def test_a_hessian_by_nested_tapes_equals_jax():
    w = tf.constant([[0.5, -1.0], [2.0, 0.3]])
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.tanh(tf.linalg.matvec(w, x)) ** 2)
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x)
    f = lambda v: jax.numpy.sum(jax.numpy.tanh(w.numpy() @ v) ** 2)
    expected = np.asarray(jax.hessian(f)(x.numpy()))  # a numpy array: pytest 9.2's approx reads `.flat`
    assert h.numpy() == pytest.approx(expected, rel=1e-5, abs=1e-6)
