"""tf.keras.constraints: projections that optimizers apply to a weight after each update (`kernel_constraint`).

>>> import tapejax as tf
>>> tf.keras.constraints.NonNeg()(tf.constant([-3.0, 2.0])).numpy()  # Keras's w * (w >= 0): -0.0
array([-0.,  2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.keras import identifiers

_EPSILON = 1e-7  # keras.backend.epsilon()'s default


class Constraint:
    """The base class: `constraint(w)` is the projected weight."""

    def __call__(self, w: Any) -> Any:
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Constraint:
        return cls(**config)


def _norms(w: Any, axis: Any) -> Any:
    return tf.sqrt(tf.reduce_sum(tf.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Scales each slice along `axis` down to a norm of at most `max_value`."""

    def __init__(self, max_value: float = 2, axis: Any = 0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w: Any) -> Any:
        w = tf.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = tf.clip_by_value(norms, 0.0, self.max_value)
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Zeroes negative weights."""

    def __call__(self, w: Any) -> Any:
        w = tf.convert_to_tensor(w)
        return w * tf.cast(w >= 0.0, w.dtype)


class UnitNorm(Constraint):
    """Scales each slice along `axis` to norm 1."""

    def __init__(self, axis: Any = 0):
        self.axis = axis

    def __call__(self, w: Any) -> Any:
        w = tf.convert_to_tensor(w)
        return w / (_EPSILON + _norms(w, self.axis))

    def get_config(self) -> dict:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves each slice's norm `rate` of the way into [min_value, max_value]."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0, axis: Any = 0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w: Any) -> Any:
        w = tf.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = self.rate * tf.clip_by_value(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
_BY_NAME = {"max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm,
            "MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm}


def get(identifier: Any) -> Any:
    """A constraint from a name ("non_neg"), a constraint or callable, or None."""
    return identifiers.get("constraint", _BY_NAME, identifier)


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.constraints")
