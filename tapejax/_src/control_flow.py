"""Conditionals: tf.cond, case and switch_case.

With a known condition (eager code, or a Python value inside tf.function) they are Python control flow, as in
TF's eager mode, and the tapes record the ops that ran. Inside a tf.function trace, a traced condition makes each
branch *captured* (capture.py): a pure function of its inputs, which goes to `jax.lax.cond` / `switch`, and the
construct is recorded on the tapes outside as one op: gradients flow through it because JAX differentiates lax's
control flow. The loops (while_loop, scan, map_fn...) are in loops.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from .context import CONTEXT
from . import dispatch, errors
from .capture import Body, as_tensor, capture_each, current_trace, inputs_of, run_recorded, traced, unpack
from .registry import OpDef
from .tensor import OPERATORS, Tensor, new_tid
from .variable import Variable


# -- conditionals ------------------------------------------------------------------------------------------------


def cond(pred: Any, true_fn: Callable | None = None, false_fn: Callable | None = None, name: str | None = None
         ) -> Any:
    """`true_fn()` if `pred` else `false_fn()` (`tf.cond`); a traced `pred` becomes `jax.lax.cond`."""
    if true_fn is None or false_fn is None:
        raise TypeError("tf.cond requires both true_fn and false_fn: callables returning the same structure.")
    if not traced(pred):
        return true_fn() if bool(pred) else false_fn()
    return _switch(as_tensor(pred), [false_fn, true_fn], "cond")


def switch_case(branch_index: Any, branch_fns: Any, default: Callable | None = None, name: str = "switch_case"
                ) -> Any:
    """`branch_fns[branch_index]()`, or `default()` out of range (the last branch if no default) (`tf.switch_case`).

    Args:
      branch_index: an integer scalar tensor; traced inside tf.function, the call becomes `jax.lax.switch`.
      branch_fns: callables, or (key, callable) pairs or a {key: callable} dict whose int keys are 0..n-1.
      default: called when `branch_index` is out of range.
      name: accepted and ignored.

    Returns:
      What the chosen branch returns.

    Raises:
      TypeError: `branch_index` is not an integer tensor, or an entry is not a callable or an (int, callable) pair.
      ValueError: `branch_fns` is empty, or its keys are not the contiguous range 0..n-1.

    >>> import tapejax as tf
    >>> print(tf.switch_case(tf.constant(1), {1: lambda: tf.constant(20.0), 0: lambda: tf.constant(10.0)}))
    tf.Tensor(20.0, shape=(), dtype=float32)
    """
    fns = _branches(branch_index, branch_fns)
    default = default or fns[-1]
    if not traced(branch_index):
        i = int(branch_index)
        return fns[i]() if 0 <= i < len(fns) else default()
    index = as_tensor(branch_index)
    clamped = OPERATORS["where"](
        OPERATORS["math.logical_and"](index >= 0, index < len(fns)), index, len(fns))
    return _switch(clamped, [*fns, default], "switch_case")


def _branches(branch_index: Any, branch_fns: Any) -> list[Callable]:
    """tf.switch_case's arguments checked as TF checks them; the branch functions in key order."""
    if not isinstance(branch_index, Tensor | Variable):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got {branch_index.dtype}")
    if not branch_fns:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, list | tuple | dict):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(f) for f in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair}.")
        if not isinstance(pair[0], int):
            raise TypeError(f"key must be a Python `int`, got {type(pair[0])}")
        if not callable(pair[1]):
            raise TypeError(f"fn for key {pair[0]} must be callable.")
    keys = sorted(k for k, _ in pairs)
    if keys != list(range(len(pairs))):  # a missing key has no position in lax.switch: TF refuses it too
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to {len(pairs)}) but found "
                         f"{{{','.join(map(str, keys))}}}")
    return [f for _, f in sorted(pairs, key=lambda pair: pair[0])]


