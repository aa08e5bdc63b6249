"""apply(): convert an op's inputs, run its JAX implementation, record it on every tape that follows an input.

This is the per-op hot path: it is written for the common case (a few Tensor arguments, no tape or one tape).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import jax
from jax._src.array import ArrayImpl
import numpy as np

from .context import CONTEXT
from . import caches, deferred, dtypes, errors, one_off, string_values, tape as tape_lib
from .convert import CONVERSIONS, float_operand, holds_tensor, operand_tid, tf_type_string, to_array
from .deferred import DeferredTensor, Pending
from .tensor import OPERATORS, EagerTensor, Tensor, new_tid
from .variable import Variable

if TYPE_CHECKING:
    from .registry import OpDef

_ARRAY = ArrayImpl  # the concrete jax.Array type (not a tracer), named without touching a backend at import
_DIFFERENTIABLE_KINDS = frozenset("fcV")  # float, complex, bfloat16: the dtypes gradients flow through
_raw = deferred.raw  # a tensor's array, or its Pending: read without computing a deferred value


def _read_inputs(opdef: OpDef, args: tuple) -> tuple[list, list[int]]:
    """The arrays and tensor ids of an op's tensor arguments, converted with TF's dtype rules.

    A deferred tensor's value is not computed here: it comes as its Pending (deferred.py).
    """
    vals: list[Any] = []
    tids: list[int] = []
    pending: list[int] = []  # positions of Python/numpy values, converted once the dtype hint is known
    for i, a in enumerate(args):
        if type(a) is EagerTensor:
            vals.append(a._value)
            tids.append(a._tid)
        elif isinstance(a, Tensor):
            vals.append(_raw(a))
            tids.append(a._tid)
        elif isinstance(a, Variable):
            tid, value = a._read()
            vals.append(value)
            tids.append(tid)
        elif a is None:
            vals.append(None)
            tids.append(0)
        elif type(a) in CONVERSIONS:  # an IndexedSlices: made dense by a recorded op, as TF converts it
            dense = CONVERSIONS[type(a)](a)
            vals.append(_raw(dense))
            tids.append(dense._tid)
        elif holds_tensor(a):
            packed = OPERATORS["stack"](a)  # TF auto-packs lists of tensors, recorded like any op
            vals.append(packed._value)
            tids.append(packed._tid)
        else:
            vals.append(a)
            tids.append(-1)  # a constant's: its array's (convert.operand_tid), once converted below
            pending.append(i)
    group = opdef.same_dtype
    if pending:
        hint = None
        for i, v in enumerate(vals):
            if v is not None and i not in pending and _in_group(group, i):
                hint = dtypes.from_numpy(v.dtype)
                break
        eager = not any(isinstance(v, jax.core.Tracer) for v in vals if type(v) is not Pending)
        for i in pending:
            if isinstance(vals[i], str | bytes) and hint is not None and hint.is_numeric:  # TF's error
                raise errors.invalid_argument(opdef.op_type, f"cannot compute {opdef.op_type} as input #{i}"
                                              f"(zero-based) was expected to be a {hint} tensor but is "
                                              "a string tensor")
            vals[i] = to_array(vals[i], hint=hint if _in_group(group, i) else None, on_device=eager)
            tids[i] = operand_tid(vals[i])  # a replay captures it by id
    return vals, tids


def _in_group(group: bool | tuple[int, ...], i: int) -> bool:
    """Whether argument i shares the op's dtype (TF's attr "T") with the others in `group`."""
    return group is True or (group is not False and i in group)


def _check_same_dtype(opdef: OpDef, vals: list) -> None:
    group = opdef.same_dtype
    first = None
    for i, v in enumerate(vals):
        if v is None or not _in_group(group, i):
            continue
        if first is None:
            first = v.dtype
        elif v.dtype != first:
            raise errors.invalid_argument(
                opdef.op_type,
                f"cannot compute {opdef.op_type} as input #{i}(zero-based) was expected to be a "
                f"{tf_type_string(first)} tensor but is a {tf_type_string(v.dtype)} tensor",
            )


# (opdef, params) -> the op's jitted implementation: an op runs as one XLA executable, dispatched by JAX's C++
# fast path, rather than one dispatch per primitive of a composite implementation.
_EXECUTABLES = caches.Memo("op executables (dispatch.py)", 4096)


def executable(opdef: OpDef, params_key: tuple) -> Callable[..., Any]:
    """The op's implementation with its static params bound, jitted unless the op opts out.

    The jitted function counts the signatures it is traced for; past `one_off.CHURN` of them, the op's new
    signatures run without a compile where they can (one_off.py). An op with numpy's implementation of its own
    (OpDef.host) runs a new signature that way from the first: it compiles the signatures that repeat."""
    key = (opdef, params_key)
    fn = _EXECUTABLES.get(key)
    if fn is None:
        fn = functools.partial(opdef.impl, **dict(params_key))
        if opdef.jit and opdef.host is not None:
            fn = one_off.Churning(key, fn, jax.jit(fn), _EXECUTABLES)
        elif opdef.jit:
            plain = fn

            def churning() -> None:
                _EXECUTABLES[key] = one_off.Churning(key, plain, jitted, _EXECUTABLES)

            jitted = fn = jax.jit(one_off.counted(plain, churning))
        _EXECUTABLES[key] = fn
    return fn


def apply(opdef: OpDef, args: tuple, params: dict[str, Any], params_key: tuple | None = None) -> Any:
    """Runs `opdef` on `args` (its tensor arguments, in order) with static `params`, recording it on tapes.

    An op recorded on a tape is deferred (deferred.py): its outputs' shapes and dtypes are inferred now and their
    values computed later, inside the gradient's executable or when first read.

    `params` holds the static parameters in `opdef.static` order (registry.op builds it so); it must not be
    mutated, since callers may share it. `params_key` is `tuple(params.items())`, if the caller has it.
    """
    n = len(args)
    a = args[0] if n else None
    # The commonest cases first, without a loop: one tensor, and a tensor with a Python float (`x * 1.5`: the
    # literal takes x's dtype, from the scalar cache).
    if n == 1 and (type(a) is EagerTensor or type(a) is DeferredTensor):
        vals, tids = [_raw(a)], [a._tid]
    elif (n == 2 and type(args[1]) is float and opdef.same_dtype is True
          and (type(a) is EagerTensor or type(a) is DeferredTensor)
          and (type(v := _raw(a)) is _ARRAY or type(v) is Pending)):
        literal = float_operand(args[1], v.dtype)
        vals = [v, literal]
        tids = [a._tid, operand_tid(literal)]
        n = 1  # the literal has a's dtype and no tape tracks it: below, only a counts
    else:
        vals, tids = _read_inputs(opdef, args)
    if opdef.check is not None:
        if not opdef.check_abstract:  # a check that reads values needs them now
            vals = [deferred.resolve(v) for v in vals]
        opdef.check(*vals, **params)  # raises TF's own exception types
    if n > 1 and opdef.same_dtype:
        _check_same_dtype(opdef, vals)
    if params_key is None:
        params_key = tuple(params.items())
    fn = _EXECUTABLES.get((opdef, params_key)) or executable(opdef, params_key)
    tapes = CONTEXT.tapes
    if tapes and opdef.differentiable:
        if len(tapes) == 1 and tids:  # _recording's common case, inline
            tracked = tapes[0].tracked
            recording = tapes if tids[0] in tracked or (n > 1 and not tracked.isdisjoint(tids)) else None
        else:
            recording = _recording(tapes, tids)
        if recording and opdef.jit and _deferrable(vals, recording):
            outs, multiple, app = deferred.defer(opdef, fn, vals)
            if multiple or len(recording) > 1:
                _record(recording, opdef, params_key, tids, vals, outs, multiple, app)
                return outs if multiple else outs[0]
            out = outs[0]  # _record's common case, inline: one output, one tape (which tracks an input)
            tape = recording[0]
            tape.entries.append(_new_entry(tape_lib.TapeEntry, (opdef, params_key, tuple(tids), tuple(vals),
                                                                (out._tid,), False, app, None)))
            if _raw(out).dtype.kind in _DIFFERENTIABLE_KINDS:
                tape.tracked.add(out._tid)
            return out
    if any(type(v) is Pending for v in vals):
        vals = [deferred.resolve(v) for v in vals]
    try:  # string tensors live on the host: a string first input goes there at once (JAX's error is slow)
        if vals and type(vals[0]) is np.ndarray and vals[0].dtype == object:
            raise TypeError
        out = fn(*vals)
    except Exception as e:  # JAX's, XLA's, MLIR's and numpy's errors become TF's (free when nothing is raised)
        if not any(string_values.is_host(v) for v in vals):
            raise errors.from_jax(opdef.op_type, e, CONTEXT.trace is not None) from None
        try:
            out = string_values.apply_on_host(opdef.name, opdef.op_type, fn, vals, params)
        except Exception as e:  # noqa: BLE001 (the op on the strings' ids failed: TF's error, as for numbers)
            raise errors.from_jax(opdef.op_type, e, CONTEXT.trace is not None) from None
    multiple = type(out) is tuple or type(out) is list
    outs = tuple(EagerTensor(o) for o in out) if multiple else (EagerTensor(out),)
    if tapes:
        if opdef.differentiable:
            _record(tapes, opdef, params_key, tids, vals, outs, multiple)
        elif any(t.records_all for t in tapes):  # a captured branch replays non-differentiable ops too
            _record([t for t in tapes if t.records_all], opdef, params_key, tids, vals, outs, multiple)
    return outs if multiple else outs[0]


def _recording(tapes: list[tape_lib.Tape], tids: list[int]) -> list[tape_lib.Tape]:
    """The tapes that track one of the op's inputs (and so record it); `apply` inlines the one-tape case."""
    return [t for t in tapes if not t.tracked.isdisjoint(tids)]


