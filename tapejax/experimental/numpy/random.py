"""tf.experimental.numpy.random: NumPy's random functions drawing from tapejax's random ops.

The numbers are JAX's (as every tapejax random op's), reproducible after `seed` or `tf.random.set_seed`; the
dtypes are NumPy's (float64 samples, int64 integers).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapejax._src import dtypes
from tapejax._src.tensor import Tensor
from tapejax.ops import array as _array
from tapejax.ops import random as _random

from .conversion import numpy_dtype


def _size(size: Any) -> list[int]:
    return [] if size is None else [int(size)] if np.ndim(size) == 0 else [int(d) for d in size]


def seed(s: int) -> None:
    """Seeds the random functions (as `tf.random.set_seed`)."""
    _random.set_seed(int(s))


def randn(*size: int) -> Tensor:
    """Standard normal float64 samples of shape `size`."""
    return _random.normal(list(size), dtype=dtypes.float64)


def standard_normal(size: Any = None) -> Tensor:
    return _random.normal(_size(size), dtype=dtypes.float64)


def rand(*size: int) -> Tensor:
    """Uniform float64 samples in [0, 1) of shape `size`."""
    return _random.uniform(list(size), dtype=dtypes.float64)


def random(size: Any = None) -> Tensor:
    return _random.uniform(_size(size), dtype=dtypes.float64)


def uniform(low: float = 0.0, high: float = 1.0, size: Any = None) -> Tensor:
    return _random.uniform(_size(size), float(low), float(high), dtype=dtypes.float64)


def randint(low: int, high: int | None = None, size: Any = None, dtype: Any = np.int64) -> Tensor:
    """Integers in [low, high) (in [0, low) without `high`), int64 by default."""
    low, high = (0, low) if high is None else (low, high)
    return _random.uniform(_size(size), int(low), int(high), dtype=dtypes.from_numpy(numpy_dtype(dtype)))


def poisson(lam: float = 1.0, size: Any = None) -> Tensor:
    """Poisson samples, int64 as NumPy's."""
    return _array.cast(_random.poisson(_size(size), float(lam), dtype=dtypes.float64), dtypes.int64)
