"""keras.ops: the few Keras 3 backend-neutral ops that TF programs written for Keras 3 call, on tapejax's ops.

Each returns a `tf.Tensor`, as Keras 3's TensorFlow backend does; issue 20 brings the rest of the namespace.

>>> import numpy as np
>>> from tapejax.keras import ops
>>> ops.mean(ops.square(ops.convert_to_tensor(np.array([1.0, 3.0]))))
<tf.Tensor: shape=(), dtype=float64, numpy=5.0>
"""

from __future__ import annotations

from typing import Any

import tapejax as tf


def convert_to_tensor(x: Any, dtype: Any = None, sparse: Any = None, ragged: Any = None) -> tf.Tensor:
    """`tf.convert_to_tensor`: numpy arrays keep their dtype (float64 stays float64), Python floats are float32."""
    return tf.convert_to_tensor(x, dtype=dtype)


def cast(x: Any, dtype: Any) -> tf.Tensor:
    """`tf.cast`; `dtype` may be a name ("float32")."""
    return tf.cast(x, tf.as_dtype(dtype))


def _floating(x: Any) -> tf.Tensor:
    # Keras 3 averages integers and booleans in float32, where tf.reduce_mean would truncate.
    x = tf.convert_to_tensor(x)
    return x if x.dtype.is_floating or x.dtype.is_complex else tf.cast(x, tf.float32)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> tf.Tensor:
    """The mean over `axis` (all axes when None); integers and booleans give float32."""
    return tf.reduce_mean(_floating(x), axis=axis, keepdims=keepdims)


def square(x: Any) -> tf.Tensor:
    """`x * x`; booleans are squared as int32, as Keras 3 does."""
    x = tf.convert_to_tensor(x)
    return tf.square(tf.cast(x, tf.int32) if x.dtype == tf.bool else x)


def squeeze(x: Any, axis: Any = None) -> tf.Tensor:
    """`tf.squeeze`: drops the axes of size 1 (only `axis`, when given)."""
    return tf.squeeze(x, axis=axis)


def expand_dims(x: Any, axis: int) -> tf.Tensor:
    """`tf.expand_dims`: a new axis of size 1 at `axis`."""
    return tf.expand_dims(x, axis)


from tapejax.keras.ops_numpy import argmax as argmax, argmin as argmin, array as array, clip as clip  # noqa: E402
from tapejax.keras.ops_numpy import convert_to_numpy as convert_to_numpy, matmul as matmul  # noqa: E402
from tapejax.keras.ops_numpy import normalize as normalize, one_hot as one_hot, ones as ones  # noqa: E402
from tapejax.keras.ops_numpy import relu as relu, shape as shape, softmax as softmax, sqrt as sqrt  # noqa: E402
from tapejax.keras.ops_numpy import std as std, sum as sum, zeros as zeros  # noqa: E402

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.ops")
