"""zero_cotangent.py: TF's "zero upstream gradient, zero gradient" convention as a JAX derivative, in every
transformation. JAX is the oracle away from the masked points (the wrapped function's derivative is JAX's)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import zero_cotangent as Z
from tapejax._src.registry import REGISTRY

X = jnp.array([0.0, 4.0, 0.25, 1e-40], jnp.float32)


def test_scale_is_a_masked_product():
    t = jnp.array([0.0, 0.0, 2.0, 1.0])
    d = jnp.array([jnp.inf, jnp.nan, 3.0, jnp.inf])
    np.testing.assert_array_equal(Z.scale(t, d), [0.0, 0.0, 6.0, jnp.inf])
    np.testing.assert_array_equal(jax.jit(Z.scale)(t, d), [0.0, 0.0, 6.0, jnp.inf])
    np.testing.assert_array_equal(jax.vmap(Z.scale)(t[:, None], d[:, None])[:, 0], [0.0, 0.0, 6.0, jnp.inf])


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (1, 0), (None, 1)])
def test_scale_batched_with_one_operand_unbatched_keeps_the_batch(axes):
    # An unbatched operand is broadcast to the batch, not given a batch of 1 (which made jit's result type wrong:
    # a hessian by the jacobian of a compiled gradient of sqrt failed to lower).
    t = jnp.array([[0.0, 2.0], [1.0, 3.0]])
    d = jnp.array([[jnp.inf, 3.0], [5.0, 7.0]])
    args = tuple(x if a is not None else x[0] for x, a in zip((t, d), axes))
    want = jax.vmap(lambda a, b: jnp.where(a == 0, 0.0, a * b), in_axes=axes)(*args)
    np.testing.assert_array_equal(jax.vmap(Z.scale, in_axes=axes)(*args), want)
    np.testing.assert_array_equal(jax.jit(jax.vmap(Z.scale, in_axes=axes))(*args), want)


def test_jacobian_of_a_gradient_through_sqrt_compiles():
    x = jnp.array([1.0, 1.0], jnp.float32)
    f = lambda v: jnp.sum(Z.sqrt(1.0 + v * v))  # noqa: E731
    want = jax.hessian(lambda v: jnp.sum(jnp.sqrt(1.0 + v * v)))(x)
    np.testing.assert_allclose(jax.jit(jax.jacrev(jax.grad(f)))(x), want, rtol=1e-6)

    @tf.function
    def hessian(v):
        with tf.GradientTape() as outer:
            outer.watch(v)
            with tf.GradientTape() as inner:
                inner.watch(v)
                y = tf.reduce_sum(tf.sqrt(1.0 + v * v))
            g = inner.gradient(y, v)
        return outer.jacobian(g, v)

    np.testing.assert_allclose(hessian(tf.constant(np.asarray(x))).numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("fn, plain", [(Z.sqrt, jnp.sqrt), (Z.rsqrt, jax.lax.rsqrt), (Z.reciprocal, jnp.reciprocal)])
def test_masked_kernel_is_jax_except_under_a_zero_cotangent(fn, plain):
    w = jnp.array([0.0, 1.0, -2.0, 0.0], jnp.float32)
    np.testing.assert_array_equal(fn(X), plain(X))
    got = jax.grad(lambda x: jnp.sum(fn(x) * w))(X)
    want = jax.grad(lambda x: jnp.sum(plain(x) * w))(X)
    np.testing.assert_allclose(got[w != 0], want[w != 0], rtol=1e-6)
    np.testing.assert_array_equal(got[w == 0], 0.0)  # JAX's: 0 * inf = NaN at 0
    assert np.isnan(want[0])
    np.testing.assert_array_equal(jax.jit(jax.grad(lambda x: jnp.sum(fn(x) * w)))(X), got)


def test_forward_mode_vmap_and_second_order_work_through_the_wrapper():
    x = jnp.array([0.5, 4.0])
    jac_fwd, jac_rev = jax.jacfwd(Z.sqrt)(x), jax.jacrev(Z.sqrt)(x)
    np.testing.assert_allclose(jac_fwd, jax.jacfwd(jnp.sqrt)(x), rtol=1e-6)
    np.testing.assert_allclose(jac_rev, jac_fwd, rtol=1e-6)
    f = lambda x: jnp.sum(Z.sqrt(x) ** 3)  # noqa: E731
    g = lambda x: jnp.sum(jnp.sqrt(x) ** 3)  # noqa: E731
    np.testing.assert_allclose(jax.hessian(f)(x), jax.hessian(g)(x), rtol=1e-5)
    np.testing.assert_allclose(jax.jacrev(jax.grad(f))(x), jax.hessian(g)(x), rtol=1e-5)


def test_rows_flagged_are_tfs_masking_kernels():
    flagged = {n for n, o in REGISTRY.items() if o.zero_cotangent}
    assert flagged == {"math.sqrt", "math.rsqrt", "math.reciprocal"}


def test_forward_accumulator_through_a_function_using_sqrt():
    # a jax.custom_vjp here would fail: JAX cannot push tangents through one
    @tf.function
    def f(x):
        return tf.sqrt(x) * 2.0

    x = tf.constant([1.0, 4.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
        y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1.0, 0.5])


def test_where_idiom_eager_compiled_and_checked(monkeypatch):
    from tapejax._src import checking

    def grad():
        x = tf.constant([0.0, 4.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.where(x > 0, tf.sqrt(x), 0.0)
        return tape.gradient(y, x).numpy()

    monkeypatch.setattr(checking.FLAG, "on", True)
    for _ in range(3):  # op by op, then the compiled executable, compared with the plain path (checking mode)
        np.testing.assert_array_equal(grad(), [0.0, 0.25])
