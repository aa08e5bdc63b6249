"""tf.from_jax: a JAX function as a recorded op (tapejax/from_jax.py). JAX is the oracle throughout: the op's
gradients, jacobians, JVPs and second derivatives must be JAX's of the same function."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tapejax as tf

RTOL = 1e-5


def _np(tree):
    return jax.tree_util.tree_map(np.asarray, tree, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))


def _close(got, expected, rtol=RTOL, atol=1e-6):
    got, expected = _np(got), _np(expected)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(expected)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


# A hand-written JAX layer: what CI tests the mechanism with (Flax and Equinox are optional).
def mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def mlp_params(seed=0):
    k1, k2 = jax.random.split(jax.random.PRNGKey(seed))
    return {"w1": jax.random.normal(k1, (3, 8), jnp.float32) * 0.5, "b1": jnp.zeros(8, jnp.float32),
            "w2": jax.random.normal(k2, (8, 1), jnp.float32) * 0.5, "b2": jnp.zeros(1, jnp.float32)}


def data(n=16, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (np.sin(x).sum(axis=1, keepdims=True)).astype(np.float32)
    return x, y


def mse(pred, y):
    return jnp.mean((pred - y) ** 2)


def test_gradient_is_jaxs_of_the_function():
    layer = tf.from_jax(mlp)
    params = mlp_params()
    variables = jax.tree.map(tf.Variable, params)
    x, y = data()
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(layer(variables, x) - y))
    grads = tape.gradient(loss, variables)
    _close(grads, jax.grad(lambda p: mse(mlp(p, x), y))(params))


def test_hand_written_layer_trains_to_the_pure_jax_loss():
    layer = tf.from_jax(mlp)
    params = mlp_params()
    variables = jax.tree.map(tf.Variable, params)
    optimizer = tf.keras.optimizers.SGD(0.1)
    x, y = data()
    names = sorted(params)

    def tape_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(layer(variables, x) - y))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients([(grads[k], variables[k]) for k in names])
        return loss

    jax_step = jax.jit(lambda p: (mse(mlp(p, x), y), jax.tree.map(lambda w, g: w - 0.1 * g, p,
                                                                   jax.grad(lambda q: mse(mlp(q, x), y))(p))))
    for _ in range(25):
        loss = tape_step()
        jax_loss, params = jax_step(params)
        np.testing.assert_allclose(float(loss), float(jax_loss), rtol=1e-5)
    _close(variables, params, rtol=1e-5)
    assert float(loss) < float(mse(mlp(mlp_params(), x), y))


def test_inside_tf_function_it_is_part_of_the_compiled_step():
    calls = []

    def traced_layer(params, x):
        calls.append(1)  # a Python side effect: runs only when JAX traces fn
        return mlp(params, x)

    layer = tf.from_jax(traced_layer)
    variables = jax.tree.map(tf.Variable, mlp_params())
    x, y = data()

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(layer(variables, x) - y))
        return loss, tape.gradient(loss, variables)

    first = step(x)
    traced = len(calls)
    for _ in range(3):
        again = step(x)
    assert len(calls) == traced  # compiled once, into the step: fn is not run per call
    _close(again, first)
    eager_loss = tf.reduce_mean(tf.square(layer(variables, x) - y))
    np.testing.assert_allclose(float(first[0]), float(eager_loss), rtol=1e-6)


def test_pytree_outputs_keep_their_structure_and_integer_outputs_have_no_gradient():
    def fn(x):
        return {"sum": jnp.sum(x), "parts": (x * 2, jnp.argmax(x))}

    x = tf.constant([1.0, 3.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        out = tf.from_jax(fn)(x)
    assert set(out) == {"sum", "parts"} and isinstance(out["parts"], tuple)
    assert out["parts"][1].dtype == tf.as_dtype(jnp.argmax(x.value).dtype)
    np.testing.assert_array_equal(tape.gradient(out["sum"], x).numpy(), [1.0, 1.0, 1.0])
    assert tape.gradient(out["parts"][1], x) is None


def test_custom_vjp_inside_fn_is_respected():
    @jax.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))

    def fn(x):
        return jnp.sum(clip_gradient(x) * 10.0)

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.from_jax(fn)(x)
    g = tape.gradient(y, x)
    _close(g, jax.grad(fn)(x.value))
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])  # the rule's, not the calculus's 10


def test_custom_jvp_in_forward_mode_is_jaxs_jvp():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2.0 * tangents[0]))
    x = tf.constant([0.3, 0.7])
    tangent = tf.constant([1.0, -1.0])
    with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
        y = tf.from_jax(f)(x)
    _close(acc.jvp(y), jax.jvp(f, (x.value,), (tangent.value,))[1])


def test_jacobian_and_batch_jacobian_are_jaxs():
    params = mlp_params()
    variables = jax.tree.map(tf.Variable, params)
    layer = tf.from_jax(mlp)
    x = tf.constant(data(4)[0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        out = layer(variables, x)
    _close(tape.jacobian(out, variables["w1"]), jax.jacrev(lambda w: mlp({**params, "w1": w}, x.value))(
        params["w1"]))
    per_example = jax.vmap(jax.jacrev(lambda xi: mlp(params, xi[None])[0]))(x.value)
    _close(tape.batch_jacobian(out, x), per_example)


def test_nested_tapes_give_jaxs_second_derivative():
    def fn(x):
        return jnp.sum(jnp.sin(x) * x ** 2)

    x = tf.constant([0.4, 1.1])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.from_jax(fn)(x)
        g = inner.gradient(y, x)
    _close(outer.jacobian(g, x), jax.hessian(fn)(x.value))


def test_static_arguments_and_closures():
    def scale(x, factor, mode="mul"):
        return x * factor if mode == "mul" else x + factor

    op = tf.from_jax(scale, static_argnames=("mode",))
    x = tf.constant([1.0, 2.0])
    np.testing.assert_array_equal(op(x, 3.0, mode="add").numpy(), [4.0, 5.0])
    np.testing.assert_array_equal(op(x, 3.0).numpy(), [3.0, 6.0])
    by_number = tf.from_jax(lambda x, k: x ** k, static_argnums=1)
    np.testing.assert_array_equal(by_number(x, 2).numpy(), [1.0, 4.0])
    closed = tf.from_jax(functools.partial(scale, mode="add"))
    np.testing.assert_array_equal(closed(x, 1.0).numpy(), [2.0, 3.0])


def test_python_numbers_follow_tf_dtype_rules():
    out = tf.from_jax(lambda a, b: (a, b))(1.5, 2)
    assert out[0].dtype == tf.float32 and out[1].dtype == tf.int32


def test_bad_input_raises_tf_exception_types():
    layer = tf.from_jax(mlp)
    variables = jax.tree.map(tf.Variable, mlp_params())
    wrong_width = tf.zeros([2, 5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="dot_general"):
        layer(variables, wrong_width)
    with pytest.raises(ValueError, match="dot_general"):
        tf.function(lambda x: layer(variables, x))(wrong_width)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.from_jax(jax.lax.add)(tf.constant(1.0), tf.constant(1))  # JAX refuses mixed dtypes in lax.add
    with pytest.raises(TypeError, match="static_argnums=\\(1,\\)"):
        layer(variables, "not an array")
    with pytest.raises(TypeError, match="hashable"):
        tf.from_jax(lambda x, cfg: x, static_argnames="cfg")(1.0, cfg=[1, 2])


def test_a_jax_error_never_escapes_raw():
    def needs_concrete(x):
        return jnp.zeros(int(x))  # a traced value as a shape: JAX's ConcretizationTypeError

    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.from_jax(needs_concrete)(tf.constant(3.0))


# from_jax of a jnp function against the registered tapejax op: same value, same gradient.
UNARY = [(jnp.sin, tf.math.sin), (jnp.tanh, tf.math.tanh), (jnp.exp, tf.math.exp), (jnp.square, tf.math.square),
         (jax.nn.sigmoid, tf.math.sigmoid), (jax.nn.softplus, tf.math.softplus)]
# (not maximum: at a tie TF sends the whole gradient to x, JAX splits it; the README lists it)
BINARY = [(jnp.multiply, tf.math.multiply), (jnp.subtract, tf.math.subtract), (jnp.add, tf.math.add)]

finite = st.floats(-3, 3, width=32)


@settings(max_examples=25, deadline=None)
@given(index=st.integers(0, len(UNARY) - 1), x=hnp.arrays(np.float32, st.integers(1, 5), elements=finite))
def test_from_jax_of_a_jnp_function_matches_the_registered_op(index, x):
    jnp_fn, tf_fn = UNARY[index]
    x = tf.constant(x)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        got, expected = tf.from_jax(jnp_fn)(x), tf_fn(x)
    _close(got, expected)
    _close(tape.gradient(got, x), tape.gradient(expected, x))


@settings(max_examples=25, deadline=None)
@given(index=st.integers(0, len(BINARY) - 1), xy=hnp.arrays(np.float32, (2, 4), elements=finite))
def test_from_jax_of_a_binary_jnp_function_matches_the_registered_op(index, xy):
    jnp_fn, tf_fn = BINARY[index]
    x, y = tf.constant(xy[0]), tf.constant(xy[1])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        got, expected = tf.from_jax(jnp_fn)(x, y), tf_fn(x, y)
    _close(got, expected)
    _close(tape.gradient(got, [x, y]), tape.gradient(expected, [x, y]))


# -- the headline: Flax and Equinox models trained by a tape loop -------------------------------------------

def _train_both(apply, params, x, y, steps=20, lr=0.05):
    """Trains `apply(params, x)` with SGD twice: a GradientTape loop over Variables, and pure JAX; returns the
    two loss curves."""
    op = tf.from_jax(apply)
    variables = jax.tree.map(tf.Variable, params)
    flat = jax.tree_util.tree_leaves(variables, is_leaf=lambda v: isinstance(v, tf.Variable))
    optimizer = tf.keras.optimizers.SGD(lr)
    tape_losses, jax_losses = [], []

    @jax.jit
    def jax_step(p):
        loss, grads = jax.value_and_grad(lambda q: mse(apply(q, x), y))(p)
        return loss, jax.tree.map(lambda w, g: w - lr * g, p, grads)

    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(op(variables, x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, flat), flat))
        tape_losses.append(float(loss))
        jax_loss, params = jax_step(params)
        jax_losses.append(float(jax_loss))
    return tape_losses, jax_losses


def test_flax_linen_module_trains_in_a_tape_loop_like_pure_jax():
    nn = pytest.importorskip("flax.linen")

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(1)(nn.tanh(nn.Dense(8)(x)))

    model = MLP()
    x, y = data()
    params = model.init(jax.random.PRNGKey(0), jnp.asarray(x))
    tape_losses, jax_losses = _train_both(model.apply, params, x, y)
    np.testing.assert_allclose(tape_losses, jax_losses, rtol=1e-5)
    assert tape_losses[-1] < tape_losses[0]


def test_equinox_module_trains_in_a_tape_loop_like_pure_jax():
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(3, 1, width_size=8, depth=1, activation=jnp.tanh, key=jax.random.PRNGKey(0))
    arrays, static = eqx.partition(model, eqx.is_array)

    def apply(arrays, x):
        return jax.vmap(eqx.combine(arrays, static))(x)

    x, y = data()
    tape_losses, jax_losses = _train_both(apply, arrays, x, y)
    np.testing.assert_allclose(tape_losses, jax_losses, rtol=1e-5)
    assert tape_losses[-1] < tape_losses[0]
