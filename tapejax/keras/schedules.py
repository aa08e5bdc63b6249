"""tf.keras.optimizers.schedules: learning rates as functions of the optimizer's step, computed as tensors (so a
schedule works inside tf.function, where the step is traced)."""

from __future__ import annotations

from typing import Any

import tapejax as tf


class LearningRateSchedule:
    """A learning rate as a function of the step (`tf.keras.optimizers.schedules.LearningRateSchedule`)."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError


class ExponentialDecay(LearningRateSchedule):
    """`initial_learning_rate * decay_rate ** (step / decay_steps)` (the exponent floored if `staircase`).

    >>> import tapejax as tf
    >>> print(tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)(4))
    tf.Tensor(0.025, shape=(), dtype=float32)
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float, staircase: bool = False,
                 name: str | None = None):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.decay_rate, self.staircase = decay_rate, staircase

    def __call__(self, step: Any) -> Any:
        exponent = tf.cast(step, tf.float32) / float(self.decay_steps)
        if self.staircase:
            exponent = tf.floor(exponent)
        return float(self.initial_learning_rate) * tf.pow(float(self.decay_rate), exponent)


class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[i]` for steps up to `boundaries[i]`, `values[-1]` after the last boundary.

    >>> import tapejax as tf
    >>> schedule = tf.keras.optimizers.schedules.PiecewiseConstantDecay([10], [1.0, 0.5])
    >>> print(schedule(10), schedule(11))
    tf.Tensor(1.0, shape=(), dtype=float32) tf.Tensor(0.5, shape=(), dtype=float32)
    """

    def __init__(self, boundaries: list[int], values: list[float], name: str | None = None):
        if len(values) != len(boundaries) + 1:
            raise ValueError("The length of values should be one more than the length of boundaries.")
        self.boundaries, self.values = list(boundaries), list(values)

    def __call__(self, step: Any) -> Any:
        step = tf.cast(step, tf.float32)
        result = tf.constant(float(self.values[-1]))
        for boundary, value in reversed(list(zip(self.boundaries, self.values))):
            result = tf.where(step <= float(boundary), tf.constant(float(value)), result)
        return result


from tapejax.keras.schedules_more import CosineDecay as CosineDecay  # noqa: E402
from tapejax.keras.schedules_more import InverseTimeDecay as InverseTimeDecay  # noqa: E402
from tapejax.keras.schedules_more import PolynomialDecay as PolynomialDecay  # noqa: E402

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.optimizers.schedules")
