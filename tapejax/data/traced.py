"""A user function of dataset elements (`map`, `filter`, `scan`...), traced once per input shape and run compiled.

TF traces a `map` function once, when `map` is called, into a graph that runs per element. Here the function is
traced by `jax.make_jaxpr` with tapejax Tensors wrapping tracers (AutoGraph-converted, as tf.function converts),
and the jaxpr is run by `jax.jit` per element, or by `jax.jit(jax.vmap(...))` over a block of elements: a
function of one element gives the same values element by element or vectorised, because the jaxpr is pure.

Random ops: inside the trace, tapejax's random ops fold the trace's call number into their key; here that number
is the element's counter (its position in the map's output, and the pass), so each element draws its own
numbers, whether it is computed alone or in a block. The function's op seeds are drawn once, when it is first
traced (as TF draws them when `map` is called); a later trace (a new input shape) replays the same seed state.

A function that reads or writes `tf.Variable`s is not pure: it runs eagerly, element by element, reading the
variables' current values as TF's map does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import jax
import jax.extend.core
import numpy as np

from tapejax._src import autograph, caches, errors, spec_only, static_values
from tapejax._src.string_values import HostValueError
from tapejax._src.concrete_function import _Trace, _tracing
from tapejax._src.context import seed_snapshot, seeds
from tapejax._src.spec_only import SpecOnly

from .structure import Structure, merged, spec_of, stand_in_shape

_COUNTER = jax.ShapeDtypeStruct((), np.uint32)
# Shared by every traced dataset function, bounded (one Memo per function would grow caches.ALL per `map` call)
_JAXPRS = caches.Memo("tf.data function traces (data/traced.py)", 256)
_SINGLES = caches.Memo("tf.data per-element executables (data/traced.py)", 256)
_BLOCKS = caches.Memo("tf.data vectorised executables (data/traced.py)", 256)
_UIDS = itertools.count()


class Stateful(Exception):
    """The function touched a tf.Variable: it is run eagerly instead of compiled."""


def _needs_values(e: Exception) -> bool:
    """A trace that needs a concrete value (a shape from a tensor's value, `tf.fill([x], x)`): run eagerly."""
    return isinstance(e, jax.errors.ConcretizationTypeError | jax.errors.TracerArrayConversionError |
                      jax.errors.TracerIntegerConversionError | jax.errors.TracerBoolConversionError |
                      static_values.NotStatic | HostValueError)  # HostValueError: a string op (strings live on the host)


class TracedFunction:
    """`fn` of elements of `structure`: `out` is the structure of its results (with TF's None dimensions where
    the input's are None); `single`/`block` run it compiled on one element or a block of them."""

    def __init__(self, fn: Callable, structure: Structure, api: str, unpack: bool = True,
                 extra: Structure | None = None, sample: Callable[[], tuple | None] | None = None):
        self.fn = fn
        self.structure = structure
        self.api = api
        self.unpack = unpack
        self.extra = extra  # a state structure passed first (scan, reduce)
        self._converted = autograph.convert(fn) if callable(fn) else fn
        self._seed_state = seed_snapshot()
        self._uid = next(_UIDS)  # this function's part of the shared caches (keys: (uid, shapes))
        self.vectorisable = True
        self.stateful = False
        self._sample = sample  # the input's first element, for a function of strings (see _host_spec)
        self.out = self._host_spec() if any(s.dtype._np.kind == "O" for s in self._specs()) else self._trace_spec()

    # -- tracing -------------------------------------------------------------------------------------------

    def _specs(self) -> tuple:
        return (*(self.extra.specs if self.extra else ()), *self.structure.specs)

    def call_python(self, leaves: tuple) -> Any:
        """The user's function on an element's components (Tensors, or tracers wrapped as Tensors)."""
        n = len(self.extra) if self.extra else 0
        element = self.structure.tensors(leaves[n:])
        args = (element,) if not (self.unpack and isinstance(element, tuple)) else element
        if self.extra:
            args = (self.extra.tensors(leaves[:n]), *args)
        result = self._converted(*args)
        # A returned list is a tuple of components, as in TF (it is more often py_function's list of outputs
        # than one tensor to stack), though a list given as data is one tensor.
        return tuple(result) if isinstance(result, list) else result

    def _pure(self, holder: list, leaves: tuple, counter: Any) -> tuple:
        trace = _Trace([], (), counter, first=False)
        with _tracing(trace, fold_constants=False):
            result = self.call_python(leaves)
            out, arrays = Structure.split(result, self.api)
        if trace.discovered or trace.assigned:
            raise Stateful
        holder.append(out)
        return arrays

    def _trace(self, shapes: tuple, first: bool = False) -> tuple[Any, Structure]:
        key = (self._uid, shapes)
        found = _JAXPRS.get(key)
        if found is not None:
            return found
        holder: list = []
        avals = [jax.ShapeDtypeStruct(s, spec.dtype._np) for s, spec in zip(shapes, self._specs())]
        with seeds(None if first else self._seed_state):
            closed = jax.make_jaxpr(lambda *a: self._pure(holder, a[:-1], a[-1]))(*avals, _COUNTER)
        found = _JAXPRS[key] = (closed, holder[0])
        return found

    def _trace_spec(self) -> Structure:
        specs = self._specs()
        shapes = [s.shape.as_list() if s.shape.dims is not None else None for s in specs]
        if any(s is None for s in shapes):  # an unknown rank: traced at two ranks
            return self._spec_by_sizes(specs)
        if all(None not in s for s in shapes):
            try:
                _, out = self._trace(tuple(tuple(s) for s in shapes), first=True)
            except Exception as e:
                if isinstance(e, Stateful) or _needs_values(e):
                    return self._eager_spec(specs)
                raise
            return out
        try:  # TF's shape inference: the None dimensions symbolic, the results' symbolic ones None
            scope = jax.export.SymbolicScope()
            names = iter(f"d{i}" for i in range(10_000))
            avals = []
            for s, spec in zip(shapes, specs):
                dims = ", ".join(str(d) if d is not None else next(names) for d in s)
                shape = jax.export.symbolic_shape(f"({dims})" if dims else "()", scope=scope)
                avals.append(jax.ShapeDtypeStruct(shape, spec.dtype._np))
            holder: list = []
            with seeds(None):
                jax.eval_shape(lambda *a: self._pure(holder, a[:-1], a[-1]), *avals, _COUNTER)
            return holder[0]
        except Exception as e:  # a step that needs concrete sizes: dimensions that differ between two sizes are None
            if isinstance(e, Stateful) or _needs_values(e):
                return self._eager_spec(specs)
            return self._spec_by_sizes(specs)

    def _spec_by_sizes(self, specs: tuple) -> Structure:
        """The results' structure from traces at sizes 1 and 2 of the unknown dimensions (and ranks): the
        dimensions that differ are None, as TF's shape inference leaves them. An unknown rank is tried from 1
        and 2 up, for a function that needs more dimensions (a reduction over axis 1)."""
        unknown_rank = any(s.shape.rank is None for s in specs)
        first_error: Exception | None = None
        for rank in range(4 if unknown_rank else 1):
            try:
                one, two = (self._trace(tuple(stand_in_shape(s.shape, size, rank) for s in specs),
                                        first=size == 1)[1] for size in (1, 2))
                return merged(one, two)
            except Exception as e:
                if isinstance(e, Stateful) or _needs_values(e):
                    return self._eager_spec(specs)
                first_error = first_error or e
        raise first_error

    def _host_spec(self) -> Structure:
        """A function of string components (host values, which JAX cannot trace) runs eagerly per element. Its
        result structure comes from a call on spec-only stand-ins where that needs no value (a py_function's
        results: `_spec_from_stand_ins`), else from a call on the input's first element (made-up strings could
        fail: `tf.io.read_file(b"")`), else on empty strings. The element's size on the input's unknown dimensions
        (a batch's) says nothing: a second call on the element cut to size 1 on them finds the result's
        dimensions that follow them, which are None (as TF's shape inference gives)."""
        self.stateful, self.vectorisable = True, False
        known = self._spec_from_stand_ins()
        if known is not None:
            return known
        element = self._sample() if self._sample is not None and not self.extra else None
        if element is None:
            return self._eager_spec(self._specs())
        with seeds(self._seed_state):
            out = Structure.split(self.call_python(element), self.api)[0]
        specs = self._specs()
        cut = tuple(np.asarray(c)[tuple(slice(0, 1) if d is None else slice(None) for d in s.shape.as_list())]
                    if s.shape.rank else c for c, s in zip(element, specs))
        if all(np.shape(a) == np.shape(b) for a, b in zip(cut, element)):
            return out
        try:
            with seeds(self._seed_state):
                other = Structure.split(self.call_python(cut), self.api)[0]
        except Exception:  # noqa: BLE001 (a function that needs the bigger element: its shapes as they came)
            return out
        return merged(out, other)

    def _spec_from_stand_ins(self) -> Structure | None:
        """The result structure from a call on tensors that have only the input's specs (TF's graph tensors),
        where py_function and numpy_function give TF's results without running (spec_only.py); None if the
        function needs values (then the first element's)."""
        stand_ins = tuple(SpecOnly(s) for s in self._specs())
        try:
            with spec_only.probing(), seeds(self._seed_state):
                return Structure.of(self.call_python(stand_ins), self.api)
        except Exception:  # noqa: BLE001 (it used a value: NoValue, or an op's error about the stand-in)
            return None

    def _eager_spec(self, specs: tuple) -> Structure:
        """A function with variables, or whose shapes depend on values: it runs eagerly per element. Its result
        structure comes from eager calls on zeros and on ones (dimensions that differ are None), where TF
        infers it from the graph."""
        self.stateful, self.vectorisable = True, False
        outs = []
        for fill, size in ((0, 1), (1, 2)):
            probe = tuple(np.full(stand_in_shape(s.shape, size), b"" if s.dtype._np.kind == "O" else fill,
                                  s.dtype._np) for s in specs)
            with seeds(self._seed_state):
                outs.append(Structure.split(self.call_python(probe), self.api)[0])
        return merged(*outs)

    # -- running -------------------------------------------------------------------------------------------

    def single(self, leaves: tuple, counter: int) -> tuple:
        """The function of one element (and state), compiled per input shapes."""
        if self.stateful:
            out, arrays = Structure.split(self.call_python(leaves), self.api)
            return arrays
        shapes = tuple(tuple(np.shape(x)) for x in leaves)
        run = _SINGLES.get((self._uid, shapes))
        if run is None:
            closed, _ = self._trace(shapes)
            run = _SINGLES[self._uid, shapes] = jax.jit(jax.extend.core.jaxpr_as_fun(closed))
        try:
            return tuple(run(*leaves, np.uint32(counter & 0xFFFFFFFF)))
        except Exception as e:
            raise errors.from_jax("IteratorGetNext", e) from None  # a host callback's failure: TF's class

    def block(self, leaves: tuple, counters: np.ndarray) -> tuple | None:
        """The function of each element of a block (leading dimension), vectorised by jax.vmap; None if it
        cannot be (then the caller runs it element by element)."""
        if not self.vectorisable:
            return None
        shapes = tuple(tuple(np.shape(x)[1:]) for x in leaves)
        run = _BLOCKS.get((self._uid, shapes))
        if run is None:
            closed, _ = self._trace(shapes)
            run = _BLOCKS[self._uid, shapes] = jax.jit(jax.vmap(jax.extend.core.jaxpr_as_fun(closed)))
        try:
            return tuple(run(*leaves, counters.astype(np.uint32)))
        except Exception:  # an op without a batching rule (a host callback): element by element, as TF
            self.vectorisable = False
            return None


def first(dataset: Any) -> tuple | None:
    """The first element of a pass of `dataset` (None if empty), the pass closed after it."""
    elements = dataset._elements()
    try:
        return next(iter(elements), None)
    finally:
        getattr(elements, "close", lambda: None)()


def mix_counter(pass_number: int, index: Any) -> Any:
    """The counter random ops fold in for element `index` of a pass: distinct per element and per pass."""
    return (np.uint64(pass_number) * np.uint64(0x9E3779B1) + np.asarray(index, np.uint64)) & np.uint64(0xFFFFFFFF)


__all__ = ["TracedFunction", "first", "mix_counter", "spec_of"]
