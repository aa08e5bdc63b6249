"""Eager reverse accumulation, for a trace structure seen for the first time.

This is TF's eager backward pass with JAX's derivatives: walk the sliced trace backwards over the recorded input
values (the residuals), and pull each op's cotangents back through that op's VJP. Each op's VJP is one jitted
executable per (op, static params, input shapes), shared by every structure that uses the op, so a one-off
structure compiles nothing of its own (DESIGN invariant 5). A structure that repeats runs the whole VJP as one
executable instead (executables.Lowered.run).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import caches, executables
from .deferred import Pending
from .lowering import Slice, Step

# (op, params, multiple, batched, wrt) -> jitted `(inputs, output cotangents) -> cotangents of the inputs in wrt`.
_OP_VJPS = caches.Memo("per-op VJPs of the eager sweep (sweep.py)", 1024)


def _wrt(step: Step, n_leaves: int, first_out: int) -> tuple[bool, ...]:
    """Which of the step's inputs take a cotangent: leaves and other steps' outputs, not captured constants."""
    return tuple([0 <= slot < n_leaves or slot >= first_out for slot in step.ins])


def new_ops(program: Any, kind: Any) -> int:
    """How many VJPs a gradient's sweep of `program` would make that no sweep has made: new (op, params, inputs
    differentiated), each a compile of its own (executables.Policy weighs them against compiling the program). A
    VJP already made counts as compiled, whatever shapes it was made for."""
    if kind[0] != "vjp":
        return 0
    keys = {_vjp_key(s, False, _wrt(s, program.n_leaves, program.first_output))
            for s in program.steps if s.op.backward is None and s.op.jit}
    return sum(key not in _OP_VJPS for key in keys)


executables.NEW_OPS = new_ops


def _vjp_key(step: Step, batched: bool, wrt: tuple[bool, ...]) -> tuple:
    return (step.op, step.params, step.multiple, batched, wrt)


def _op_vjp(step: Step, batched: bool, wrt: tuple[bool, ...]) -> Callable[..., Any]:
    """The VJP of the step's op with respect to the inputs flagged in `wrt` only: the others (captured constants,
    absent inputs) are closed over. Under a jacobian's basis (`batched`), a cotangent for a constant would be one
    array of the constant's size per basis row, which XLA cannot drop here as it does inside one jit: a 2000x2000
    matrix times a 2000-row basis is 32 GB."""
    key = _vjp_key(step, batched, wrt)
    fn = _OP_VJPS.get(key)
    if fn is None:
        f = functools.partial(step.op.impl, **dict(step.params))

        def vjp(inputs: Sequence[Any], cts: Sequence[Any]) -> tuple[Any, ...]:
            def g(*perturbed: Any) -> Any:
                it = iter(perturbed)
                return f(*[next(it) if w else x for w, x in zip(wrt, inputs)])

            outs, pullback = jax.vjp(g, *[x for w, x in zip(wrt, inputs) if w])
            if step.multiple:
                seeds = type(outs)(zero_cotangent(o) if c is None else c for o, c in zip(outs, cts))
            else:
                seeds = cts[0]
            return pullback(seeds)

        if batched:
            vjp = jax.vmap(vjp, in_axes=(None, 0))
        # An op that is not jitted eagerly (a recorded gradient call: a jaxpr evaluated primitive by primitive)
        # is swept the same way: compiling its VJP would cost one compile per nesting level of tapes.
        fn = _OP_VJPS[key] = jax.jit(vjp) if step.op.jit else vjp
    return fn


class _Plan(NamedTuple):
    """A program's backward walk, worked out once per program (a structure that repeats reuses it)."""

    program: Any
    steps: tuple  # reversed: (step, base slot, output slots, input slots that take a cotangent, their VJP, wrt)


# id(program) -> _Plan (the structure memo hands back the same Program object for a repeated structure)
_PLANS = caches.Memo("backward walks of the eager sweep (sweep.py)", 256)


