"""One differentiation call: its targets and sources, sliced out of a tape's trace, run as a JAX transformation.

Every tape method (gradient, jacobian, batch_jacobian, hessian, hvp, and ForwardAccumulator.jvp) is a
`Problem.run` of a transformation from transforms.py. The call is itself an op: it is recorded as one entry on
every tape that follows its inputs, with the lowered transformation as its implementation, so an outer tape
differentiates through it like any other op (DESIGN, data flow).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
from jax._src import config as jax_config  # constant folding's switch: see Problem.run
from jax.extend import core as jax_core
from jax.interpreters import partial_eval as pe

from .context import CONTEXT
from . import checking, deferred, dispatch, errors, executables, logs, lowering, structure, sweep, tape as tape_lib
from .registry import OpDef
from .sparse_gradients import Leaf
from .tensor import EagerTensor, Tensor
from .variable import Variable


def abstract(value: Tensor | Variable) -> Any:
    """The value's array, or its Pending if deferred: its shape and dtype, without computing anything."""
    return value._value if isinstance(value, Variable) else deferred.raw(value)


def is_float(value: Tensor | Variable) -> bool:
    return dispatch.is_differentiable(abstract(value).dtype)


class Problem:
    """Targets and sources of one call: each source is a group of leaves (a variable has one per read).

    Attributes:
      leaves: per source, the tensor ids of its leaves on the tape (a variable's reads).
      trace: what the slice is cut from: `structure.slice_trace`'s arguments.
      groups: per source, the slots of its leaves in the slice (empty: the source is unconnected).
      connected: the positions of the sources with at least one connected leaf.
      lowered: the Lowered program `run` ran.
    """

    def __init__(self, tape: tape_lib.Tape, targets: Sequence[Any], sources: Sequence[Any], method: str):
        self.targets = list(targets)
        self.sources = list(sources)
        target_tids = [self._target_tid(t, method) for t in self.targets]
        leaves: list[list[int]] = []
        leaf_values: dict[int, Any] = {}
        for s in self.sources:
            if isinstance(s, Variable):
                s = getattr(s, "_target", s)
                reads = tape.reads.get(s._uid, [])
                if reads and not is_float(s):
                    reads = self._warn_source(s, method)
                leaves.append([tid for tid, _ in reads])
                leaf_values.update(reads)
            elif isinstance(s, Leaf):  # a gather's output (sparse_gradients.py)
                leaves.append([s.tid] if s.tid in tape.tracked else [])
                leaf_values[s.tid] = s.value
            elif isinstance(s, Tensor):
                if s._tid in tape.tracked and not is_float(s):
                    leaves.append(self._warn_source(s, method))
                    continue
                leaves.append([s._tid] if s._tid in tape.tracked else [])
                leaf_values[s._tid] = s._value
            else:
                raise TypeError(errors.SOURCE_NON_TENSOR.format(type_name=type(s).__name__, value=s))
        self.leaves = leaves
        self.trace = (tape.entries, [t for g in leaves for t in g], target_tids, method != "jvp")
        self.slice = structure.slice_trace(*self.trace)
        slot = {t: i for i, t in enumerate(self.slice.leaf_tids)}
        self.groups = [tuple(slot[t] for t in g if t in slot) for g in leaves]
        self.connected = [k for k, g in enumerate(self.groups) if g]
        self.unreached: list[int] = []  # positions in `connected` that a custom gradient's None cut off (sweep)
        self.leaf_vals = tuple(
            jnp.zeros_like(leaf_values[t]) if t in self.slice.perturbed else leaf_values[t]
            for t in self.slice.leaf_tids
        )

    @staticmethod
    def _target_tid(target: Any, method: str) -> int:
        if isinstance(target, Variable):
            return -1  # a variable's value is not on the tape (gradient() handles v w.r.t. v)
        if not isinstance(target, Tensor):
            raise TypeError(
                f"GradientTape.{method} targets must be Tensors or Variables (or nests of them), got "
                f"{type(target).__name__}: {target!r}. Compute the target with tapejax ops inside the tape."
            )
        if not is_float(target):
            logs.warning("The dtype of the target tensor must be floating (e.g. tf.float32) when calling "
                         "GradientTape.%s, got %r", method, target.dtype)
            return -1
        return target._tid

    @staticmethod
    def _warn_source(source: Any, method: str) -> list:
        logs.warning("The dtype of the source tensor must be floating (e.g. tf.float32) when calling "
                     "GradientTape.%s, got %r", method, source.dtype)
        return []

    @property
    def connected_groups(self) -> tuple[tuple[int, ...], ...]:
        return tuple(self.groups[k] for k in self.connected)

    @property
    def is_connected(self) -> bool:
        return bool(self.connected) and bool(self.slice.connected_targets)

    def run(self, kind: Any, build: Callable[[Callable], Callable], extras: Sequence[Tensor] = (),
            eager: Callable[[], tuple] | None = None, record_on: Sequence[tape_lib.Tape] | None = None) -> tuple:
        """Runs `build(replay)(leaves, consts, extras)` (cached by structure), recorded on the other tapes.

        `eager()`, if given, computes the same outputs for a structure seen for the first time (sweep.py).
        `record_on`, if given, replaces the recording tapes as the ones that may record the call (forward.py:
        TF's accumulators are seen only by the tapes outside them).
        """
        tapes = CONTEXT.tapes if record_on is None else list(record_on)
        if tapes and self._bakes_tracked(tapes):
            self.slice = lowering.slice_trace(*self.trace, bake=False)
        sl = self.slice
        extra_vals = tuple(e._value for e in extras)
        consts = sl.const_vals
        if any(type(c) is deferred.Pending for c in consts):  # deferred, but not by this tape's sources
            consts = tuple(map(deferred.resolve, consts))
        lowered = self.lowered = executables.CACHE.get(sl.program,
                                                       executables.avals(self.leaf_vals + consts + extra_vals))
        if eager is not None and kind[0] == "vjp" and _reuses_forward(sl, self.leaf_vals):
            # the sweep, through the VJPs the traced loops kept (capture.run_recorded); staged whole, as the replay
            # is (executables.Lowered._run): under the trace's constant folding, the ops of the ones seed's
            # pullback would each run eagerly, one XLA compile per op and shape
            with jax_config.eager_constant_folding(False):
                outs = eager()
        else:
            outs = lowered.run(kind, build, (self.leaf_vals, consts, extra_vals), eager, sl.apps)
        tensors = tuple(EagerTensor(o) for o in outs)
        if tapes:
            in_tids = (*sl.leaf_tids, *sl.const_tids, *(e._tid for e in extras))
            in_vals = (*self.leaf_vals, *consts, *extra_vals)
            opdef = _lowered_opdef(lowered, kind, build, len(sl.leaf_tids), len(sl.const_tids), in_vals)
            dispatch.record_call(opdef, in_tids, in_vals, tensors, tapes)
        return tensors

    def _bakes_tracked(self, tapes: Sequence[tape_lib.Tape]) -> bool:
        """Whether the program bakes in a literal that a recording tape tracks: a scalar tensor made from a Python
        number (`tf.constant(3.0)`) holds the cached literal array, but another tape may watch it, and then it
        must be an input of the recorded call for that tape to differentiate through it."""
        sl = self.slice
        if not sl.program.baked:
            return False
        known = set(sl.leaf_tids).union(sl.const_tids)
        for e in sl.entries:
            known.update(e.out_tids)
        baked = {t for e in sl.entries for t in e.in_tids if t and t not in known}
        return any(not t.tracked.isdisjoint(baked) for t in tapes)

    def sweep(self, seeds: Sequence[Any], batched: bool = False) -> tuple:
        """Eager reverse accumulation (sweep.py) for the connected sources, TF's complex convention applied."""
        seeds = [jnp.conj(s) for s in seeds]
        cts = sweep.sweep(self.slice, self.leaf_vals, seeds, self.connected_groups, batched, self.unreached)
        return tuple(jnp.conj(c) for c in cts)

    def per_source(self, outs: Sequence[Any]) -> list[Any]:
        """Spreads one output per connected source back over all sources (None where unconnected, or where the
        eager sweep found every path cut by a custom gradient's None)."""
        results: list[Any] = [None] * len(self.sources)
        for i, (k, out) in enumerate(zip(self.connected, outs)):
            results[k] = None if i in self.unreached else out
        return results


