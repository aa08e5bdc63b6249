"""tf.keras.optimizers.from_optax (tapejax/keras/optimizers_optax.py): an optax transformation behind Keras's
optimizer API. The oracle is the same transformation run in pure JAX on the same initial values and data."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import tapejax as tf


def _chain():
    # clip_by_global_norm looks at every gradient at once; the schedule and inject_hyperparams give state
    # beyond Adam's moments (counts, the injected rate).
    schedule = optax.exponential_decay(0.05, transition_steps=4, decay_rate=0.5)
    return optax.chain(optax.clip_by_global_norm(0.5), optax.inject_hyperparams(optax.adam)(learning_rate=schedule))


def _model(seed=0):
    tf.keras.utils.set_random_seed(seed)
    return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(8, activation="tanh"),
                                tf.keras.layers.Dense(1)])


def _data(n=16):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return x, np.cos(x).sum(axis=1, keepdims=True).astype(np.float32)


def _apply(params, x):
    k1, b1, k2, b2 = params
    return jnp.tanh(x @ k1 + b1) @ k2 + b2


def _jax_training(params, batches, tx):
    """The pure JAX loop: jax.grad and the same optax chain."""
    params = [jnp.asarray(p) for p in params]
    state = tx.init(params)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((_apply(p, x) - y) ** 2))(params)
        updates, state = tx.update(grads, state, params)
        return loss, optax.apply_updates(params, updates), state

    losses = []
    for x, y in batches:
        loss, params, state = step(params, state, x, y)
        losses.append(float(loss))
    return losses, params


def _tape_step(model, optimizer):
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    return step


@pytest.mark.parametrize("compiled", [False, True])
def test_optax_chain_drives_a_keras_model_like_pure_jax(compiled):
    model = _model()
    initial = [v.numpy() for v in model.trainable_variables]
    x, y = _data()
    batches = [(x[i:i + 8], y[i:i + 8]) for i in (0, 8)] * 6
    optimizer = tf.keras.optimizers.from_optax(_chain())
    step = _tape_step(model, optimizer)
    step = tf.function(step) if compiled else step
    losses = [float(step(bx, by)) for bx, by in batches]
    jax_losses, jax_params = _jax_training(initial, batches, _chain())
    np.testing.assert_allclose(losses, jax_losses, rtol=1e-6, atol=1e-7)
    for v, p in zip(model.trainable_variables, jax_params):
        np.testing.assert_allclose(v.numpy(), np.asarray(p), rtol=1e-6, atol=1e-7)
    assert int(optimizer.iterations) == len(batches)


def test_keras_fit_with_an_optax_optimizer_equals_the_tape_loop():
    x, y = _data(32)
    fitted = _model()
    initial = [v.numpy() for v in fitted.trainable_variables]
    fitted.compile(optimizer=tf.keras.optimizers.from_optax(_chain()), loss="mse")
    history = fitted.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]

    looped = _model(seed=1)
    for v, value in zip(looped.trainable_variables, initial):
        v.assign(value)
    step = tf.function(_tape_step(looped, tf.keras.optimizers.from_optax(_chain())))
    for _ in range(2):
        for i in range(0, 32, 8):
            step(x[i:i + 8], y[i:i + 8])
    for a, b in zip(fitted.trainable_variables, looped.trainable_variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_keras_api_minimize_iterations_variables():
    w = tf.Variable([1.0, -2.0])
    optimizer = tf.keras.optimizers.from_optax(optax.adam(0.1))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w ** 2)
    optimizer.minimize(loss, [w], tape=tape)
    params = [jnp.array([1.0, -2.0], jnp.float32)]
    updates, _ = optax.adam(0.1).update([2 * params[0]], optax.adam(0.1).init(params), params)
    np.testing.assert_allclose(w.numpy(), np.asarray(optax.apply_updates(params, updates)[0]), rtol=1e-6)
    assert int(optimizer.iterations) == 1
    assert optimizer.variables[0] is optimizer.iterations
    assert all(not v.trainable for v in optimizer.variables)
    # Adam's state: a count and two moments (mu, nu) for the one variable.
    assert sorted(tuple(v.shape) for v in optimizer.variables[1:]) == [(), (2,), (2,)]
    with pytest.raises(ValueError, match="Unknown variable"):
        optimizer.apply_gradients([(tf.constant(1.0), tf.Variable(1.0))])


def test_learning_rate_reads_and_sets_an_injected_hyperparameter():
    w = tf.Variable(1.0)
    optimizer = tf.keras.optimizers.from_optax(optax.inject_hyperparams(optax.sgd)(learning_rate=0.5))
    optimizer.build([w])
    np.testing.assert_allclose(float(optimizer.learning_rate), 0.5)
    optimizer.apply_gradients([(tf.constant(1.0), w)])
    assert float(w.numpy()) == pytest.approx(0.5)
    optimizer.learning_rate = 0.25  # what Keras's callbacks do
    optimizer.apply_gradients([(tf.constant(1.0), w)])
    assert float(w.numpy()) == pytest.approx(0.25)
    with pytest.raises(AttributeError, match="inject_hyperparams"):
        _ = tf.keras.optimizers.from_optax(optax.sgd(0.1)).learning_rate


def test_a_variable_without_a_gradient_is_left_alone_with_kerass_warning():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    optimizer = tf.keras.optimizers.from_optax(optax.sgd(0.1))
    with pytest.warns(UserWarning, match="Gradients do not exist"):
        optimizer.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert float(a.numpy()) == pytest.approx(0.9) and float(b.numpy()) == 2.0
    with pytest.raises(ValueError, match="No gradients"):
        optimizer.apply_gradients([(None, a)])


def test_state_is_saved_and_restored_by_checkpoints(tmp_path):
    x, y = _data()

    def run(model, optimizer, steps):
        step = _tape_step(model, optimizer)
        return [float(step(x, y)) for _ in range(steps)]

    model, optimizer = _model(), tf.keras.optimizers.from_optax(_chain())
    run(model, optimizer, 3)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))
    continued = run(model, optimizer, 3)

    # A fresh model and optimizer, restored before the optimizer has made its state (deferred restoration).
    model2, optimizer2 = _model(seed=5), tf.keras.optimizers.from_optax(_chain())
    tf.train.Checkpoint(model=model2, optimizer=optimizer2).restore(path)
    resumed = run(model2, optimizer2, 3)
    np.testing.assert_allclose(resumed, continued, rtol=1e-6)
    assert int(optimizer2.iterations) == 6
