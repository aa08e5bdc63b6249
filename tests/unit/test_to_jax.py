"""tapejax.to_jax: a TF-style function as a pure JAX function, checked against the same program run eagerly.

The oracle is tapejax itself on the same program (tape.gradient, eager optimizer steps), and JAX for the
transformations (a jitted step equals the un-jitted one, a scan equals a loop, an export equals its source).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tapejax as tf
from tapejax.to_jax import CALLS_KEY

RTOL = 1e-5


def _close(a, b, rtol=RTOL, atol=1e-6):
    jax.tree_util.tree_map(lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol,
                                                                  atol=atol), a, b)


def _values(variables):
    return [v.numpy().copy() for v in variables]


def _mlp(seed: int = 0):
    rng = np.random.default_rng(seed)
    w1 = tf.Variable(rng.normal(size=(3, 5)).astype(np.float32), name="w1")
    b1 = tf.Variable(np.zeros(5, np.float32), name="b1")
    w2 = tf.Variable(rng.normal(size=(5, 1)).astype(np.float32), name="w2")
    return w1, b1, w2


def _model(seed: int):
    tf.keras.utils.set_random_seed(seed)
    return tf.keras.Sequential([tf.keras.layers.Dense(6, activation="tanh"), tf.keras.layers.Dense(1)])


def _data(seed: int, n: int = 8):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)).astype(np.float32), rng.normal(size=(n, 1)).astype(np.float32)


# -- gradients --------------------------------------------------------------------------------------------------


@given(seed=st.integers(0, 2**16), scale=st.floats(0.1, 3.0))
def test_jax_grad_equals_tape_gradient_dense_mlp(seed, scale):
    w1, b1, w2 = _mlp(seed)
    x, y = _data(seed)

    def loss_fn(x, y):
        h = tf.nn.relu(x @ w1 + b1) * scale
        return tf.reduce_mean((h @ w2 - y) ** 2)

    pure = tf.to_jax(loss_fn)
    state = tf.variables_of(pure, x, y)
    assert sorted(state) == ["b1", "w1", "w2"]
    grads = jax.grad(lambda s: pure(s, x, y)[1])(state)
    with tf.GradientTape() as tape:
        loss = loss_fn(tf.constant(x), tf.constant(y))
    expected = tape.gradient(loss, [w1, b1, w2])
    _close([grads["w1"], grads["b1"], grads["w2"]], [e.numpy() for e in expected], rtol=1e-4)
    # with respect to the arrays too
    gx = jax.grad(lambda s, x: pure(s, x, y)[1], argnums=1)(state, x)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = loss_fn(xt, tf.constant(y))
    _close(gx, tape.gradient(loss, xt).numpy(), rtol=1e-4)


def test_jax_grad_equals_tape_gradient_through_custom_gradient():
    @tf.custom_gradient
    def clip_gradient(x):
        def grad(upstream):
            return tf.clip_by_norm(upstream, 0.1)
        return tf.identity(x), grad

    w = tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), name="w")

    def loss_fn(x):
        return tf.reduce_sum(tf.tanh(clip_gradient(x @ w)) ** 2)

    x = np.ones((4, 2), np.float32)
    pure = tf.to_jax(loss_fn)
    state = tf.variables_of(pure, x)
    gw, gx = jax.grad(lambda s, x: pure(s, x)[1], argnums=(0, 1))(state, x)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = loss_fn(xt)
    ew, ex = tape.gradient(loss, [w, xt])
    _close(gw["w"], ew.numpy())
    _close(gx, ex.numpy())
    # the custom rule is used, not the identity's: the clipped upstream has norm 0.1 per call
    assert np.linalg.norm(np.asarray(gx)) < np.linalg.norm(np.asarray(jax.grad(
        lambda x: jnp.sum(jnp.tanh(x @ state["w"]) ** 2))(x)))


def test_jax_grad_equals_tape_gradient_keras_model():
    model = _model(1)
    x, y = _data(1)

    def loss_fn(x, y):
        return tf.reduce_mean(tf.keras.losses.mean_squared_error(y, model(x)))

    pure = tf.to_jax(loss_fn)
    state = tf.variables_of(pure, x, y)  # the model is built by this abstract first trace
    assert set(state) == set(tf.variables_of(model))
    grads = jax.jit(jax.grad(lambda s: pure(s, x, y)[1]))(state)
    with tf.GradientTape() as tape:
        loss = loss_fn(x, y)
    expected = tape.gradient(loss, model.trainable_variables)
    _close([grads[v.path] for v in model.trainable_variables], [e.numpy() for e in expected], rtol=1e-4)


def test_vmap_of_per_example_gradients_equals_a_loop_of_tapes():
    """DP-SGD's idiom: per-example gradients by vmap over a TF-style gradient, clipped per example."""
    w1, b1, w2 = _mlp(2)
    x, y = _data(2, n=6)

    def per_example(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((tf.nn.relu(x[None] @ w1 + b1) @ w2 - y) ** 2)
        grads = tape.gradient(loss, [w1, b1, w2])
        norm = tf.linalg.global_norm(grads)
        return [g * tf.minimum(1.0, 1.0 / norm) for g in grads]

    pure = tf.to_jax(per_example)
    state = tf.variables_of(pure, x[0], y[0])
    _, batched = jax.jit(jax.vmap(pure, in_axes=(None, 0, 0)))(state, x, y)
    for i in range(len(x)):
        expected = per_example(tf.constant(x[i]), tf.constant(y[i]))
        _close([b[i] for b in batched], [e.numpy() for e in expected], rtol=1e-4)


# -- training steps ------------------------------------------------------------------------------------------


def _training_step(model, optimizer):
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return {"loss": loss, "scaled": (loss * 2.0, 3)}

    return step


@pytest.mark.parametrize("optimizer", ["adam", "sgd_momentum"])
def test_jitted_training_step_equals_eager_steps_and_assign_state_writes_back(optimizer):
    model = _model(3)
    opt = (tf.keras.optimizers.Adam(0.05) if optimizer == "adam"
           else tf.keras.optimizers.SGD(0.05, momentum=0.9))
    step = _training_step(model, opt)
    pure = tf.to_jax(step)
    x, y = _data(3)
    state = tf.variables_of(pure, x, y)  # weights, slots and iterations, created by the abstract trace
    slots = [k for k in state if k not in tf.variables_of(model)]
    assert len(slots) >= 3, sorted(state)  # iterations and at least one slot per kernel/bias
    before = tf.variables_of(pure)
    jitted = jax.jit(pure)
    new, losses = state, []
    for _ in range(5):
        new, out = jitted(new, x, y)
        losses.append(float(out["loss"]))
        assert out["scaled"][1].dtype == np.int32 and int(out["scaled"][1]) == 3  # nests kept, numbers as arrays
    _close(tf.variables_of(pure), before, rtol=0, atol=0)  # purity: no Variable written
    eager_losses = [float(step(x, y)["loss"]) for _ in range(5)]
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    after_eager = tf.variables_of(pure)
    assert set(after_eager) == set(new)
    _close(new, after_eager, rtol=1e-5)  # weights, slots and iterations alike
    assert int(new["iteration"]) == 5
    tf.assign_state(pure, jax.tree_util.tree_map(jnp.zeros_like, new))
    assert all(not np.any(v.numpy()) for v in model.variables)
    tf.assign_state(pure, new)
    _close(tf.variables_of(pure), new, rtol=0, atol=0)


def test_scan_over_steps_equals_a_loop_and_export_round_trips():
    model = _model(4)
    pure = tf.to_jax(_training_step(model, tf.keras.optimizers.Adam(0.01)))
    xs, ys = _data(4, n=4 * 8)
    xs, ys = xs.reshape(4, 8, 3), ys.reshape(4, 8, 1)
    state = tf.variables_of(pure, xs[0], ys[0])

    def body(s, batch):
        s, out = pure(s, *batch)
        return s, out["loss"]

    final, losses = jax.jit(lambda s: jax.lax.scan(body, s, (xs, ys)))(state)
    s, looped = state, []
    for i in range(4):
        s, out = pure(s, xs[i], ys[i])  # un-jitted: op by op
        looped.append(out["loss"])
    _close(losses, looped, rtol=1e-5)
    _close(final, s, rtol=1e-5)

    specs = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), (state, xs[0], ys[0]))
    exported = jax.export.deserialize(jax.export.export(jax.jit(pure))(*specs).serialize())
    _close(exported.call(state, xs[0], ys[0]), pure(state, xs[0], ys[0]), rtol=1e-5)


