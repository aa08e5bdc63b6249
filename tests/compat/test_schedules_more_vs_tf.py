"""PolynomialDecay, InverseTimeDecay and CosineDecay in tapejax and in TensorFlow's Keras: the same rates at every
step, eagerly and as an optimizer's schedule in a tf.function step, and the same errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

CASES = [
    ("PolynomialDecay", (0.1, 10), {}), ("PolynomialDecay", (0.1, 7), {"end_learning_rate": 0.01, "power": 2.0}),
    ("PolynomialDecay", (0.1, 6), {"cycle": True, "power": 0.5}),
    ("InverseTimeDecay", (0.1, 5, 0.5), {}), ("InverseTimeDecay", (0.1, 3, 2.0), {"staircase": True}),
    ("CosineDecay", (0.1, 10), {}), ("CosineDecay", (0.1, 8), {"alpha": 0.2}),
    ("CosineDecay", (0.01, 10), {"warmup_target": 0.1, "warmup_steps": 5}),
    ("CosineDecay", (0.0, 6), {"warmup_target": 0.2, "warmup_steps": 3, "alpha": 0.1}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES)
def test_rates_match_keras(name, args, kwargs):
    def rates(tf):
        schedule = getattr(tf.keras.optimizers.schedules, name)(*args, **kwargs)
        return np.array([float(schedule(step)) for step in range(25)])

    np.testing.assert_allclose(rates(tapejax), rates(tf_real), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,args,kwargs", CASES[::2])
def test_schedule_drives_a_compiled_step_as_in_keras(name, args, kwargs):
    def trajectory(tf):
        v = tf.Variable([1.0, -2.0])
        optimizer = tf.keras.optimizers.SGD(getattr(tf.keras.optimizers.schedules, name)(*args, **kwargs))
        step = tf.function(lambda: optimizer.apply_gradients([(tf.constant([1.0, 0.5]), v)]))
        return np.array([(step(), v.numpy().copy())[1] for _ in range(12)])

    np.testing.assert_allclose(trajectory(tapejax), trajectory(tf_real), rtol=1e-6)


@pytest.mark.parametrize("name", ["PolynomialDecay", "CosineDecay"])
def test_zero_decay_steps_raise_as_keras(name):
    for module in (tapejax, tf_real):
        with pytest.raises(ValueError, match="decay_steps"):
            getattr(module.keras.optimizers.schedules, name)(0.1, 0)
    with pytest.raises(ValueError, match="decay_steps"):
        tapejax.keras.optimizers.schedules.InverseTimeDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="decay_steps"):
        tf_real.keras.optimizers.schedules.InverseTimeDecay(0.1, 0, 0.5)