def _deferrable(vals: list, tapes: list[tape_lib.Tape]) -> bool:
    """Whether an op may be deferred: eagerly (no JAX trace, no tf.function trace, no captured branch), on
    concrete inputs."""
    for v in vals:
        if type(v) is not _ARRAY and type(v) is not Pending and v is not None and not isinstance(v, np.ndarray):
            return False
    for t in tapes:
        if t.records_all:
            return False
    return CONTEXT.trace is None


def record_call(opdef: OpDef, in_tids: Sequence[int], in_vals: Sequence[Any], outs: Sequence[Tensor],
                tapes: Sequence[tape_lib.Tape] | None = None, effect: bool = False, pullback: Any = None) -> None:
    """Records a whole call as one op with several outputs: a differentiation call, a custom gradient, a
    tf.function call, a traced branch or loop, a side effect inside a captured body. The one way a call becomes
    an op; `apply` is the one way an op of the table does.

    Args:
      tapes: the tapes that may record it (default: those recording on this thread).
      effect: record it whatever its inputs (a print or an assertion inside a captured body must run when the body
        does, even with no tensor input).
      pullback: the call's VJP at `in_vals`, if computing `outs` already linearized it (TapeEntry.pullback).
    """
    tapes = CONTEXT.tapes if tapes is None else tapes
    if not tapes:
        return
    if effect:
        entry = tape_lib.TapeEntry(opdef, (), tuple(in_tids), tuple(in_vals), tuple(o._tid for o in outs), True)
        for t in tapes:
            t.entries.append(entry)
        return
    _record(list(tapes), opdef, (), tuple(in_tids), tuple(in_vals), tuple(outs), True, pullback=pullback)


