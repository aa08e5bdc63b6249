"""tf.GradientTape: record what touches watched values, then lower the trace to a JAX transformation.

`gradient` is `jax.vjp` of the replayed slice. The call is itself an op: on every other tape that follows its
inputs it is recorded as one entry whose implementation is the lowered VJP, so an outer tape differentiates
through it like any other op, and higher-order derivatives need no special case (DESIGN, data flow).
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from . import dispatch, errors, logs, lowering, tape as tape_lib
from .registry import OpDef
from .tensor import EagerTensor, Tensor
from .variable import Variable

_Flat = list[Any]


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on (`tf.UnconnectedGradients`)."""

    NONE = "none"
    ZERO = "zero"


def _flatten(nest: Any) -> tuple[_Flat, Any]:
    return jax.tree_util.tree_flatten(nest, is_leaf=lambda x: x is None)


def _is_float(value: Any) -> bool:
    return dispatch.is_differentiable(value._value.dtype)


class GradientTape:
    """Records operations for automatic differentiation (`tf.GradientTape`).

    Args:
      persistent: if False (the default) the tape frees its trace after the first `gradient` call and a second
        call raises RuntimeError; if True it can be asked any number of times.
      watch_accessed_variables: if True, trainable variables read while the tape is active are watched.

    >>> import tapejax as tf
    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as g:
    ...     g.watch(x)
    ...     y = x * x
    >>> print(g.gradient(y, x))
    tf.Tensor(6.0, shape=(), dtype=float32)
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._tape: tape_lib.Tape | None = tape_lib.Tape(persistent, watch_accessed_variables)
        self._recording = False
        self._watched: tuple[Variable, ...] = ()  # what a freed tape had watched (watched_variables())

    # -- recording -------------------------------------------------------------------------------------------

    def __enter__(self) -> GradientTape:
        if self._tape is None:  # a used non-persistent tape entered again starts afresh, as TF does
            self._tape = tape_lib.Tape(self._persistent, self._watch_accessed_variables)
        tape_lib.push(self._tape)
        self._recording = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            tape_lib.pop(self._tape)
            self._recording = False

    def _live_tape(self) -> tape_lib.Tape:
        if self._tape is None:
            raise RuntimeError(errors.NON_PERSISTENT_SECOND_CALL)
        return self._tape

    def watch(self, tensor: Any) -> None:
        """Follows `tensor` (a Tensor, a Variable, or a nest of them) so gradients with respect to it exist."""
        tape = self._live_tape()
        for t in _flatten(tensor)[0]:
            if isinstance(t, Variable):
                tape.watch_variable(getattr(t, "_target", t))
            elif isinstance(t, Tensor):
                if not _is_float(t):
                    logs.warning("The dtype of the watched tensor must be floating (e.g. tf.float32), got %r",
                                 t.dtype)
                tape.tracked.add(t._tid)
            else:
                raise ValueError(errors.WATCH_NON_TENSOR.format(type_name=type(t).__name__, value=t))

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stops recording: ops inside the block are not on this tape."""
        if not self._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        tape_lib.pop(self._tape)
        self._recording = False
        try:
            yield
        finally:
            tape_lib.push(self._tape)
            self._recording = True

    def reset(self) -> None:
        """Clears everything recorded so far; the tape keeps recording if it was."""
        self._live_tape().clear()

    def watched_variables(self) -> tuple[Variable, ...]:
        """The variables this tape watches, in the order it first watched them."""
        return tuple(self._tape.variables.values()) if self._tape is not None else self._watched

    # -- gradients -------------------------------------------------------------------------------------------

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """The gradient of `target` (summed over its elements, and over a nest of targets) w.r.t. `sources`.

        Lowered to `jax.vjp` of the slice of the trace between them. Returns the structure of `sources`, with
        None (or zeros, for `unconnected_gradients=tf.UnconnectedGradients.ZERO`) for unconnected sources.

        Raises:
          RuntimeError: on a second call to a non-persistent tape.
          LookupError: if the gradient must flow through an op that has no gradient (tf.random.shuffle).
        """
        unconnected = (unconnected_gradients if isinstance(unconnected_gradients, UnconnectedGradients)
                       else UnconnectedGradients(unconnected_gradients))
        tape = self._begin_differentiation("gradient")
        if target is None:
            raise TypeError(
                "Argument `target` should be a list or nested structure of Tensors, Variables or "
                "CompositeTensors to be differentiated, but received None."
            )
        flat_targets = _flatten(target)[0]
        flat_sources, source_tree = _flatten(sources)
        flat_cts = self._output_gradients(flat_targets, output_gradients)
        problem = _Problem(tape, flat_targets, flat_sources, "gradient")
        results = problem.vjp(flat_cts)
        self._end_differentiation()
        out = [_unconnected(s, r, unconnected) for s, r in zip(flat_sources, results)]
        return jax.tree_util.tree_unflatten(source_tree, out)

    # -- helpers shared by the differentiation methods ------------------------------------------------------

    def _begin_differentiation(self, method: str) -> tape_lib.Tape:
        tape = self._live_tape()
        if self._recording:
            if not self._persistent:
                tape_lib.pop(tape)  # TF: a non-persistent tape stops recording when asked for a gradient
                self._recording = False
            elif method == "gradient":
                logs.warning(errors.GRADIENT_IN_CONTEXT)
        return tape

    def _end_differentiation(self) -> None:
        if not self._persistent:
            self._watched = tuple(self._tape.variables.values())
            self._tape = None  # free the trace (DESIGN invariant 9)

    @staticmethod
    def _output_gradients(flat_targets: _Flat, output_gradients: Any) -> _Flat:
        if output_gradients is None:
            return [None] * len(flat_targets)
        flat = _flatten(output_gradients)[0]
        if len(flat) != len(flat_targets):
            raise ValueError(
                f"GradientTape.gradient got {len(flat)} output_gradients for {len(flat_targets)} targets; pass "
                "one per target, in the targets' structure (None for the default of ones)."
            )
        return flat


