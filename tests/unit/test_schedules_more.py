"""PolynomialDecay, InverseTimeDecay, CosineDecay against their closed forms (NumPy), eagerly and traced."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapejax as tf

S = tf.keras.optimizers.schedules
CASES = [
    (lambda: S.PolynomialDecay(0.5, 8, end_learning_rate=0.1, power=2.0),
     lambda t: (0.5 - 0.1) * (1 - min(t, 8) / 8) ** 2 + 0.1),
    (lambda: S.PolynomialDecay(0.5, 4, cycle=True),
     lambda t: (0.5 - 1e-4) * (1 - t / (4 * max(1, math.ceil(t / 4)))) + 1e-4),
    (lambda: S.InverseTimeDecay(0.5, 3, 0.7, staircase=True), lambda t: 0.5 / (1 + 0.7 * (t // 3))),
    (lambda: S.CosineDecay(0.5, 10, alpha=0.1),
     lambda t: 0.5 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(t, 10) / 10)) + 0.1)),
    (lambda: S.CosineDecay(0.0, 10, warmup_target=1.0, warmup_steps=4),
     lambda t: t / 4 if t < 4 else 0.5 * (1 + math.cos(math.pi * min(t - 4, 10) / 10))),
]


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("k", range(len(CASES)))
def test_schedules_follow_their_formula(k, compiled):
    make, formula = CASES[k]
    schedule = make()
    call = tf.function(schedule) if compiled else schedule
    got = [float(call(tf.constant(t, tf.int64))) for t in range(20)]
    np.testing.assert_allclose(got, [formula(t) for t in range(20)], rtol=1e-6, atol=1e-7)


def test_config_round_trips():
    schedule = S.CosineDecay(0.1, 5, warmup_target=0.2, warmup_steps=2)
    assert float(S.CosineDecay(**schedule.get_config())(3)) == float(schedule(3))
