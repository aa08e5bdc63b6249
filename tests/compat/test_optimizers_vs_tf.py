"""RMSprop, Adagrad and AdamW in tapejax and in TensorFlow's Keras: the same gradient steps, the same trajectories."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

STEPS = 5


def _exponential_decay(tf):
    return tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)


CASES = [
    ("RMSprop", {}),
    ("RMSprop", {"learning_rate": 0.05, "epsilon": 1e-2}),
    ("RMSprop", {"learning_rate": 0.05, "rho": 0.8, "centered": True, "epsilon": 1e-2}),
    ("RMSprop", {"learning_rate": 0.05, "momentum": 0.9}),
    ("RMSprop", {"learning_rate": 0.05, "momentum": 0.5, "centered": True, "epsilon": 1e-3}),
    ("RMSprop", {"learning_rate": _exponential_decay, "momentum": 0.9, "centered": True}),
    ("Adagrad", {}),
    ("Adagrad", {"learning_rate": 0.1, "epsilon": 1e-2}),
    ("Adagrad", {"learning_rate": 0.1, "initial_accumulator_value": 0.0}),
    ("Adagrad", {"learning_rate": 0.1, "initial_accumulator_value": 2.0, "epsilon": 1e-3}),
    ("Adagrad", {"learning_rate": _exponential_decay}),
    ("AdamW", {}),
    ("AdamW", {"learning_rate": 0.05, "weight_decay": 0.1, "epsilon": 1e-2}),
    ("AdamW", {"learning_rate": 0.05, "weight_decay": 0.0}),
    ("AdamW", {"learning_rate": 0.05, "weight_decay": 0.3, "beta_1": 0.5, "beta_2": 0.9}),
    ("AdamW", {"learning_rate": _exponential_decay, "weight_decay": 0.2}),
    # the base class's options, on every optimizer
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"learning_rate": 0.05, "weight_decay": 0.2}),
    ("Adam", {"learning_rate": 0.05, "clipnorm": 0.5}),
    ("RMSprop", {"learning_rate": 0.05, "clipvalue": 0.1}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "global_clipnorm": 0.3}),
]


def _trajectory(tf, name, kwargs, w0s, grads):
    kwargs = {k: v(tf) if callable(v) else v for k, v in kwargs.items()}
    optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
    ws = [tf.Variable(w0) for w0 in w0s]
    out = [list(w0s)]
    for step in grads:
        optimizer.apply_gradients([(tf.constant(g), w) for g, w in zip(step, ws)])
        out.append([w.numpy().copy() for w in ws])
    return out, int(optimizer.iterations.numpy())


def _case_id(value):
    if isinstance(value, dict):
        return ",".join(f"{k}={getattr(v, '__name__', v)}" for k, v in value.items()) or "defaults"
    return str(value)


@pytest.mark.parametrize("name, kwargs", CASES, ids=_case_id)
def test_trajectories_agree_with_tensorflow(name, kwargs):
    rng = np.random.default_rng(7)
    w0s = [rng.normal(size=(3,)).astype(np.float32), rng.normal(size=(2, 2)).astype(np.float32)]
    grads = [[rng.normal(size=w0.shape).astype(np.float32) for w0 in w0s] for _ in range(STEPS)]
    grads[0][0][1] = 0.0  # a zero gradient on a fresh slot (Adagrad from a zero accumulator: both give 0)
    expected, expected_iterations = _trajectory(tf_real, name, kwargs, w0s, grads)
    got, iterations = _trajectory(tapejax, name, kwargs, w0s, grads)
    assert iterations == expected_iterations == STEPS
    for i in range(len(w0s)):
        expected_path = np.stack([step[i] for step in expected])
        got_path = np.stack([step[i] for step in got])
        # Each step agrees to rtol 1e-5 of its own size: Keras's Adam rounds beta_2 to float32 in its bias
        # correction (`ops.cast` of a Python float), which moves each AdamW step by ~6e-6 of itself, so a
        # weight that the steps carry close to 0 is compared with the distance they moved it, not its value.
        distance = np.cumsum(np.abs(np.diff(expected_path, axis=0)), axis=0)
        tolerance = 1e-5 * (distance + np.abs(expected_path[1:])) + 1e-7
        error = np.abs(got_path[1:] - expected_path[1:])
        assert (error <= tolerance).all(), (f"variable {i}: max error {error.max()} at step "
                                            f"{np.unravel_index(np.argmax(error - tolerance), error.shape)[0] + 1}",
                                            got_path, expected_path)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "AdamW"])
def test_defaults_agree_with_tensorflow(name):
    def defaults(cls):
        parameters = inspect.signature(cls).parameters.values()
        return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}

    expected, got = defaults(getattr(tf_real.keras.optimizers, name)), defaults(getattr(tapejax.keras.optimizers, name))
    assert got.items() <= expected.items(), (got, expected)
    first = list(inspect.signature(getattr(tf_real.keras.optimizers, name)).parameters)
    ours = [p for p in inspect.signature(getattr(tapejax.keras.optimizers, name)).parameters if p != "kwargs"]
    assert first[:len(ours)] == ours  # positional order too: RMSprop(0.01, 0.95) means the same in both


def test_adamw_without_weight_decay_raises_like_tensorflow():
    with pytest.raises(ValueError, match="weight_decay"):
        tf_real.keras.optimizers.AdamW(weight_decay=None)
    with pytest.raises(ValueError, match="weight_decay"):
        tapejax.keras.optimizers.AdamW(weight_decay=None)


@pytest.mark.parametrize("name, kwargs", [("Adam", {}), ("AdamW", {}), ("SGD", {"momentum": 0.9}), ("RMSprop", {}),
                                          ("RMSprop", {"momentum": 0.9, "centered": True}), ("Adagrad", {})],
                         ids=_case_id)
def test_state_per_variable_is_kerass(name, kwargs):
    # Keras keeps only accumulators per variable (Adam: momentum and velocity), and bias-corrects every
    # variable with the optimizer's `iterations`: tapejax's state is the same, so a compiled step carries no
    # per-variable counters. (Keras also keeps the learning rate as a variable; tapejax computes it.)
    def per_variable(tf):
        variables = [tf.Variable([1.0, 2.0]), tf.Variable(3.0)]
        optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
        optimizer.build(variables)
        names = [v.name.split(":")[0].rsplit("/", 1)[-1] for v in optimizer.variables]
        return len([n for n in names if n not in ("iteration", "learning_rate")])

    assert per_variable(tapejax) == per_variable(tf_real)


def test_a_variable_skipped_for_a_step_is_bias_corrected_with_iterations_as_in_tensorflow():
    def trajectory(tf):
        a, b = tf.Variable([1.0, -2.0]), tf.Variable(0.5)
        optimizer = tf.keras.optimizers.Adam(0.1)
        for step in range(4):
            grads = [tf.constant([0.3, -0.1]), None if step < 2 else tf.constant(0.7)]
            optimizer.apply_gradients(zip(grads, [a, b]))
        return a.numpy(), b.numpy()

    for ours, theirs in zip(trajectory(tapejax), trajectory(tf_real)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
