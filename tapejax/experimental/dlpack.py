"""tf.experimental.dlpack: tensors to and from DLPack capsules, sharing the buffer (no copy), as in TF.

A Tensor also has the array API's `__dlpack__` / `__dlpack_device__` (as TF's EagerTensor does), so
`jax.dlpack.from_dlpack(t)`, `np.from_dlpack(t)` and `torch.from_dlpack(t)` read it without a copy.
"""

from __future__ import annotations

import ctypes
from typing import Any

import jax

from tapejax._src import errors, pytrees  # noqa: F401  (pytrees gives Tensor its __dlpack__)
from tapejax._src.tensor import EagerTensor, _Operators

_NAMES = {b"dltensor": 0, b"dltensor_versioned": 32}  # where DLTensor starts in the managed struct


def to_dlpack(tf_tensor: Any) -> Any:
    """The tensor's buffer as a DLPack capsule (`tf.experimental.dlpack.to_dlpack`), consumable once.

    >>> import tapejax as tf
    >>> capsule = tf.experimental.dlpack.to_dlpack(tf.constant([1.0, 2.0]))
    >>> print(tf.experimental.dlpack.from_dlpack(capsule))
    tf.Tensor([1. 2.], shape=(2,), dtype=float32)

    Raises:
      InvalidArgumentError: the argument is not a tensor (TF's message), or is a string tensor (TF aborts the
        process there).
    """
    if not isinstance(tf_tensor, _Operators):
        raise errors.InvalidArgumentError(None, None, "The argument to `to_dlpack` must be a TF tensor, not Python "
                                                      "object")
    return tf_tensor.__dlpack__()


class _Capsule:
    """A capsule with the array API's two methods, which is what `jax.dlpack.from_dlpack` takes."""

    def __init__(self, capsule: Any, device: tuple[int, int]):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


def _device(capsule: Any) -> tuple[int, int]:
    """(device type, device id) of the DLTensor in a capsule: after its `void* data` pointer."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    name = get_name(capsule)
    if name not in _NAMES:
        raise errors.InvalidArgumentError(None, None, f'DLPack tensor must be a capsule with name "dltensor", got '
                                                      f'"{(name or b"").decode()}". Note that a DLPack tensor may be '
                                                      "consumed at most once.")
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    base = get_pointer(capsule, name) + _NAMES[name] + ctypes.sizeof(ctypes.c_void_p)
    device = (ctypes.c_int32 * 2).from_address(base)
    return int(device[0]), int(device[1])


def from_dlpack(dlcapsule: Any) -> EagerTensor:
    """A tensor sharing the buffer of a DLPack capsule (`tf.experimental.dlpack.from_dlpack`); the capsule is
    consumed.

    Raises:
      TypeError: the argument is not a capsule (as TF; pass `tf.experimental.dlpack.to_dlpack(x)`, or for an
        array API object `tf.convert_to_tensor(jax.dlpack.from_dlpack(x))`).
      InvalidArgumentError: the capsule was consumed already, or JAX cannot take its device or dtype.
    """
    if type(dlcapsule).__name__ != "PyCapsule":
        raise TypeError(f"from_dlpack(): expected a DLPack capsule (from `tf.experimental.dlpack.to_dlpack` or "
                        f"another library's to_dlpack), got {type(dlcapsule).__name__}. For an object with "
                        "`__dlpack__`, use `tf.convert_to_tensor(jax.dlpack.from_dlpack(x))`.")
    try:
        array = jax.dlpack.from_dlpack(_Capsule(dlcapsule, _device(dlcapsule)))
    except Exception as e:
        raise errors.from_jax("FromDlpack", e) from None
    return EagerTensor(array)
