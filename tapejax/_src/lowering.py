"""Lowering: the slice of a trace that links sources to targets, as a pure function of jax arrays.

`slice_trace` keeps only what connects (DESIGN invariant 4): entries that depend on no source become captured
constants (their recorded input values), entries that lead to no target are dropped. The result is a `Program`,
a hashable description of the replay (op identities, static params, wiring), and `replay_fn` is the one
interpreter of programs: it turns a tape slice, a captured branch or loop body, or a compiled call's steps into the
pure function that JAX transforms (executables.py caches those transformations by structure).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import deferred, errors
from .convert import literal
from .tape import TapeEntry


class Step(NamedTuple):
    """One op of a program: `env += impl(*env[ins], **params)`; then `env[slot] += env[leaf]` for each add."""

    op: Any  # OpDef; typed loosely to keep lowering free of the registry import
    params: tuple[tuple[str, Any], ...]
    ins: tuple[int, ...]
    multiple: bool
    n_out: int
    adds: tuple[tuple[int, int], ...]


_new_step = tuple.__new__


class Program(NamedTuple):
    """A replayable slice of a trace. Slots: leaves, constants passed in, literals baked in (`baked`: their
    dtypes and values), then step outputs in order."""

    steps: tuple[Step, ...]
    n_leaves: int
    n_consts: int
    outputs: tuple[int, ...]
    baked: tuple[tuple[str, Any], ...] = ()

    @property
    def first_output(self) -> int:
        return self.n_leaves + self.n_consts + len(self.baked)

    @property
    def forward_ok(self) -> bool:
        """Whether forward mode gives TF's answer: no step has a custom gradient that forward mode would ignore."""
        return all(s.op.forward is None for s in self.steps)

    @property
    def eager_backward(self) -> bool:
        """Whether a step has an eager reverse rule (OpDef.backward: a custom gradient's grad_fn)."""
        return any(s.op.backward is not None for s in self.steps)


class Slice(NamedTuple):
    program: Program
    leaf_tids: tuple[int, ...]  # the sources that connect, in slot order
    perturbed: frozenset[int]  # leaves produced inside the slice: their slot holds an additive zero
    const_tids: tuple[int, ...]
    const_vals: tuple[Any, ...]
    connected_targets: tuple[int, ...]  # positions (in the targets given) that depend on a leaf
    entries: tuple[TapeEntry, ...]  # the entry each step replays

    @property
    def step_inputs(self) -> tuple[tuple[Any, ...], ...]:
        """Each step's recorded input values (residuals for sweep.py)."""
        return tuple([e.in_vals for e in self.entries])

    @property
    def apps(self) -> tuple[deferred.Application | None, ...]:
        """Each step's deferred application, if it was deferred."""
        return tuple([e.app for e in self.entries])


