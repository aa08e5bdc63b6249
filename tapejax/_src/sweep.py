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
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import caches
from .deferred import resolve
from .lowering import Slice, Step

# (op, params, multiple, batched) -> jitted `(inputs, output cotangents) -> input cotangents`.
_OP_VJPS = caches.Memo("per-op VJPs of the eager sweep (sweep.py)", 1024)


def _op_vjp(step: Step, batched: bool) -> Callable[..., Any]:
    key = (step.op, step.params, step.multiple, batched)
    fn = _OP_VJPS.get(key)
    if fn is None:
        f = functools.partial(step.op.impl, **dict(step.params))

        def vjp(inputs: Sequence[Any], cts: Sequence[Any]) -> tuple[Any, ...]:
            outs, pullback = jax.vjp(f, *inputs)
            if step.multiple:
                seeds = type(outs)(_zero_cotangent(o) if c is None else c for o, c in zip(outs, cts))
            else:
                seeds = cts[0]
            return pullback(seeds)

        if batched:
            vjp = jax.vmap(vjp, in_axes=(None, 0))
        # An op that is not jitted eagerly (a recorded gradient call: a jaxpr evaluated primitive by primitive)
        # is swept the same way: compiling its VJP would cost one compile per nesting level of tapes.
        fn = _OP_VJPS[key] = jax.jit(vjp) if step.op.jit else vjp
    return fn


def _zero_cotangent(primal: Any) -> Any:
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
    bases = []
    n = first_out
    for step in program.steps:
        bases.append(n)
        n += step.n_out
    for step, base, inputs in zip(reversed(program.steps), reversed(bases), reversed(sl.step_inputs)):
        for slot, leaf in step.adds:  # a source produced inside the slice: y + 0, so its leaf gets y's cotangent
            if slot in ct:
                accumulate(leaf, ct[slot])
        cts = [ct.pop(s, None) for s in range(base, base + step.n_out)]
        if all(c is None for c in cts):
            continue
        if step.op.backward is None:
            in_cts = _op_vjp(step, batched)([resolve(v) for v in inputs], cts)
        else:  # a custom gradient: grad_fn runs on concrete values, not jitted, as TF runs it (OpDef.backward)
            in_cts = step.op.backward([resolve(v) for v in inputs], cts, batched)
        for slot, c in zip(step.ins, in_cts):
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
