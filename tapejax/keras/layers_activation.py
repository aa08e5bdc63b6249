"""tf.keras.layers activation layers: ReLU, LeakyReLU, PReLU, ELU, Softmax (Keras 3's arguments and formulas)."""

from __future__ import annotations

import warnings
from typing import Any

import tapejax as tf
from tapejax.keras.layers import Layer


class ReLU(Layer):
    """`x` above `threshold` (clipped at `max_value`), `negative_slope * (x - threshold)` below it
    (`tf.keras.layers.ReLU`).

    >>> import tapejax as tf
    >>> tf.keras.layers.ReLU(max_value=1.0, negative_slope=0.1)(tf.constant([-2.0, 0.5, 3.0])).numpy()
    array([-0.2,  0.5,  1. ], dtype=float32)
    """

    _built_at_init = True
    supports_masking = True

    def __init__(self, max_value: float | None = None, negative_slope: float = 0.0, threshold: float = 0.0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. Received: max_value={max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError("negative_slope of a ReLU layer cannot be a negative value. Received: "
                             f"negative_slope={negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError(f"threshold of a ReLU layer cannot be a negative value. Received: threshold={threshold}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs: Any) -> Any:
        x = inputs
        if self.threshold:
            positive = x * tf.cast(x > self.threshold, x.dtype)
        else:
            positive = tf.nn.relu(x)
        if self.max_value is not None:
            positive = tf.minimum(positive, tf.cast(self.max_value, x.dtype))
        if self.negative_slope:
            positive = positive - self.negative_slope * tf.nn.relu(self.threshold - x)
        return positive


class LeakyReLU(Layer):
    """`x` for positive inputs, `negative_slope * x` otherwise (`tf.keras.layers.LeakyReLU`); Keras 2's `alpha=`
    is accepted with Keras 3's deprecation warning.

    >>> import tapejax as tf
    >>> tf.keras.layers.LeakyReLU(negative_slope=0.2)(tf.constant([-1.0, 2.0])).numpy()
    array([-0.2,  2. ], dtype=float32)
    """

    _built_at_init = True
    supports_masking = True

    def __init__(self, negative_slope: float = 0.3, **kwargs: Any):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.", stacklevel=2)
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                             f"Expected a float. Received: negative_slope={negative_slope}")
        self.negative_slope = float(negative_slope)

    def call(self, inputs: Any) -> Any:
        return tf.nn.leaky_relu(inputs, alpha=self.negative_slope)


class PReLU(Layer):
    """A leaky ReLU whose slopes are weights (`alpha`, one per input element, shared along `shared_axes`)
    (`tf.keras.layers.PReLU`)."""

    supports_masking = True

    def __init__(self, alpha_initializer: Any = "zeros", alpha_regularizer: Any = None, alpha_constraint: Any = None,
                 shared_axes: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.alpha_initializer = alpha_initializer
        self.alpha_regularizer, self.alpha_constraint = alpha_regularizer, alpha_constraint
        self.shared_axes = None if shared_axes is None else (
            [shared_axes] if isinstance(shared_axes, int) else list(shared_axes))

    def build(self, input_shape: tf.TensorShape) -> None:
        shape = list(input_shape.as_list()[1:])
        for axis in self.shared_axes or []:
            shape[axis - 1] = 1
        self.alpha = self.add_weight(name="alpha", shape=shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)

    def call(self, inputs: Any) -> Any:
        return tf.nn.relu(inputs) - self.alpha * tf.nn.relu(-inputs)


class ELU(Layer):
    """`x` for positive inputs, `alpha * (exp(x) - 1)` otherwise (`tf.keras.layers.ELU`)."""

    _built_at_init = True
    supports_masking = True

    def __init__(self, alpha: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs: Any) -> Any:
        if self.alpha == 1.0:
            return tf.nn.elu(inputs)
        return tf.where(inputs > 0, inputs, self.alpha * tf.math.expm1(tf.minimum(inputs, 0.0)))


class Softmax(Layer):
    """The softmax over `axis` (`tf.keras.layers.Softmax`). As Keras 3, masked positions (a mask broadcastable to
    the inputs; True or > 0.5 keeps) get the logit -1e9 (float16: -3e4) and an output of exactly 0, so a row with
    every position masked is all zeros, not uniform.

    >>> import tapejax as tf
    >>> tf.keras.layers.Softmax()(tf.constant([[0.0, 0.0]])).numpy()
    array([[0.5, 0.5]], dtype=float32)
    """

    _built_at_init = True
    supports_masking = True

    def __init__(self, axis: Any = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs: Any, mask: Any = None) -> Any:
        return masked_softmax(inputs, mask, self.axis)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask


def masked_softmax(inputs: Any, mask: Any, axis: Any = -1) -> Any:
    """Keras 3's Softmax layer: `where(mask, inputs, -1e9)` (float16: -3e4), the softmax over `axis` (an axis or a
    list), then `where(mask, outputs, 0)`."""
    if mask is not None:
        if mask.dtype != tf.bool:
            mask = tf.greater(mask, tf.cast(0.5, mask.dtype))
        large = tf.cast(-3e4 if inputs.dtype == tf.float16 else -1e9, inputs.dtype)
        inputs = tf.where(mask, inputs, large)
    if isinstance(axis, list | tuple) and len(axis) > 1:
        outputs = tf.exp(inputs - tf.reduce_logsumexp(inputs, axis=axis, keepdims=True))
    else:
        outputs = tf.nn.softmax(inputs, axis=axis[0] if isinstance(axis, list | tuple) else axis)
    if mask is not None:
        outputs = tf.where(mask, outputs, tf.zeros([], outputs.dtype))
    return outputs
