"""tf.custom_gradient: TF's semantics, checked against the same function without the custom gradient."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tapejax as tf


def _inner(x):
    return tf.sin(x) * tf.exp(x / 3.0)


@tf.custom_gradient
def _inner_with_true_vjp(x):
    def grad_fn(upstream):
        return upstream * (tf.cos(x) * tf.exp(x / 3.0) + tf.sin(x) * tf.exp(x / 3.0) / 3.0)

    return _inner(x), grad_fn


def _scaled(c):
    @tf.custom_gradient
    def inner(x):
        def grad_fn(upstream):
            return upstream * c * (tf.cos(x) * tf.exp(x / 3.0) + tf.sin(x) * tf.exp(x / 3.0) / 3.0)

        return _inner(x), grad_fn

    return inner


def _outer(f, x):
    return tf.reduce_sum(f(x * x) * x)


floats = st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=5)


@given(floats)
def test_a_true_vjp_changes_no_gradient_jacobian_batch_jacobian_second_derivative_or_jvp(values):
    x0 = np.asarray(values, np.float64)
    answers = []
    for f in (_inner, _inner_with_true_vjp):
        x = tf.constant(x0)
        column = tf.constant(x0.reshape(-1, 1))
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape(persistent=True) as tape:
                tape.watch([x, column])
                y = _outer(f, x)
                z = f(x) * 2.0
                per_row = f(column) * column
            g = tape.gradient(y, x)
            jac = tape.jacobian(z, x)
            batch_jac = tape.batch_jacobian(per_row, column)
            g_sum = tf.reduce_sum(g)
        second = outer.gradient(g_sum, x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(np.cos(x0))) as acc:
            w = _outer(f, x)
        answers.append((g.numpy(), jac.numpy(), batch_jac.numpy(), second.numpy(), acc.jvp(w).numpy()))
    for plain, custom in zip(*answers):
        np.testing.assert_allclose(custom, plain, rtol=1e-10, atol=1e-12)


@given(floats, st.floats(0.5, 3.0))
def test_scaling_upstream_in_grad_fn_scales_the_gradient(values, c):
    x0 = np.asarray(values, np.float64)
    grads = []
    for f in (_inner_with_true_vjp, _scaled(c)):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(f(x))
        grads.append(tape.gradient(y, x).numpy())
    np.testing.assert_allclose(grads[1], c * grads[0], rtol=1e-10, atol=1e-12)


def test_forward_mode_ignores_grad_fn_as_tf_does():
    # TF 2.21: for f(x) = x * x with grad_fn returning dy * 100, at x = 3 the tape gives 100.0 and
    # ForwardAccumulator.jvp gives 6.0 (the derivative of the computation itself).
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 100.0

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y2 = f(x)
    assert float(tape.gradient(y, x)) == 100.0
    assert float(acc.jvp(y2)) == 6.0


def test_jacobian_through_a_custom_gradient_uses_reverse_mode():
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 100.0

    x = tf.constant([3.0])  # one source element, many target elements: forward mode would be cheaper
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.tile(f(x), [8])
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.full((8, 1), 100.0))


def test_nested_custom_gradients_give_an_explicit_second_order_rule():
    # The seed's pattern: the first-order gradient is itself a custom_gradient function whose grad_fn is the
    # second-order rule. Here f(x) = x**3 with rules 3x**2 and 6x, scaled so the test can tell them apart.
    @tf.custom_gradient
    def first_order(x):
        return 3.0 * x * x * 10.0, lambda ddy: ddy * 6.0 * x * 100.0

    @tf.custom_gradient
    def f(x):
        return x * x * x, lambda dy: dy * first_order(x)

    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = f(x)
        d1 = t1.gradient(y, x)
    assert float(d1) == pytest.approx(120.0)
    assert float(t2.gradient(d1, x)) == pytest.approx(1200.0)


def test_variables_form_and_its_errors():
    w = tf.Variable([2.0, 3.0])

    @tf.custom_gradient
    def good(x):
        def grad_fn(dy, variables=None):
            return dy * w[0], [tf.stack([tf.reduce_sum(dy * x), 0.0])]

        return w[0] * x, grad_fn

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = good(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 2.0])
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), [3.0, 0.0])

    @tf.custom_gradient
    def no_keyword(x):
        return w[0] * x, lambda dy: dy

    with pytest.raises(TypeError, match="must accept keyword argument 'variables'.*def grad_fn"):
        with tf.GradientTape() as tape:
            no_keyword(x)

    @tf.custom_gradient
    def too_few_variable_grads(x):
        return w[0] * x, lambda dy, variables=None: (dy, [])

    with pytest.raises(ValueError, match="Must return gradient for each variable.*one entry"):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = too_few_variable_grads(x)
        tape.gradient(y, x)


def test_wrong_number_of_input_gradients():
    @tf.custom_gradient
    def g(x, z):
        return x * z, lambda dy: dy

    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1 instead.*one gradient"):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = g(x, x)
        tape.gradient(y, x)


def test_none_from_grad_fn_means_no_gradient():
    # TF 2.21: a None from grad_fn is no gradient: tape.gradient gives None (zeros when asked for), and where the
    # input also reaches the target another way, that path's gradient alone (here 3).
    @tf.custom_gradient
    def k(x):
        return x * 2.0, lambda dy: None

    x = tf.constant(1.0)
    for _ in range(2):  # the second time, the structure repeats (still the eager sweep)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = k(x)
            z = k(x) + x * 3.0
        assert tape.gradient(y, x) is None
        assert float(tape.gradient(y, x, unconnected_gradients="zero")) == 0.0
        assert float(tape.gradient(z, x)) == 3.0
        assert tape.jacobian(y, x) is None
    with tf.GradientTape() as tape:  # non-persistent: the explanation is kept when the call frees the trace
        tape.watch(x)
        y = k(x)
    assert tape.gradient(y, x) is None
    assert "grad_fn returned None" in tf.debugging.explain_none(tape, y, x)


def test_nested_outputs_and_repeated_calls_compile_once():
    @tf.custom_gradient
    def two(x):
        def grad_fn(da, db):  # upstream gradients come flattened, as in TF
            return da * 2.0 + db * 3.0

        return (x * 2.0, {"b": x * 3.0}), grad_fn

    for _ in range(3):
        x = tf.constant(np.array([1.0, -1.0]))
        with tf.GradientTape() as tape:
            tape.watch(x)
            a, d = two(x)
            y = tf.reduce_sum(a) + tf.reduce_sum(d["b"])
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [5.0, 5.0])


def test_jax_oracle_for_log1pexp():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        return tf.math.log(1 + e), lambda upstream: upstream * (1 - 1 / (1 + e))

    xs = np.linspace(-5, 5, 11)
    x = tf.constant(xs)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(log1pexp(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), jax.vmap(jax.grad(jnp.logaddexp), (0, None))(xs, 0.0))


def test_the_guides_nested_pattern_with_closures():
    # The API guide's op_with_fused_backprop sketch, made concrete: the inner custom gradient closes over the
    # outer forward's x_grad and x. f = x**3 with first-order rule 10 * 3x**2 and second-order rule 100 * 6x.
    @tf.custom_gradient
    def op_with_fused_backprop(x):
        y, x_grad = x * x * x, 3.0 * x * x

        def first_order_gradient(dy):
            @tf.custom_gradient
            def first_order_custom(unused_x):
                def second_order_and_transpose(ddy):
                    return ddy * 6.0 * x * 100.0

                return x_grad * 10.0, second_order_and_transpose

            return dy * first_order_custom(x)

        return y, first_order_gradient

    x = tf.Variable(2.0)
    for _ in range(2):  # the second time, through the compiled structures
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = op_with_fused_backprop(x)
            d1 = t1.gradient(y, x)
        assert float(d1) == pytest.approx(120.0)
        assert float(t2.gradient(d1, x)) == pytest.approx(1200.0)


def test_grad_fn_runs_eagerly_and_its_program_is_never_compiled():
    # TF runs grad_fn eagerly: it sees concrete values (numpy, Python `if`), every time, also once the structure
    # repeats (a structure with a custom gradient always takes the eager sweep, never a compiled executable).
    from tapejax._src import executables

    executables.CACHE.clear()  # a cache: clearing it changes no answer
    seen = []

    @tf.custom_gradient
    def f(x):
        def grad_fn(dy):
            seen.append(dy.numpy().copy())
            return dy * 3.0 if float(tf.reduce_max(dy)) > 1.0 else dy * 5.0

        return x * x, grad_fn

    for scale in (1.0, 2.0, 1.0):
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        upstream = tf.constant([scale, scale])  # not baked into the program: one structure, three runs
        np.testing.assert_allclose(tape.gradient(y, x, output_gradients=upstream).numpy(),
                                   [scale * (3.0 if scale > 1.0 else 5.0)] * 2)
    np.testing.assert_allclose(seen, [[1.0, 1.0], [2.0, 2.0], [1.0, 1.0]])
    (lowered,) = [lowered for lowered in executables.CACHE._items.values() if lowered.program.eager_backward]
    assert lowered._compiled and not any(lowered.is_compiled(kind) for kind in lowered._compiled)


def test_grad_fn_is_traced_under_tf_function():
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: tf.constant((dy * x).numpy())  # x is symbolic in the traced step

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x)

    with pytest.raises(AttributeError, match="inside tf.function"):
        step(tf.constant(1.0))


@given(floats)
def test_a_none_from_grad_fn_leaves_the_other_paths_gradient(values):
    @tf.custom_gradient
    def cut(x):
        return tf.sin(x), lambda dy: None

    x0 = np.asarray(values, np.float64)
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(cut(x) * x + tf.exp(x))
    # Oracle: the other path only; cut's output is held constant.
    expected = jax.grad(lambda v: jnp.sum(jax.lax.stop_gradient(jnp.sin(v)) * v + jnp.exp(v)))(x0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-12)


@given(floats)
def test_a_tape_following_only_a_captured_tensor_differentiates_the_computation(values):
    c0 = np.asarray(values, np.float64)
    c = tf.constant(c0)

    @tf.custom_gradient
    def f(x):
        return tf.sin(x * c) * c, lambda dy: dy * 100.0

    x = tf.constant(np.full_like(c0, 0.7))
    with tf.GradientTape(persistent=True) as only_c, tf.GradientTape() as both:
        only_c.watch(c)
        both.watch([x, c])
        y = tf.reduce_sum(f(x))
    expected = jax.grad(lambda v: jnp.sum(jnp.sin(0.7 * v) * v))(c0)
    np.testing.assert_allclose(only_c.gradient(y, c).numpy(), expected, rtol=1e-12)
    assert both.gradient(y, c) is None  # the custom op gives a captured tensor nothing, as in TF


@given(st.floats(-2.0, 2.0))
def test_a_custom_gradient_in_grad_fn_where_only_its_capture_is_perturbed(x0):
    # f(x) = sin(x) with grad_fn(dy) = inner(dy) + dy * sin(x)**2, where inner(u) = u * sin(x) has the custom
    # rule 5. The outer tape follows x, which reaches inner only through the tensor it captures, so TF
    # differentiates inner's computation: d/dx of the first derivative is that of dy * (sin x + sin(x)**2).
    @tf.custom_gradient
    def f(x):
        s = tf.sin(x)

        def grad_fn(dy):
            @tf.custom_gradient
            def inner(u):
                return u * s, lambda ddy: ddy * 5.0

            return inner(dy) + dy * s * s

        return s, grad_fn

    x = tf.Variable(np.float64(x0))
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = f(x) * 2.0
        d1 = t1.gradient(y, x)
    second = jax.grad(lambda v: 2.0 * (jnp.sin(v) + jnp.sin(v) ** 2))(x0)
    assert float(t2.gradient(d1, x)) == pytest.approx(float(second), rel=1e-12, abs=1e-12)


def test_unused_outputs_reach_grad_fn_as_zeros_eagerly_and_traced():
    seen = []

    @tf.custom_gradient
    def two(x):
        def grad_fn(da, db):
            seen.append(type(db).__name__)
            return da * 2.0 + db * 3.0

        return (x * 2.0, x * 3.0), grad_fn

    def grad_of_first(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            a, _ = two(x)
        return tape.gradient(a, x)

    x = tf.constant([1.0, -1.0])
    np.testing.assert_allclose(grad_of_first(x).numpy(), [2.0, 2.0])
    np.testing.assert_allclose(tf.function(grad_of_first)(x).numpy(), [2.0, 2.0])
    assert len(seen) == 2  # both ran grad_fn; the values above say db was zeros


@given(floats)
def test_recompute_grad_is_the_functions_gradient_to_second_order(values):
    x0 = np.asarray(values, np.float64)
    w = tf.Variable(np.float64(1.5))
    g = tf.recompute_grad(lambda x: tf.reduce_sum(tf.sin(x * w) * x))
    x = tf.constant(x0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = g(x)
        dx, dw = t1.gradient(y, [x, w])
        s = tf.reduce_sum(dx)
    plain = lambda v, w: jnp.sum(jnp.sin(v * w) * v)
    np.testing.assert_allclose(dx.numpy(), jax.grad(plain)(x0, 1.5), rtol=1e-12)
    np.testing.assert_allclose(dw.numpy(), jax.grad(plain, 1)(x0, 1.5), rtol=1e-12)
    np.testing.assert_allclose(t2.gradient(s, x).numpy(),
                               jax.grad(lambda v: jnp.sum(jax.grad(plain)(v, 1.5)))(x0), rtol=1e-10, atol=1e-12)


def test_a_python_number_result_is_float32_as_in_tf():
    @tf.custom_gradient
    def f(x):
        return 3.0, lambda dy: dy * 2.0

    x = tf.constant(1.0)
    for _ in range(3):  # a first-seen structure, then a repeated one
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert y.dtype == tf.float32 and y.numpy() == 3.0
        assert tape.gradient(y, x).numpy() == 2.0
