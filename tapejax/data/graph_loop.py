"""`for x in dataset:` and `next(iterator)` inside a tf.function: a graph loop whose body is traced once.

TF's AutoGraph turns a loop over a dataset into a dataset reduction, and a loop over an iterator into a
`tf.while_loop` around `get_next_as_optional`. XLA has no dataset op, so here the elements come from the host:
the loop is a `tf.while_loop` (jax.lax.while_loop) that carries the element read ahead, and each iteration runs the
body on it and reads the next one through an ordered host callback (io_callback), which pulls it from a pass of
the pipeline running in Python. So the body is traced once, Variable updates and tf.print happen per element in
order, the pipeline runs lazily (an infinite dataset with a `break` works), and each call of the function starts
a new pass (a shuffle reshuffles), as TF's loop does.

Why a host iterator rather than a scan over the epoch materialised up front: a scan needs the whole epoch in
memory before the first step (the benchmark's epoch is 200 MB) and cannot run over an infinite dataset or stop at
a `break` without computing the rest; the iterator keeps TF's laziness at the price of one callback per element.

XLA needs static shapes, and a pipeline's elements may have several (the short last batch of `batch`). The shapes
an element can have are worked out from the pipeline (`kinds`): one kind when the element_spec is fully defined,
and after `batch` of a known cardinality the full batch and the remainder. Each kind is a branch of a
`tf.switch_case` in the loop body (the body is traced once per kind: once more for a short last batch, as a
step called per batch retraces once more in TF); the element travels as one flat buffer per component, padded
to the largest kind. A pipeline whose shapes cannot be worked out (a `filter` before `batch`, `padded_batch` of
varying lengths, strings) is looped over at trace time instead, one traced body per element (documented).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import autograph_operators as ag, control_flow, dispatch, errors, loops
from tapejax._src.capture import symbolic
from tapejax._src.context import CONTEXT
from tapejax._src.host_callback import _stage
from tapejax._src.registry import OpDef
from tapejax._src.signature import TensorSpec
from tapejax._src.tensor import OPERATORS, EagerTensor, Tensor

from .stage import INFINITE, UNKNOWN, Stage

MAX_KINDS = 8  # element shapes one loop handles as switch branches; more: the loop is unrolled
Kinds = list[tuple[tuple[int, ...], ...]]


def kinds(stage: Stage) -> Kinds | None:
    """The shapes an element of `stage` can have (one tuple of component shapes per kind), or None if unknown."""
    from .batching import BatchDataset
    from .mapping import MapDataset
    specs = stage._structure.specs
    if not all(isinstance(s, TensorSpec) and s.dtype._np.kind != "O" and s.shape.dims is not None for s in specs):
        return None
    if all(s.shape.is_fully_defined() for s in specs):
        return [tuple(tuple(s.shape.as_list()) for s in specs)]
    inner = kinds(stage._input) if hasattr(stage, "_input") and isinstance(stage._input, Stage) else None
    if inner is None:
        return None
    if isinstance(stage, BatchDataset) and len(inner) == 1:
        n, size = stage._input._card, stage._size
        if n == UNKNOWN:
            return None  # the last batch's size is known only at its end
        sizes = [size] + ([n % size] if n != INFINITE and n % size else [])
        return [tuple((b, *shape) for shape in inner[0]) for b in sizes]
    if isinstance(stage, MapDataset):
        if stage._fn.stateful:
            return None
        out = [stage._fn._trace(k)[1].specs for k in inner]
        if not all(s.shape.is_fully_defined() for spec in out for s in spec):
            return None
        return [tuple(tuple(s.shape.as_list()) for s in spec) for spec in out]
    if stage._structure.specs == stage._input._structure.specs:  # a stage that keeps its input's shapes
        return inner
    return None


# -- the host side ------------------------------------------------------------------------------------------------


def _staged(host: Callable[[], tuple], avals: tuple) -> list[Tensor]:
    """An ordered host callback with no inputs, run when the step runs (a side-effect step inside a captured
    loop body or branch, as tf.numpy_function's), its results as Tensors."""
    def impl() -> tuple:
        return _stage(_guarded(host), avals, [], True)

    opdef = OpDef("data.iterator_get_next", impl, op_type="IteratorGetNext", jit=False)
    trace, tapes = CONTEXT.trace, CONTEXT.tapes
    if trace.captures:
        outs = [EagerTensor(symbolic(jnp.zeros(a.shape, a.dtype))) for a in avals]
        dispatch.record_call(opdef, [], [], outs, tapes[:1], effect=True)
        return outs
    return [EagerTensor(o) for o in impl()]


def _guarded(host: Callable[[], tuple]) -> Callable[[], tuple]:
    """The pipeline's exception, raised again by the step as TF's error (OpErrors as they are)."""
    def run() -> tuple:
        try:
            return host()
        except errors.OpError as e:
            raise errors.host_failure(e) from None
        except Exception as e:  # noqa: BLE001 (a map function's error: TF's class for it, as py_func's)
            from tapejax._src.host_callback import _tf_error
            raise errors.host_failure(_tf_error(e)) from None
    return run


_DONE = np.zeros((), np.int32)


def stage_restart(iterator: Any) -> None:
    """Stages the start of a new pass of `iterator`'s dataset (TF's `iter(dataset)` inside a function)."""
    def restart() -> tuple:
        iterator._restart()
        return (_DONE,)
    _staged(restart, (jax.ShapeDtypeStruct((), np.int32),))


def stage_push_back(iterator: Any) -> None:
    """Stages: the element the loop read ahead and did not run (it ended on a `break`) goes back."""
    def push_back() -> tuple:
        iterator._peeked, iterator._ahead = iterator._ahead, None
        return (_DONE,)
    _staged(push_back, (jax.ShapeDtypeStruct((), np.int32),))


class _Reader:
    """Reads the next element of `iterator` as (kind, one flat buffer per component padded to the largest kind);
    kind == len(kinds) at the end of the data."""

    def __init__(self, iterator: Any, element_kinds: Kinds, strict: bool = False):
        self.iterator = iterator
        self.strict = strict  # next(): the end of the data is TF's OutOfRangeError
        self.kinds = element_kinds
        self.index = {k: i for i, k in enumerate(element_kinds)}
        specs = iterator._structure.specs
        self.dtypes = [s.dtype._np for s in specs]
        self.sizes = [max(int(np.prod(k[c])) for k in element_kinds) for c in range(len(specs))]
        self.avals = (jax.ShapeDtypeStruct((), np.int32),
                      *(jax.ShapeDtypeStruct((n,), d) for n, d in zip(self.sizes, self.dtypes)))
        self._empty = tuple(np.zeros(n, d) for n, d in zip(self.sizes, self.dtypes))

    def host(self) -> tuple:
        it = self.iterator
        element = it._peeked if it._peeked is not None else next(it._it, None)
        it._peeked, it._ahead = None, element
        if element is None:
            if self.strict:
                raise errors.OutOfRangeError(None, None, "End of sequence")
            return (np.int32(len(self.kinds)), *self._empty)
        shapes = tuple(tuple(np.shape(x)) for x in element)
        kind = self.index.get(shapes)
        if kind is None:
            raise errors.InvalidArgumentError(None, None, f"The dataset's next element has shapes {list(shapes)}, "
                                              f"where the tf.function was traced for {self.kinds}.")
        flat = []
        for x, n, d in zip(element, self.sizes, self.dtypes):
            x = np.asarray(x, d).reshape(-1)
            flat.append(x if x.size == n else np.concatenate([x, np.zeros(n - x.size, d)]))
        return (np.int32(kind), *flat)

    def read(self) -> tuple[Tensor, list[Tensor]]:
        kind, *buffers = _staged(self.host, self.avals)
        return kind, buffers

    def element(self, kind: int, buffers: Sequence[Tensor]) -> Any:
        """The element of kind `kind` (a Python int) from the flat buffers, in the dataset's nest."""
        parts = []
        for c, (buffer, shape) in enumerate(zip(buffers, self.kinds[kind])):
            n = int(np.prod(shape))
            part = buffer if n == self.sizes[c] else OPERATORS["slice"](buffer, (0,), (n,))
            parts.append(OPERATORS["reshape"](part, shape))
        return self.iterator._structure.pack(parts)


# -- the loop -------------------------------------------------------------------------------------------------------


def for_stmt(source: Any, extra_test: Callable | None, body: Callable, values: tuple, names: tuple[str, ...],
             line: int) -> tuple:
    """AutoGraph's `for` over a dataset or an iterator inside a tf.function trace (see the module docstring)."""
    from .iteration import OwnedIterator
    dataset = source if isinstance(source, Stage) else source._dataset
    element_kinds = kinds(dataset)
    if element_kinds is None or len(element_kinds) > MAX_KINDS:
        return _unrolled(source, extra_test, body, values)
    if "ag__do_return" in names:
        raise NotImplementedError(ag._RETURN_IN_LOOP)
    iterator = source if isinstance(source, OwnedIterator) else OwnedIterator(dataset)
    reader = _Reader(iterator, element_kinds)
    more = (lambda *v: True) if extra_test is None else extra_test
    kind, buffers = reader.read()
    local: tuple[int, ...] = ()
    if any(isinstance(v, ag.Undefined) for v in values):  # as while_stmt: seeded from a trial iteration
        values, local = ag._seed_undefined(lambda *v: body(reader.element(0, buffers), *v), tuple(values), names,
                                           line)
    carried = [i for i in range(len(values)) if i not in local]
    full = list(values)
    n_buffers = len(buffers)

    def put(kept: Sequence) -> list:
        for i, v in zip(carried, kept):
            full[i] = v
        return full

    def run(k: int, buffers: Sequence[Tensor], kept: Sequence) -> tuple:
        out = body(reader.element(k, buffers), *put(kept))
        return tuple(out[i] for i in carried)

    def loop_body(kind: Tensor, *rest: Any) -> tuple:
        buffers, kept = rest[:n_buffers], rest[n_buffers:]
        if len(element_kinds) == 1:
            kept = run(0, buffers, kept)
        else:
            kept = control_flow._switch(kind, [lambda k=k: run(k, buffers, kept)
                                               for k in range(len(element_kinds))], "switch_case")
        next_kind, next_buffers = reader.read()
        return (next_kind, *next_buffers, *kept)

    def loop_test(kind: Tensor, *rest: Any) -> Any:
        going = kind < len(element_kinds)
        extra = more(*put(rest[n_buffers:]))
        return going if extra is True else OPERATORS["math.logical_and"](going, extra)

    card = dataset._card
    out = loops.while_loop(loop_test, loop_body, (kind, *buffers, *(values[i] for i in carried)),
                           maximum_iterations=card if card >= 0 else None,
                           _names=("<element kind>", *(f"<element {c}>" for c in range(n_buffers)),
                                   *(names[i] for i in carried)), _line=line)
    if isinstance(source, OwnedIterator):
        stage_push_back(iterator)
    return tuple(put(out[1 + n_buffers:]))


def _unrolled(source: Any, extra_test: Callable | None, body: Callable, values: tuple) -> tuple:
    """A pipeline whose element shapes cannot be worked out: a Python loop over a pass read at trace time (its
    elements become constants of the trace, one traced body each)."""
    structure = source._structure
    traced_iterator = not isinstance(source, Stage) and source._traced  # its pass starts at run time: read one now
    elements = source._elements() if isinstance(source, Stage) else (
        source._dataset._elements() if traced_iterator else source._it)
    for element in elements:
        go = True if extra_test is None else extra_test(*values)
        if ag._is_tensor(go):
            raise NotImplementedError(ag._EXIT_IN_PYTHON_LOOP)
        if not go:
            break
        values = body(structure.tensors(element), *values)
    return values


__all__ = ["MAX_KINDS", "for_stmt", "kinds", "stage_restart"]