def test_named_sharding_input():
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    w1, b1, w2 = _mlp(5)
    devices = np.array(jax.devices())
    x, y = _data(5, n=4 * len(devices))
    mesh = Mesh(devices, ("batch",))
    xs = jax.device_put(x, NamedSharding(mesh, PartitionSpec("batch")))

    def loss_fn(x, y):
        return tf.reduce_mean((tf.nn.relu(x @ w1 + b1) @ w2 - y) ** 2)

    pure = tf.to_jax(loss_fn)
    state = tf.variables_of(pure, x, y)
    grads = jax.jit(jax.grad(lambda s, x: pure(s, x, y)[1]))(state, xs)
    _close(grads, jax.grad(lambda s: pure(s, x, y)[1])(state), rtol=1e-5)


def test_random_ops_take_their_call_number_from_the_state():
    model = tf.keras.Sequential([tf.keras.layers.Dropout(0.5)])

    def noisy(x):
        return model(x, training=True)

    pure = jax.jit(tf.to_jax(noisy))
    x = np.ones((64,), np.float32)
    state = tf.variables_of(pure.__wrapped__, x)
    assert set(state) == {CALLS_KEY} and int(state[CALLS_KEY]) == 0
    s1, a = pure(state, x)
    _, a_again = pure(state, x)
    _, b = pure(s1, x)
    np.testing.assert_array_equal(a, a_again)  # pure: the same state draws the same mask
    assert int(s1[CALLS_KEY]) == 1 and np.any(np.asarray(a) != np.asarray(b))  # the next call draws anew


