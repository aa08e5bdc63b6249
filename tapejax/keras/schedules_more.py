"""tf.keras.optimizers.schedules PolynomialDecay, InverseTimeDecay and CosineDecay: Keras 3's formulas, computed
as float32 tensors of the step (so they work inside tf.function, where the step is traced)."""

from __future__ import annotations

import math
from typing import Any

import tapejax as tf
from tapejax.keras.schedules import LearningRateSchedule


def _check_steps(decay_steps: Any) -> None:
    if decay_steps <= 0:
        raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")


class PolynomialDecay(LearningRateSchedule):
    """`(initial - end) * (1 - step / decay_steps) ** power + end`, the step held at `decay_steps`; with `cycle`,
    `decay_steps` grows to the first multiple above the step instead.

    >>> import tapejax as tf
    >>> print(tf.keras.optimizers.schedules.PolynomialDecay(1.0, 10, end_learning_rate=0.0)(5))
    tf.Tensor(0.5, shape=(), dtype=float32)
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, end_learning_rate: float = 0.0001,
                 power: float = 1.0, cycle: bool = False, name: str = "PolynomialDecay"):
        self.initial_learning_rate, self.decay_steps, self.end_learning_rate = (initial_learning_rate, decay_steps,
                                                                                end_learning_rate)
        self.power, self.cycle, self.name = power, cycle, name
        _check_steps(decay_steps)

    def __call__(self, step: Any) -> Any:
        step = tf.cast(step, tf.float32)
        decay_steps = tf.constant(float(self.decay_steps))
        if self.cycle:
            decay_steps = decay_steps * tf.where(tf.equal(step, 0.0), 1.0, tf.math.ceil(step / self.decay_steps))
        else:
            step = tf.minimum(step, decay_steps)
        initial, end = float(self.initial_learning_rate), float(self.end_learning_rate)
        return (initial - end) * tf.pow(1.0 - step / decay_steps, float(self.power)) + end

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(LearningRateSchedule):
    """`initial / (1 + decay_rate * step / decay_steps)` (the quotient floored if `staircase`).

    >>> import tapejax as tf
    >>> print(tf.keras.optimizers.schedules.InverseTimeDecay(1.0, 2, 0.5)(4))
    tf.Tensor(0.5, shape=(), dtype=float32)
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float, staircase: bool = False,
                 name: str = "InverseTimeDecay"):
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name
        _check_steps(decay_steps)

    def __call__(self, step: Any) -> Any:
        p = tf.cast(step, tf.float32) / float(self.decay_steps)
        if self.staircase:
            p = tf.floor(p)
        return float(self.initial_learning_rate) / (1.0 + float(self.decay_rate) * p)

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from the initial rate (or, after `warmup_steps` of linear warm-up, from `warmup_target`) to
    `alpha` times it over `decay_steps`: `rate * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha)`.

    >>> import tapejax as tf
    >>> print(tf.keras.optimizers.schedules.CosineDecay(1.0, 10)(10))
    tf.Tensor(0.0, shape=(), dtype=float32)
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0, name: str = "CosineDecay",
                 warmup_target: float | None = None, warmup_steps: int = 0):
        self.initial_learning_rate, self.decay_steps, self.alpha, self.name = (initial_learning_rate, decay_steps,
                                                                               alpha, name)
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps
        _check_steps(decay_steps)

    def _decayed(self, step: Any, rate: Any) -> Any:
        cosine = 0.5 * (1.0 + tf.cos(math.pi * (step / float(self.decay_steps))))
        return rate * ((1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step: Any) -> Any:
        step = tf.cast(step, tf.float32)
        initial = tf.constant(float(self.initial_learning_rate))
        if self.warmup_target is None:
            return self._decayed(tf.minimum(step, float(self.decay_steps)), initial)
        warmup_steps, target = float(self.warmup_steps), float(self.warmup_target)
        step = tf.minimum(step, float(self.decay_steps) + warmup_steps)
        warming = (target - initial) * (step / warmup_steps) + initial if warmup_steps else initial
        return tf.where(step < warmup_steps, warming, self._decayed(step - warmup_steps, tf.constant(target)))

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}
