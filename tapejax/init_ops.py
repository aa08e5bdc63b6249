"""TF's own initializers (`tf.random_normal_initializer`, `tf.random_uniform_initializer`, `tf.constant_initializer`,
`tf.zeros_initializer`, `tf.ones_initializer`): `initializer(shape, dtype)` gives a tensor, float32 by default.

They are TF's `init_ops_v2` classes, not Keras's: the random ones refuse non-float dtypes (random_normal) as
TF does, and `constant_initializer` keeps the value's own dtype when none is given. Random values follow
`tf.random.set_seed` and `seed`, with JAX's generators (the numbers differ from TF's).
"""

from __future__ import annotations

from typing import Any

from tapejax._src import dtypes
from tapejax._src.tensor import TensorShape
from tapejax.ops import random
from tapejax.ops.array import constant, fill, ones, reshape, zeros


class Initializer:
    """The base class (`tf.keras.initializers.Initializer`'s TF twin): subclasses define `__call__`."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        return cls(**config)


def _float(dtype: Any) -> Any:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dtype!r}.")
    return dtype


class random_normal_initializer(Initializer):  # noqa: N801 (TF's name)
    """Normal values of `mean` and `stddev` (`tf.random_normal_initializer`).

    >>> import tapejax as tf
    >>> tf.random_normal_initializer(stddev=0.0)([2])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Any:
        return random.normal(shape, self.mean, self.stddev, _float(dtype), seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(Initializer):  # noqa: N801
    """Uniform values in [minval, maxval) (`tf.random_uniform_initializer`); integer dtypes too, as TF.

    >>> import tapejax as tf
    >>> tf.random_uniform_initializer(1.0, 1.0)([2])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 1.], dtype=float32)>
    """

    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Any:
        dtype = dtypes.as_dtype(dtype)
        if not (dtype.is_floating or dtype.is_integer):
            raise ValueError(f"Argument `dtype` is expected to be floating point or integer. Received: {dtype!r}.")
        if dtype.is_integer and any(isinstance(v, float) for v in (self.minval, self.maxval)):
            bad = self.minval if isinstance(self.minval, float) else self.maxval
            raise TypeError(f"Cannot convert {bad} to EagerTensor of dtype {dtype.name}")
        return random.uniform(shape, self.minval, self.maxval, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class constant_initializer(Initializer):  # noqa: N801
    """A constant: a scalar filled in, or a value of as many elements as the shape (`tf.constant_initializer`).

    >>> import tapejax as tf
    >>> tf.constant_initializer([1, 2])([2])
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """

    def __init__(self, value: Any = 0):
        if hasattr(value, "_value"):
            raise TypeError(f"Invalid type for initial value: {type(value).__name__}. Expected Python scalar, list "
                            "or tuple of values, or numpy.ndarray.")
        self.value = value

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        value = constant(self.value, dtype)
        if value.shape.rank == 0:
            return fill(shape, value)
        wanted = TensorShape(shape)
        if value.shape.num_elements() != wanted.num_elements():
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor {value.numpy()} "
                            f"(converted from {self.value}) has {value.shape.num_elements()} elements, but got "
                            f"`shape` {tuple(wanted.as_list())} with {wanted.num_elements()} elements).")
        return reshape(value, shape)

    def get_config(self) -> dict:
        return {"value": self.value}


class zeros_initializer(Initializer):  # noqa: N801
    """Zeros (`tf.zeros_initializer`)."""

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Any:
        return zeros(shape, dtype)


class ones_initializer(Initializer):  # noqa: N801
    """Ones (`tf.ones_initializer`)."""

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Any:
        return ones(shape, dtype)
