"""Lowering: the slice of a trace that links sources to targets, as a pure function of jax arrays.

`slice_trace` keeps only what connects (DESIGN invariant 4): entries that depend on no source become captured
constants (their recorded input values), entries that lead to no target are dropped. The result is a `Program`,
a hashable description of the replay (op identities, static params, wiring); `Lowered` turns it into a pure
function and caches JAX transformations of it by structure (invariant 5): a structure seen once runs eagerly,
without compiling, and a structure that repeats runs one cached XLA executable.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
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
                reverse: bool = True) -> Slice:
    """The part of `entries` through which `target_tids` depend on `leaf_tids`, as a Program.

    With `reverse` (every differentiation but forward mode), an op without a gradient on the path raises TF's
    LookupError.

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
                lit = literal(v)
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


class Lowered:
    """A program's replay function and its JAX transformations, compiled once the structure repeats."""

    __slots__ = ("program", "replay", "forward_replay", "_transforms", "_compiled", "_memo", "_always_eager")

    def __init__(self, program: Program):
        self.program = program
        self.replay = replay_fn(program)
        self.forward_replay = replay_fn(program, forward=True) if not program.forward_ok else self.replay
        self._transforms: dict[Any, Callable[..., Any]] = {}
        # kind -> {steps whose values it returns: jitted fn}; None once run eagerly
        self._compiled: dict[Any, dict[tuple[int, ...], Callable[..., Any]] | None] = {}
        self._memo: dict[Any, Any] = {}
        # TF runs a custom gradient's grad_fn eagerly, on concrete values (it may print, branch on values, call
        # numpy, return None): such a program is never compiled when it runs eagerly, only traced inline.
        self._always_eager = program.eager_backward

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """A value derived from this structure (e.g. the OpDef a call is recorded under), made once."""
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = make()
        return value

    def transform(self, kind: Any, build: Callable[[Callable], Callable[..., Any]]) -> Callable[..., Any]:
        """The uncompiled transformation `build(replay)`, memoized under `kind` ("jvp" kinds use the forward
        replay)."""
        fn = self._transforms.get(kind)
        if fn is None:
            fn = self._transforms[kind] = build(self.forward_replay if kind[0] == "jvp" else self.replay)
        return fn

    def run(self, kind: Any, build: Callable[[Callable], Callable[..., Any]], args: tuple,
            eager: Callable[[], Any] | None = None, apps: Sequence[deferred.Application | None] = ()) -> Any:
        """Runs a transformation: through one cached `jax.jit` executable once the structure repeats.

        The first time, `eager()` computes the answer without a structure-specific executable (sweep.py: op by
        op, each op's VJP an executable shared by every structure that uses the op). Without `eager`, the
        transformation compiles at once: evaluating a vmapped or nested transformation op by op would compile
        more small executables than the one jit does (measured in docs/design.md). A program with a step that
        has an eager rule (OpDef.backward: a custom gradient) takes `eager()` every time.

        `apps` are the steps' deferred applications (deferred.py). A compiled run also returns the values of
        those whose tensors are alive and fills them in: forward pass and derivative in one dispatch. Any other
        run computes them op by op first.
        """
        leaves, consts, extras = args
        flat = (*leaves, *consts, *extras)
        if any(isinstance(x, jax.core.Tracer) for x in flat):
            # inside an outer jax trace (tf.function): inline, the outer jit compiles it
            deferred.compute_all(apps)
            return self.transform(kind, build)(leaves, consts, extras)
        if eager is not None and (kind not in self._compiled or self._always_eager):
            self._compiled[kind] = None
            deferred.compute_all(apps)
            return eager()
        wanted = deferred.wanted(apps)
        executables = self._compiled.get(kind)
        if executables is None:
            executables = self._compiled[kind] = {}
        compiled = executables.get(wanted)
        if compiled is None:
            compiled = executables[wanted] = self._jit(kind, build, len(leaves), len(consts), wanted)
        fn, spans = compiled
        outs = fn(*flat)
        if not wanted:
            return outs
        for k, start, stop in spans:
            apps[k].set(outs[start:stop])
        return outs[:spans[0][1]]  # the transformation's own outputs: those before the first step value

    def _jit(self, kind: Any, build: Callable, n_leaves: int, n_consts: int,
             wanted: tuple[int, ...]) -> tuple[Callable, list[tuple[int, int, int | None]]]:
        """`build(replay)` jitted over flat arrays, returning also the values of the steps in `wanted`, last; with,
        per wanted step, the span of its values (counted from the end)."""
        fn = self.transform(kind, build)
        values = None
        spans: list[tuple[int, int, int | None]] = []
        if wanted:
            first = [self.program.first_output]
            for s in self.program.steps:
                first.append(first[-1] + s.n_out)
            slots = [first[k] + i for k in wanted for i in range(self.program.steps[k].n_out)]
            values = replay_fn(self.program, outputs=slots)
            start = -len(slots)  # the step values come last: spans count from the end
            for k in wanted:
                stop = start + self.program.steps[k].n_out
                spans.append((k, start, stop or None))
                start = stop

        # Flat positional arrays: the cheapest call through JAX's C++ dispatch path.
        def flat_fn(*xs: Any) -> tuple[Any, ...]:
            leaves, consts = xs[:n_leaves], xs[n_leaves:n_leaves + n_consts]
            outs = fn(leaves, consts, xs[n_leaves + n_consts:])
            # The forward pass again, for the step values: XLA's CSE merges it with the one inside `fn`.
            return (*outs, *values(leaves, consts)) if values is not None else outs

        return jax.jit(flat_fn), spans

    def is_compiled(self, kind: Any) -> bool:
        return bool(self._compiled.get(kind))


class Cache:
    """A bounded LRU map from trace structure (program + input avals) to its Lowered function."""

    def __init__(self, maxsize: int = 512):
        self.maxsize = maxsize
        self._items: collections.OrderedDict[Any, Lowered] = collections.OrderedDict()

    def get(self, program: Program, avals: Any) -> Lowered:
        key = (program, avals)
        lowered = self._items.get(key)
        if lowered is None:
            lowered = self._items[key] = Lowered(program)
            if len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(key)
        return lowered

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


CACHE = Cache()


def avals(values: Sequence[Any]) -> tuple[Any, ...]:
    """The abstract values (shapes, dtypes) of a program's inputs: part of its structure key."""
    return tuple(map(deferred.aval, values))
