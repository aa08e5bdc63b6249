"""tf.keras.backend's random tensors and batch value helpers (Keras 3 keeps them in TF 2.21's `tf.keras.backend`).

As in Keras, a call without `seed` draws its op seed from NumPy's global generator (`np.random.randint`), so
`np.random.seed` (with `tf.random.set_seed`) makes the values repeat; the values themselves are tapejax's
`tf.random` streams, not TensorFlow's.

>>> import tapejax as tf
>>> tf.keras.backend.random_bernoulli((2, 3), p=1.0).numpy()
array([[1., 1., 1.],
       [1., 1., 1.]], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapejax as tf


def _dtype_and_seed(dtype: Any, seed: int | None) -> tuple[Any, int]:
    from tapejax.keras import backend

    return tf.as_dtype(dtype or backend.floatx()), int(np.random.randint(10e6)) if seed is None else seed


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                  seed: int | None = None) -> tf.Tensor:
    """Normal samples (`floatx()` by default)."""
    dtype, seed = _dtype_and_seed(dtype, seed)
    return tf.random.normal(shape, mean=mean, stddev=stddev, dtype=dtype, seed=seed)


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
                   seed: int | None = None) -> tf.Tensor:
    """Uniform samples in [minval, maxval) (`floatx()` by default)."""
    dtype, seed = _dtype_and_seed(dtype, seed)
    return tf.random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype, seed=seed)


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None, seed: int | None = None) -> tf.Tensor:
    """Ones with probability `p`, else zeros (`floatx()` by default)."""
    dtype, seed = _dtype_and_seed(dtype, seed)
    return tf.where(tf.random.uniform(shape, dtype=dtype, seed=seed) <= p, tf.ones(shape, dtype=dtype),
                    tf.zeros(shape, dtype=dtype))


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: int | None = None) -> tf.Tensor:
    """Normal samples redrawn beyond two standard deviations (`floatx()` by default)."""
    dtype, seed = _dtype_and_seed(dtype, seed)
    return tf.random.truncated_normal(shape, mean, stddev, dtype=dtype, seed=seed)


def batch_get_value(tensors: list[Any]) -> list[np.ndarray]:
    """The values of tensors or variables, as NumPy arrays."""
    return [x.numpy() for x in tensors]


def batch_set_value(tuples: list[tuple[tf.Variable, Any]]) -> None:
    """Assigns each (variable, value): the value converted to the variable's dtype."""
    for variable, value in tuples:
        variable.assign(np.asarray(value, dtype=variable.dtype.name))


def moving_average_update(x: tf.Variable, value: Any, momentum: float) -> Any:
    """`x -= (x - value) * (1 - momentum)`; returns the assignment's result."""
    momentum, value = tf.cast(momentum, x.dtype), tf.cast(value, x.dtype)
    return x.assign_sub((x - value) * (1 - momentum))