def _reuses_forward(sl: lowering.Slice, leaf_vals: Sequence[Any]) -> bool:
    """Whether a traced gradient should be the sweep rather than `jax.vjp` of the replay: a loop in the slice kept
    the VJP its forward pass was linearized with, and the replay would run that loop's forward pass again (XLA does
    not merge two `while` loops). Only inside a trace (the values are tracers); eagerly, no entry keeps one."""
    if not leaf_vals or not isinstance(leaf_vals[0], jax.core.Tracer):
        return False
    return any(e.pullback is not None for e in sl.entries)


def _lowered_opdef(lowered: executables.Lowered, kind: Any, build: Callable, n_leaves: int, n_consts: int,
                   in_vals: Sequence[Any]) -> OpDef:
    """The OpDef under which a differentiation call is recorded: same structure, same OpDef (cache-stable).

    Its implementation evaluates the call's jaxpr, traced once and pruned of dead code (the forward values the
    derivative does not use): an outer tape then differentiates a program the size of this call's derivative.
    Re-tracing the transformation at every level instead would trace each inner level again inside the next,
    and k nested tapes would cost 2^k (as nested `jax.grad` does) where TF's cost is linear in k.
    """

    def make() -> OpDef:
        fn = lowered.transform(kind, build)

        def traced(*flat: Any) -> tuple[Any, ...]:
            return tuple(fn(flat[:n_leaves], flat[n_leaves:n_leaves + n_consts], flat[n_leaves + n_consts:]))

        closed = jax.make_jaxpr(traced)(*[jax.ShapeDtypeStruct(jnp.shape(v), v.dtype) for v in in_vals])
        jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars), instantiate=True)
        impl = jax_core.jaxpr_as_fun(jax_core.ClosedJaxpr(jaxpr, closed.consts))
        if checking.FLAG.on and not any(isinstance(v, jax.core.Tracer) for v in in_vals):
            checking.compare("recorded gradient call (problem.py)", impl(*in_vals), traced(*in_vals), kind[0])
        return OpDef(f"GradientTape.{kind[0]}", lambda *flat: tuple(impl(*flat)), op_type="Gradient", jit=False)

    return lowered.memo(("opdef", kind), make)
