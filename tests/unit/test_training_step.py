"""Issue #7's training test: a small network trained for 100 steps with a tf.function step (GradientTape and an
optimizer inside) traces once, ends with the weights of the same loop run eagerly, and a step that raises midway
leaves every weight as it was."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf

RNG = np.random.default_rng(0)
X = RNG.normal(size=(32, 4)).astype(np.float32)
Y = (X @ RNG.normal(size=(4, 1)) + 0.1 * RNG.normal(size=(32, 1))).astype(np.float32)


def _model_and_optimizer(weights=None):
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
    model(tf.constant(X))  # built before the step: the step then creates no variable and traces once
    if weights is not None:
        for variable, value in zip(model.variables, weights):
            variable.assign(value)
    optimizer = tf.keras.optimizers.Adam(0.01)
    optimizer.build(model.trainable_variables)
    return model, optimizer


def _step_fn(model, optimizer, fail_after_update=False):
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        if fail_after_update:
            raise RuntimeError("failure after the update")
        return loss
    return step


def test_a_compiled_training_loop_traces_once_and_matches_the_eager_loop():
    eager_model, eager_opt = _model_and_optimizer()
    start = [v.numpy().copy() for v in eager_model.variables]
    compiled_model, compiled_opt = _model_and_optimizer(start)
    eager_step = _step_fn(eager_model, eager_opt)
    compiled_step = tf.function(_step_fn(compiled_model, compiled_opt))
    x, y = tf.constant(X), tf.constant(Y)
    eager_losses = [float(eager_step(x, y)) for _ in range(100)]
    compiled_losses = [float(compiled_step(x, y)) for _ in range(100)]
    assert compiled_step.experimental_get_tracing_count() == 1
    assert eager_losses[-1] < 0.5 * eager_losses[0]  # it trains
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=2e-4, atol=1e-6)
    for a, b in zip(compiled_model.variables, eager_model.variables):  # BatchNormalization's statistics too
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-4, atol=1e-5)
    assert int(compiled_opt.iterations) == int(eager_opt.iterations) == 100


def test_a_step_that_raises_midway_leaves_every_variable_as_it_was():
    model, optimizer = _model_and_optimizer()
    good = tf.function(_step_fn(model, optimizer))
    good(tf.constant(X), tf.constant(Y))
    before = [v.numpy().copy() for v in model.variables + optimizer.variables]
    bad = tf.function(_step_fn(model, optimizer, fail_after_update=True))
    with pytest.raises(RuntimeError, match="failure after the update"):
        bad(tf.constant(X), tf.constant(Y))
    after = [v.numpy() for v in model.variables + optimizer.variables]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
