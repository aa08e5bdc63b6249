"""NumPy's conversion and promotion rules for tf.experimental.numpy, over tapejax tensors.

TF's tnp follows NumPy, not TF: a Python list of floats becomes float64 and of ints int64, and operands of
different dtypes promote (`int32 + float32` is float64). A Python scalar or list meeting a tensor is *weak*: it
takes the tensor's dtype if its kind fits (`float32 tensor + 2.0` stays float32), as NEP 50 says and TF does.
The dtype of a result is NumPy's own answer, asked of NumPy on empty arrays of the operands' dtypes, so no
promotion table is written here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tapejax._src import dtypes
from tapejax._src.tensor import Tensor
from tapejax._src.variable import Variable
from tapejax.ops import array as array_ops

# experimental_enable_numpy_behavior(prefer_float32=True) makes Python floats float32 (TF's np_dtypes flag).
PREFER_FLOAT32 = [False]


def numpy_dtype(dtype: Any) -> np.dtype | None:
    """A tnp dtype argument (a numpy type, a tf.DType, a name, Python's `float`) as a numpy dtype."""
    if dtype is None:
        return None
    if isinstance(dtype, dtypes.DType):
        return dtype._np
    result = np.dtype(dtype)
    if result == np.float64 and dtype is float and PREFER_FLOAT32[0]:
        return np.dtype(np.float32)
    return result


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor | Variable)


def _holds_tensor(value: Any) -> bool:
    return isinstance(value, list | tuple) and any(_is_tensor(v) or _holds_tensor(v) for v in value)


def _default_array(value: Any) -> np.ndarray:
    array = np.asarray(value)
    if PREFER_FLOAT32[0] and array.dtype == np.float64 and not isinstance(value, np.ndarray | np.generic):
        return array.astype(np.float32)
    return array


def asarray(a: Any, dtype: Any = None) -> Tensor:
    """`a` as a tensor, with NumPy's dtype for Python values (`tnp.asarray`); `dtype` casts."""
    dtype = numpy_dtype(dtype)
    if _is_tensor(a):
        tensor = array_ops.convert_to_tensor(a)
    elif _holds_tensor(a):
        tensor = array_ops.stack([asarray(x) for x in a])
    else:
        array = _default_array(a)
        return array_ops.constant(array if dtype is None else array.astype(dtype))
    if dtype is not None and tensor.dtype._np != dtype:
        tensor = array_ops.cast(tensor, dtypes.from_numpy(dtype))
    return tensor


def probe(value: Any) -> Any:
    """What NumPy is asked about `value`: an empty array of a tensor's or numpy value's dtype (strong), or a
    Python scalar of a Python value's kind (weak, as NEP 50 treats Python scalars)."""
    if _is_tensor(value):
        return np.zeros(0, value.dtype._np)
    if isinstance(value, np.ndarray | np.generic):
        return np.zeros(0, value.dtype)
    kind = _default_array(value).dtype
    if not isinstance(value, list | tuple | bool | int | float | complex):
        return np.zeros(0, kind)
    return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}.get(kind.kind, np.zeros(0, kind))


def result_dtype(fn: Callable[..., Any], *operands: Any) -> np.dtype:
    """The dtype NumPy's `fn` gives for these operands."""
    return np.asarray(fn(*[probe(x) for x in operands])).dtype


def common(*operands: Any) -> tuple[np.dtype, list[Tensor]]:
    """The operands as tensors of their NumPy-promoted dtype."""
    dtype = np.result_type(*[probe(x) for x in operands])
    if all(not _is_tensor(x) and not isinstance(x, np.ndarray | np.generic) for x in operands):
        dtype = np.result_type(*[_default_array(x).dtype for x in operands])
    return dtype, [asarray(x, dtype) for x in operands]
