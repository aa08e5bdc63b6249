"""Deferred forward: ops recorded on a tape compute their values later, fused into the gradient's executable.

Under a tape, an eager op costs one XLA dispatch for its value and the gradient replays the same ops again inside
its own executable. So a recorded op only infers its output shapes and dtypes (cached per op, params and input
shapes) and returns a `DeferredTensor`; its value is computed either

- by the executable of a `gradient`/`jacobian` call whose trace structure repeats (a training loop): beside the
  derivatives it returns the values of the deferred tensors still alive (typically the loss), so the whole step
  is one dispatch (XLA's CSE merges that forward pass with the one the VJP replays); an output is not free (a
  returned loss can split XLA's fusion of the step: docs/design.md, section 4), so values nobody can read any
  more are not returned, or
- op by op, with each op's own cached executable, the moment anything reads the value (printing, `numpy()`, an
  op that is not recorded, a structure seen for the first time). Then the tensor becomes a plain EagerTensor.

Either way the value is the op's own JAX function of the same inputs: deferral changes when a value is computed,
never what it is. Shape and dtype errors are raised when the op is called, as eagerly.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax._src.array import ArrayImpl

from . import caches, checking, dtypes, errors
from .tensor import EagerTensor, Tensor, TensorShape, new_tid

_ARRAY = ArrayImpl  # the concrete jax.Array type (not a tracer), named without touching a backend at import
_SLOT = Tensor.__dict__["_value"]  # the slot itself: a DeferredTensor keeps its Pending there
raw = _SLOT.__get__  # a tensor's array, or its Pending if deferred: read without computing anything


class Application:
    """One deferred op application: `values = fn(*ins)`, computed at most once."""

    __slots__ = ("fn", "ins", "values", "multiple", "op_type", "outputs")

    def __init__(self, fn: Callable[..., Any], ins: list, multiple: bool, op_type: str):
        self.fn = fn
        self.ins: list | None = ins  # arrays and Pendings; dropped once computed
        self.values: tuple | None = None
        self.multiple = multiple
        self.op_type = op_type
        self.outputs: tuple[weakref.ref, ...] = ()  # the DeferredTensors: values are wanted while one lives

    @property
    def wanted(self) -> bool:
        """Whether the values are still to be computed and some output tensor is alive to read them."""
        return bool(wanted((self,)))

    def set(self, values: Sequence[Any]) -> None:
        self.values = tuple(values)
        self.ins = None


class Pending:
    """Output `index` of an Application, with the shape and dtype inferred for it (an abstract value)."""

    __slots__ = ("app", "index", "aval", "shape", "dtype")

    def __init__(self, app: Application, index: int, aval: tuple):
        self.app = app
        self.index = index
        self.aval = aval  # (shape, dtype, weak_type)
        self.shape, self.dtype, _ = aval

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def value(self) -> jax.Array:
        values = self.app.values
        if values is None:
            values = compute(self.app)
        return values[self.index]


def wanted(apps: Sequence[Application | None]) -> tuple[int, ...]:
    """The positions of the applications whose values are wanted (`Application.wanted`), in order."""
    found = []
    for k, app in enumerate(apps):
        if app is not None and app.values is None:
            for ref in app.outputs:
                if ref() is not None:
                    found.append(k)
                    break
    return tuple(found)


def resolve(value: Any) -> Any:
    """An op input as an array: a Pending is computed."""
    return value.value() if type(value) is Pending else value


def compute(app: Application) -> tuple:
    """Computes `app` and the deferred applications it depends on, in dependency order (iteratively: a chain of
    thousands of deferred ops must not exhaust Python's recursion limit).

    One thread at a time: a tensor may be read by a thread other than the one that made it, and an application
    must be computed once (its `ins` are dropped when it is)."""
    with _COMPUTING:
        stack = [app]
        while stack:
            a = stack[-1]
            ins = a.ins
            if a.values is not None or ins is None:  # (`set` by a compiled run: values first, then ins dropped)
                stack.pop()
                continue
            args = []
            for v in ins:
                if type(v) is Pending:
                    values = v.app.values
                    if values is None:
                        stack.append(v.app)
                        break
                    args.append(values[v.index])
                else:
                    args.append(v)
            else:  # every input is available
                try:
                    out = a.fn(*args)
                except Exception as e:
                    raise errors.from_jax(a.op_type, e) from None
                a.values = tuple(out) if a.multiple else (out,)
                a.ins = None
                stack.pop()
    return app.values


_COMPUTING = threading.RLock()


def compute_detached(app: Application) -> tuple:
    """The values `compute(app)` gives, leaving `app` itself uncomputed (its inputs are computed): the checking
    mode's plain path for values a compiled run is about to fill in."""
    out = app.fn(*[resolve(v) for v in app.ins])
    return tuple(out) if app.multiple else (out,)


class DeferredTensor(Tensor):
    """A tensor whose value is not computed yet. Reading `_value` computes it and makes this an EagerTensor.

    Its shape and dtype are known without computing it.
    """

    __slots__ = ()

    @property
    def _value(self) -> jax.Array:
        value = _SLOT.__get__(self)
        if type(value) is Pending:  # (else another thread computed it just now)
            value = value.value()
        _SLOT.__set__(self, value)
        self.__class__ = EagerTensor  # same layout: from now on a plain tensor, with no property in the way
        return value

    @property
    def shape(self) -> TensorShape:
        return TensorShape(_SLOT.__get__(self).shape)

    @property
    def dtype(self) -> Any:
        return dtypes.from_numpy(_SLOT.__get__(self).dtype)

    @property
    def ndim(self) -> int:
        return len(_SLOT.__get__(self).shape)


# TF code prints `type(t).__name__`: a tensor computed by a recorded op is an EagerTensor in TF.
DeferredTensor.__name__ = DeferredTensor.__qualname__ = "EagerTensor"


def _new_deferred(pending: Pending) -> DeferredTensor:
    t = DeferredTensor.__new__(DeferredTensor)
    _SLOT.__set__(t, pending)
    t._tid = new_tid()
    return t


# (op executable, input avals) -> (multiple, output avals): shape inference runs once per signature.
_AVALS = caches.Memo("shape inference (deferred.py)", 8192)


def aval(v: Any) -> Any:
    """A value's abstract value, as a cache key: a Pending's (shape, dtype, weak_type), a jax.Array's own `aval`
    (an attribute, interned by JAX: cheaper than reading shape and dtype, which are properties)."""
    t = type(v)
    if t is Pending or t is _ARRAY:
        return v.aval
    if v is None:
        return None
    return (v.shape, v.dtype, getattr(v, "weak_type", False))


def _struct(a: Any) -> jax.ShapeDtypeStruct | None:
    if a is None:
        return None
    if type(a) is tuple:
        return jax.ShapeDtypeStruct(a[0], a[1], weak_type=a[2])
    return jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)


