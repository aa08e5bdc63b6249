"""jacobian, batch_jacobian, hessian, hvp and ForwardAccumulator against JAX's own transformations."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

RNG = np.random.default_rng(0)


def _program_tf(x, w):
    return tf.tanh(tf.matmul(x, w)) * tf.reduce_sum(w) + tf.sin(x[:, :1])


def _program_jax(x, w):
    return jnp.tanh(x @ w) * jnp.sum(w) + jnp.sin(x[:, :1])


def _inputs(batch=4, n_in=3, n_out=5, dtype=np.float64):
    return RNG.normal(size=(batch, n_in)).astype(dtype), RNG.normal(size=(n_in, n_out)).astype(dtype)


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("parallel_iterations", [None, 3])
def test_jacobian_equals_jax_jacrev(persistent, parallel_iterations):
    x0, w0 = _inputs()
    x, w = tf.constant(x0), tf.Variable(w0)
    with tf.GradientTape(persistent=persistent) as tape:
        tape.watch(x)
        y = _program_tf(x, w)
    jx, jw = tape.jacobian(y, [x, w], parallel_iterations=parallel_iterations)
    expected_x, expected_w = jax.jacrev(_program_jax, argnums=(0, 1))(x0, w0)
    assert jx.shape == y.shape + x.shape and jw.shape == y.shape + w.shape
    np.testing.assert_allclose(jx.numpy(), expected_x, rtol=1e-10)
    np.testing.assert_allclose(jw.numpy(), expected_w, rtol=1e-10)


def test_forward_mode_is_chosen_for_small_sources_and_agrees():
    x0 = RNG.normal(size=(2,))
    x = tf.constant(x0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reshape(tf.tile(tf.sin(x), [50]) * tf.range(100, dtype=tf.float64), [10, 10])
    j = tape.jacobian(y, x)
    expected = jax.jacfwd(lambda v: jnp.reshape(jnp.tile(jnp.sin(v), 50) * jnp.arange(100.0), (10, 10)))(x0)
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-12)
    (lowered,) = [lw for lw in tf._src.executables.CACHE._items.values() if lw.program is not None][-1:]
    assert any(k[0] == "jacfwd" for k in lowered._compiled)


def test_jacobian_through_a_variable_read_twice_sums_the_reads():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = v * v + v  # three reads
    np.testing.assert_allclose(tape.jacobian(y, v).numpy(), np.diag([3.0, 5.0]))


def test_jacobian_unconnected_none_or_zeros():
    x, u = tf.constant([1.0, 2.0]), tf.constant([[3.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = x * 2.0
    assert tape.jacobian(y, u) is None
    zeros = tape.jacobian(y, {"u": u}, unconnected_gradients=tf.UnconnectedGradients.ZERO)["u"]
    assert zeros.shape == (2, 1, 1) and not np.any(zeros.numpy())


def test_batch_jacobian_is_the_diagonal_of_the_jacobian():
    x0, w0 = _inputs(batch=6)
    x, w = tf.constant(x0), tf.Variable(w0)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.elu(tf.matmul(x, w))
    jb = tape.batch_jacobian(y, x)
    j = tape.jacobian(y, x)
    assert jb.shape == (6, 5, 3)
    np.testing.assert_allclose(jb.numpy(), np.einsum("bxby->bxy", j.numpy()), rtol=1e-12)
    np.testing.assert_allclose(tape.batch_jacobian(y, x, parallel_iterations=2).numpy(), jb.numpy(), rtol=1e-12)


def test_batch_jacobian_sums_cross_batch_terms_as_tf_does():
    # With batch coupling, TF's batch_jacobian is the jacobian summed over the target's batch axis (not the
    # diagonal): d/dx[b] of sum_i y[i, j].
    x0 = RNG.normal(size=(4, 3))
    x = tf.constant(x0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x - tf.reduce_mean(x, axis=0, keepdims=True)
    jb = tape.batch_jacobian(y, x).numpy()
    j = tape.jacobian(y, x).numpy()
    np.testing.assert_allclose(jb, np.einsum("ijbk->bjk", j), atol=1e-12)


def test_batch_jacobian_errors():
    x = tf.constant(np.ones((3, 2)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x)
        z = tf.concat([x, x], axis=0)
    with pytest.raises(IndexError):  # TF reads the scalar target's first dimension (tests/compat/test_tape_edges)
        tape.batch_jacobian(y, x)
    with pytest.raises(ValueError, match=r"\(6, 2\).*\(3, 2\)"):
        tape.batch_jacobian(z, x)


def test_hessian_and_hvp_equal_jax():
    x0, w0 = _inputs(batch=3, n_in=2, n_out=2)

    def loss_jax(x, w):
        return jnp.sum(_program_jax(x, w) ** 2)

    x, w = tf.constant(x0), tf.Variable(w0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        loss = tf.reduce_sum(_program_tf(x, w) ** 2)
    h = tape.hessian(loss, w)
    np.testing.assert_allclose(h.numpy(), jax.hessian(loss_jax, argnums=1)(x0, w0), rtol=1e-9)
    blocks = tape.hessian(loss, [x, w])
    expected = jax.hessian(loss_jax, argnums=(0, 1))(x0, w0)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(blocks[i][j].numpy(), expected[i][j], rtol=1e-9, atol=1e-12)
    v0 = RNG.normal(size=w0.shape)
    hv = tape.hvp(loss, w, tf.constant(v0))
    np.testing.assert_allclose(hv.numpy(), np.tensordot(expected[1][1], v0, axes=2), rtol=1e-9)


def test_hessian_by_nested_tapes_equals_the_extension():
    x0 = RNG.normal(size=(3,))
    x = tf.Variable(x0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.exp(x) * tf.reduce_prod(x))
        g = inner.gradient(y, x)
    nested = outer.jacobian(g, x)
    expected = jax.hessian(lambda v: jnp.sum(jnp.exp(v) * jnp.prod(v)))(x0)
    np.testing.assert_allclose(nested.numpy(), expected, rtol=1e-10)


def test_forward_accumulator_equals_jax_jvp():
    x0, w0 = _inputs()
    tx, tw = RNG.normal(size=x0.shape), RNG.normal(size=w0.shape)
    x, w = tf.constant(x0), tf.Variable(w0)
    with tf.autodiff.ForwardAccumulator([x, w], [tf.constant(tx), tf.constant(tw)]) as acc:
        y = _program_tf(x, w)
        z = tf.reduce_sum(y)
    _, expected = jax.jvp(_program_jax, (x0, w0), (tx, tw))
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(acc.jvp({"z": z})["z"].numpy(), expected.sum(), rtol=1e-10)
    assert acc.jvp(tf.constant(1.0) * 2.0) is None


def test_forward_over_reverse_and_reverse_over_forward_hvp():
    x0, v0 = np.array([1.0, 2.0, -0.5]), np.array([0.3, -1.0, 2.0])
    f = lambda v: jnp.sum(jnp.sin(v) * v ** 3)  # noqa: E731
    expected = jax.jvp(jax.grad(f), (x0,), (v0,))[1]
    x, v = tf.constant(x0), tf.constant(v0)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x) * x ** 3)
        backward = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(backward).numpy(), expected, rtol=1e-10)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            y = tf.reduce_sum(tf.sin(x) * x ** 3)
        jvp = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(jvp, x).numpy(), expected, rtol=1e-10)


def test_forward_accumulator_rejects_a_tangent_of_the_wrong_shape():
    with pytest.raises(ValueError, match="tangent has shape"):
        tf.autodiff.ForwardAccumulator(tf.constant([1.0, 2.0]), tf.constant([1.0, 0.0, 3.0]))


def test_first_call_sweep_and_compiled_repeat_agree():
    # The first call of a structure runs the eager sweep; the second, the compiled transformation.
    x0 = RNG.normal(size=(3, 4))
    results = []
    for _ in range(2):
        x = tf.constant(x0)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            parts = tf.unstack(tf.sin(x) * x, axis=1)  # a multiple-output op on the path
            y = tf.stack([parts[0] * parts[1], tf.exp(parts[2])], axis=1)
        results.append((tape.jacobian(y, x).numpy(), tape.batch_jacobian(y, x).numpy(),
                        tape.gradient(y, [x, parts[1]])[0].numpy()))
    for first, second in zip(*results):
        np.testing.assert_allclose(first, second, rtol=1e-12)
    f = lambda v: jnp.stack([jnp.sin(v[:, 0]) * v[:, 0] * jnp.sin(v[:, 1]) * v[:, 1],  # noqa: E731
                             jnp.exp(jnp.sin(v[:, 2]) * v[:, 2])], axis=1)
    np.testing.assert_allclose(results[0][0], jax.jacrev(f)(x0), rtol=1e-12)
