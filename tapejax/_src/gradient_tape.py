"""tf.GradientTape: record what touches watched values, then lower the trace to a JAX transformation.

`gradient` is `jax.vjp` of the replayed slice. The call is itself an op: on every other tape that follows its
inputs it is recorded as one entry whose implementation is the lowered VJP, so an outer tape differentiates
through it like any other op, and higher-order derivatives need no special case (DESIGN, data flow).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp

from . import (checking, chunks, debugging, errors, logs, repeated, sparse_gradients, tape as tape_lib, tape_arguments,
               transforms)
from .problem import Problem, abstract, is_float
from .tape_arguments import UnconnectedGradients, unconnected_mode as _as_mode
from .tensor import EagerTensor, Tensor
from .variable import Variable

_Flat = list[Any]


_LEAF = jax.tree_util.tree_structure(0)


def _flatten(nest: Any) -> tuple[_Flat, Any]:
    """tf.nest-style flattening (None is a leaf), with a fast path for the common single tensor."""
    if isinstance(nest, Tensor | Variable):
        return [nest], _LEAF
    return jax.tree_util.tree_flatten(nest, is_leaf=lambda x: x is None or isinstance(x, Tensor | Variable))


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
        self._entered = False  # TF tells a tape never entered (RuntimeError) from one exited (ValueError)
        self._watched: tuple[Variable, ...] = ()  # what a freed tape had watched (watched_variables())
        self._none_reasons: dict[int, str] = {}  # id(source) -> why its gradient was None (debugging.py)

    # -- recording -------------------------------------------------------------------------------------------

    def __enter__(self) -> GradientTape:
        if self._recording:  # TF's check: a tape is on the recording stack at most once
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active "
                             "tape.")
        if self._tape is None:  # a used non-persistent tape entered again starts afresh, as TF does
            self._tape = tape_lib.Tape(self._persistent, self._watch_accessed_variables)
        tape_lib.push(self._tape)
        self._recording = self._entered = True
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
                if not is_float(t):
                    logs.warning("The dtype of the watched tensor must be floating (e.g. tf.float32), got %r",
                                 t.dtype)
                tape.tracked.add(t._tid)
            else:
                raise ValueError(errors.WATCH_NON_TENSOR.format(type_name=type(t).__name__, value=t))

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stops recording: ops inside the block are not on this tape."""
        if self._tape is None or not self._entered:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._tape.history.append(("stop_recording",))
        tape_lib.pop(self._tape)
        self._recording = False
        try:
            yield
        finally:
            tape_lib.push(self._tape)
            self._recording = True

    def reset(self) -> None:
        """Clears everything recorded so far, inside the tape's block (outside it, ValueError as in TF)."""
        if not self._recording:
            raise ValueError("Tape is not recording.")
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

        `output_gradients` is read as TF reads it: flattened like `tf.nest.flatten` (so a Python list of numbers
        is several values, not one tensor), value i seeding target i (extra values ignored, with a warning; missing
        ones are ones), each broadcast to its target's shape.

        Differences from TensorFlow: a seed broadcasts to its target's shape whatever op made the target (TF
        broadcasts only through elementwise gradients, and raises InvalidArgumentError through e.g. a reshape);
        for a target that is itself the source, TF returns the seed unbroadcast.

        Raises:
          RuntimeError: on a second call to a non-persistent tape.
          ValueError: for a None in `output_gradients` (TF 2.21 cannot convert it).
          InvalidArgumentError: for a seed whose dtype is not its target's, or whose shape does not broadcast.
          LookupError: if the gradient must flow through an op that has no gradient (tf.random.shuffle).
        """
        mode = _as_mode(unconnected_gradients)
        tape = self._begin_differentiation("gradient")
        if target is None:
            raise TypeError("Argument `target` should be a list or nested structure of Tensors, Variables or "
                            "CompositeTensors to be differentiated, but received None.")
        flat_targets = _flatten(target)[0]
        flat_sources, source_tree = _flatten(sources)
        fast = repeated.gradient(tape, flat_targets, flat_sources) if output_gradients is None else None
        if fast is not None and not checking.FLAG.on:  # a training step's call, repeated (repeated.py)
            self._end_differentiation()
            out = [EagerTensor(g) for g in fast]
            return out[0] if source_tree is _LEAF else jax.tree_util.tree_unflatten(source_tree, out)
        flat_cts = tape_arguments.seeds(flat_targets, output_gradients)
        rows = sparse_gradients.plan(tape, flat_targets, flat_sources)  # sources that only gathers read
        asked = sparse_gradients.expand(flat_sources, rows) if rows else flat_sources
        problem = Problem(tape, flat_targets, asked, "gradient")
        results: list[Any] = [None] * len(asked)
        if problem.is_connected:
            connected_targets = problem.slice.connected_targets
            for i in connected_targets:
                if flat_cts[i] is not None:
                    flat_cts[i] = tape_arguments.checked_seed(i, abstract(flat_targets[i]), flat_cts[i])
            given = tuple(flat_cts[i] is not None for i in connected_targets)
            cts = [flat_cts[i] for i in connected_targets if flat_cts[i] is not None]
            kind = ("vjp", problem.connected_groups, given)
            def eager() -> tuple:
                # the targets' shapes and dtypes only: a seed does not need a deferred target's value
                seeds = [_ones_like(abstract(problem.targets[i])) if flat_cts[i] is None else flat_cts[i]._value
                         for i in connected_targets]
                return problem.sweep(seeds)

            outs = problem.run(kind, transforms.vjp_builder(*kind[1:]), cts, eager=eager)
            repeated.learn(problem, kind, outs, fast)
            results = problem.per_source(outs)
        if rows:
            results = sparse_gradients.pack(flat_sources, rows, results)
        _variable_targets(flat_targets, flat_sources, results, flat_cts)
        if None in results:
            self._explain_nones(tape, flat_targets, flat_sources, results)
        self._end_differentiation()
        out = [_unconnected(s, r, mode) for s, r in zip(flat_sources, results)]
        return out[0] if source_tree is _LEAF else jax.tree_util.tree_unflatten(source_tree, out)

    def jacobian(
        self,
        target: Any,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """The jacobian of one `target` tensor w.r.t. each source: shape `target.shape + source.shape`.

        Lowered to one `jax.vmap` over the VJP of the target's standard basis, or over the JVP of the sources'
        basis when the sources are smaller than the target (and no custom gradient is on the path), seeded with a
        symbolic identity so that a matmul with a source costs its output's size (structured_jacobian.py). Unlike TF,
        it never retraces and never warns about retracing.

        Args:
          parallel_iterations: how many rows are computed at once, as in TF. By default all of them, vectorised,
            unless that would need more than about 1 GiB: then as many as fit (chunks.py). Memory is the result
            plus one chunk's intermediates; the answer does not depend on it.
          experimental_use_pfor: False raises RuntimeError on a non-persistent tape outside tf.function, as in TF
            (whose sequential fallback calls `gradient` once per row); otherwise the answer does not depend on it:
            there is one, vectorised, implementation. TF's checks of `parallel_iterations` for each are kept.

        Raises:
          ResourceExhaustedError: if the rows computed at once do not fit in memory (pass `parallel_iterations`).
        """
        mode = _as_mode(unconnected_gradients)
        self._live_tape()
        target = _single_target(target, "jacobian")
        tape_arguments.check_loop("jacobian", self._persistent, experimental_use_pfor, parallel_iterations)
        tape = self._begin_differentiation("jacobian")
        flat_sources, source_tree = _flatten(sources)
        problem = Problem(tape, [target], flat_sources, "jacobian")
        results: list[Any] = [None] * len(flat_sources)
        if problem.is_connected:
            groups = problem.connected_groups
            out = abstract(target)
            sizes = [problem.leaf_vals[g[0]].size for g in groups]
            forward = sum(sizes) < out.size and problem.slice.program.forward_ok
            rows = max(sizes) if forward else out.size  # forward mode maps over each source's basis in turn
            per_row = chunks.row_bytes(problem.slice.entries, out, [problem.leaf_vals[g[0]] for g in groups])
            chunk = chunks.chunk_size(rows, per_row, parallel_iterations)
            if forward:
                kind, build = ("jacfwd", groups, chunk), transforms.jacobian_fwd_builder(groups, chunk)
                eager = None
            else:
                kind, build = ("jacrev", groups, chunk), transforms.jacobian_rev_builder(groups, chunk)
                eager = lambda: chunks.jacobian_sweep(problem, out, chunk)  # noqa: E731
            results = problem.per_source(chunks.guard("jacobian", rows, per_row, chunk,
                                                      lambda: problem.run(kind, build, eager=eager)))
        self._end_differentiation()
        out = [_unconnected(s, r, mode, lambda s=s: tuple(target.shape) + tuple(s.shape))
               for s, r in zip(flat_sources, results)]
        return jax.tree_util.tree_unflatten(source_tree, out)

    def batch_jacobian(
        self,
        target: Any,
        source: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """Per batch element, the jacobian of `target[i]` w.r.t. `source[i]`: shape
        `(batch,) + target.shape[1:] + source.shape[1:]`.

        Computed as TF does (the VJP of each non-batch element of the target, summed over the batch), so it
        assumes, without checking, that batch elements are independent, and gives TF's answer when they are not.
        As in TF, an unconnected source gives zeros (of the target's dtype) even with the default
        `unconnected_gradients='none'`; `experimental_use_pfor` and `parallel_iterations` (rows computed at
        once, chunked automatically to bound memory) are read as `jacobian` reads them.

        Raises:
          IndexError, ValueError: as TF, for a scalar target, for a target or source of rank below 2, and for
            first dimensions that differ.
          ResourceExhaustedError: if the rows computed at once do not fit in memory (pass `parallel_iterations`).
        """
        mode = _as_mode(unconnected_gradients)
        self._live_tape()
        target = _single_target(target, "batch_jacobian")
        if not isinstance(source, Tensor | Variable):
            raise TypeError(f"GradientTape.batch_jacobian expects one source Tensor or Variable, got "
                            f"{type(source).__name__}; call it once per source.")
        tape_arguments.check_batch_jacobian_shapes(target, source)
        tape_arguments.check_loop("batch_jacobian", self._persistent, experimental_use_pfor, parallel_iterations)
        tape = self._begin_differentiation("batch_jacobian")
        t_shape, s_shape = tuple(target.shape), tuple(source.shape)
        problem = Problem(tape, [target], [source], "batch_jacobian")
        result = None
        if problem.is_connected:
            groups = problem.connected_groups
            out = abstract(target)
            rows = out.size // out.shape[0] if out.shape[0] else 0
            per_row = chunks.row_bytes(problem.slice.entries, out, [problem.leaf_vals[g[0]] for g in groups])
            chunk = chunks.chunk_size(rows, per_row, parallel_iterations)
            (result,) = chunks.guard("batch_jacobian", rows, per_row, chunk, lambda: problem.run(
                ("batch_jacobian", groups, chunk), transforms.batch_jacobian_builder(groups, chunk),
                eager=lambda: chunks.batch_jacobian_sweep(problem, out, chunk)))
        self._end_differentiation()
        if result is None and mode is UnconnectedGradients.NONE:
            # TF's batch_jacobian ignores 'none' here: zeros, of the target's dtype (of the source's for 'zero').
            return EagerTensor(jnp.zeros(t_shape + s_shape[1:], abstract(target).dtype))
        return _unconnected(source, result, mode, t_shape + s_shape[1:])

    def hessian(self, target: Any, sources: Any) -> Any:
        """The Hessian of a scalar `target` w.r.t. `sources`, forward-over-reverse (a tapejax extension).

        For one source, a tensor of shape `source.shape + source.shape`; for a nest of sources, a nest whose
        element for source i is the nest of blocks `H[i][j]` (shape `source_i.shape + source_j.shape`).
        Unconnected blocks are zeros.

        Differences from TensorFlow: TF has no such method; TF code builds the Hessian from nested tapes and
        `jacobian`, which gives the same values.
        """
        tape = self._begin_differentiation("hessian")
        target = _scalar_target(target, "hessian")
        flat_sources, source_tree = _flatten(sources)
        problem = Problem(tape, [target], flat_sources, "hessian")
        n = len(flat_sources)
        blocks: list[list[Any]] = [[None] * n for _ in range(n)]
        if problem.is_connected:
            groups = problem.connected_groups
            fwd = problem.slice.program.forward_ok
            outs = iter(problem.run(("hessian", groups, fwd), transforms.hessian_builder(groups, fwd)))
            for i in problem.connected:
                for j in problem.connected:
                    blocks[i][j] = next(outs)
        self._end_differentiation()
        for i, si in enumerate(flat_sources):
            for j, sj in enumerate(flat_sources):
                blocks[i][j] = _unconnected(si, blocks[i][j], UnconnectedGradients.ZERO,
                                            tuple(si.shape) + tuple(sj.shape))
        if source_tree.num_leaves == 1 and not isinstance(sources, list | tuple | dict):
            return blocks[0][0]
        return jax.tree_util.tree_unflatten(source_tree, [jax.tree_util.tree_unflatten(source_tree, row)
                                                          for row in blocks])

    def hvp(self, target: Any, sources: Any, vectors: Any) -> Any:
        """The Hessian of a scalar `target` times `vectors` (one per source), forward-over-reverse (a tapejax
        extension): the cost of about two gradients, without forming the Hessian.

        Differences from TensorFlow: TF has no such method; TF code nests a ForwardAccumulator around a tape.
        """
        tape = self._begin_differentiation("hvp")
        target = _scalar_target(target, "hvp")
        flat_sources, source_tree = _flatten(sources)
        flat_vectors = _flatten(vectors)[0]
        if len(flat_vectors) != len(flat_sources):
            raise ValueError(f"GradientTape.hvp needs one vector per source: got {len(flat_vectors)} vectors for "
                             f"{len(flat_sources)} sources.")
        problem = Problem(tape, [target], flat_sources, "hvp")
        results: list[Any] = [None] * len(flat_sources)
        if problem.is_connected:
            groups = problem.connected_groups
            vecs = [_as_tensor_like(flat_vectors[k], flat_sources[k]) for k in problem.connected]
            fwd = problem.slice.program.forward_ok
            results = problem.per_source(problem.run(("hvp", groups, fwd), transforms.hvp_builder(groups, fwd), vecs))
        self._end_differentiation()
        out = [_unconnected(s, r, UnconnectedGradients.ZERO) for s, r in zip(flat_sources, results)]
        return jax.tree_util.tree_unflatten(source_tree, out)

    def _explain_nones(self, tape: tape_lib.Tape, targets: _Flat, sources: _Flat, results: list) -> None:
        """Keeps (and, in warning mode, logs) why each None gradient is None, before a free drops the trace."""
        if self._persistent and not debugging.warnings_enabled():
            return  # a persistent tape can be asked later (explain_none)
        for s, r in zip(sources, results):
            if r is not None:
                continue
            why = next((w for w in (debugging.reason(tape, t, s) for t in targets) if w), None)
            # Connected, yet None: the eager sweep found every path cut by a custom gradient's None.
            why = why or debugging.NONE_FROM_GRAD_FN
            self._none_reasons[id(s)] = why
            if debugging.warnings_enabled():
                logs.warning("GradientTape.gradient returned None for %s: %s", _describe(s), why)

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


def _ones_like(aval: Any) -> Any:
    return jnp.ones(aval.shape, aval.dtype)


def _describe(source: Any) -> str:
    if isinstance(source, Variable):
        return f"variable '{source.name}'"
    return f"a tensor of shape {source.shape} and dtype {source.dtype.name}" if isinstance(source, Tensor) \
        else repr(source)


def _single_target(target: Any, method: str) -> Tensor | Variable:
    if not isinstance(target, Tensor | Variable):
        raise TypeError(f"GradientTape.{method} takes one target Tensor, got {type(target).__name__}; for several "
                        "targets, call it once per target (or tf.stack them).")
    return target


def _scalar_target(target: Any, method: str) -> Tensor | Variable:
    target = _single_target(target, method)
    if target.shape.rank != 0:
        raise ValueError(f"GradientTape.{method} needs a scalar target, got shape {target.shape}; reduce it first "
                         "(e.g. tf.reduce_sum).")
    return target


def _as_tensor_like(value: Any, like: Tensor | Variable) -> Tensor:
    if isinstance(value, Tensor | Variable):
        return value if isinstance(value, Tensor) else value.read_value()
    return EagerTensor(jnp.asarray(value, like._value.dtype))


def _unconnected(source: Any, result: Any, mode: UnconnectedGradients,
                 shape: tuple[int, ...] | Callable[[], tuple[int, ...]] | None = None) -> Any:
    """None, or zeros (of `shape`, or `shape()`, default the source's) for `unconnected_gradients=ZERO`."""
    if result is not None or mode is UnconnectedGradients.NONE:
        return result
    if callable(shape):
        shape = shape()
    return EagerTensor(jnp.zeros(tuple(source.shape) if shape is None else shape, source.dtype.as_numpy_dtype))


def _variable_targets(targets: _Flat, sources: _Flat, results: list[Any], flat_cts: _Flat) -> None:
    """A variable given as a target is its own source: d v / d v is the identity (TF gives ones)."""
    for i, t in enumerate(targets):
        if not isinstance(t, Variable):
            continue
        for k, s in enumerate(sources):
            if isinstance(s, Variable) and s._uid == t._uid:
                seed = flat_cts[i]
                add = (jnp.ones(t.shape, t._value.dtype) if seed is None
                       else tape_arguments.checked_seed(i, t._value, seed)._value)
                results[k] = EagerTensor(add if results[k] is None else results[k]._value + add)


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", gate_gradients: bool = False,
              aggregation_method: Any = None, stop_gradients: Any = None,
              unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE) -> Any:
    """`tf.gradients` is TF's graph-mode API; in eager code TF raises, and so does tapejax (inside `tf.function`
    it is not supported yet either): use tf.GradientTape."""
    raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
                       "instead.")