def _infer(fn: Callable[..., Any], in_avals: tuple, op_type: str) -> tuple[bool, tuple]:
    structs = [_struct(a) for a in in_avals]
    try:
        out = jax.eval_shape(fn, *structs)
    except Exception as e:
        raise errors.from_jax(op_type, e) from None
    multiple = type(out) is tuple or type(out) is list
    outs = out if multiple else (out,)
    return multiple, tuple((tuple(o.shape), o.dtype, bool(o.weak_type)) for o in outs)


def defer(opdef: Any, fn: Callable[..., Any], vals: list) -> tuple[tuple, bool, Application]:
    """The deferred outputs of `fn(*vals)`: (tensors, multiple, application)."""
    # `fn` is the op's executable for these params (dispatch.executable: one per op and params), so it can stand
    # for both in the key.
    n = len(vals)
    if n == 1:
        v = vals[0]
        key = (fn, v.aval if type(v) is Pending or type(v) is _ARRAY else aval(v))
    elif n == 2:
        v, w = vals
        key = (fn, v.aval if type(v) is Pending or type(v) is _ARRAY else aval(v),
               w.aval if type(w) is Pending or type(w) is _ARRAY else aval(w))
    else:
        key = (fn, *map(aval, vals))
    inferred = _AVALS.get(key)
    if inferred is not None and checking.FLAG.on:
        checking.require("shape-inference cache (deferred.py)", inferred == _infer(fn, key[1:], opdef.op_type),
                         opdef.op_type)
    if inferred is None:
        inferred = _AVALS[key] = _infer(fn, key[1:], opdef.op_type)
    multiple, out_avals = inferred
    app = Application(fn, vals, multiple, opdef.op_type)
    if multiple:
        outs = tuple([_new_deferred(Pending(app, i, a)) for i, a in enumerate(out_avals)])
        app.outputs = tuple(map(weakref.ref, outs))
        return outs, True, app
    out = _new_deferred(Pending(app, 0, out_avals[0]))
    app.outputs = (weakref.ref(out),)
    return (out,), False, app


def compute_all(apps: Sequence[Application | None]) -> None:
    """Computes every application not computed yet (a structure seen for the first time runs op by op)."""
    for app in apps:
        if app is not None and app.values is None:
            compute(app)
