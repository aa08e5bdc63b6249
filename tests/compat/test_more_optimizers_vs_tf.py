"""Nadam, Adamax, Lion and Adadelta in tapejax and in TensorFlow's Keras: the same trajectories (eagerly and in a
tf.function step), the same defaults and argument order, the same errors; `tf.keras.optimizers.legacy.*`
raises Keras 3's ImportError."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

NAMES = ["Nadam", "Adamax", "Lion", "Adadelta"]
CASES = [
    ("Nadam", {}), ("Nadam", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.9, "epsilon": 1e-3}),
    ("Nadam", {"learning_rate": 0.05, "weight_decay": 0.1, "clipnorm": 0.5}),
    ("Adamax", {}), ("Adamax", {"learning_rate": 0.05, "beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-2}),
    ("Lion", {}), ("Lion", {"learning_rate": 0.01, "beta_1": 0.5, "beta_2": 0.7}),
    ("Adadelta", {}), ("Adadelta", {"learning_rate": 1.0, "rho": 0.8, "epsilon": 1e-4}),
    ("Nadam", {"learning_rate": lambda tf: tf.keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)}),
]


def _trajectory(tf, name, kwargs, w0s, grads, compiled):
    kwargs = {k: v(tf) if callable(v) else v for k, v in kwargs.items()}
    optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
    ws = [tf.Variable(w0) for w0 in w0s]

    def step(gs):
        optimizer.apply_gradients(zip(gs, ws))

    run = tf.function(step) if compiled else step
    path = []
    for gs in grads:
        run([tf.constant(g) for g in gs])
        path.append([w.numpy().copy() for w in ws])
    return path, int(optimizer.iterations.numpy())


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_trajectories_agree_with_keras(case, compiled):
    name, kwargs = CASES[case]
    rng = np.random.default_rng(case)
    w0s = [rng.normal(size=(3,)).astype(np.float32), rng.normal(size=(2, 2)).astype(np.float32)]
    grads = [[rng.normal(size=w.shape).astype(np.float32) for w in w0s] for _ in range(6)]
    grads[0][0][1] = 0.0
    expected, expected_iterations = _trajectory(tf_real, name, kwargs, w0s, grads, compiled)
    got, iterations = _trajectory(tapejax, name, kwargs, w0s, grads, compiled)
    assert iterations == expected_iterations == 6
    for g, e in zip(got, expected):
        for gw, ew in zip(g, e):
            np.testing.assert_allclose(gw, ew, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_defaults_and_argument_order_agree_with_keras(name):
    def parameters(module):
        return [(p.name, p.default) for p in inspect.signature(getattr(module.keras.optimizers, name)).parameters
                .values() if p.kind is p.POSITIONAL_OR_KEYWORD]

    ours, theirs = parameters(tapejax), parameters(tf_real)
    assert theirs[:len(ours)] == ours


@pytest.mark.parametrize("snippet", [
    lambda tf: tf.keras.optimizers.Lion(beta_1=0.0),
    lambda tf: tf.keras.optimizers.Lion(beta_1=1.5),
    lambda tf: tf.keras.optimizers.legacy.Adam(0.1),
    lambda tf: tf.keras.optimizers.legacy.SGD(),
    lambda tf: tf.keras.optimizers.legacy.RMSprop(learning_rate=0.1),
    lambda tf: tf.keras.optimizers.get("nadam"),
])
def test_errors_and_names_agree_with_keras(snippet):
    outcomes = []
    for module in (tapejax, tf_real):
        try:
            outcomes.append(type(snippet(module)).__name__)
        except Exception as e:  # noqa: BLE001
            outcomes.append(type(e).__name__)
    assert outcomes[0] == outcomes[1]


def test_fit_with_nadam_matches_keras():
    def history(tf):
        inputs = tf.keras.Input((3,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(inputs))
        model.compile(tf.keras.optimizers.Nadam(0.05), "mse")
        x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
        return model.fit(x, x.sum(1, keepdims=True) ** 2, epochs=4, batch_size=4, verbose=0,
                         shuffle=False).history["loss"], model.get_weights()

    (got_loss, got_weights), (loss, weights) = history(tapejax), history(tf_real)
    np.testing.assert_allclose(got_loss, loss, rtol=1e-5)
    for g, e in zip(got_weights, weights):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
