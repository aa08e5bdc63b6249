"""Keras optimizers on optax: first steps equal Keras's documented formulas, written out in numpy; training works."""

from __future__ import annotations

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