def _unconnected(source: Any, result: Any, mode: UnconnectedGradients) -> Any:
    if result is not None or mode is UnconnectedGradients.NONE:
        return result
    return EagerTensor(jnp.zeros(source.shape, source.dtype.as_numpy_dtype))


class _Problem:
    """The targets and sources of one differentiation call, sliced out of a tape's trace."""

    def __init__(self, tape: tape_lib.Tape, targets: _Flat, sources: _Flat, method: str):
        self.tape = tape
        self.targets = targets
        self.sources = sources
        target_tids = []
        for t in targets:
            if isinstance(t, Variable):
                target_tids.append(-1)  # a variable's value is not on the tape; see _variable_targets
            elif isinstance(t, Tensor):
                if not _is_float(t):
                    logs.warning(
                        "The dtype of the target tensor must be floating (e.g. tf.float32) when calling "
                        "GradientTape.%s, got %r", method, t.dtype)
                    target_tids.append(-1)
                else:
                    target_tids.append(t._tid)
            else:
                raise TypeError(
                    f"GradientTape.{method} targets must be Tensors or Variables (or nests of them), got "
                    f"{type(t).__name__}: {t!r}. Compute the target with tapejax ops inside the tape."
                )
        # Each source is a group of leaves: a tensor is one leaf, a variable one leaf per read.
        self.groups: list[list[int]] = []
        leaf_values: dict[int, Any] = {}
        for s in sources:
            if isinstance(s, Variable):
                s = getattr(s, "_target", s)
                reads = tape.reads.get(s._uid, [])
                if reads and not _is_float(s):
                    reads = self._warn_source(s, method)
                self.groups.append([tid for tid, _ in reads])
                leaf_values.update(reads)
            elif isinstance(s, Tensor):
                if s._tid in tape.tracked and not _is_float(s):
                    self.groups.append(self._warn_source(s, method))
                    continue
                self.groups.append([s._tid] if s._tid in tape.tracked else [])
                leaf_values[s._tid] = s._value
            else:
                raise TypeError(errors.SOURCE_NON_TENSOR.format(type_name=type(s).__name__, value=s))
        leaf_tids = [t for g in self.groups for t in g]
        self.slice = lowering.slice_trace(tape.entries, leaf_tids, target_tids)
        slot = {t: i for i, t in enumerate(self.slice.leaf_tids)}
        self.slots = tuple(tuple(slot[t] for t in g if t in slot) for g in self.groups)
        self.leaf_vals = tuple(
            jnp.zeros_like(leaf_values[t]) if t in self.slice.perturbed else leaf_values[t]
            for t in self.slice.leaf_tids
        )

    @staticmethod
    def _warn_source(source: Any, method: str) -> list:
        logs.warning(
            "The dtype of the source tensor must be floating (e.g. tf.float32) when calling GradientTape.%s, "
            "got %r", method, source.dtype)
        return []

    def vjp(self, flat_cts: _Flat) -> list[Any]:
        """Per source: the VJP of the connected targets with cotangents `flat_cts` (None means ones)."""
        sl = self.slice
        given = tuple(flat_cts[i] is not None for i in sl.connected_targets)
        ct_tensors = []
        for i in sl.connected_targets:
            t, ct = self.targets[i], flat_cts[i]
            if ct is not None:
                ct_tensors.append(ct if isinstance(ct, Tensor | Variable) else
                                  EagerTensor(jnp.asarray(ct, t._value.dtype)))
        results: list[Any] = [None] * len(self.groups)
        connected = [k for k, s in enumerate(self.slots) if s]
        if connected and sl.connected_targets:
            groups = tuple(self.slots[k] for k in connected)
            ct_vals = tuple(_value(c) for c in ct_tensors)
            lowered = lowering.CACHE.get(sl.program, lowering.avals(self.leaf_vals + sl.const_vals + ct_vals))
            build = _vjp_builder(groups, given)
            kind = ("vjp", groups, given)
            outs = lowered.run(kind, build, self.leaf_vals, sl.const_vals, ct_vals)
            tensors = tuple(EagerTensor(o) for o in outs)
            self._record(lowered, kind, build, ct_tensors, tensors)
            for k, t in zip(connected, tensors):
                results[k] = t
        self._variable_targets(results, flat_cts)
        return results

    def _record(self, lowered: lowering.Lowered, kind: Any, build: Callable, cts: list, outs: tuple) -> None:
        """Records the differentiation as one op on the tapes that follow its inputs (higher order)."""
        tapes = tape_lib.STACK.tapes
        if not tapes:
            return
        sl = self.slice
        in_tids = (*sl.leaf_tids, *sl.const_tids, *(c._tid for c in cts))
        in_vals = (*self.leaf_vals, *sl.const_vals, *(_value(c) for c in cts))
        opdef = _lowered_opdef(lowered, kind, build, len(sl.leaf_tids), len(sl.const_tids))
        dispatch.record(tapes, opdef, {}, in_tids, in_vals, outs, True)

    def _variable_targets(self, results: list[Any], flat_cts: _Flat) -> None:
        """A variable given as a target is its own source: d v / d v is the identity (TF gives ones)."""
        for i, t in enumerate(self.targets):
            if not isinstance(t, Variable):
                continue
            for k, s in enumerate(self.sources):
                if isinstance(s, Variable) and s._uid == t._uid:
                    ct = flat_cts[i]
                    add = jnp.ones(t.shape, t._value.dtype) if ct is None else _value(ct)
                    results[k] = EagerTensor(add if results[k] is None else results[k]._value + add)