def _plan(program: Any, batched: bool) -> _Plan:
    key = (id(program), batched)
    plan = _PLANS.get(key)
    if plan is not None and plan.program is program:
        return plan
    n_leaves, first_out = program.n_leaves, program.first_output
    walk = []
    base = first_out
    for step in program.steps:
        wrt = _wrt(step, n_leaves, first_out)
        slots = tuple([slot for slot, w in zip(step.ins, wrt) if w])
        if step.op.backward is None:
            walk.append((step, base, range(base, base + step.n_out), slots, _op_vjp(step, batched, wrt), wrt))
        else:  # a custom gradient's eager rule takes and returns every input
            walk.append((step, base, range(base, base + step.n_out), step.ins, None, wrt))
        base += step.n_out
    walk.reverse()
    plan = _PLANS[key] = _Plan(program, tuple(walk))
    return plan


def zero_cotangent(primal: Any) -> Any:
    """The cotangent of a value no gradient reached (JAX's float0 for an integer or bool value)."""
    if jnp.issubdtype(primal.dtype, jnp.inexact):
        return jnp.zeros_like(primal)
    return np.zeros(primal.shape, jax.dtypes.float0)  # JAX's cotangent type for integer and bool values


def sweep(sl: Slice, leaf_vals: Sequence[Any], seeds: Sequence[Any], groups: Sequence[Sequence[int]],
          batched: bool = False, unreached: list[int] | None = None) -> tuple[Any, ...]:
    """Cotangents of the slice's leaves, summed per group, given a seed per connected target.

    Args:
      sl: the slice (its program and the recorded inputs of its steps).
      leaf_vals: the leaves' values (for zeros where a leaf gets no cotangent).
      seeds: one cotangent per program output (TF's convention already applied by the caller); with `batched`,
        each has a leading axis that is kept throughout (a jacobian's basis).
      groups: the leaf slots of each source.
      unreached: if given, receives the positions of the groups that no cotangent reached because a custom
        gradient returned None on every path (TF's None gradient); their results are zeros.
    """
    program = sl.program
    n_leaves = program.n_leaves
    first_out = program.first_output
    ct: dict[int, Any] = {}
    stopped = False  # whether a custom gradient returned None for an input (then a leaf may get no cotangent)

    def accumulate(slot: int, value: Any) -> None:
        if value.dtype == jax.dtypes.float0:
            return  # an integer input: no gradient flows through it
        ct[slot] = value if slot not in ct else ct[slot] + value

    for slot, seed in zip(program.outputs, seeds):
        accumulate(slot, seed)
    pop = ct.pop
    for (step, base, outs, slots, vjp, wrt), entry in zip(_plan(program, batched).steps, reversed(sl.entries)):
        for slot, leaf in step.adds:  # a source produced inside the slice: y + 0, so its leaf gets y's cotangent
            if slot in ct:
                accumulate(leaf, ct[slot])
        cts = [pop(s, None) for s in outs]
        if all(c is None for c in cts):
            continue
        if entry.pullback is not None and vjp is not None and not batched:
            # a traced loop's VJP, kept from its forward pass (capture.run_recorded): no second forward pass
            in_cts = [c for c, w in zip(entry.pullback(cts), wrt) if w]
        else:
            inputs = [v.value() if type(v) is Pending else v for v in entry.in_vals]
            # without a VJP, a custom gradient: grad_fn runs on concrete values, as TF runs it (OpDef.backward)
            in_cts = vjp(inputs, cts) if vjp is not None else step.op.backward(inputs, cts, batched)
        for slot, c in zip(slots, in_cts):
            if 0 <= slot < n_leaves or slot >= first_out:
                if c is None:  # TF's None: nothing flows on along this path (other paths still add up)
                    stopped = True
                else:
                    accumulate(slot, c)
    results = []
    for k, g in enumerate(groups):
        parts = [ct[i] for i in g if i in ct]
        if not parts and stopped and unreached is not None:
            unreached.append(k)
        if not parts:
            zeros = jnp.zeros_like(leaf_vals[g[0]])
            parts = [zeros if not batched else jnp.zeros((seeds[0].shape[0], *zeros.shape), zeros.dtype)]
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        results.append(total)
    return tuple(results)
