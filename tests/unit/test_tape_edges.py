"""GradientTape's edge semantics (TF 2.21's, checked against TF in tests/compat/test_tape_edges_vs_tf.py), here
with JAX and numpy as the oracles: output_gradients as TF reads them, the sequential jacobians, batch_jacobian's
shape rules and unconnected zeros, singular linear systems, and behaviours described by TF's own tape tests."""

from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

X = np.array([1.0, 2.0], np.float32)


def _vjp(fn, primal, seed):
    """The oracle: JAX's VJP of `fn` at `primal` with cotangent `seed` broadcast to the output's shape."""
    out, pullback = jax.vjp(fn, jnp.asarray(primal))
    return np.asarray(pullback(jnp.broadcast_to(jnp.asarray(seed, out.dtype), out.shape))[0])


def _seeded(output_gradients, target=lambda x: x * x):
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = target(x)
    return t.gradient(y, x, output_gradients=output_gradients)


# -- output_gradients -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed, used", [
    (tf.constant([3.0, 4.0]), [3.0, 4.0]),
    ([tf.constant([3.0, 4.0])], [3.0, 4.0]),
    (np.array([3.0, 4.0], np.float32), [3.0, 4.0]),
    (3.0, 3.0),  # a scalar seed broadcasts over the target
    ([3.0], 3.0),
], ids=["tensor", "list_of_tensor", "numpy", "scalar", "list_of_scalar"])
def test_output_gradients_of_every_form(seed, used):
    got = _seeded(seed)
    np.testing.assert_allclose(got.numpy(), _vjp(lambda x: x * x, X, used))
    assert got.dtype == tf.float32 and got.shape == (2,)


def test_a_python_list_is_several_seeds_as_in_tf(caplog):
    # tf.nest.flatten([3., 4.]) is two values: the first seeds the one target, the second is ignored.
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        got = _seeded([3.0, 4.0])
    np.testing.assert_allclose(got.numpy(), _vjp(lambda x: x * x, X, 3.0))
    assert any("2 output_gradients" in r.getMessage() and "1 targets" in r.getMessage() for r in caplog.records)


def test_seeds_pair_with_flattened_targets_by_position():
    x, s = tf.constant(X), tf.constant(2.0)

    def run(output_gradients):
        with tf.GradientTape() as t:
            t.watch([x, s])
            ys = [x * x, s * s]
        return t.gradient(ys, [x, s], output_gradients=output_gradients)

    dx, ds = run([tf.constant([3.0, 4.0]), 5.0])
    np.testing.assert_allclose(dx.numpy(), _vjp(lambda v: v * v, X, [3.0, 4.0]))
    np.testing.assert_allclose(ds.numpy(), _vjp(lambda v: v * v, 2.0, 5.0))
    dx, ds = run([[3.0, 4.0], 5.0])  # flattened: 3. for x * x, 4. for s * s, 5. ignored
    np.testing.assert_allclose(dx.numpy(), _vjp(lambda v: v * v, X, 3.0))
    np.testing.assert_allclose(ds.numpy(), _vjp(lambda v: v * v, 2.0, 4.0))
    dx, ds = run([2.0])  # missing seeds are ones
    np.testing.assert_allclose(dx.numpy(), _vjp(lambda v: v * v, X, 2.0))
    np.testing.assert_allclose(ds.numpy(), _vjp(lambda v: v * v, 2.0, 1.0))


def test_dict_targets_and_seeds_flatten_in_key_order():
    x, s = tf.constant(X), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([x, s])
        ys = {"b": s * s, "a": x * x}
    got = t.gradient(ys, {"x": x, "s": s}, output_gradients={"a": tf.constant([1.0, 3.0]), "b": 2.0})
    np.testing.assert_allclose(got["x"].numpy(), _vjp(lambda v: v * v, X, [1.0, 3.0]))
    np.testing.assert_allclose(got["s"].numpy(), _vjp(lambda v: v * v, 2.0, 2.0))


@pytest.mark.parametrize("seed, error", [
    ([None], ValueError),
    (np.array([3.0, 4.0]), tf.errors.InvalidArgumentError),  # float64: not the target's dtype
    ([3, 4], tf.errors.InvalidArgumentError),  # int32
    (np.ones([3, 2], np.float32), tf.errors.InvalidArgumentError),  # does not broadcast to (2,)
], ids=["none", "float64", "int", "shape"])
def test_output_gradient_errors(seed, error):
    with pytest.raises(error):
        _seeded(seed)


def test_an_unconnected_target_ignores_its_seed():
    assert _seeded(np.ones([3, 2]), lambda x: tf.constant(1.0) * 2.0) is None