def case(pred_fn_pairs: Any, default: Callable | None = None, exclusive: bool = False, strict: bool = False,
         name: str = "case") -> Any:
    """The function of the first true predicate, else `default` (`tf.case`).

    Args:
      pred_fn_pairs: (scalar bool tensor, callable) pairs, tested in order (or a dict of them).
      default: called when no predicate is true. Without one, the last pair's function is the default and one
        of the predicates must be true.
      exclusive: whether at most one predicate (of those before the default) may be true.
      strict: accepted and ignored.
      name: accepted and ignored.

    Returns:
      What the chosen function returns.

    Raises:
      TypeError: an entry is not a (bool tensor, callable) pair.
      InvalidArgumentError: with no default, no predicate is true; with `exclusive`, more than one is. Inside
        tf.function, when the step runs (its variables are then left unchanged).

    >>> import tapejax as tf
    >>> x = tf.constant(0.5)
    >>> print(tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)], default=lambda: x))
    tf.Tensor(5.0, shape=(), dtype=float32)
    >>> try:
    ...     tf.case([(x < 0, lambda: -x)])
    ... except tf.errors.InvalidArgumentError as e:
    ...     print(e)  # doctest: +NORMALIZE_WHITESPACE
    Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data:
    b'Input error: None of conditions evaluated as True:' False
    """
    pairs = _predicate_pairs(pred_fn_pairs)
    preds = [p for p, _ in pairs]
    if default is None:
        # TF: the last pair's function is the default, run only if its predicate (so one of them) is true
        _check_predicates(preds, "Input error: None of conditions evaluated as True:", lambda bits: bits.sum() > 0)
        pairs, default = pairs[:-1], pairs[-1][1]
    if exclusive and len(pairs) > 1:
        _check_predicates([p for p, _ in pairs], "Input error: exclusive=True: more than 1 conditions "
                          f"({', '.join('?' * len(pairs))}) evaluated as True:", lambda bits: bits.sum() <= 1)
    result: Callable = default
    for pred, fn in reversed(pairs):
        result = (lambda p, f, rest: lambda: cond(p, f, rest))(pred, fn, result)
    return result()


def _predicate_pairs(pred_fn_pairs: Any) -> list[tuple[Tensor, Callable]]:
    """tf.case's pairs checked as TF checks them: each a (bool tensor, callable) 2-tuple."""
    if not isinstance(pred_fn_pairs, list | tuple | dict):
        raise TypeError(f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}")
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if not isinstance(pred, Tensor | Variable):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if not pred.dtype.is_bool:
            raise TypeError(f"pred must be Tensor of type bool, got one of type {pred.dtype.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred} must be callable.")
    return pairs


def _check_predicates(preds: Sequence[Any], summary: str, passes: Callable[[Any], Any]) -> None:
    """TF's Assert on tf.case's predicates: InvalidArgumentError unless `passes(bits)`, bits the predicates as
    0/1. Known now (eager code), it raises now; traced, it is a checkify check, which tf.function turns into an
    error raised when the step runs, before any variable is written."""
    values = [as_tensor(p)._value for p in preds]
    trace = current_trace()
    if trace is None or not (trace.captures or traced(*values)):
        bits = [bool(v) for v in values]
        if not passes(np.asarray(bits, np.int32)):
            raise errors.InvalidArgumentError(
                None, None, f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
                f"b'{summary}'\n{', '.join(map(str, bits))}")
        return

    def check(*values: Any) -> tuple:
        bits = jnp.stack([jnp.reshape(v, ()) for v in values]).astype(jnp.int32)
        checkify.check(passes(bits), f"assertion failed: [{summary}] {{}}", bits)
        return ()

    if trace.captures:
        # inside a traced branch or loop body: a step of the captured body, so it checks when the body runs
        tids = tuple(p._tid if isinstance(p, Tensor) else new_tid() for p in preds)
        opdef = OpDef("control_flow.Assert", check, op_type="Assert", jit=False)
        dispatch.record_call(opdef, tids, values, (), CONTEXT.tapes[:1], effect=True)
    else:
        check(*values)


def _switch(index: Tensor, fns: Sequence[Callable], name: str) -> Any:
    trace = current_trace()
    bodies = capture_each(fns, [], trace)
    _check_same_outputs(bodies, f"the branches of tf.{name}")
    inputs = inputs_of(bodies)
    assigned = _assigned_union(bodies)

    def impl(*flat: Any) -> tuple:
        (i,), external_vals, variable_vals = unpack(flat, inputs, 1)

        def branch(body: Body) -> Callable[[], tuple]:
            def run() -> tuple:
                outs, new = body.run((), external_vals, variable_vals)
                return (*outs, *[new.get(v._uid, variable_vals[v._uid]) for v in assigned])
            return run

        i = jnp.reshape(i, ()).astype(jnp.int32)
        return tuple(jax.lax.switch(i, [branch(b) for b in bodies]))

    outs = run_recorded(f"control_flow.{name}", impl, [index], inputs, assigned)
    return jax.tree_util.tree_unflatten(bodies[0].treedef, outs)


def _check_same_outputs(bodies: Sequence[Body], what: str) -> None:
    first = bodies[0]
    for b in bodies[1:]:
        if b.treedef != first.treedef:
            raise ValueError(f"{what} must return the same structure: got {first.treedef} and {b.treedef}.")


def _assigned_union(bodies: Sequence[Body]) -> list[Variable]:
    union: dict[int, Variable] = {}
    for b in bodies:
        for uid in b.assigned:
            union[uid] = b.variables[uid]
    return list(union.values())