def _value(x: Any) -> Any:
    return x._value


def _vjp_builder(groups: tuple[tuple[int, ...], ...], given: tuple[bool, ...]) -> Callable[[Callable], Callable]:
    """Builds `(leaves, consts, cts) -> per-group gradient` from a replay: jax.vjp, then sums over reads.

    `given[i]` says whether target i's cotangent is passed in; the others are ones (TF's default), made inside
    the function so that no array of ones crosses to the device. TF's complex convention is the conjugate of
    JAX's: TF returns conj(vjp(conj(ct))).
    """

    def build(replay: Callable) -> Callable:
        def vjp(leaves: Sequence[Any], consts: Sequence[Any], cts: Sequence[Any]) -> tuple[Any, ...]:
            outs, pullback = jax.vjp(lambda *xs: replay(xs, consts), *leaves)
            supplied = iter(cts)
            seeds = [jnp.conj(next(supplied)) if g else jnp.ones_like(o) for g, o in zip(given, outs)]
            leaf_cts = pullback(seeds)
            return tuple(jnp.conj(_sum(leaf_cts[i] for i in g)) for g in groups)

        return vjp

    return build


def _sum(values: Any) -> Any:
    it = iter(values)
    total = next(it)
    for v in it:
        total = total + v
    return total


def _lowered_opdef(lowered: lowering.Lowered, kind: Any, build: Callable, n_leaves: int, n_consts: int) -> OpDef:
    """The OpDef under which a differentiation call is recorded: same structure, same OpDef (cache-stable)."""
    key = ("opdef", kind)
    opdef = lowered._transforms.get(key)
    if opdef is None:
        fn = lowered.transform(kind, build)

        def impl(*flat: Any) -> tuple[Any, ...]:
            return fn(flat[:n_leaves], flat[n_leaves:n_leaves + n_consts], flat[n_leaves + n_consts:])

        opdef = lowered._transforms[key] = OpDef(f"GradientTape.{kind[0]}", impl, op_type="Gradient")
    return opdef