def test_a_watched_seed_is_differentiable():
    x, seed = tf.constant(3.0), tf.constant(1.5)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, seed])
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        g = inner.gradient(y, x, output_gradients=seed)
    assert float(g) == pytest.approx(1.5 * 27.0)
    assert float(outer.gradient(g, seed)) == pytest.approx(27.0)  # d(3 x^2 seed)/d seed
    assert float(outer.gradient(g, x)) == pytest.approx(1.5 * 18.0)


def test_gradient_of_a_source_then_of_an_unconnected_target():
    # Both traces are empty: the slice memo must still tell "the target is the source" from "unconnected".
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
    np.testing.assert_allclose(t.gradient(x, x).numpy(), [1.0, 1.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.constant(1.0) * 2.0
    assert t.gradient(y, x) is None


# -- jacobians --------------------------------------------------------------------------------------------------

M = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_sequential_jacobians_need_a_persistent_tape(method):
    x = tf.constant(M)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True"):
        getattr(t, method)(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), 2 * M)  # the refusal leaves the tape usable
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    full = np.asarray(jax.jacrev(lambda m: m * m)(jnp.asarray(M)))
    np.testing.assert_allclose(t.jacobian(y, x, experimental_use_pfor=False).numpy(), full)
    np.testing.assert_allclose(t.batch_jacobian(y, x, experimental_use_pfor=False).numpy(),
                               np.stack([full[i, :, i, :] for i in range(2)]))


@pytest.mark.parametrize("target_shape, source_shape, error", [
    ((2,), (2, 2), ValueError), ((2, 2), (2,), ValueError), ((2,), (2,), ValueError),
    ((3, 2), (2, 2), ValueError), ((), (), IndexError), ((2, 2), (), ValueError),
])
def test_batch_jacobian_shape_errors(target_shape, source_shape, error):
    x = tf.ones(source_shape)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.ones(target_shape) * tf.reduce_sum(x)
    with pytest.raises(error):
        t.batch_jacobian(y, x)


@pytest.mark.parametrize("target_dtype, source_dtype", [("float32", "float32"), ("float32", "float64"),
                                                        ("float64", "float32")])
def test_batch_jacobian_of_an_unconnected_source_is_zeros(target_dtype, source_dtype):
    x = tf.constant(M, getattr(tf, target_dtype))
    u = tf.ones([2, 3], getattr(tf, source_dtype))
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, u])
        y = x * 2.0
    default = t.batch_jacobian(y, u)
    zero = t.batch_jacobian(y, u, unconnected_gradients="zero")
    assert default.shape == zero.shape == (2, 2, 3)
    assert default.dtype.name == target_dtype and zero.dtype.name == source_dtype
    assert not np.any(default.numpy()) and not np.any(zero.numpy())
    assert t.jacobian(y, u) is None  # jacobian keeps None


