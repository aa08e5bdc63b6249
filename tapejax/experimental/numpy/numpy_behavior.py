"""tf.experimental.numpy's dtypes and constants, and `experimental_enable_numpy_behavior`.

TF's tnp names NumPy's own types (`tnp.float32 is np.float32`), so these are NumPy's objects, and every tnp
function also takes tapejax's DTypes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tapejax._src import dtypes
from tapejax._src.tensor import Tensor
from tapejax.ops import array as tfa

from . import conversion
from .array_functions import FUNCTIONS as ARRAY
from .math_functions import FUNCTIONS as MATH


def result_type(*arrays_and_dtypes: Any) -> dtypes.DType:
    """NumPy's `result_type` of tensors, values and dtypes, as a tapejax DType (TF returns a tf.DType)."""
    probes = [np.zeros(0, conversion.numpy_dtype(x)) if isinstance(x, dtypes.DType | type | np.dtype | str)
              else conversion.probe(x) for x in arrays_and_dtypes]
    return dtypes.from_numpy(np.result_type(*probes))


CONSTANTS: dict[str, Any] = {
    **{name: getattr(np, name) for name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                            "uint64", "float16", "float32", "float64", "complex64", "complex128",
                                            "inexact", "object_", "finfo", "iinfo", "issubdtype", "promote_types")},
    "int_": np.int64, "float_": np.float64, "complex_": np.complex128, "string_": np.bytes_, "unicode_": np.str_,
    "e": math.e, "pi": math.pi, "inf": math.inf, "newaxis": None, "result_type": result_type,
}


def _reshape(self: Tensor, *shape: Any, order: str = "C") -> Tensor:
    return ARRAY["reshape"](self, shape[0] if len(shape) == 1 else shape)


# The methods TF adds to tf.Tensor (np_math_ops._enable_numpy_methods).
_METHODS: dict[str, Any] = {
    "T": property(lambda self: ARRAY["transpose"](self)),
    "ndim": property(lambda self: self.shape.rank),
    "size": property(lambda self: int(np.prod(self.shape.as_list()))),
    "__pos__": lambda self: self, "tolist": lambda self: self.numpy().tolist(),
    "transpose": lambda self, *axes: ARRAY["transpose"](self, (axes[0] if len(axes) == 1 else axes) or None),
    "flatten": lambda self, order="C": ARRAY["ravel"](self), "ravel": lambda self: ARRAY["ravel"](self),
    "reshape": _reshape, "clip": lambda self, a_min, a_max: MATH["clip"](self, a_min, a_max),
    "astype": lambda self, dtype: tfa.cast(self, dtypes.as_dtype(conversion.numpy_dtype(dtype))),
    "__round__": lambda self, ndigits=0: MATH["around"](self, ndigits),
    "max": MATH["amax"], "mean": MATH["mean"], "min": MATH["amin"], "data": property(lambda self: self),
}


def experimental_enable_numpy_behavior(prefer_float32: bool = False, dtype_conversion_mode: str = "legacy") -> None:
    """Adds NumPy's methods to tensors (`T`, `reshape`, `ravel`, `astype`, `clip`, `tolist`, `max`, `mean`, ...),
    as TF does; `prefer_float32=True` makes tnp convert Python floats to float32.

    >>> import tapejax as tf
    >>> tf.experimental.numpy.experimental_enable_numpy_behavior()  # doctest: +SKIP
    >>> tf.ones([2, 3]).T.shape  # doctest: +SKIP
    TensorShape([3, 2])

    (Skipped as a doctest: it changes the Tensor class for the whole process, as TF's does; its test runs in a
    subprocess.)

    Differences from TensorFlow: the Python operators of tensors keep TF's dtype rules (TF switches them to
    NumPy's promotion: `int32 + float32` is float64 there, an InvalidArgumentError here); use the tnp functions
    (`tnp.add`) for NumPy's promotion. `dtype_conversion_mode` is accepted and ignored.
    """
    for name, value in _METHODS.items():
        setattr(Tensor, name, value)
    conversion.PREFER_FLOAT32[0] = bool(prefer_float32)
