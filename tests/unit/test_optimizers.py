"""Keras optimizers on optax: first steps equal Keras's documented formulas, written out in numpy; training works."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import tapejax as tf

G = [np.array([0.5, -0.25], np.float32), np.array([-1.0, 2.0], np.float32), np.array([0.1, 0.3], np.float32)]
X0 = np.array([1.0, -2.0])


def _run(optimizer, steps=3):
    w = tf.Variable(X0.astype(np.float32))
    out = []
    for g in G[:steps]:
        optimizer.apply_gradients([(tf.constant(g), w)])
        out.append(w.numpy().copy())
    return out


def test_sgd_plain_momentum_and_nesterov():
    for momentum, nesterov in [(0.0, False), (0.9, False), (0.9, True)]:
        got = _run(tf.keras.optimizers.SGD(0.1, momentum=momentum, nesterov=nesterov))
        x, m = X0.copy(), np.zeros(2)
        for g, w in zip(G, got):
            m = momentum * m - 0.1 * g  # Keras: m = momentum * m - lr * g
            x = x + (momentum * m - 0.1 * g if nesterov else m)
            np.testing.assert_allclose(w, x, rtol=1e-6)


def test_adam_is_kerass_formula_with_its_epsilon_placement():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-3  # a large epsilon, so where it is added shows
    got = _run(tf.keras.optimizers.Adam(lr, beta_1=b1, beta_2=b2, epsilon=eps))
    x, m, v = X0.copy(), np.zeros(2), np.zeros(2)
    for t, (g, w) in enumerate(zip(G, got), start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x = x - lr * np.sqrt(1 - b2**t) / (1 - b1**t) * m / (np.sqrt(v) + eps)
        np.testing.assert_allclose(w, x, rtol=1e-6)



@pytest.mark.parametrize("centered, momentum", [(False, 0.0), (True, 0.0), (False, 0.9), (True, 0.9)])
def test_rmsprop_is_kerass_formula_with_epsilon_under_the_root(centered, momentum):
    lr, rho, eps = 0.1, 0.9, 1e-2  # a large epsilon, so where it is added shows
    got = _run(tf.keras.optimizers.RMSprop(lr, rho=rho, momentum=momentum, epsilon=eps, centered=centered))
    x, v, a, m = X0.copy(), np.zeros(2), np.zeros(2), np.zeros(2)
    for g, w in zip(G, got):
        v = rho * v + (1 - rho) * g * g
        a = rho * a + (1 - rho) * g
        increment = lr * g / np.sqrt((v - a * a if centered else v) + eps)
        m = momentum * m + increment
        x = x - (m if momentum > 0 else increment)
        np.testing.assert_allclose(w, x, rtol=1e-6)


@pytest.mark.parametrize("initial_accumulator_value", [0.1, 0.0, 2.0])
def test_adagrad_is_kerass_formula_from_its_initial_accumulator(initial_accumulator_value):
    lr, eps = 0.1, 1e-2
    got = _run(tf.keras.optimizers.Adagrad(lr, initial_accumulator_value=initial_accumulator_value, epsilon=eps))
    x, acc = X0.copy(), np.full(2, initial_accumulator_value)
    for g, w in zip(G, got):
        acc = acc + g * g
        x = x - lr * g / np.sqrt(acc + eps)
        np.testing.assert_allclose(w, x, rtol=1e-6)


@pytest.mark.parametrize("weight_decay, scheduled", [(0.004, False), (0.5, False), (0.0, False), (0.5, True)])
def test_adamw_decays_the_weights_then_takes_kerass_adam_step(weight_decay, scheduled):
    b1, b2, eps = 0.9, 0.999, 1e-3
    lr = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5) if scheduled else 0.1
    got = _run(tf.keras.optimizers.AdamW(lr, weight_decay=weight_decay, beta_1=b1, beta_2=b2, epsilon=eps))
    x, m, v = X0.copy(), np.zeros(2), np.zeros(2)
    for t, (g, w) in enumerate(zip(G, got), start=1):
        lr_t = 0.1 * 0.5 ** (t - 1) if scheduled else 0.1  # the schedule at `iterations`, before the increment
        x = x - x * weight_decay * lr_t  # Keras: decoupled weight decay, applied before the Adam step
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x = x - lr_t * np.sqrt(1 - b2**t) / (1 - b1**t) * m / (np.sqrt(v) + eps)
        np.testing.assert_allclose(w, x, rtol=1e-6)


def test_new_optimizers_keep_kerass_defaults_and_errors():
    rmsprop, adagrad = tf.keras.optimizers.RMSprop(), tf.keras.optimizers.Adagrad(name="ada")
    adamw = tf.keras.optimizers.AdamW()
    assert (rmsprop.learning_rate, rmsprop.rho, rmsprop.momentum, rmsprop.epsilon, rmsprop.centered) == (
        pytest.approx(0.001), 0.9, 0.0, 1e-7, False)
    assert (adagrad.initial_accumulator_value, adagrad.epsilon, adagrad.name) == (0.1, 1e-7, "ada")
    assert (adamw.weight_decay, adamw.beta_1, adamw.beta_2, adamw.epsilon) == (0.004, 0.9, 0.999, 1e-7)
    with pytest.raises(ValueError, match="weight_decay"):
        tf.keras.optimizers.AdamW(weight_decay=None)
    with pytest.raises(NotImplementedError, match="amsgrad"):
        tf.keras.optimizers.AdamW(amsgrad=True)

def test_schedules_and_iterations():
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    optimizer = tf.keras.optimizers.SGD(schedule)
    got = _run(optimizer)
    x = X0.copy()
    for step, (g, w) in enumerate(zip(G, got)):
        x = x - 0.1 * 0.5 ** (step / 2) * g
        np.testing.assert_allclose(w, x, rtol=1e-6)
    assert int(optimizer.iterations) == 3
    piecewise = tf.keras.optimizers.schedules.PiecewiseConstantDecay([1], [1.0, 0.5])
    assert [piecewise(s) for s in range(3)] == [1.0, 1.0, 0.5]


def test_minimize_needs_a_tape():
    w = tf.Variable(1.0)
    optimizer = tf.keras.optimizers.SGD(0.5)
    with tf.GradientTape() as tape:
        loss = w * w
    optimizer.minimize(loss, [w], tape=tape)
    assert float(w) == 0.0
    with pytest.raises(ValueError, match="`tape` is required"):
        optimizer.minimize(w * w, [w])


def test_an_mlp_classifier_trains_with_adam():
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(256, 4)).astype(np.float32)
    labels = (x0[:, 0] * x0[:, 1] > 0).astype(np.int32)  # XOR-like: needs the hidden layer
    model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(0.01)
    x, y = tf.constant(x0), tf.constant(labels)
    losses = []
    for _ in range(300):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    assert losses[0] > 0.6 and losses[-1] < 0.15, (losses[0], losses[-1])


# -- issue 17: checked, atomic steps; constraints, learning rates and schedules as in Keras -----------------------

OPTIMIZERS = [lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9), lambda: tf.keras.optimizers.Adam(0.1),
              lambda: tf.keras.optimizers.RMSprop(0.1, centered=True), lambda: tf.keras.optimizers.Adagrad(0.1),
              lambda: tf.keras.optimizers.AdamW(0.1)]


def _snapshot(optimizer, variables):
    return [v.numpy().copy() for v in [*variables, *optimizer.variables]]


def _assert_unchanged(before, optimizer, variables):
    after = _snapshot(optimizer, variables)
    assert len(after) == len(before)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_a_bad_gradient_shape_raises_before_anything_is_assigned(make):
    optimizer = make()
    a, b = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    optimizer.apply_gradients([(tf.constant([0.1, 0.2]), a), (tf.constant(0.3), b)])  # slots hold real values
    before = _snapshot(optimizer, [a, b])
    for bad in ([(tf.constant(1.0), b), (tf.constant([1.0]), a)], [(tf.constant([1.0, 2.0]), a), (tf.ones([2]), b)]):
        with pytest.raises(tf.errors.InvalidArgumentError, match="shapes must be equal") as caught:
            optimizer.apply_gradients(bad)
        assert isinstance(caught.value, ValueError)  # Keras raises either type, depending on the optimizer
        _assert_unchanged(before, optimizer, [a, b])


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_a_constraint_that_fails_leaves_every_variable_slot_and_the_step_count_as_they_were(make):
    def fails(x):
        raise RuntimeError("constraint failed")

    optimizer = make()
    a, b = tf.Variable([1.0, 2.0]), tf.Variable(3.0, constraint=fails)
    optimizer.build([a, b])
    before = _snapshot(optimizer, [a, b])
    with pytest.raises(RuntimeError, match="constraint failed"):
        optimizer.apply_gradients([(tf.constant([0.1, 0.2]), a), (tf.constant(0.3), b)])
    _assert_unchanged(before, optimizer, [a, b])
    wrong_shape = tf.Variable(3.0, constraint=lambda x: tf.stack([x, x]))
    optimizer = make()
    optimizer.build([a, wrong_shape])
    before = _snapshot(optimizer, [a, wrong_shape])
    with pytest.raises(ValueError, match="Shape mismatch"):
        optimizer.apply_gradients([(tf.constant([0.1, 0.2]), a), (tf.constant(0.3), wrong_shape)])
    _assert_unchanged(before, optimizer, [a, wrong_shape])


def test_a_bad_step_inside_tf_function_changes_nothing():
    optimizer = tf.keras.optimizers.Adam(0.1)
    a, b = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    optimizer.build([a, b])
    before = _snapshot(optimizer, [a, b])
    step = tf.function(lambda g: optimizer.apply_gradients([(tf.constant(0.5), b), (g, a)]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        step(tf.constant([1.0, 2.0, 3.0]))
    _assert_unchanged(before, optimizer, [a, b])


def test_every_gradient_none_raises_and_some_none_warn():
    a, b = tf.Variable([1.0, 2.0], name="a"), tf.Variable(3.0, name="b")
    optimizer = tf.keras.optimizers.SGD(0.5)
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        optimizer.apply_gradients([(None, a), (None, b)])
    assert int(optimizer.iterations) == 0
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['a:0'\]"):
        optimizer.apply_gradients([(None, a), (tf.constant(2.0), b)])
    assert a.numpy().tolist() == [1.0, 2.0] and float(b) == 3.0 - 0.5 * 2.0 and int(optimizer.iterations) == 1


def test_gradients_are_cast_to_their_variables_dtype():
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([1.0, 2.0])
    tf.keras.optimizers.SGD(0.5).apply_gradients([(tf.constant([1.0, -3.0], tf.float64), a)])
    tf.keras.optimizers.SGD(0.5).apply_gradients([(np.array([1, -3]), b)])
    for v in (a, b):
        assert v.dtype == tf.float32
        np.testing.assert_array_equal(v.numpy(), np.float32([1.0 - 0.5, 2.0 + 1.5]))


def test_a_constraint_is_applied_by_the_optimizer_after_its_update_not_by_assign():
    w = tf.Variable([1.0, -2.0], constraint=lambda x: tf.maximum(x, 0.0))
    assert w.numpy().tolist() == [1.0, -2.0]
    w.assign([-5.0, 3.0])
    w.assign_sub([0.0, 4.0])
    assert w.numpy().tolist() == [-5.0, -1.0]
    tf.keras.optimizers.SGD(0.5).apply_gradients([(tf.constant([-2.0, -4.0]), w)])
    assert w.numpy().tolist() == [0.0, 1.0]  # max(0, [-5 + 1, -1 + 2])
    with pytest.raises(ValueError, match="constraint"):
        tf.Variable(1.0, constraint=3)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_a_callable_learning_rate_is_called_once_per_step_never_at_construction(momentum):
    rates = []

    def learning_rate():
        rates.append(0.1 * 0.5 ** len(rates))  # a stateful schedule: each call halves the rate
        return rates[-1]

    optimizer = tf.keras.optimizers.SGD(learning_rate, momentum=momentum)
    assert rates == []
    got = _run(optimizer)
    assert len(rates) == 3
    x, m = X0.copy(), np.zeros(2)
    for lr, g, w in zip(rates, G, got):
        m = momentum * m - lr * g  # Keras: each step's rate scales that step's gradient only
        x = x + m
        np.testing.assert_allclose(w, x, rtol=1e-6)


def test_a_variable_listed_twice_is_updated_twice_in_order():
    w = tf.Variable(3.0)
    tf.keras.optimizers.SGD(0.1).apply_gradients([(tf.constant(1.0), w), (tf.constant(2.0), w)])
    assert float(w) == pytest.approx(3.0 - 0.1 * 1.0 - 0.1 * 2.0)
    v = tf.Variable(3.0)
    tf.keras.optimizers.SGD(0.1, momentum=0.5).apply_gradients([(tf.constant(1.0), v), (tf.constant(2.0), v)])
    m1 = -0.1 * 1.0  # Keras: m = momentum * m - lr * g, then var += m, once per listing
    m2 = 0.5 * m1 - 0.1 * 2.0
    assert float(v) == pytest.approx(3.0 + m1 + m2)


def test_an_optimizer_updates_only_the_variables_it_was_built_for():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    optimizer = tf.keras.optimizers.Adam(0.1)
    optimizer.apply_gradients([(tf.constant(1.0), a)])
    with pytest.raises(ValueError, match="Unknown variable"):
        optimizer.apply_gradients([(tf.constant(1.0), a), (tf.constant(1.0), b)])
    assert float(b) == 2.0 and int(optimizer.iterations) == 1


def test_optimizers_configured_alike_share_one_compiled_update():
    assert tf.keras.optimizers.SGD(0.1)._step is tf.keras.optimizers.SGD(0.5, weight_decay=0.1)._step
    assert tf.keras.optimizers.SGD(0.1)._step is not tf.keras.optimizers.SGD(0.1, momentum=0.9)._step
    assert tf.keras.optimizers.Adam(0.1)._step is not tf.keras.optimizers.AdamW(0.1)._step


LOOP_OPTIMIZERS = [*OPTIMIZERS, lambda: tf.keras.optimizers.AdamW(0.1, weight_decay=0.5),
                   lambda: tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 1, 0.5))]


@pytest.mark.parametrize("branch", [False, True])
@pytest.mark.parametrize("make", LOOP_OPTIMIZERS)
def test_apply_gradients_in_a_loop_inside_tf_function_is_the_eager_loop(make, branch):
    # A tf.range loop (and a tf.cond branch) inside tf.function is captured and replayed: the update must be
    # recorded there, not computed once on the capture's placeholders (it used to apply one step in all).
    def run(compiled):
        w = tf.Variable([1.0, -2.0], constraint=lambda v: tf.clip_by_value(v, -1.5, 1.5))
        b = tf.Variable(0.5)
        optimizer = make()

        def step(i):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(w * w * tf.cast(i + 1, tf.float32)) + b * b
            grads = tape.gradient(loss, [w, b])
            if branch:
                tf.cond(i % 2 == 0, lambda: optimizer.apply_gradients(zip(grads, [w, b])), lambda: optimizer.iterations)
            else:
                optimizer.apply_gradients(zip(grads, [w, b]))

        def loop(n):
            for i in tf.range(n):
                step(i)

        (tf.function(loop) if compiled else loop)(tf.constant(4))
        return [v.numpy() for v in (w, b, optimizer.iterations, *optimizer.variables[1:])]

    for got, want in zip(run(True), run(False), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_the_compiled_update_takes_and_returns_only_the_slots(dtype):
    """Eagerly, each call of the compiled update costs time per argument and result: it takes the gradients,
    values, slots, the step count and the learning rate (Adam's epsilon at step t it computes itself), and returns
    new values and slots, never optax's constant state leaves; and everything keeps its variable's dtype (they
    are assigned unchecked)."""
    w, b = tf.Variable(tf.ones([3, 2], dtype)), tf.Variable(tf.zeros([2], dtype))
    optimizer = tf.keras.optimizers.Adam(0.1)
    optimizer.build([w, b])
    seen = []
    step = optimizer._step

    def counting(*args):
        out = step(*args)
        seen.append((len(jax.tree_util.tree_leaves(args)), len(jax.tree_util.tree_leaves(out))))
        return out

    optimizer._step = counting
    optimizer.apply_gradients([(tf.ones([3, 2], dtype), w), (tf.ones([2], dtype), b)])
    # in: 2 gradients + 2 values + 4 slots (m, v) + the count + the learning rate; out: 2 values + 4 slots
    assert seen == [(10, 6)]
    slots = [s for _, _, owned in optimizer._slots.values() for s in owned]
    assert [v.dtype for v in (w, b, *slots)] == [dtype] * 6
    np.testing.assert_allclose(w.numpy(), np.full((3, 2), 0.9), rtol=1e-3)


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad", "AdamW"])
def test_a_compiled_step_with_new_slot_shapes_is_one_compile(name, monkeypatch):
    # tf.function traces fold constants (concrete_function.py); the optimizer's update must not fold its optax
    # state's zeros, which compiled one executable per slot shape and dtype before the step's own (Adam: 8 for
    # four variables, knowledge_distillation: 59 compiles in all, 51 since).
    from tapejax._src import checking
    from tests.unit.test_shape_inference_compiles import counting_compiles

    monkeypatch.setattr(checking.FLAG, "on", False)  # the checking mode recomputes the plain way, compiling
    shapes = [(13, 17), (19,), (3, 11, 5), (23, 1)]  # shapes no other test uses: nothing is cached for them
    ws = [tf.Variable(np.full(s, 0.1, np.float32)) for s in shapes]
    optimizer = getattr(tf.keras.optimizers, name)(0.01)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum(tf.tanh(w)) for w in ws)
        optimizer.apply_gradients(zip(tape.gradient(loss, ws), ws))
        return loss

    with counting_compiles() as compiled:
        step()
    assert len(compiled) == 1
    eager = [tf.Variable(np.full(s, 0.1, np.float32)) for s in shapes]
    reference = getattr(tf.keras.optimizers, name)(0.01)
    with tf.GradientTape() as tape:
        loss = sum(tf.reduce_sum(tf.tanh(w)) for w in eager)
    reference.apply_gradients(zip(tape.gradient(loss, eager), eager))
    for w, e in zip(ws, eager):
        np.testing.assert_allclose(w.numpy(), e.numpy(), rtol=1e-6)
