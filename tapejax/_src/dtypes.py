"""TensorFlow's DType objects and its conversion rules, over numpy/JAX dtypes.

TensorFlow never promotes silently: `float32 + float64` is an error, and Python scalars take the dtype of the
tensor they meet (or float32 / int32 on their own). JAX's own promotion lattice is therefore never consulted:
every value entering an op is converted here first, with an explicit dtype.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np


class DType:
    """A TensorFlow dtype, such as `tf.float32`.

    >>> import tapejax as tf
    >>> tf.float32.name, tf.float32.is_floating, tf.float32 == np.float32
    ('float32', True, True)
    """

    __slots__ = ("_np", "name")

    def __init__(self, np_dtype: Any, name: str):
        self._np = np.dtype(np_dtype)
        self.name = name

    @property
    def as_numpy_dtype(self) -> type:
        return object if self._np.kind == "O" else self._np.type  # TF: tf.string.as_numpy_dtype is object

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype: lets `np.dtype(tf.float32)` and `x.astype(tf.float32)` work on DTypes."""
        return self._np

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f" or self._np == jnp.bfloat16

    @property
    def is_complex(self) -> bool:
        return self._np.kind == "c"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_numeric(self) -> bool:
        return not self.is_bool and self._np.kind != "O"

    @property
    def is_differentiable(self) -> bool:
        """Whether gradients flow through values of this dtype (TF: floating or complex)."""
        return self.is_floating or self.is_complex

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def size(self) -> int:
        return 0 if self._np.kind == "O" else self._np.itemsize  # TF: tf.string.size is 0

    @property
    def min(self):
        return (np.finfo if self.is_floating else np.iinfo)(self._np).min

    @property
    def max(self):
        return (np.finfo if self.is_floating else np.iinfo)(self._np).max

    def is_compatible_with(self, other: Any) -> bool:
        return self == other

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, DType):
            return self._np == other._np
        if other is None:
            return False
        try:
            return self._np == as_dtype(other)._np
        except TypeError:
            return False

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._np)

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __str__(self) -> str:  # TF's: print(x.dtype) shows <dtype: 'float32'>
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType(np.float16, "float16")
half = float16
bfloat16 = DType(jnp.bfloat16, "bfloat16")
float32 = DType(np.float32, "float32")
float64 = DType(np.float64, "float64")
double = float64
complex64 = DType(np.complex64, "complex64")
complex128 = DType(np.complex128, "complex128")
int8 = DType(np.int8, "int8")
int16 = DType(np.int16, "int16")
int32 = DType(np.int32, "int32")
int64 = DType(np.int64, "int64")
uint8 = DType(np.uint8, "uint8")
uint16 = DType(np.uint16, "uint16")
uint32 = DType(np.uint32, "uint32")
uint64 = DType(np.uint64, "uint64")
bool_ = DType(np.bool_, "bool")
# Values of dtype string are numpy object arrays of bytes, on the host (string_values.py).
string = DType(np.object_, "string")

ALL: tuple[DType, ...] = (
    float16, bfloat16, float32, float64, complex64, complex128,
    int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_,
)
_BY_NP: dict[np.dtype, DType] = {d._np: d for d in ALL} | {string._np: string}
_BY_NAME: dict[str, DType] = {d.name: d for d in ALL} | {"half": float16, "double": float64, "string": string}


def as_dtype(value: Any) -> DType:
    """Converts a DType, numpy dtype, numpy type or name into a DType (`tf.dtypes.as_dtype`)."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is np.bytes_ or value is np.str_ or isinstance(value, np.dtype) and value.kind in "SU":
        return string  # TF: numpy's string types are tf.string
    try:
        return _BY_NP[np.dtype(value)]
    except (TypeError, KeyError):
        raise TypeError(f"Cannot convert {value!r} to a tapejax DType.") from None


def from_numpy(np_dtype: np.dtype) -> DType:
    """The DType of an array's numpy dtype (fast path of `as_dtype` for values already in tapejax)."""
    return _BY_NP[np_dtype]


def infer_numpy_dtype(value: Any) -> np.dtype:
    """The dtype TensorFlow gives a Python or numpy value: float -> float32, int -> int32 (int64 if it must).

    Numpy values keep their dtype; Python values nested in lists are inspected element by element.
    """
    if isinstance(value, np.ndarray | np.generic):
        return np.dtype(object) if value.dtype.kind in "SU" else value.dtype
    if isinstance(value, str | bytes):
        return np.dtype(object)
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int32 if -(2**31) <= value < 2**31 else np.int64)
    if isinstance(value, float):
        return np.dtype(np.float32)
    if isinstance(value, complex):
        return np.dtype(np.complex128)
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        return np.dtype(np.float32)
    if arr.dtype.kind == "c":
        return np.dtype(np.complex128)
    if arr.dtype.kind in "iu":
        if arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31):
            return np.dtype(np.int32)
        return np.dtype(np.int64)
    if arr.dtype.kind == "b":
        return np.dtype(np.bool_)
    if arr.dtype.kind in "SU" or (arr.dtype.kind == "O" and arr.size and isinstance(arr.flat[0], str | bytes)):
        return np.dtype(object)  # a string tensor (string_values.py)
    # TF's error for a value of no tensor type
    raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) to a Tensor.")


def cast_array(x: Any, target: np.dtype) -> Any:
    """`x.astype(target)` with TF's `Cast` kernel's float -> integer conversion (a JAX array in, one out).

    XLA's convert clamps a float outside the integer range and sends NaN to 0. TF's CPU kernel converts each element
    as C does on x86-64: truncation toward zero, and NaN or a value outside int32 (int64 for uint32 and the 64-bit
    types) becomes that type's minimum, whose low bits are kept: -1.2 -> uint8 255, 300.0 -> uint8 44, NaN -> int32
    -2**31 and uint8 0. That is the answer TF gives for a scalar and for any array at every length for the 32- and
    64-bit signed types and uint64. (Its vectorised loop clamps the 8- and 16-bit types and uint32 instead, on all
    but an array's last elements: an answer that depends on the array's length, which tapejax does not copy.)
    """
    if x.dtype.kind != "f" and x.dtype != jnp.bfloat16 or target.kind not in "iu":
        return x.astype(target)
    if x.dtype.itemsize < 4:
        x = x.astype(jnp.float32)  # half and bfloat16 widen exactly, as the kernel does
    if target == np.uint64:
        # C converts [2**63, 2**64) exactly: shift it into int64's range (an exact subtraction) and back
        top = (x >= 2.0**63) & (x < 2.0**64)
        low = cast_array(jnp.where(top, x - 2.0**63, x), np.dtype(np.int64)).astype(target)
        return jnp.where(top, low + np.uint64(2**63), low)
    wide = np.dtype(np.int64 if target.itemsize == 8 or target == np.uint32 else np.int32)
    lowest = float(np.iinfo(wide).min)  # -2**31 or -2**63: exact in every float type
    return jnp.where((x >= lowest) & (x < -lowest), x, lowest).astype(wide).astype(target)
