"""A gradient call whose structure repeats: the executable the plain path chose for it, found again by structure.

A training loop asks `tape.gradient(loss, variables)` of the same structure every step, and once that structure
is compiled the plain path (problem.py, executables.py) re-derives, call after call, what depends only on the
structure and the inputs' shapes: the slice, the sources' slots, the transformation, the Lowered program and its
executable. So after the plain path has run a compiled executable for such a call, `learn` keeps what it chose
(a `Plan`), keyed by the trace's structure (the key of structure.py's slice memo) and how many times each
source was read. `gradient` then rebuilds only the executable's arguments from the template of positions, checks
what the key does not cover (the arguments' avals, and which deferred values are wanted), and calls it: the
10-op chain's step took about 20 us less.

Only the commonest call takes it: one float tensor target, variables as sources (each read on the tape), no
`output_gradients`, every source connected, no other tape recording the call, no trace. Anything else, and any
mismatch, is the plain path, which this only ever caches: for a matching key, avals and wanted values, the plain
path would slice the same program, find the same Lowered (looked up here as there) and call the same executable
on the same arguments. In checking mode both run and must agree (`learn` compares them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from jax._src.array import ArrayImpl

from .context import CONTEXT
from . import caches, checking, deferred, errors, executables, structure
from .deferred import DeferredTensor
from .problem import Problem
from .tensor import EagerTensor, Tensor
from .variable import Variable

_ARRAY = ArrayImpl  # the concrete jax.Array type: not a tracer, a Pending or a numpy array
_FLOAT_KINDS = frozenset("fcV")


class Plan(NamedTuple):
    """What the plain path chose for one structure of gradient call."""

    template: structure.Template  # the slice by positions: which reads are leaves, where the constants are
    avals: tuple  # of the executable's arguments (leaves, then captured constants): the key does not hold them
    kind: Any  # the transformation, as Lowered.run keys it


# (structure key, reads per source) -> Plan
_PLANS = caches.Memo("repeated gradient calls (repeated.py)", 1024)


def gradient(tape: Any, targets: Sequence[Any], sources: Sequence[Any]) -> tuple | None:
    """The gradients (arrays, one per source) of `targets[0]` w.r.t. `sources` by the plan learnt for this
    call's structure, or None: then the plain path answers. Fills in the deferred values the executable returns,
    except in checking mode, where the plain path runs next and `learn` compares the two."""
    if len(targets) != 1 or CONTEXT.tapes or CONTEXT.trace is not None:
        return None
    target = targets[0]
    if type(target) is not DeferredTensor and type(target) is not EagerTensor:
        return None
    if deferred.raw(target).dtype.kind not in _FLOAT_KINDS:
        return None
    all_reads = tape.reads
    leaf_tids: list[int] = []
    values: list[Any] = []
    sizes = []
    for s in sources:
        if not isinstance(s, Variable):
            return None
        reads = all_reads.get(getattr(s, "_target", s)._uid)
        if not reads:
            return None
        for tid, value in reads:
            leaf_tids.append(tid)
            values.append(value)
        sizes.append(len(reads))
    entries = tape.entries
    plan = _PLANS.get((structure.structure(entries, leaf_tids, (target._tid,), True), tuple(sizes)))
    if plan is None:
        return None
    tm = plan.template
    args = [values[i] for i in tm.leaves]
    args += [entries[i][3][p] for i, p in tm.consts]  # (TapeEntry.in_vals)
    # A tracer, a Pending or a numpy array has an aval of another type than the arrays `learn` saw: no match.
    if executables.avals(args) != plan.avals:
        return None
    apps = [entries[i][6] for i in tm.kept]  # (TapeEntry.app)
    # The plain path's lookup, LRU order included: after a clear or an eviction, a new Lowered without executables
    compiled = executables.CACHE.get(tm.program, plan.avals).executable(plan.kind, deferred.wanted(apps))
    if compiled is None:  # other deferred values wanted: the plain path compiles that executable
        return None
    fn, spans = compiled
    try:
        outs = fn(*args)
    except Exception as e:  # as Lowered.run: XLA's runtime errors as TF's
        if not errors.is_jax(e):
            raise
        raise errors.from_jax("vjp", e) from None
    if not spans:
        return outs
    if not checking.FLAG.on:  # (checked: the plain path compares them with the ops' own values first)
        for k, start, stop in spans:
            apps[k].set(outs[start:stop])
    return outs[:spans[0][1]]


def learn(problem: Problem, kind: Any, outs: Sequence[EagerTensor], fast: tuple | None) -> None:
    """After the plain path answered a gradient call: keeps its choice if the call is one `gradient` takes and
    it ran a compiled executable. In checking mode, `fast` (what `gradient` answered first) must equal `outs`."""
    if fast is not None:
        checking.compare("repeated gradient call (repeated.py)", fast, [o._value for o in outs], "gradient")
        return
    if CONTEXT.tapes or CONTEXT.trace is not None or any(kind[2]) or not problem.lowered.is_compiled(kind):
        return
    sl = problem.slice
    args = problem.leaf_vals + sl.const_vals
    if (len(problem.targets) != 1 or not isinstance(problem.targets[0], Tensor) or sl.perturbed
            or len(problem.connected) != len(problem.sources)
            or not all(isinstance(s, Variable) for s in problem.sources)
            or not all(type(v) is _ARRAY for v in args)):
        return
    key = structure.structure(*problem.trace)
    template = structure.template(key)
    if template is not None and template.program is sl.program:
        sizes = tuple(len(leaves) for leaves in problem.leaves)
        _PLANS[(key, sizes)] = Plan(template, executables.avals(args), kind)


def clear() -> None:
    _PLANS.clear()