def _record(
    tapes: list[tape_lib.Tape],
    opdef: OpDef,
    params_key: tuple[tuple[str, Any], ...],
    tids: list[int] | tuple[int, ...],
    vals: list | tuple,
    outs: tuple[Tensor, ...],
    multiple: bool,
    app: deferred.Application | None = None,
    pullback: Any = None,
) -> None:
    """Appends the op to each tape that tracks one of its inputs; its float outputs become tracked there.

    Integer and bool outputs are never tracked: TF's gradient through them is None, not zero. `app` is the
    deferred application computing `outs`, if the op was deferred.
    """
    entry = None
    for t in tapes:
        tracked = t.tracked
        for tid in tids:
            if tid in tracked:
                break
        else:
            continue
        if entry is None:
            if multiple:
                out_tids = tuple([o._tid for o in outs])
                follow = [o._tid for o in outs if _raw(o).dtype.kind in _DIFFERENTIABLE_KINDS]
            else:
                out_tids = (outs[0]._tid,)
                follow = out_tids if _raw(outs[0]).dtype.kind in _DIFFERENTIABLE_KINDS else ()
            # tuple.__new__ skips the Python-level NamedTuple constructor: this is the per-op hot path.
            entry = _new_entry(tape_lib.TapeEntry,
                               (opdef, params_key, tuple(tids), tuple(vals), out_tids, multiple, app, pullback))
        t.entries.append(entry)
        tracked.update(follow)


_new_entry = tuple.__new__


def is_differentiable(np_dtype: np.dtype) -> bool:
    return np_dtype.kind in _DIFFERENTIABLE_KINDS
