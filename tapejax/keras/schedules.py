"""tf.keras.optimizers.schedules: learning rates as functions of the optimizer's step."""

from __future__ import annotations

import math
from typing import Any


class LearningRateSchedule:
    """A learning rate as a function of the step (`tf.keras.optimizers.schedules.LearningRateSchedule`)."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError


class ExponentialDecay(LearningRateSchedule):
    """`initial_learning_rate * decay_rate ** (step / decay_steps)` (the exponent floored if `staircase`)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float, staircase: bool = False,
                 name: str | None = None):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.decay_rate, self.staircase = decay_rate, staircase

    def __call__(self, step: Any) -> float:
        exponent = float(step) / self.decay_steps
        return self.initial_learning_rate * self.decay_rate ** (math.floor(exponent) if self.staircase else exponent)


class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[i]` for steps up to `boundaries[i]`, `values[-1]` after the last boundary."""

    def __init__(self, boundaries: list[int], values: list[float], name: str | None = None):
        if len(values) != len(boundaries) + 1:
            raise ValueError("The length of values should be one more than the length of boundaries.")
        self.boundaries, self.values = list(boundaries), list(values)

    def __call__(self, step: Any) -> float:
        step = float(step)
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return value
        return self.values[-1]
