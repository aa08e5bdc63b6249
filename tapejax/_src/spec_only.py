"""Tensors known only by their spec: how tf.data finds what a function of strings returns without running it.

JAX cannot trace strings (they live on the host, string_values.py), so a `Dataset.map` function of string
components runs eagerly, element by element, and its `element_spec` used to come from a call on the input's
first element: the whole pipeline above ran once when `map` was called (a generator opened, files read, other
maps run), which TF never does. The most common such function only routes its inputs into `tf.py_function` or
`tf.numpy_function` (the guides' "wrap it in a py_function" advice), and TF's answer for it needs no value:
a result of those ops has an unknown shape unless `Tout` gives one, or `set_shape` narrows it.

So data/traced.py first calls the function on `SpecOnly` stand-ins for its inputs inside `probing()`, where the
two ops return `SpecOnly` results without calling `func`. Any other use of a stand-in raises `NoValue` (its value
is `_NO_VALUE`, which refuses every use), and the caller falls back to the first element.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from . import dtypes
from .signature import TensorSpec
from .tensor import Tensor, TensorShape, new_tid


class NoValue(Exception):
    """A SpecOnly tensor was used as a value."""


class _NoValue:
    """The value of a SpecOnly tensor: every use raises NoValue (an op that reads it cannot answer)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # a protocol probe (inspect's `__wrapped__`, copy's `__deepcopy__`): absent
            raise AttributeError(name)
        raise NoValue(name)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise NoValue("__array__")

    def __jax_array__(self) -> Any:
        raise NoValue("__jax_array__")

    def __len__(self) -> int:
        raise NoValue("__len__")

    def __iter__(self) -> Iterator[Any]:
        raise NoValue("__iter__")

    def __bool__(self) -> bool:
        raise NoValue("__bool__")

    def __index__(self) -> int:
        raise NoValue("__index__")

    def __float__(self) -> float:
        raise NoValue("__float__")


_NO_VALUE = _NoValue()


class SpecOnly(Tensor):
    """A graph tensor with a static shape (dimensions may be None, or the rank unknown) and a dtype, no value."""

    __slots__ = ("_spec",)

    def __init__(self, spec: TensorSpec):
        self._value = _NO_VALUE
        self._tid = new_tid()
        self._spec = spec

    @property
    def shape(self) -> TensorShape:
        return self._spec.shape

    @property
    def dtype(self) -> Any:
        return self._spec.dtype

    @property
    def ndim(self) -> Any:
        return self._spec.shape.rank

    def set_shape(self, shape: Any) -> None:
        """TF's static shape narrowed to `shape` (ValueError where they disagree)."""
        given = TensorShape(shape)
        if not self.shape.is_compatible_with(given):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {given}.")
        if self.shape.rank is None:
            merged = given
        elif given.rank is None:
            merged = self.shape
        else:
            merged = TensorShape([a if a is not None else b for a, b in zip(self.shape.dims, given.dims)])
        self._spec = TensorSpec(merged, self.dtype)

    def __repr__(self) -> str:
        return f"<tf.Tensor 'tensor_{self._tid}:0' shape={self.shape} dtype={self.dtype.name}>"

    __str__ = __repr__


def results(Tout: Any) -> Any:
    """py_function's and numpy_function's results while probing: TF's static shape, unknown (even where Tout is
    a tf.TensorSpec) until `set_shape`; `func` is not called."""
    listed = isinstance(Tout, list | tuple)
    outs = [SpecOnly(TensorSpec(TensorShape(None), t.dtype if isinstance(t, TensorSpec) else dtypes.as_dtype(t)))
            for t in (Tout if listed else [Tout])]
    return outs if listed else outs[0]


_STATE = threading.local()


def active() -> bool:
    """Whether py_function and numpy_function return SpecOnly results here (this thread is probing)."""
    return getattr(_STATE, "on", False)


@contextlib.contextmanager
def probing() -> Iterator[None]:
    before = active()
    _STATE.on = True
    try:
        yield
    finally:
        _STATE.on = before


__all__ = ["NoValue", "SpecOnly", "active", "probing", "results"]