# -- what it accepts ----------------------------------------------------------------------------------------


def test_tf_function_input_and_outputs_as_nests():
    v = tf.Variable([1.0, 2.0], name="v")

    @tf.function
    def f(x, scale=2.0):
        v.assign(v * scale)
        return {"sum": tf.reduce_sum(v), "parts": [x * 1.0, None]}

    pure = tf.to_jax(f)
    new, out = pure({"v": jnp.asarray([1.0, 3.0], jnp.float32)}, jnp.float32(1.0))
    _close(new["v"], [2.0, 6.0])
    assert float(out["sum"]) == 8.0 and out["parts"][1] is None and isinstance(out["parts"][0], jax.Array)
    _close(v.numpy(), [1.0, 2.0])


def test_variables_of_and_assign_state_for_models_modules_and_lists():
    model = _model(6)
    model(np.zeros((1, 3), np.float32))
    state = tf.variables_of(model)
    assert list(state) == [v.path for v in model.variables]
    tf.assign_state(model, jax.tree_util.tree_map(lambda a: a + 1, state))
    _close([v.numpy() for v in model.variables], [np.asarray(a) + 1 for a in state.values()])
    a, b = tf.Variable(1.0), tf.Variable(2.0)  # the same name twice: numbered
    assert list(tf.variables_of([a, b])) == ["Variable", "Variable_1"]


def test_variables_of_a_keras_model_matches_its_to_jax_function():
    model = _model(7)
    pure = tf.to_jax(model)
    x = np.ones((2, 3), np.float32)
    state = tf.variables_of(pure, x)
    assert state.keys() == tf.variables_of(model).keys()
    _, out = jax.jit(pure)(state, x)
    _close(out, model(x).numpy())
    # exported with a symbolic batch size, called with another
    batch, = jax.export.symbolic_shape("batch")
    specs = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), state)
    exported = jax.export.export(jax.jit(pure))(specs, jax.ShapeDtypeStruct((batch, 3), np.float32))
    x5 = np.arange(15, dtype=np.float32).reshape(5, 3)
    _close(exported.call(state, x5)[1], model(x5).numpy())


# -- errors -------------------------------------------------------------------------------------------------


def test_bad_states_raise_naming_the_key():
    w1, b1, w2 = _mlp(8)
    pure = tf.to_jax(lambda x: x @ w1 + b1)
    with pytest.raises(ValueError, match="not been traced"):
        tf.variables_of(pure)
    x = np.ones((2, 3), np.float32)
    state = tf.variables_of(pure, x)
    with pytest.raises(ValueError, match="no entry for 'b1'.*variables_of"):
        pure({"w1": state["w1"]}, x)
    with pytest.raises(ValueError, match="'w2'.*Remove it"):
        pure({**state, "w2": w2.numpy()}, x)
    with pytest.raises(ValueError, match=r"state\['w1'\] has shape \(3, 4\).*\(3, 5\)"):
        pure({**state, "w1": np.zeros((3, 4), np.float32)}, x)
    with pytest.raises(TypeError, match=r"state\['b1'\] has dtype float64.*astype"):
        pure({**state, "b1": np.zeros(5, np.float64)}, x)
    with pytest.raises(TypeError, match="must be a dict"):
        pure([state["w1"], state["b1"]], x)
    before = _values([w1, b1])
    with pytest.raises(ValueError, match="'b1'"):  # all or nothing: w1 is not written either
        tf.assign_state(pure, {"w1": np.zeros((3, 5), np.float32), "b1": np.zeros(4, np.float32)})
    _close(_values([w1, b1]), before, rtol=0, atol=0)
    with pytest.raises(TypeError, match="to_jax function"):
        tf.variables_of(object())


