"""Model.compile/fit/evaluate/predict, callbacks, the data the loop takes, and keras.utils/backend/applications:
the properties that need no TensorFlow (the values themselves are checked against TF in
tests/compat/test_fit_vs_tf.py)."""

from __future__ import annotations

import contextlib
import io
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def _model(seed=0):
    rng = np.random.default_rng(seed)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    return model


def _data(n=100, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)).astype(np.float32), rng.integers(0, 3, size=(n,))


def _fit(run_eagerly, epochs=2, **kwargs):
    x, y = _data()
    model = _model()
    model.compile(tf.keras.optimizers.SGD(0.1), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], run_eagerly=run_eagerly)
    history = model.fit(x, y, batch_size=32, epochs=epochs, shuffle=False, verbose=0, **kwargs)
    return model, history


def test_compiled_fit_equals_eager_fit_and_the_loss_is_jaxs():
    compiled, history = _fit(run_eagerly=False)
    eager, eager_history = _fit(run_eagerly=True)
    for a, b in zip(compiled.get_weights(), eager.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(history.history["loss"], eager_history.history["loss"], rtol=1e-5)
    # the first epoch's loss is the batch-size-weighted mean of each step's loss, computed here with JAX
    x, y = _data()
    weights = [w for w in _model().get_weights()]
    total = 0.0
    for start in range(0, 100, 32):
        xb, yb = x[start:start + 32], y[start:start + 32]

        def loss_fn(ws):
            logits = jnp.maximum(xb @ ws[0] + ws[1], 0) @ ws[2] + ws[3]
            return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(yb)), yb])

        value, grads = jax.value_and_grad(loss_fn)(weights)
        total += float(value) * len(xb)
        weights = [w - 0.1 * g for w, g in zip(weights, grads)]
    np.testing.assert_allclose(history.history["loss"][0], total / 100, rtol=1e-5)


def test_the_step_is_traced_once_and_compiled_once_per_batch_shape():
    first, _ = _fit(run_eagerly=False, epochs=1)
    detector = first.train_function.compiled._detector  # shared by every model's step (one Python function)
    compiles = detector.compiles
    model, _ = _fit(run_eagerly=False, epochs=3)
    # 100 samples in batches of 32: one trace for an unknown batch size, as Keras on TF traces it, compiled for
    # 32 and for the partial 4; three epochs trace and compile nothing new
    assert model.train_function.compiled.experimental_get_tracing_count() == 1
    assert detector.compiles - compiles == 2
    # without a partial batch the size is known, as in TF
    x, y = _data(96)
    exact = _model()
    exact.compile(tf.keras.optimizers.SGD(0.1), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    exact.fit(x, y, batch_size=32, epochs=2, verbose=0)
    (concrete,) = set(exact.train_function.compiled._concrete.values())
    assert not concrete.symbolic


def test_a_flatten_step_is_one_trace_for_every_batch_size():
    # Flatten reshapes to (batch, size): with the batch unknown the batch is the -1, so the step's symbolic trace
    # (for a partial last batch) holds, without the per-size fallback
    model = tf.keras.Sequential([tf.keras.Input((4, 3)), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    x, y = np.ones((10, 4, 3), np.float32), np.ones((10, 2), np.float32)
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    function = model.train_function.compiled
    assert [c.symbolic for c in set(function._concrete.values())] == [True] and not function._per_size
    np.testing.assert_allclose(model.predict(x, batch_size=4, verbose=0), model(x).numpy(), rtol=1e-6)


class _ZerosLike(tf.keras.layers.Layer):
    def call(self, inputs):
        return inputs + tf.zeros(inputs.shape)  # needs the batch size: a known shape only


def test_a_step_that_needs_the_batch_size_is_traced_per_size():
    # Keras on TF would raise here (the batch is None in its trace); tapejax traces such a step per batch size
    model = tf.keras.Sequential([tf.keras.Input((3,)), _ZerosLike(), tf.keras.layers.Dense(1)])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    x, y = np.ones((10, 3), np.float32), np.ones((10, 1), np.float32)
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    function = model.train_function.compiled
    assert function._per_size and not any(c.symbolic for c in set(function._concrete.values()))
    assert np.all(np.isfinite(history.history["loss"]))
