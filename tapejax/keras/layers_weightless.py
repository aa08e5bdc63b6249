"""tf.keras.layers without weights or options beyond an axis: Identity and UnitNormalization. Both pass their
inputs' mask on, and are built when made (Keras 3's `_build_at_init`)."""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.keras.layers import KerasTensor, Layer

# Keras 3's lower bound on the norm in UnitNormalization (its `ops.normalize(..., epsilon=1e-12)`)
_EPSILON = 1e-12


class Identity(Layer):
    """Returns its inputs (`tf.keras.layers.Identity`): a placeholder where no operation is wanted. Like every
    layer, it casts floating inputs to its dtype (float64 in, float32 out) and takes lists and dicts of tensors.

    >>> import tapejax as tf
    >>> tf.keras.layers.Identity()(tf.constant([1.0, 2.0])).numpy()
    array([1., 2.], dtype=float32)
    """

    _built_at_init = True
    supports_masking = True

    def call(self, inputs: Any) -> Any:
        return inputs


class UnitNormalization(Layer):
    """Scales each example to unit L2 norm over `axis`, an axis or a list of them
    (`tf.keras.layers.UnitNormalization`), with Keras 3's arithmetic: `x * min(rsqrt(sum(x**2)), 1 / 1e-12)`, so
    an all-zero example stays zero and its gradient is finite (1e12 times the incoming one), as in TF.

    >>> import tapejax as tf
    >>> tf.keras.layers.UnitNormalization()(tf.constant([[3.0, 4.0], [0.0, 0.0]])).numpy()
    array([[0.6, 0.8],
           [0. , 0. ]], dtype=float32)
    """

    _built_at_init = True
    supports_masking = True

    def __init__(self, axis: int | list[int] = -1, **kwargs: Any):
        super().__init__(**kwargs)
        if isinstance(axis, list | tuple):
            self.axis: int | list[int] = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                            f"Received: axis={axis}")

    def call(self, inputs: Any) -> Any:
        x = tf.expand_dims(inputs, 0) if inputs.shape.rank == 0 else inputs  # Keras 3: a scalar becomes [x]
        squares = tf.reduce_sum(tf.square(x), axis=self.axis, keepdims=True)
        # a zero sum's rsqrt is inf, bounded to 1e12; tf.math.rsqrt's gradient there is TF's (0, not NaN)
        return x * tf.minimum(tf.math.rsqrt(squares), tf.cast(1.0 / _EPSILON, x.dtype))

    def _call_symbolically(self, inputs: Any, args: tuple, kwargs: dict) -> Any:
        # Keras checks the axes against a symbolic input's rank (ValueError); an eager call meets TF's reduction
        # error (InvalidArgumentError) instead
        if isinstance(inputs, KerasTensor) and inputs.shape.rank is not None:
            rank = inputs.shape.rank
            for axis in self.axis if isinstance(self.axis, list) else [self.axis]:
                if not -rank <= axis < rank:
                    raise ValueError(f"Axis {self.axis} is out of bounds for input shape {tuple(inputs.shape)}.")
        return super()._call_symbolically(inputs, args, kwargs)

    def get_config(self) -> dict[str, Any]:
        """Keras 3's keys: `axis` always (a list when given as a tuple)."""
        return {**super().get_config(), "axis": self.axis}
