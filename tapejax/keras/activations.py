"""tf.keras.activations: the functions layers accept by name, with Keras 3's signatures, values and gradients
(at the kinks too: `hard_sigmoid`'s gradient is 0 at +-3, `leaky_relu`'s is `negative_slope` at 0).

>>> import tapejax as tf
>>> x = tf.constant([-3.0, -1.0, 0.0, 3.0])
>>> tf.keras.activations.hard_sigmoid(x).numpy()
array([0.        , 0.33333334, 0.5       , 1.        ], dtype=float32)
>>> tf.keras.activations.get("leaky_relu")(x).numpy()
array([-0.6, -0.2,  0. ,  3. ], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tapejax as tf
from tapejax.keras import logits

softmax = logits.softmax
sigmoid = logits.sigmoid
relu6, selu, gelu = tf.nn.relu6, tf.nn.selu, tf.nn.gelu
softplus, softsign, silu = tf.nn.softplus, tf.nn.softsign, tf.nn.silu
swish = silu


def _floating(x: Any, booleans: bool = True) -> Any:
    """`x` as a tensor, integers (and `booleans`) cast to float32, as Keras's ops cast them where TF's kernels take
    only floats (`exponential`, `tanh`; `leaky_relu` for integers)."""
    x = tf.convert_to_tensor(x)
    return tf.cast(x, tf.float32) if x.dtype.is_integer or (booleans and x.dtype == tf.bool) else x


def _constant(value: float, x: Any) -> Any:
    """`value` in `x`'s dtype; a fraction for an integer `x` is TF's TypeError ("Cannot convert 0.5 to EagerTensor
    of dtype int32"), as Keras's functions raise it."""
    return tf.convert_to_tensor(value, dtype=x.dtype)


def linear(x: Any) -> Any:
    """The identity: `x` unchanged."""
    return x


def tanh(x: Any) -> Any:
    """`tanh(x)`."""
    return tf.tanh(_floating(x))


def relu(x: Any, negative_slope: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Any:
    """`x` above `threshold` (at most `max_value`), `negative_slope * (x - threshold)` below it (as the ReLU
    layer)."""
    if max_value is None and not threshold:
        return leaky_relu(x, negative_slope) if negative_slope else tf.nn.relu(x)
    x = tf.convert_to_tensor(x)
    if threshold:
        positive = tf.where(x > threshold, x, tf.zeros_like(x))
    elif max_value == 6:
        positive, max_value = tf.nn.relu6(x), None
    else:
        positive = tf.nn.relu(x)
    if max_value is not None:  # clip_by_value's gradient: 1 at both bounds, as Keras's clip
        positive = tf.clip_by_value(positive, tf.cast(0, x.dtype), tf.cast(max_value, x.dtype))
    if negative_slope:
        positive = positive - tf.cast(negative_slope, x.dtype) * tf.nn.relu(tf.cast(threshold, x.dtype) - x)
    return positive


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Any:
    """`x` for positive `x`, `negative_slope * x` otherwise."""
    return tf.nn.leaky_relu(_floating(x, booleans=False), alpha=negative_slope)


def elu(x: Any, alpha: float = 1.0) -> Any:
    """`x` for positive `x`, `alpha * (exp(x) - 1)` otherwise (gradient `alpha` at 0)."""
    y = tf.nn.elu(x)
    return y if alpha == 1.0 else tf.where(y > 0, y, tf.cast(alpha, y.dtype) * y)


def celu(x: Any, alpha: float = 1.0) -> Any:
    """`max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)`; the gradient at 0 is 2, as Keras's (both ties pass
    it on)."""
    x = tf.convert_to_tensor(x)
    zero = _constant(0.0, x)
    alpha = _constant(alpha, x)
    return tf.maximum(x, zero) + alpha * tf.math.expm1(tf.minimum(x, zero) / alpha)


def exponential(x: Any) -> Any:
    """`exp(x)`."""
    return tf.exp(_floating(x))


def hard_sigmoid(x: Any) -> Any:
    """`relu6(x + 3) / 6`: 0 below -3, 1 above 3, with a zero gradient at both kinks."""
    x = tf.convert_to_tensor(x)
    return tf.nn.relu6(x + _constant(3.0, x)) / _constant(6.0, x)


def hard_silu(x: Any) -> Any:
    """`x * hard_sigmoid(x)`."""
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x: Any) -> Any:
    """`x` clipped to [-1, 1] (gradient 1 at the bounds)."""
    x = tf.convert_to_tensor(x)
    high = _constant(1.0, x)
    return tf.clip_by_value(x, -high, high)


def hard_shrink(x: Any, threshold: float = 0.5) -> Any:
    """`x` where `|x| > threshold`, else 0."""
    x = tf.convert_to_tensor(x)
    return tf.where(tf.abs(x) > _constant(threshold, x), x, tf.zeros_like(x))


def soft_shrink(x: Any, threshold: float = 0.5) -> Any:
    """`x` moved `threshold` towards 0, 0 where `|x| <= threshold`."""
    x = tf.convert_to_tensor(x)
    t = _constant(threshold, x)
    return tf.where(x > t, x - t, tf.where(x < -t, x + t, tf.zeros_like(x)))


def tanh_shrink(x: Any) -> Any:
    """`x - tanh(x)`."""
    return x - tf.tanh(x)


def threshold(x: Any, threshold: float, default_value: float) -> Any:
    """`x` where `x > threshold`, else `default_value`."""
    x = tf.convert_to_tensor(x)
    above = x > _constant(threshold, x)
    return tf.where(above, x, tf.fill(tf.shape(x), _constant(default_value, x)))


def sparse_plus(x: Any) -> Any:
    """0 up to -1, `x` from 1, `(x + 1)**2 / 4` between."""
    x = tf.convert_to_tensor(x)
    one = _constant(1.0, x)
    middle = tf.square(x + one) / _constant(4.0, x)
    return tf.where(x <= -one, tf.zeros_like(x), tf.where(x >= one, x, middle))


def sparse_sigmoid(x: Any) -> Any:
    """0 up to -1, 1 from 1, `(x + 1) / 2` between (gradient 0 at +-1)."""
    x = tf.convert_to_tensor(x)
    one = _constant(1.0, x)
    return tf.where(x <= -one, tf.zeros_like(x), tf.where(x >= one, tf.ones_like(x), (x + one) / _constant(2.0, x)))


def squareplus(x: Any, b: float = 4) -> Any:
    """`(x + sqrt(x**2 + b)) / 2`."""
    x = tf.convert_to_tensor(x)
    return (x + tf.sqrt(tf.square(x) + tf.cast(b, x.dtype))) / tf.cast(2, x.dtype)


def mish(x: Any) -> Any:
    """`x * tanh(softplus(x))`."""
    return x * tf.tanh(tf.nn.softplus(x))


def log_sigmoid(x: Any) -> Any:
    """`log(sigmoid(x))`, exact for large |x|."""
    return tf.math.log_sigmoid(x)


def log_softmax(x: Any, axis: int | tuple[int, ...] = -1) -> Any:
    """`x - logsumexp(x)` over `axis`, an axis or a tuple of them."""
    return tf.nn.log_softmax(x, axis=tuple(axis) if isinstance(axis, list | tuple) else axis)


def glu(x: Any, axis: int = -1) -> Any:
    """The gated linear unit: `a * sigmoid(b)` for the two halves `a`, `b` of `x` along `axis`."""
    x = tf.convert_to_tensor(x)
    if x.shape[axis] is not None and x.shape[axis] % 2:
        raise ValueError("axis size must be divisible by 2. "
                         f"Received: x.shape={tuple(x.shape.as_list())} with axis={axis}")
    a, b = tf.split(x, 2, axis=axis)
    return a * tf.sigmoid(b)


# The names `get` takes. Saved configurations name a function by its `__name__`, as Keras 3 does: swish is silu,
# hard_swish is hard_silu.
_BY_NAME: dict[str, Callable] = {
    "relu": relu, "relu6": relu6, "elu": elu, "selu": selu, "gelu": gelu, "celu": celu, "sigmoid": sigmoid,
    "tanh": tanh, "softmax": softmax, "softplus": softplus, "softsign": softsign, "silu": silu, "swish": swish,
    "linear": linear, "leaky_relu": leaky_relu, "exponential": exponential, "hard_sigmoid": hard_sigmoid,
    "hard_silu": hard_silu, "hard_swish": hard_swish, "hard_tanh": hard_tanh, "hard_shrink": hard_shrink,
    "soft_shrink": soft_shrink, "tanh_shrink": tanh_shrink, "sparse_plus": sparse_plus,
    "sparse_sigmoid": sparse_sigmoid, "squareplus": squareplus, "mish": mish, "log_sigmoid": log_sigmoid,
    "log_softmax": log_softmax, "glu": glu, "threshold": threshold,
}


def get(identifier: Any) -> Callable:
    """An activation from a name ('relu'), a function, or None (the identity).

    Raises:
      ValueError: an unknown name or an identifier that is neither a string nor callable (Keras 3's message).
    """
    if identifier is None:
        return linear
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    if callable(identifier) and not isinstance(identifier, str):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")


def serialize(activation: Callable) -> Any:
    """What Keras 3 saves for an activation: a built-in's own name (its function's: 'silu' for swish, 'hard_silu' for
    hard_swish; TF's `tf.nn.relu` is 'relu'), else Keras's description of a plain function.

    >>> import tapejax as tf
    >>> tf.keras.activations.serialize(tf.keras.activations.swish)
    'silu'
    """
    name = getattr(activation, "__name__", None)
    if name in _BY_NAME:
        return _BY_NAME[name].__name__
    if not callable(activation) or name is None:
        raise ValueError(f"Unknown activation function '{activation}' cannot be serialized due to invalid function "
                         "name. Make sure to use an activation name that matches the references defined in "
                         "activations.py or use `@keras.saving.register_keras_serializable()`to register any custom "
                         "activations.")
    return {"module": "builtins", "class_name": "function", "config": name, "registered_name": "function"}


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.activations")
