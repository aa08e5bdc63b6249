"""ForwardAccumulator (forward.py): values against jax.jvp (and jvp of jvp for nesting), and TF's rules for which
tapes see a JVP, primals' own tangents, variables, zeros, re-entry, duplicates and tf.function. The behaviours
follow TF 2.21 (tests/compat/test_forwardprop_vs_tf.py checks them against TF itself)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

RNG = np.random.default_rng(7)


def _close(got, expected, rtol=1e-6):
    assert got is not None
    np.testing.assert_allclose(np.asarray(got.numpy()), np.asarray(expected), rtol=rtol, atol=1e-9)


def _second_directional(f, x0, t_inner, t_outer):
    """d/ds d/dr f(x + r t_inner + s t_outer) at 0: jax.jvp of jax.jvp, the oracle of nested accumulators."""
    inner = lambda x: jax.jvp(f, (x,), (t_inner,))[1]  # noqa: E731
    return jax.jvp(inner, (x0,), (t_outer,))[1]


# -- 1. nesting ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ask_inside", [False, True])
def test_nested_accumulators_give_jvp_of_jvp(ask_inside):
    x0 = RNG.normal(size=3)
    t_in, t_out = RNG.normal(size=3), RNG.normal(size=3)
    f = lambda x: jnp.sin(x) * x ** 2 + jnp.sum(jnp.exp(x))  # noqa: E731
    x = tf.constant(x0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(t_out)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(t_in)) as inner:
            y = tf.sin(x) * x ** 2 + tf.reduce_sum(tf.exp(x))
            if ask_inside:
                d = inner.jvp(y)
        if not ask_inside:
            d = inner.jvp(y)
    _close(d, jax.jvp(f, (x0,), (t_in,))[1])
    _close(outer.jvp(d), _second_directional(f, x0, t_in, t_out))
    _close(outer.jvp(y), jax.jvp(f, (x0,), (t_out,))[1])


def test_nested_jvps_asked_after_both_accumulators_exit():
    # TF computes the inner tangent while the outer accumulator records, so the outer one sees it even when both
    # JVPs are asked later; the outer JVP is never seen by the inner accumulator.
    p = tf.constant(1.1, dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator(p, tf.constant(1.0, tf.float64)) as outer:
        with tf.autodiff.ForwardAccumulator(p, tf.constant(1.0, tf.float64)) as inner:
            y = p ** 3.5
    d = inner.jvp(y)
    f = lambda x: x ** 3.5  # noqa: E731
    _close(d, jax.grad(f)(1.1))
    _close(outer.jvp(d), jax.grad(jax.grad(f))(1.1))
    assert inner.jvp(outer.jvp(y)) is None


def test_outer_jvp_is_invisible_to_an_inner_accumulator():
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.ones([2])) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.ones([2])) as inner:
            y = x * x
            assert inner.jvp(outer.jvp(y)) is None


def test_nested_accumulators_on_different_primals_give_the_mixed_derivative():
    x0, z0 = 2.0, 3.0
    f = lambda x, z: x * x * z * z  # noqa: E731
    x, z = tf.constant(x0), tf.constant(z0)  # scalar constants: the literals of the inner JVP must stay inputs
    with tf.autodiff.ForwardAccumulator(z, tf.constant(1.0)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as inner:
            y = x * x * z * z
        d = inner.jvp(y)
    _close(d, jax.grad(f, 0)(x0, z0))
    _close(outer.jvp(d), jax.grad(jax.grad(f, 0), 1)(x0, z0))


def test_outer_accumulator_watching_the_inner_tangent():
    # The inner tangent is a primal of the outer accumulator: d(inner JVP) / d(inner tangent) * its tangent.
    primal, inner_tangent = tf.constant(1.0), tf.constant(3.0)
    with tf.autodiff.ForwardAccumulator([primal, inner_tangent], [tf.constant(2.0), tf.constant(4.0)]) as outer:
        with tf.autodiff.ForwardAccumulator(primal, inner_tangent) as inner:
            y = primal * 2.0
            _close(inner.jvp(y), 6.0)
            _close(outer.jvp(y), 4.0)
            _close(outer.jvp(inner.jvp(y)), 8.0)  # d(2 t)/dt * 4
            _close(outer.jvp(inner.jvp(primal)), 4.0)  # the inner JVP of the primal is the tangent itself


@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_higher_order_pure_forward(order):
    def forward_derivative(f):
        def derivative(p):
            with tf.autodiff.ForwardAccumulator(p, tf.constant(1.0, tf.float64)) as acc:
                out = f(p)
            return acc.jvp(out)
        return derivative

    f, g = (lambda x: x ** 3.5), (lambda x: x ** 3.5)
    for _ in range(order):
        f, g = forward_derivative(f), jax.grad(g)
    _close(f(tf.constant(1.1, tf.float64)), g(1.1))


def test_nested_recorded_gradient_through_a_literal_constant():
    # tf.constant(3.0) holds the cached literal array; a tape watching it must still see the inner gradient.
    x, z = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as outer:
        outer.watch(z)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * z * z
        g = inner.gradient(y, x)
    _close(outer.gradient(g, z), jax.grad(jax.grad(lambda a, b: a * a * b * b, 0), 1)(2.0, 3.0))


# -- 2. variables and primals ---------------------------------------------------------------------------------------

def test_jvp_of_a_watched_variable_and_of_its_reads():
    v = tf.Variable([1.0, 2.0, 3.0])
    t = tf.constant([0.1, -0.2, 0.3])
    with tf.autodiff.ForwardAccumulator(v, t) as acc:
        assert acc.jvp(v) is t
        read, scaled, shifted = v.read_value(), v * 2.0, v + 0.1
    _close(acc.jvp(read), t.numpy())
    _close(acc.jvp(scaled), 2 * t.numpy())
    _close(acc.jvp(shifted), t.numpy())
    assert acc.jvp(v) is t  # after exiting, and after assignment too
    v.assign([5.0, 5.0, 5.0])
    assert acc.jvp(v) is t
    assert acc.jvp(v * 1.0) is None  # a read after exiting is not followed


def test_variable_read_before_the_accumulator_has_no_tangent():
    v, w = tf.Variable(3.0), tf.Variable([1.0, 2.0])
    before = v.read_value()
    acc = tf.autodiff.ForwardAccumulator(v, tf.constant(2.0))
    assert acc.jvp(before) is None
    assert acc.jvp(w) is None
    _close(acc.jvp(w, unconnected_gradients="zero"), [0.0, 0.0])


def test_primal_jvp_is_its_tangent_even_for_integers():
    x, t = tf.constant(3), tf.constant(1)
    with tf.autodiff.ForwardAccumulator(x, t) as acc:
        y = x * 2
    assert acc.jvp(x) is t
    assert acc.jvp(y) is None
    assert acc.jvp(y, unconnected_gradients="zero").dtype == tf.int32


def test_python_tangents_take_the_primal_dtype():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator([x], [np.array([1.0, -1.0])]) as acc:
        y = x * x
    assert acc.jvp(x).dtype == tf.float64
    _close(acc.jvp(y), [2.0, -4.0])


# -- 3. zeros and None ----------------------------------------------------------------------------------------------

def test_zero_derivative_gives_zeros_and_unconnected_gives_none_or_zeros():
    x = tf.constant([1.5, 2.5])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
        times_zero, difference = x * 0.0, x - x
        floor, stopped, const = tf.floor(x), tf.stop_gradient(x), tf.constant(3.0)
    _close(acc.jvp(times_zero), [0.0, 0.0])
    _close(acc.jvp(difference), [0.0, 0.0])
    for t in (floor, stopped, const):
        assert acc.jvp(t) is None
        zeros = acc.jvp(t, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        assert zeros.shape == t.shape and zeros.dtype == t.dtype and not zeros.numpy().any()


def test_jvp_of_a_nest_mixes_tangents_and_unconnected():
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = {"a": x * 2.0, "b": [x * x, tf.constant(1.0)]}
    out = acc.jvp(y)
    _close(out["a"], 2.0)
    _close(out["b"][0], 4.0)
    assert out["b"][1] is None


# -- 4. re-entering, duplicates, tangents ---------------------------------------------------------------------------

def test_reentering_an_active_accumulator_raises_and_it_keeps_recording():
    x = tf.constant(-2.0)
    acc = tf.autodiff.ForwardAccumulator(x, 1.5)
    with acc:
        y = 4.0 * x
        with pytest.raises(ValueError, match="already recording"):
            with acc:
                pass
        w = y * 1.0
    _close(acc.jvp(w), 6.0)
    assert acc.jvp(4.0 * x) is None  # after exiting
    with acc:  # entering again after exiting records again
        yy = y * y
    _close(acc.jvp(yy), 6.0 * -8.0 * 2.0)


def test_reentering_an_active_tape_raises():
    tape = tf.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="re-enter an already-active tape"):
            with tape:
                pass


@pytest.mark.parametrize("make", [lambda: tf.constant(1.0), lambda: tf.Variable(1.0)])
def test_duplicate_primals_raise(make):
    p = make()
    with pytest.raises(ValueError, match="specified as a primal multiple times"):
        tf.autodiff.ForwardAccumulator([p, p], [tf.constant(1.0), tf.constant(2.0)])


def test_tangent_checks():
    with pytest.raises(ValueError, match="requested dtype float32"):
        tf.autodiff.ForwardAccumulator(tf.constant(1.0), tf.constant(1.0, tf.float64))
    with pytest.raises(TypeError, match="Cannot convert"):
        tf.autodiff.ForwardAccumulator(tf.constant(1), 1.5)
    with pytest.raises(ValueError, match="same nested structure"):
        tf.autodiff.ForwardAccumulator(tf.constant([1.0, 2.0]), [1.0, 2.0])
    with pytest.raises(TypeError, match="same nested structure"):
        tf.autodiff.ForwardAccumulator([tf.constant(1.0), tf.constant(2.0)], (1.0, 2.0))


# -- 5. which tapes see a JVP ---------------------------------------------------------------------------------------

def test_forward_over_backward_hvp_equals_jax():
    x0, v0 = np.array([1.0, 2.0, 3.0]), np.array([3.0, 4.0, 5.0])
    f = lambda x: jnp.prod(jnp.tanh(x) ** 2)  # noqa: E731

    def hvp(p, t):
        with tf.autodiff.ForwardAccumulator(p, t) as acc:
            with tf.GradientTape() as tape:
                tape.watch(p)
                out = tf.reduce_prod(tf.tanh(p) ** 2)
            return acc.jvp(tape.gradient(out, p))

    expected = jax.jvp(jax.grad(f), (x0,), (v0,))[1]
    _close(hvp(tf.constant(x0), tf.constant(v0)), expected)
    _close(tf.function(hvp)(tf.constant(x0), tf.constant(v0)), expected)


def test_a_tape_inside_the_accumulator_does_not_record_its_jvp():
    c = tf.constant(1.0)
    with tf.autodiff.ForwardAccumulator(c, tf.constant(0.1)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(c)
            j = acc.jvp(tf.cos(c))
    _close(j, -0.1 * np.sin(1.0))
    assert tape.gradient(j, c) is None


@pytest.mark.parametrize("accumulator_first", [True, False])
def test_a_tape_outside_the_accumulator_differentiates_its_jvp(accumulator_first):
    c = tf.constant(1.0)
    if accumulator_first:
        acc, tape = tf.autodiff.ForwardAccumulator(c, 0.1), tf.GradientTape()
    else:
        tape, acc = tf.GradientTape(), tf.autodiff.ForwardAccumulator(c, 0.1)
    with tape:
        with acc:
            tape.watch(c)
            d = tf.cos(c)
        j = acc.jvp(d)
    _close(tape.gradient(j, c), -0.1 * np.cos(1.0))


def test_a_tape_entered_after_the_accumulator_exited_does_not_see_its_jvp():
    c = tf.constant(1.0)
    with tf.autodiff.ForwardAccumulator(c, 0.1) as acc:
        d = tf.cos(c)
    with tf.GradientTape() as tape:
        tape.watch(c)
        j = acc.jvp(d)
    assert tape.gradient(j, c) is None


def test_a_tape_watching_the_tangent_differentiates_the_jvp_by_it():
    x, t = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(t)
        with tf.autodiff.ForwardAccumulator(x, t) as acc:
            y = x ** 3
        j = acc.jvp(y)
    _close(j, 36.0)
    _close(tape.gradient(j, t), 12.0)  # d(3 x^2 t)/dt


# -- 6. tf.function ---------------------------------------------------------------------------------------------------

def test_accumulators_created_inside_a_function():
    x0 = np.array([1.0, 2.0])
    f = lambda x: jnp.sin(x) * x  # noqa: E731

    @tf.function
    def nested(x):
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as outer:
            with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as inner:
                y = tf.sin(x) * x
        d = inner.jvp(y)
        return d, outer.jvp(d)

    d, dd = nested(tf.constant(x0))
    ones = np.ones(2)
    _close(d, jax.jvp(f, (x0,), (ones,))[1])
    _close(dd, _second_directional(f, x0, ones, ones))


def test_accumulator_created_outside_and_entered_inside_a_function():
    x0, t0 = np.array([1.0, 2.0]), np.array([1.0, -1.0])
    x = tf.constant(x0)
    acc = tf.autodiff.ForwardAccumulator(x, tf.constant(t0))

    @tf.function
    def f():
        with acc:
            y = tf.sin(x) * x
        return acc.jvp(y)

    _close(f(), jax.jvp(lambda v: jnp.sin(v) * v, (x0,), (t0,))[1])


def test_loop_and_conditional_inside_a_function_under_an_accumulator():
    @tf.function
    def jvp_of_loop(iters, y):
        with tf.autodiff.ForwardAccumulator(y, 1.0) as acc:
            ret = 0.0
            for i in tf.range(iters):
                ret += y * tf.cast(i, tf.float32)
        return acc.jvp(ret)

    @tf.function
    def has_cond(k, y):
        if k > 1:
            ret = 3.0 * y
        else:
            ret = 0.0
        return ret

    _close(jvp_of_loop(tf.constant(5), tf.constant(1.0)), 10.0)  # sum of i for i < 5
    y = tf.constant(1.0)
    with tf.autodiff.ForwardAccumulator(y, 1.0) as acc:
        _close(acc.jvp(has_cond(tf.constant(5), y)), 3.0)
        out = has_cond(tf.constant(0), y)
    assert acc.jvp(out, unconnected_gradients="zero").numpy() == 0.0


# -- 7. more of TF's forwardprop_test behaviours ----------------------------------------------------------------------

def test_two_primals_one_a_copy_of_the_other():
    m0 = RNG.normal(size=(3, 4))
    t1, t2 = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    m1 = tf.constant(m0)
    m2 = tf.identity(m1)
    matmul = tf.function(tf.matmul)
    with tf.autodiff.ForwardAccumulator([m1, m2], [tf.constant(t1), tf.constant(t2)]) as acc:
        r1 = matmul(m1, m1, transpose_b=True)
        r2 = matmul(m2, m2, transpose_b=True)
    _close(acc.jvp(r1), t1 @ m0.T + m0 @ t1.T)
    _close(acc.jvp(r2), t2 @ m0.T + m0 @ t2.T)


def test_forward_over_backward_over_forward():
    x0 = np.array([[2.0, 3.0], [1.0, 4.0]])
    t0 = np.array([[1.0, 0.5], [-1.0, 0.25]])

    def f_jax(x):
        pointwise = jnp.sin(x) * jnp.tan(x)
        return jnp.prod(pointwise + jnp.sum(pointwise), axis=1)

    x, t = tf.constant(x0), tf.constant(t0)
    with tf.autodiff.ForwardAccumulator(x, t) as outer:
        with tf.GradientTape() as tape:
            tape.watch(x)
            with tf.autodiff.ForwardAccumulator(x, t) as inner:
                pointwise = tf.sin(x) * tf.tan(x)
                y = tf.reduce_prod(pointwise + tf.reduce_sum(pointwise), axis=1)
            j = inner.jvp(y)
        g = tape.gradient(j, x)
    jvp_fn = lambda v: jax.jvp(f_jax, (v,), (t0,))[1]  # noqa: E731
    grad_fn = lambda v: jax.grad(lambda w: jnp.sum(jvp_fn(w)))(v)  # noqa: E731
    _close(j, jvp_fn(x0))
    _close(g, grad_fn(x0), rtol=1e-5)
    _close(outer.jvp(g), jax.jvp(grad_fn, (x0,), (t0,))[1], rtol=1e-5)


@pytest.mark.parametrize("op, jax_op", [(tf.nn.elu, jax.nn.elu), (tf.nn.silu, jax.nn.silu)])
@pytest.mark.parametrize("value", [-0.5, 0.5])
def test_elementwise_nn_ops_to_second_order(op, jax_op, value):
    x = tf.constant(value, tf.float64)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, tf.float64)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, tf.float64)) as inner:
            y = op(x)
        d = inner.jvp(y)
    _close(d, jax.grad(jax_op)(value))
    _close(outer.jvp(d), jax.grad(jax.grad(jax_op))(value))


def test_custom_gradient_under_an_accumulator_uses_the_computation():
    # Forward mode differentiates the forward computation of a custom gradient (as TF does when it can).
    @tf.custom_gradient
    def f(x):
        def grad(dy):
            return dy * tf.cos(x)
        return tf.sin(x), grad

    x = tf.constant([1.0, 2.0], tf.float64)
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5], tf.float64)) as acc:
        y = f(x)
    _close(acc.jvp(y), np.cos([1.0, 2.0]) * [1.0, 0.5])


def test_a_tapes_stop_recording_does_not_stop_the_accumulator():
    # TF: GradientTape.stop_recording pauses that tape only; the accumulator still follows the op.
    c = tf.constant(1.0)
    with tf.autodiff.ForwardAccumulator(c, tf.constant(2.0)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(c)
            with tape.stop_recording():
                d = c * 2.0
    _close(acc.jvp(d), 4.0)
    assert tape.gradient(d, c) is None


def test_a_target_that_is_a_source_and_one_that_is_unrelated_do_not_share_a_memoized_slice():
    # Neither touches a recorded op; the structure memo once coded both alike and answered the second with the
    # first's slice.
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, -1.0])) as acc:
        read = v.read_value()
    _close(acc.jvp(read), [1.0, -1.0])
    assert acc.jvp(v * 1.0) is None  # read after exiting: not followed
    x, z = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
    _close(tape.gradient(x, x), 1.0)
    assert tape.gradient(z, x) is None
    _close(tape.gradient([x, z, x], x), 2.0)


def test_complex_primals():
    z0 = 1.0 + 2.0j
    z = tf.constant(z0)
    with tf.autodiff.ForwardAccumulator(z, tf.constant(1.0 + 0.0j)) as acc:
        zz, conj = z * z, tf.math.conj(z)
    _close(acc.jvp(zz), 2 * z0)
    _close(acc.jvp(conj), 1.0 + 0.0j)


def test_an_accumulator_does_not_keep_a_used_outer_tapes_trace_alive():
    import gc
    import weakref

    x = tf.constant([1.0, 2.0])
    tape = tf.GradientTape()
    with tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.ones([2])) as acc:
            y = tf.reduce_sum(x * x)
        trace = weakref.ref(tape._tape)
    tape.gradient(y, x)  # a non-persistent tape frees its trace after its one gradient call
    gc.collect()
    assert trace() is None
    _close(acc.jvp(y), 6.0)