def slice_trace(entries: Sequence[TapeEntry], leaf_tids: Sequence[int], target_tids: Sequence[int],
                reverse: bool = True, bake: bool = True) -> Slice:
    """The part of `entries` through which `target_tids` depend on `leaf_tids`, as a Program.

    With `reverse` (every differentiation but forward mode), an op without a gradient on the path raises TF's
    LookupError. Without `bake`, literals are passed in as constants like any other value (for a call that
    another tape differentiates with respect to one of them: problem.py).

    This runs on every differentiation call, so it is written for speed: set operations in C, no generators.
    """
    leaf_set = set(leaf_tids)
    depends = set(leaf_set)
    forward: list[TapeEntry] = []
    stopped = False  # whether an entry of `forward` has inputs TF has no gradient for (OpDef.no_gradient_args)
    for e in entries:
        if not depends.isdisjoint(e.in_tids):
            if e.op.no_gradient_args:  # only such entries pay for the finer test
                if depends.isdisjoint(_gradient_inputs(e)):
                    continue  # connected only through inputs without a gradient: TF gives None
                stopped = True
            forward.append(e)
            depends.update(e.out_tids)
    connected_targets = tuple([i for i, t in enumerate(target_tids) if t in depends])
    needed = {target_tids[i] for i in connected_targets}
    kept: list[TapeEntry] = []
    perturbed_found = False
    for e in reversed(forward):
        if not needed.isdisjoint(e.out_tids):
            kept.append(e)
            # ids that depend on no leaf are harmless here: nothing produces them
            needed.update(_gradient_inputs(e) if stopped and e.op.no_gradient_args else e.in_tids)
            if not perturbed_found and not leaf_set.isdisjoint(e.out_tids):
                perturbed_found = True
    kept.reverse()

    used_leaves = [t for t in (dict.fromkeys(leaf_tids) if len(leaf_set) < len(leaf_tids) else leaf_tids)
                   if t in needed]
    slot = dict(zip(used_leaves, range(len(used_leaves))))
    perturbed = frozenset()
    if perturbed_found:  # a source produced inside the slice (see Step.adds)
        perturbed = frozenset(leaf_set.intersection([t for e in kept for t in e.out_tids]))
    if stopped:
        # An input without a gradient that no gradient path needs is captured at its recorded value, as if it
        # depended on no source (it may, as zeta(2 * w, q) does on w).
        depends = depends - {t for e in kept for t in _stopped_inputs(e)}.difference(needed)
    const_tids: list[int] = []
    const_vals: list[Any] = []
    baked: dict[int, tuple[str, Any]] = {}  # tid -> Python literal, baked into the program by value
    for e in kept:
        for t, v in zip(e.in_tids, e.in_vals):
            if t and t not in depends and t not in slot and t not in baked:
                lit = literal(v) if bake else None
                if lit is not None:
                    baked[t] = lit
                    continue
                slot[t] = len(used_leaves) + len(const_tids)
                const_tids.append(t)
                const_vals.append(v)
    base = len(used_leaves) + len(const_tids)
    slot.update(zip(baked, range(base, base + len(baked))))
    slot[0] = -1  # an absent optional input (None)
    steps: list[Step] = []
    n_slots = base + len(baked)
    lookup = slot.__getitem__
    for e in kept:
        if reverse and not e.op.has_gradient:
            raise LookupError(e.op.no_gradient or errors.NO_GRADIENT_REGISTERED.format(op_type=e.op.op_type))
        ins = tuple(map(lookup, e.in_tids))
        adds = ()
        if perturbed and not perturbed.isdisjoint(e.out_tids):
            adds = tuple([(n_slots + k, slot[t]) for k, t in enumerate(e.out_tids) if t in perturbed])
        n_out = len(e.out_tids)
        if n_out == 1:
            slot[e.out_tids[0]] = n_slots
        else:
            slot.update(zip(e.out_tids, range(n_slots, n_slots + n_out)))
        # tuple.__new__ skips the Python-level NamedTuple constructor (this runs per entry per call).
        steps.append(_new_step(Step, (e.op, e.params, ins, e.multiple_results, n_out, adds)))
        n_slots += n_out
    outputs = tuple([slot[target_tids[i]] for i in connected_targets])
    program = Program(tuple(steps), len(used_leaves), len(const_tids), outputs, tuple(baked.values()))
    return Slice(program, tuple(used_leaves), perturbed, tuple(const_tids), tuple(const_vals), connected_targets,
                 tuple(kept))


def _gradient_inputs(e: TapeEntry) -> list[int]:
    """The input ids of `e` that TF's gradient of its op reaches (all but OpDef.no_gradient_args)."""
    skip = e.op.no_gradient_args
    return [t for i, t in enumerate(e.in_tids) if i not in skip]


def _stopped_inputs(e: TapeEntry) -> list[int]:
    """The input ids of `e` that TF's gradient of its op returns None for."""
    skip = e.op.no_gradient_args
    return [t for i, t in enumerate(e.in_tids) if i in skip]


def replay_fn(program: Program, forward: bool = False,
              outputs: Sequence[int] | None = None) -> Callable[[Sequence[Any], Sequence[Any]], list[Any]]:
    """The pure function `(leaves, consts) -> targets` that re-runs the program's ops.

    With `forward`, ops that have a forward-mode implementation (custom gradients) use it: TF's forward mode
    differentiates the computation itself and ignores custom gradients. `outputs` are the slots it returns
    instead of the targets' (the values of deferred ops).
    """
    steps = [((s.op.forward if forward and s.op.forward is not None else s.op.impl), dict(s.params), s.ins,
              s.multiple, s.adds) for s in program.steps]
    outputs = program.outputs if outputs is None else outputs
    literals = [np.asarray(value, dtype=np.dtype(dtype)) for dtype, value in program.baked]

    def replay(leaves: Sequence[Any], consts: Sequence[Any]) -> list[Any]:
        env = [*leaves, *consts, *literals]
        for impl, params, ins, multiple, adds in steps:
            out = impl(*[env[i] if i >= 0 else None for i in ins], **params)
            if multiple:
                env.extend(out)
            else:
                env.append(out)
            for s, leaf in adds:
                env[s] = env[s] + leaf_cast(env[leaf], env[s])
        return [env[i] for i in outputs]

    return replay


def leaf_cast(perturbation: Any, value: Any) -> Any:
    return perturbation.astype(value.dtype) if perturbation.dtype != value.dtype else perturbation