def test_a_function_that_creates_variables_on_every_call_raises_as_tf_function_does():
    def make_one(x):
        return tf.Variable(1.0) * x

    with pytest.raises(ValueError, match="singleton tf.Variables created on the first call"):
        tf.variables_of(tf.to_jax(make_one), np.float32(1.0))
    with pytest.raises(ValueError, match="singleton tf.Variables created on the first call"):
        tf.function(make_one)(tf.constant(1.0))  # the same error, tf.function's


def test_purity_under_every_transformation():
    w1, b1, w2 = _mlp(9)
    x, y = _data(9)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.nn.relu(x @ w1 + b1) @ w2 - y) ** 2)
        for v, g in zip([w1, b1, w2], tape.gradient(loss, [w1, b1, w2])):
            v.assign_sub(0.1 * g)
        return loss

    pure = tf.to_jax(step)
    state = tf.variables_of(pure, x, y)
    before = _values([w1, b1, w2])
    pure(state, x, y)
    jax.jit(pure)(state, x, y)
    jax.jit(jax.vmap(pure, in_axes=(None, 0, 0)))(state, x[:, None], y[:, None])
    _close(_values([w1, b1, w2]), before, rtol=0, atol=0)
    # the gradient through new_state is JAX's: the updated weights depend on the old ones
    meta = jax.jit(jax.grad(lambda s: jnp.sum(pure(s, x, y)[0]["w2"])))(state)
    _close(_values([w1, b1, w2]), before, rtol=0, atol=0)
    assert np.any(np.asarray(meta["w1"]))


def test_the_jitted_step_compiles_to_the_work_of_the_same_step_written_in_jax():
    """The benchmark's claim (benchmarks/interop.py), without timing: jax.jit(to_jax(step)) of an Adam step is the
    XLA program of the step written in JAX with optax, to XLA's count of flops and bytes."""
    optax = pytest.importorskip("optax")
    rng = np.random.default_rng(10)
    params = [rng.normal(size=(8, 16)).astype(np.float32), np.zeros(16, np.float32),
              rng.normal(size=(16, 4)).astype(np.float32), np.zeros(4, np.float32)]
    x, onehot = rng.normal(size=(32, 8)).astype(np.float32), np.eye(4, dtype=np.float32)[rng.integers(0, 4, 32)]

    def loss_of(lib, p, x, onehot):
        relu, log_softmax, total = ((jax.nn.relu, jax.nn.log_softmax, jnp.sum) if lib is jnp
                                    else (tf.nn.relu, tf.nn.log_softmax, tf.reduce_sum))
        return -total(onehot * log_softmax(relu(x @ p[0] + p[1]) @ p[2] + p[3])) / 32

    variables = [tf.Variable(p) for p in params]
    opt = tf.keras.optimizers.Adam(1e-3)

    def step(x, onehot):
        with tf.GradientTape() as tape:
            loss = loss_of(tf, variables, x, onehot)
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    pure = tf.to_jax(step)
    state = tf.variables_of(pure, x, onehot)
    adam = optax.adam(1e-3, eps=1e-7)

    def jax_step(p, s, x, onehot):
        loss, grads = jax.value_and_grad(lambda p: loss_of(jnp, p, x, onehot))(p)
        updates, s = adam.update(grads, s, p)
        return optax.apply_updates(p, updates), s, loss

    costs = []
    for compiled in (jax.jit(pure).lower(state, x, onehot).compile(),
                     jax.jit(jax_step).lower(params, adam.init(params), x, onehot).compile()):
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        costs.append((cost["flops"], cost["bytes accessed"]))
    np.testing.assert_allclose(costs[0], costs[1], rtol=0.01)
