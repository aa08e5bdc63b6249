"""tf.experimental.numpy: NumPy's API over tapejax tensors, as TF's `tnp` is over tf.Tensor.

Functions take tensors, variables, numpy arrays and Python values and return tapejax tensors (`tnp.ndarray` is
`tf.Tensor`), with NumPy's dtype rules (conversion.py): Python floats are float64, and operands promote. Each
function is a row of a table onto tapejax's ops (math_functions.py, array_functions.py), so tapes record it and
`tf.function` traces it.

>>> import tapejax as tf
>>> tnp = tf.experimental.numpy
>>> x = tnp.ones([2, 3])
>>> x.dtype, tnp.sum(x, axis=0).numpy().tolist()
(tf.float64, [2.0, 2.0, 2.0])

Differences from TensorFlow: functions TF's tnp leaves to `experimental_enable_numpy_behavior` (`tnp.sin` of
an int32 tensor, `tnp.round`, `tnp.average` of ints) return NumPy's answer without it. Enabling NumPy behaviour
adds NumPy's methods to tensors (numpy_behavior.py) but leaves the Python operators of tensors with TF's dtype
rules (no promotion of `int32 + float32`).
"""

from typing import Any as _Any

import numpy as _np

from tapejax._src.tensor import Tensor as ndarray  # noqa: N813 (TF's name)
from tapejax.experimental.numpy import random as random
from tapejax.experimental.numpy.numpy_behavior import (
    experimental_enable_numpy_behavior as experimental_enable_numpy_behavior,
)
from tapejax.experimental.numpy.numpy_behavior import CONSTANTS as _CONSTANTS
from tapejax.experimental.numpy.array_functions import FUNCTIONS as _ARRAY
from tapejax.experimental.numpy.math_functions import FUNCTIONS as _MATH
from tapejax._src.errors import missing_symbols as _missing_symbols

_TABLE = {**_CONSTANTS, **_MATH, **_ARRAY}
_missing = _missing_symbols("tf.experimental.numpy")
__all__ = sorted([*_TABLE, "ndarray", "random", "experimental_enable_numpy_behavior"])


def __getattr__(name: str) -> _Any:
    """The table's rows are the module's functions (one lookup, no globals().update at import)."""
    if name in _TABLE:
        return _TABLE[name]
    return _missing(name)


def __dir__() -> list[str]:
    return __all__
