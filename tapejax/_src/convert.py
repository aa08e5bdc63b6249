"""Converting Python, numpy and tapejax values into arrays, by TensorFlow's rules.

Python and numpy values become numpy arrays of the TF dtype (float -> float32, int -> int32); they are handed to
JAX as they are, so a scalar operand costs no device transfer. Tensors and Variables yield their jax.Array.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import caches, checking, dtypes, string_values
from .tensor import _Operators, new_tid

# TF's DataTypeString names, used in its error messages ("expected to be a float tensor but is a double tensor").
_TF_TYPE_STRING = {"float32": "float", "float64": "double", "float16": "half"}


def tf_type_string(np_dtype: np.dtype) -> str:
    name = dtypes.from_numpy(np_dtype).name
    return _TF_TYPE_STRING.get(name, name)


def _castable(source: np.dtype, target: np.dtype, from_python: bool, explicit: bool = False) -> bool:
    """Whether TF converts a value of `source` dtype to `target` implicitly (`explicit`: asked for by `dtype=`)."""
    if source == target:
        return True
    if explicit and not from_python:
        return True  # TF casts a numpy value to a requested dtype as numpy's astype does (floats truncate)
    s, t = source.kind, target.kind
    if t == "V":  # bfloat16
        t = "f"
    if from_python:
        # Python ints fit any numeric dtype (range checked by the caller); floats only float/complex.
        # A Python bool takes a requested signed-int or float dtype (TF: not an unsigned or complex one).
        return {"b": t == "b" or (explicit and t in "if"), "i": t in "iufc", "u": t in "iufc", "f": t in "fc",
                "c": t == "c"}[s]
    return s == t or (s in "iu" and t in "iufc") or (s == "f" and t == "c")


# type -> its conversion to a Tensor, for composite values that ops take as tensors (TF's registered tensor
# conversion functions): IndexedSlices (indexed_slices.py).
CONVERSIONS: dict[type, Any] = {}


def to_array(value: Any, dtype: dtypes.DType | None = None, hint: dtypes.DType | None = None,
             on_device: bool = True) -> Any:
    """The array for `value`: a jax.Array for tensors, variables and Python scalars, numpy otherwise.

    Args:
      value: a Tensor, Variable, numpy array or scalar, Python number or bool, or nested lists of them.
      dtype: the dtype the result must have; a tensor of another dtype is an error (TF's ValueError), a Python
        value that does not fit it a TypeError.
      hint: the preferred dtype for Python and numpy values (the dtype of the other operands of an op); a value
        that cannot take it keeps its own dtype, and the op then reports the mismatch.
      on_device: Python scalars come back as cached device arrays; False gives numpy instead, for ops inside a
        JAX trace (a concrete device array closed over by a traced custom_vjp trips JAX 0.10's executable cache).
    """
    if isinstance(value, _Operators):
        array = value._value
        if dtype is not None and array.dtype != dtype._np:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                f"{dtypes.from_numpy(array.dtype).name}: {value!r}"
            )
        return array
    if isinstance(value, jax.Array):  # a raw JAX value (from an optax update, a user's jnp code)
        return value if dtype is None or value.dtype == dtype._np else value.astype(dtype._np)
    if type(value) in CONVERSIONS:  # an IndexedSlices: after the arrays, which come far more often
        return to_array(CONVERSIONS[type(value)](value), dtype, hint, on_device)
    from_python = not isinstance(value, np.ndarray | np.generic)
    if from_python and on_device and type(value) in _SCALAR_TYPES and not _negative_zero(value):
        key = (type(value), value, dtype, hint)
        array = _SCALARS.get(key)
        if array is not None and checking.FLAG.on:
            checking.compare("Python scalar cache (convert.py)", [array], [_convert(value, dtype, hint, from_python)],
                             repr(value))
        if array is None:
            host = _convert(value, dtype, hint, from_python)
            array = jax.device_put(host)  # jnp.asarray would compile a conversion once per dtype
            if isinstance(array, jax.core.Tracer):
                return array  # made inside a JAX trace that does not fold constants: it must not outlive it
            with _SCALARS.lock:  # both or neither: a literal's id must not outlive the array that _SCALARS keeps
                stored = _SCALARS.get(key)
                if stored is not None:  # another thread converted it first: its array stays the one
                    return stored
                _SCALARS[key] = array
                _LITERALS[id(array)] = (host.dtype.str, host.item())
                _LITERAL_TIDS[id(array)] = new_tid()
        return array
    return _convert(value, dtype, hint, from_python)


def _negative_zero(value: Any) -> bool:
    # -0.0 == 0.0 (and hashes alike), so a cache keyed by value would hand back +0.0: -0.0 is never cached.
    return value == 0 and type(value) is float and math.copysign(1.0, value) < 0


def float_operand(value: float, np_dtype: np.dtype) -> Any:
    """`to_array(value, hint=<np_dtype>)` for a Python float operand of a tensor of `np_dtype` (`x * 1.5`): the
    per-op hot path looks in to_array's cache first. Zeros of either sign go through to_array (see above)."""
    hint = dtypes.from_numpy(np_dtype)
    array = _SCALARS.get((float, value, None, hint)) if value else None
    return array if array is not None else to_array(value, hint=hint)


# Python scalars met by ops (`x * 1.5` in a loop) are converted and moved to the device once: arrays are
# immutable, so the cached array can be shared.
_SCALAR_TYPES = (float, int, bool)
_LITERALS: dict[int, tuple[str, Any]] = {}  # id of a cached array -> (dtype, value); _SCALARS keeps it alive
# id of a cached array -> its tensor id, when an op takes it as an operand (`x * 1.5`): every use in a loop names
# the same input, so a trace's structure (structure.py) codes it once. It is never a tensor the user holds, so no
# tape can watch it.
_LITERAL_TIDS: dict[int, int] = {}
_SCALARS = caches.Memo("Python scalars (convert.py)", 4096, companions=(_LITERALS, _LITERAL_TIDS))


def operand_tid(array: Any) -> int:
    """The tensor id of a Python operand's array (`float_operand`'s): the cached literal's own, else a new one."""
    return _LITERAL_TIDS.get(id(array)) or new_tid()


def literal(array: Any) -> tuple[str, Any] | None:
    """(dtype, value) if `array` is the converted form of a Python literal (`x * 1.5`), else None.

    A literal is the same in every run of a loop, so a lowered program may bake it in by value instead of
    taking it as an argument (each argument of an XLA executable costs time on every call)."""
    return _LITERALS.get(id(array))


def _convert(value: Any, dtype: dtypes.DType | None, hint: dtypes.DType | None, from_python: bool) -> Any:
    if from_python and holds_tensor(value):
        # Not recorded: ops pack lists of tensors with a recorded stack first (dispatch), so this is for
        # values that no tape follows (variable initial values, constants).
        return to_array(jnp.stack([to_array(v, dtype, hint) for v in value]), dtype, hint)
    own = dtypes.infer_numpy_dtype(value)
    if own.kind == "O" or (dtype is not None and dtype._np.kind == "O"):  # a string tensor's value, on the host
        if own.kind != "O" or dtype is not None and dtype._np.kind != "O":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {(dtype or dtypes.string).name}")
        return string_values.to_bytes_array(value)
    target = dtype or hint
    if target is None and from_python:
        return _inferred(value, own)
    if target is None or target._np == own:
        with np.errstate(over="ignore"):  # a dtype asked for: out of range is inf, silently as in TF
            return np.asarray(value, dtype=own)
    if _castable(own, target._np, from_python, explicit=dtype is not None):
        array = np.asarray(value)
        if from_python and own.kind in "iu" and target.is_integer and array.size:
            info = np.iinfo(target._np)
            if array.min() < info.min or array.max() > info.max:
                raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {target.name}")
        if array.dtype.kind == "c" and target._np.kind != "c":
            array = array.real  # TF drops the imaginary part; numpy would warn
        with np.errstate(invalid="ignore", over="ignore"):  # out of range wraps, silently as in TF
            return array.astype(target._np)
    if dtype is not None:
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    return np.asarray(value, dtype=own)


def _inferred(value: Any, own: np.dtype) -> np.ndarray:
    """Python numbers in the dtype inferred for them, with TF's ValueError for one that does not fit it (1e40 is
    no float32, 2**63 no int64), where numpy would give inf or raise OverflowError."""
    try:
        with np.errstate(over="raise"):
            return np.asarray(value, dtype=own)
    except (OverflowError, FloatingPointError):
        what = "a value out of range for a double-precision float" if own.kind in "fc" else "out-of-range integer"
        raise ValueError(f"Can't convert Python sequence with {what}{'' if own.kind in 'fc' else ' to Tensor'}.") \
            from None


def _holds_tensor(value: Any) -> bool:
    return any(isinstance(v, _Operators) or (isinstance(v, list | tuple) and _holds_tensor(v)) for v in value)


def holds_tensor(value: Any) -> bool:
    """Whether a (nested) list or tuple contains tensors, which TF packs with tf.stack."""
    return isinstance(value, list | tuple) and _holds_tensor(value)


def on_device(array: Any) -> Any:
    """A converted value (`to_array`'s result) as a device array: a numpy array is transferred as it is, a copy
    (`unaliased`), where jnp.asarray compiles a copy (JAX's `jit(stage)`) for each new shape and dtype."""
    if isinstance(array, np.generic):
        array = np.asarray(array)
    if isinstance(array, np.ndarray):
        return jax.device_put(unaliased(array))
    return jnp.asarray(array)


def unaliased(array: np.ndarray) -> np.ndarray:
    """`array`, copied if XLA's CPU client would take its buffer as it is (a 64-byte aligned one: device_put then
    aliases it, even with may_alias=False): TF copies a numpy value into a tensor or variable, so changing the
    numpy array later must not change it. Other buffers are copied by device_put itself (and every buffer, off
    the CPU)."""
    if array.ctypes.data % 64 == 0:
        return array.copy()
    return array