def test_batch_jacobian_degenerate_shape():
    x = tf.zeros([1, 0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x**2
    assert t.batch_jacobian(y, x).shape == (1, 0, 0)


def test_batch_jacobian_of_rank_3():
    x = np.arange(30, dtype=np.float32).reshape(2, 3, 5)
    xt = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(xt)
        y = xt * xt
    full = np.asarray(jax.jacrev(lambda v: v * v)(jnp.asarray(x)))
    np.testing.assert_allclose(t.batch_jacobian(y, xt).numpy(), np.stack([full[i, :, :, i] for i in range(2)]))


# -- singular linear systems ------------------------------------------------------------------------------------

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.parametrize("call", [
    lambda: tf.linalg.solve(SINGULAR, [[1.0], [2.0]]),
    lambda: tf.linalg.solve([M, SINGULAR], tf.ones([2, 2, 1])),
    lambda: tf.linalg.solve([[np.nan, 0.0], [0.0, 1.0]], tf.ones([2, 1])),
    lambda: tf.linalg.solve([[1e-40, 0.0], [0.0, 1.0]], tf.ones([2, 1])),  # subnormal: TF flushes it to zero
    lambda: tf.linalg.inv(SINGULAR),
    lambda: tf.linalg.inv(tf.constant(SINGULAR, tf.complex64)),
    lambda: tf.linalg.lu(SINGULAR),
], ids=["solve", "solve_batch", "solve_nan", "solve_subnormal", "inv", "inv_complex", "lu"])
def test_singular_matrices_raise(call):
    with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
        call()


def test_nearly_singular_matrices_are_solved():
    np.testing.assert_allclose(tf.linalg.solve([[1e-30, 0.0], [0.0, 1.0]], [[1.0], [2.0]]).numpy(), [[1e30], [2.0]],
                               rtol=1e-6)


def test_singular_systems_inside_tf_function_are_nan():
    @tf.function
    def f(a, b):
        return tf.linalg.solve(a, b), tf.linalg.inv(a)

    x, inverse = f(tf.constant(SINGULAR), tf.ones([2, 1]))
    assert np.isnan(x.numpy()).all() and np.isnan(inverse.numpy()).all()
    x, inverse = f(tf.constant(M), tf.ones([2, 1]))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(M, np.ones([2, 1])), rtol=1e-5)
    np.testing.assert_allclose(inverse.numpy(), np.linalg.inv(M), rtol=1e-5)


def test_gradients_through_solve_and_inv_are_jax():
    a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    b = np.array([[1.0], [2.0]], np.float32)
    v = tf.Variable(a)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.linalg.solve(v, b)) + tf.reduce_sum(tf.linalg.inv(v))
    expected = jax.grad(lambda m: jnp.sum(jnp.linalg.solve(m, b)) + jnp.sum(jnp.linalg.inv(m)))(jnp.asarray(a))
    np.testing.assert_allclose(t.gradient(y, v).numpy(), np.asarray(expected), rtol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: tf.linalg.solve(tf.ones([2, 3]), tf.ones([2, 1])), "First input (lhs) must be a square matrix."),
    (lambda: tf.linalg.solve(M, tf.ones([3, 1])), "Input matrix and rhs are incompatible."),
    (lambda: tf.linalg.solve(M, [1.0, 2.0]), "All input tensors must have the same rank."),
    (lambda: tf.linalg.solve([M, M], tf.ones([3, 2, 1])), "All input tensors must have the same outer dimensions."),
    (lambda: tf.linalg.inv(tf.ones([2, 3])), "Input matrix must be square."),
    (lambda: tf.linalg.inv(1.0), "Input tensor 0 must have rank >= 2, got 0"),
    (lambda: tf.linalg.lu(tf.ones([2, 3])), "Input matrix must be square."),
])
def test_linear_system_shape_errors(call, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        call()
    assert str(error.value).startswith(message)


# -- behaviours from TF's tape tests ----------------------------------------------------------------------------

def test_stop_gradient_inside_tf_function_stops_the_outer_tape():
    @tf.function
    def h(y):
        return tf.stop_gradient(y * y)

    x = tf.constant(1.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = h(x + 2.0)
    oracle = jax.grad(lambda v: jax.lax.stop_gradient((v + 2.0) ** 2))(1.0)
    assert float(g.gradient(y, x, unconnected_gradients="zero")) == float(oracle) == 0.0


def test_reentering_an_active_tape_raises():
    with tf.GradientTape() as t:
        with pytest.raises(ValueError, match="re-enter an already-active tape"):
            with t:
                pass


def test_unknown_unconnected_gradients_value():
    x = tf.constant(1.0)
    with tf.GradientTape() as g:
        g.watch(x)
        z = x * 2
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'nonsense'"):
        g.gradient(z, x, unconnected_gradients="nonsense")


def test_seed_list_for_a_target_list():
    x, y = tf.constant(3.0), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        loss = x * y
    (dx,) = t.gradient([loss, x], [x], output_gradients=[1.0, 2.0])
    assert float(dx) == float(jax.grad(lambda a: 1.0 * a * 2.0 + 2.0 * a)(3.0))


def test_no_op_gradients():
    x, y = tf.constant(3.0), tf.constant(5.0)
    a = tf.constant(2.0, shape=[2, 2])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, y, a])
        z = y * y
        xx = x * x
    assert float(t.gradient(x, x)) == 1.0
    assert float(t.gradient([x, xx], x)) == float(jax.grad(lambda v: v + v * v)(3.0))
    assert [float(g) for g in t.gradient([x, y, z], [x, y])] == [1.0, float(jax.grad(lambda v: v + v * v)(5.0))]
    np.testing.assert_array_equal(t.gradient([a, a], [a])[0].numpy(), np.full([2, 2], 2.0))


def test_stop_recording_and_reset():
    with tf.GradientTape(persistent=True) as t:
        x = tf.Variable(1.0)
        x2 = x * 2
        with t.stop_recording():
            y = x2 * x2
        z = x2 * x2
    assert t.gradient(y, x2) is None
    assert float(t.gradient(z, x2)) == float(jax.grad(lambda v: v * v)(2.0))
    with tf.GradientTape() as t:
        v = tf.Variable(1.0)
        loss = v * v
        t.reset()
        loss += v * v
    assert float(t.gradient(loss, v)) == float(jax.grad(lambda w: w * w)(1.0))


