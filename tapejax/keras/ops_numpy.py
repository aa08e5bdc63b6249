"""More of keras.ops (Keras 3's backend-neutral NumPy-like ops), as Keras 3's TensorFlow backend computes them:
each returns a `tf.Tensor`, with Keras's dtype rules (which follow JAX's type promotion).

>>> import numpy as np
>>> from tapejax.keras import ops
>>> ops.argmax(np.array([[1.0, 3.0], [4.0, 0.0]]), axis=-1)
<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 0], dtype=int32)>
>>> ops.sqrt(ops.array([4, 9]))
<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

import tapejax as tf
from tapejax.keras import backend


def _tensor(x: Any, dtype: Any = None) -> tf.Tensor:
    return tf.convert_to_tensor(x, dtype=None if dtype is None else tf.as_dtype(dtype))


def _float_of(x: tf.Tensor) -> tf.Tensor:
    """x in a float dtype: floats as they are, integers and booleans in `floatx()` (Keras's rule)."""
    return x if x.dtype.is_floating else tf.cast(x, tf.as_dtype(backend.floatx()))


def array(x: Any, dtype: Any = None) -> tf.Tensor:
    """A tensor of `x` (`convert_to_tensor`): Python floats float32, Python ints int32, NumPy's dtype kept."""
    return _tensor(x, dtype)


def convert_to_numpy(x: Any) -> np.ndarray:
    """`x` as a NumPy array (a tensor's value; anything else through `np.array`)."""
    return np.array(x.numpy() if hasattr(x, "numpy") else x)


def shape(x: Any) -> tuple[int | None, ...]:
    """The static shape as a tuple of ints (None for a dimension unknown while tracing)."""
    return tuple(_tensor(x).shape.as_list())


def _argreduce(reduce: Any, x: Any, axis: int | None, keepdims: bool) -> tf.Tensor:
    x = _tensor(x)
    flat = tf.reshape(x, [-1]) if axis is None else x
    if x.dtype.is_floating and x.shape.rank:
        # -0.0 below +0.0, as Keras orders them (flush-to-zero aside, it compares like JAX)
        flat = tf.where(tf.logical_and(tf.equal(flat, 0.0), tf.math.less(1.0 / flat, 0.0)),
                        tf.constant(-np.finfo(x.dtype.as_numpy_dtype).tiny, flat.dtype), flat)
    result = reduce(flat, axis=0 if axis is None else axis, output_type=tf.int32)
    if keepdims:
        result = tf.reshape(result, [1] * x.shape.rank) if axis is None else tf.expand_dims(result, axis)
    return result


def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> tf.Tensor:
    """The int32 index of the largest value along `axis` (of the flattened array when None)."""
    return _argreduce(tf.argmax, x, axis, keepdims)


def argmin(x: Any, axis: int | None = None, keepdims: bool = False) -> tf.Tensor:
    """The int32 index of the smallest value along `axis` (of the flattened array when None)."""
    return _argreduce(tf.argmin, x, axis, keepdims)


def matmul(x1: Any, x2: Any) -> tf.Tensor:
    """The matrix product, both operands first cast to their promoted dtype (float64 @ float32 is float64)."""
    x1, x2 = _tensor(x1), _tensor(x2)
    dtype = tf.as_dtype(jnp.promote_types(x1.dtype.as_numpy_dtype, x2.dtype.as_numpy_dtype).name)
    if dtype in (tf.int8, tf.int16, tf.uint8, tf.uint16, tf.bool):
        dtype = tf.int32
    return tf.linalg.matmul(tf.cast(x1, dtype), tf.cast(x2, dtype))


def relu(x: Any) -> tf.Tensor:
    """max(x, 0), in x's dtype."""
    return tf.nn.relu(_tensor(x))


def softmax(x: Any, axis: int = -1) -> tf.Tensor:
    """The softmax along `axis` (of a float tensor: integers raise InvalidArgumentError, as in Keras)."""
    return tf.nn.softmax(_tensor(x), axis=axis)


def sqrt(x: Any) -> tf.Tensor:
    """The square root; integers (and booleans) give `floatx()`."""
    return tf.sqrt(_float_of(_tensor(x)))


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> tf.Tensor:  # noqa: A001 (keras.ops.sum)
    """The sum over `axis` (all when None); booleans and small integers are summed as int32 (unsigned: uint32)."""
    x = _tensor(x)
    if x.dtype in (tf.bool, tf.int8, tf.int16):
        x = tf.cast(x, tf.int32)
    elif x.dtype in (tf.uint8, tf.uint16):
        x = tf.cast(x, tf.uint32)
    return tf.reduce_sum(x, axis=axis, keepdims=keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> tf.Tensor:
    """The (population) standard deviation; integers and booleans give `floatx()`."""
    return tf.math.reduce_std(_float_of(_tensor(x)), axis=axis, keepdims=keepdims)


def clip(x: Any, x_min: Any, x_max: Any) -> tf.Tensor:
    """x limited to [x_min, x_max]; booleans are clipped as int32."""
    x = _tensor(x)
    return tf.clip_by_value(tf.cast(x, tf.int32) if x.dtype == tf.bool else x, x_min, x_max)


def ones(shape: Any, dtype: Any = None) -> tf.Tensor:
    """Ones of `shape`, `floatx()` by default."""
    return tf.ones(shape, dtype=tf.as_dtype(dtype or backend.floatx()))


def zeros(shape: Any, dtype: Any = None) -> tf.Tensor:
    """Zeros of `shape`, `floatx()` by default."""
    return tf.zeros(shape, dtype=tf.as_dtype(dtype or backend.floatx()))


def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None, sparse: bool = False) -> tf.Tensor:
    """One-hot rows of `num_classes` (`floatx()` by default) for integer labels; negative labels give zeros."""
    if sparse:
        raise NotImplementedError("tapejax's keras.ops.one_hot does not implement sparse=True.")
    return tf.one_hot(_tensor(x), num_classes, axis=axis, dtype=tf.as_dtype(dtype or backend.floatx()))


def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: float | None = None) -> tf.Tensor:
    """x divided by its `order`-norm along `axis`, the norm taken as at least `epsilon` (`backend.epsilon()` by
    default); a scalar becomes a vector of one. Integers raise InvalidArgumentError for order 2, as in Keras."""
    if not isinstance(order, int) or not order >= 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = _tensor(x)
    if x.shape.rank == 0:
        x = tf.expand_dims(x, 0)
    epsilon = backend.epsilon() if epsilon is None else epsilon
    if order == 2:  # Keras: x * min(rsqrt(sum of squares), 1 / epsilon)
        inverse = tf.math.rsqrt(tf.reduce_sum(tf.square(x), axis=axis, keepdims=True))
        return x * tf.minimum(inverse, tf.cast(1.0 / epsilon, x.dtype))
    norm = tf.norm(x, ord=order, axis=axis, keepdims=True)
    return x / tf.maximum(norm, tf.cast(epsilon, x.dtype))
