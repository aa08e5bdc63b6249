"""tf.keras.regularizers: penalties on a layer's weights or outputs, added to `layer.losses`.

>>> import tapejax as tf
>>> float(tf.keras.regularizers.L2(0.1)(tf.ones([2, 2])))
0.4000000059604645
"""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.keras import identifiers


class Regularizer:
    """The base class: `regularizer(x)` is a scalar penalty."""

    def __call__(self, x: Any) -> Any:
        return tf.constant(0.0)

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Regularizer:
        return cls(**config)


class L1L2(Regularizer):
    """`l1 * sum(|x|) + l2 * sum(x ** 2)`."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x: Any) -> Any:
        x = tf.convert_to_tensor(x)
        penalty = tf.zeros([], x.dtype)
        if self.l1:
            penalty = penalty + self.l1 * tf.reduce_sum(tf.abs(x))
        if self.l2:
            penalty = penalty + self.l2 * tf.reduce_sum(tf.square(x))
        return penalty

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """`l1 * sum(|x|)` (default 0.01)."""

    def __init__(self, l1: float = 0.01):
        super().__init__(l1=l1)

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(L1L2):
    """`l2 * sum(x ** 2)` (default 0.01)."""

    def __init__(self, l2: float = 0.01):
        super().__init__(l2=l2)

    def get_config(self) -> dict:
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """`factor` times the mean absolute off-diagonal product of the rows (or columns) of a 2-D weight, normalised."""

    def __init__(self, factor: float = 0.01, mode: str = "rows"):
        if mode not in ("rows", "columns"):
            raise ValueError(f"Invalid value for argument `mode`. Expected one of {{'rows', 'columns'}}. Received: mode={mode}")
        self.factor, self.mode = float(factor), mode

    def __call__(self, x: Any) -> Any:
        x = tf.convert_to_tensor(x)
        if x.shape.rank != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={x.shape}")
        x = x if self.mode == "rows" else tf.transpose(x)
        x = x / tf.maximum(tf.norm(x, axis=1, keepdims=True), 1e-12)
        product = tf.matmul(x, x, transpose_b=True)
        n = int(x.shape[0])
        off_diagonal = tf.abs(product) * (1.0 - tf.eye(n, dtype=x.dtype))
        return self.factor * tf.reduce_sum(off_diagonal) / (n * (n - 1))

    def get_config(self) -> dict:
        return {"factor": self.factor, "mode": self.mode}


# Keras's lower-case aliases; `l1_l2` is a function with its own defaults.
l1, l2, orthogonal_regularizer = L1, L2, OrthogonalRegularizer


def l1_l2(l1: float = 0.01, l2: float = 0.01) -> L1L2:
    return L1L2(l1=l1, l2=l2)


_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": l1_l2, "L1": L1, "L2": L2, "L1L2": L1L2,
            "orthogonal_regularizer": OrthogonalRegularizer}


def get(identifier: Any) -> Any:
    """A regularizer from a name ("l2"), a regularizer or callable, or None."""
    return identifiers.get("regularizer", _BY_NAME, identifier)


def serialize(regularizer: Regularizer) -> dict:
    return {"module": "keras.regularizers", "class_name": type(regularizer).__name__,
            "config": regularizer.get_config(), "registered_name": None}


def deserialize(config: dict) -> Any:
    return get(config)


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.regularizers")