def test_watched_variables_follow_reset_and_survive_the_one_call():
    with tf.GradientTape() as t:
        x = tf.Variable(1.0)
        t.watch(x)
        assert t.watched_variables() == (x,)
        t.reset()
        z = tf.Variable(2.0)
        t.watch(z)
        assert t.watched_variables() == (z,)
    t.gradient(z, z)
    assert t.watched_variables() == (z,)


def test_watching_is_tape_local():
    x1 = tf.Variable(2.0, trainable=False)
    x2 = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as tape1:
        with tf.GradientTape() as tape2:
            tape1.watch(x1)
            tape2.watch([x1, x2])
            y, z = x1**3, x2**2
            dy, dz = tape2.gradient([y, z], [x1, x2])
        d2y, d2z = tape1.gradient([dy, dz], [x1, x2])
    assert float(d2y) == float(jax.grad(jax.grad(lambda v: v**3))(2.0)) and d2z is None


def test_repeated_sources_and_structures():
    x, y = tf.constant(3.0), tf.constant(5.0)
    with tf.GradientTape(persistent=True) as g:
        g.watch([x, y])
        z = x * x + x * y
    dzdx, dzdy = jax.grad(lambda a, b: a * a + a * b, argnums=(0, 1))(3.0, 5.0)
    assert [float(v) for v in g.gradient(z, [x, x])] == [float(dzdx)] * 2
    got = g.gradient(z, (x, [y, {"k": x}]))
    assert isinstance(got, tuple) and isinstance(got[1], list) and set(got[1][1]) == {"k"}
    assert (float(got[0]), float(got[1][0]), float(got[1][1]["k"])) == (float(dzdx), float(dzdy), float(dzdx))


def test_persistent_higher_orders_in_context():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant(3.0)
        g.watch(x)
        y = x**3
        dy = g.gradient(y, x)
        d2y = g.gradient(dy, x)
    d3y = g.gradient(d2y, x)
    f = lambda v: v**3  # noqa: E731
    assert [float(dy), float(d2y), float(d3y)] == [float(jax.grad(f)(3.0)), float(jax.grad(jax.grad(f))(3.0)),
                                                    float(jax.grad(jax.grad(jax.grad(f)))(3.0))]


def test_python_max_of_variables():
    xs = [tf.Variable(2.0), tf.Variable(3.0), tf.Variable(5.0)]
    with tf.GradientTape() as t:
        f = max(xs)
    grads = t.gradient(f, xs)
    assert grads[:2] == [None, None] and float(grads[2]) == 1.0


def test_equal_constants_are_distinct_sources():
    with tf.GradientTape() as g:
        x1, x2 = tf.constant(3.0), tf.constant(3.0)
        g.watch([x1, x2])
        y = x1 + x2
    assert float(g.gradient(y, [x1])[0]) == 1.0


def test_jacobian_of_a_transposed_product():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    xt = tf.constant(x)
    with tf.GradientTape(persistent=True) as g:
        g.watch(xt)
        y = tf.matmul(xt, xt, transpose_a=True)
    expected = np.asarray(jax.jacrev(lambda m: m.T @ m)(jnp.asarray(x)))
    for kwargs in ({}, {"experimental_use_pfor": False}, {"parallel_iterations": 3}):
        np.testing.assert_allclose(g.jacobian(y, xt, **kwargs).numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("use_pfor, parallel_iterations, error", [
    (True, 1, ValueError), (True, 0, ValueError), (False, 0, TypeError), (False, -1, TypeError),
])
@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_parallel_iterations_tf_refuses(method, use_pfor, parallel_iterations, error):
    x = tf.constant(M)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.raises(error, match="parallel_iterations|vectorizing"):
        getattr(t, method)(y, x, parallel_iterations=parallel_iterations, experimental_use_pfor=use_pfor)
    full = np.asarray(jax.jacrev(lambda m: m * m)(jnp.asarray(M)))
    np.testing.assert_allclose(t.jacobian(y, x, parallel_iterations=1, experimental_use_pfor=False).numpy(), full)


def test_reset_and_stop_recording_outside_the_block():
    t = tf.GradientTape()
    with pytest.raises(RuntimeError):  # never entered
        with t.stop_recording():
            pass
    with t:
        pass
    with pytest.raises(ValueError, match="Tape is not recording."):
        t.reset()
    with pytest.raises(ValueError, match="Tape is not recording."):
        with t.stop_recording():
            pass


def test_sequential_jacobians_inside_tf_function_need_no_persistent_tape():
    @tf.function
    def jacobians(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.jacobian(y, x, experimental_use_pfor=False)

    full = np.asarray(jax.jacrev(lambda m: m * m)(jnp.asarray(M)))
    np.testing.assert_allclose(jacobians(tf.constant(M)).numpy(), full)
