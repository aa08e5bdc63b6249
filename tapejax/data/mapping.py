"""Stages that run user functions: map, flat_map, interleave, scan (and `reduce`, which ends a pipeline).

`map` traces its function once (traced.py) and runs it compiled: per element, or, when a `batch` after it asks
for a block, once per block under `jax.vmap`. Either way element i of a pass gets the same counter for its
random ops, so the two give the same values.
"""

from __future__ import annotations

import collections
import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapejax._src import errors

from .api import Dataset, DatasetSpec
from .iteration import background, in_order
from .stage import INFINITE, UNKNOWN, View, rows, stack
from .structure import Structure, merged, stand_in_shape
from .traced import TracedFunction, first, mix_counter


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _parallel_calls(n: Any) -> int | None:
    """`num_parallel_calls` checked as TF checks it: None (one call at a time), AUTOTUNE (-1), or a positive
    int64."""
    if n is None:
        return None
    value = np.asarray(getattr(n, "_value", n))
    if not np.issubdtype(value.dtype, np.integer) or value.ndim:
        raise TypeError(f"Cannot convert {n!r} to EagerTensor of dtype int64")
    if int(value) != -1 and int(value) <= 0:
        raise errors.InvalidArgumentError(None, None, "num_parallel_calls must be greater than zero.")
    return int(value)


class MapDataset(Dataset):
    """`map(fn)`; with `num_parallel_calls`, up to that many calls of a compiled `fn` run at once on worker
    threads (iteration.in_order), in TF's deterministic order whatever `deterministic` says (an order TF may
    give). A function that runs eagerly (strings, variables) keeps one call at a time: its random ops and
    variable reads belong to the iterating thread."""

    _tf_name = "_MapDataset"

    def __init__(self, input: Dataset, map_func: Callable, num_parallel_calls: Any = None,
                 deterministic: Any = None):
        calls = _parallel_calls(num_parallel_calls)
        self._width = _cpu_count() if calls == -1 else calls  # AUTOTUNE: TF tunes it; the CPU count here
        self._input = input
        self._fn = TracedFunction(map_func, input._structure, "Dataset.map", sample=lambda: first(input))
        self._structure = self._fn.out
        self._card = input._card
        self._passes = itertools.count()
        if num_parallel_calls is not None:
            self._tf_name = "_ParallelMapDataset"

    def _elements(self) -> Iterator[tuple]:
        pass_number = next(self._passes)
        fn = self._fn
        if self._width is not None and self._width > 1 and not fn.stateful:
            yield from in_order(((fn.single, (element, int(mix_counter(pass_number, i))))
                                 for i, element in enumerate(self._input._elements())), self._width)
            return
        for i, element in enumerate(self._input._elements()):
            yield fn.single(element, int(mix_counter(pass_number, i)))

    def _run_block(self, block: tuple, counters: np.ndarray) -> tuple:
        out = self._fn.block(block, counters)
        if out is None:  # not vectorisable: element by element
            out = stack([self._fn.single(e, int(c)) for e, c in zip(rows(block), counters)], "map")
        return out

    def _can_view(self) -> bool:
        return self._fn.vectorisable and self._input._can_view()

    def _view(self) -> View | None:
        if not self._can_view():
            return None
        view = self._input._view()
        pass_number = next(self._passes)
        return View(view.n, lambda idx: self._run_block(view.take(idx), mix_counter(pass_number, idx)))

    def _blocks(self, size: int) -> Iterator[tuple]:
        if not self._fn.vectorisable or self._input._can_view() or not self._input_shapes_fixed():
            yield from super()._blocks(size)
            return
        pass_number = next(self._passes)  # an input without positions: its blocks, mapped under vmap
        start = 0
        for block in self._input._blocks(size):
            n = len(block[0])
            yield self._run_block(block, mix_counter(pass_number, np.arange(start, start + n)))
            start += n


    def _input_shapes_fixed(self) -> bool:
        """Whether every input element has one shape, so that a block of them stacks for `jax.vmap`: a partial
        batch (`batch(2)` of 3 elements gives shapes [2] and [1]) does not, and is mapped element by element."""
        return all(not hasattr(spec, "shape") or spec.shape.is_fully_defined()
                   for spec in self._input._structure.specs)


def _dataset_of(value: Any, api: str) -> Dataset:
    if not isinstance(value, Dataset):
        raise TypeError(f"The `map_func` argument of {api} must return a `Dataset` object, got "
                        f"{type(value).__name__}.")
    return value


class FlatMapDataset(Dataset):
    """`flat_map(fn)`: `fn` runs eagerly on each element (tapejax Tensors) and its datasets are chained. The
    element structure is that of `fn`'s dataset for a probe element of zeros (TF traces `fn` to find it)."""

    _tf_name = "_FlatMapDataset"

    def __init__(self, input: Dataset, map_func: Callable):
        self._input = input
        self._fn = map_func
        self._structure = _probe(map_func, input._structure, "Dataset.flat_map")
        self._card = UNKNOWN if input._card != 0 else 0

    def _call(self, element: tuple) -> Dataset:
        value = self._input._structure.tensors(element)
        args = value if isinstance(value, tuple) else (value,)
        return _dataset_of(self._fn(*args), "Dataset.flat_map")

    def _elements(self) -> Iterator[tuple]:
        for element in self._input._elements():
            yield from self._call(element)._elements()


def _probe(fn: Callable, structure: Structure, api: str) -> Structure:
    """The element structure of `fn`'s datasets, from calls on zeros (TF traces `fn` to find it): one call where
    the input's shapes are known, else calls at sizes 1 and 2 of its unknown dimensions, whose differences are
    None (`merged`)."""
    known = all(s.element_spec.shape.is_fully_defined() if isinstance(s, DatasetSpec) else s.shape.is_fully_defined()
                for s in structure.specs)
    found = [_probe_at(fn, structure, api, size)._structure for size in ((1,) if known else (1, 2))]
    return found[0] if known else merged(*found)


def _probe_at(fn: Callable, structure: Structure, api: str, size: int) -> Dataset:
    from .batching import _WindowComponent
    from .sources import TensorSliceDataset
    zeros = tuple(_WindowComponent(TensorSliceDataset(np.zeros([1, *stand_in_shape(s.element_spec.shape, size)],
                                                               s.element_spec.dtype._np)))
                  if isinstance(s, DatasetSpec) else np.full(stand_in_shape(s.shape, size),
                                                             b"" if s.dtype._np.kind == "O" else 0, s.dtype._np)
                  for s in structure.specs)  # strings: empty ones (a file dataset of b"" opens nothing yet)
    value = structure.tensors(zeros)
    return _dataset_of(fn(*(value if isinstance(value, tuple) else (value,))), api)


class InterleaveDataset(Dataset):
    """`interleave(fn, cycle_length, block_length)`: TF's order. `cycle_length` slots each hold the dataset of
    one input element; `block_length` elements are taken from a slot before moving to the next; an exhausted
    slot is refilled from the next input element when the cycle reaches it.

    With `num_parallel_calls`, each dataset is read ahead by its own thread (iteration.background): the cycle's,
    and, as TF prefetches them, the next `2 * cycle_length` input elements' (a file opened, a generator started
    before its turn). An exhausted slot takes the next of those at once, so the input elements reach the slots
    in the sequential order, and the elements come out in it."""

    _tf_name = "_InterleaveDataset"

    def __init__(self, input: Dataset, map_func: Callable, cycle_length: Any = None, block_length: Any = None,
                 num_parallel_calls: Any = None, deterministic: Any = None):
        self._input = input
        self._fn = map_func
        cycle = -1 if cycle_length is None else int(cycle_length)
        calls = _parallel_calls(num_parallel_calls)
        self._parallel = calls is not None
        if cycle > 0:
            self._cycle = cycle
        elif calls is None:  # TF's AUTOTUNE / default: the schedulable CPU cores
            self._cycle = _cpu_count()
        else:  # TF's parallel interleave: no more than the cores, or a third of them for threads ahead (below)
            self._cycle = min(calls, _cpu_count()) if calls != -1 else -(-_cpu_count() // 3)
        self._block = 1 if block_length is None else int(block_length)
        if self._block <= 0:
            raise errors.InvalidArgumentError(None, None, "`block_length` must be > 0" if self._parallel else
                                              "block_length must be greater than zero.")
        self._too_wide = None
        if calls is not None and calls > self._cycle:  # TF: when built, for a fixed cycle; else when iterated
            self._too_wide = errors.InvalidArgumentError(None, None, (
                f"If `cycle_length` is set to a fixed value, `num_parallel_calls` must be either `tf.data.AUTOTUNE` "
                f"or a value less than or equal to `cycle_length`. However, `num_parallel_calls` is {calls} and "
                f"`cycle_length` is {self._cycle}"))
            if cycle > 0:
                raise self._too_wide
        self._structure = _probe(map_func, input._structure, "Dataset.interleave")
        self._card = UNKNOWN if input._card != 0 else 0
        if num_parallel_calls is not None:
            self._tf_name = "_ParallelInterleaveDataset"

    def _elements(self) -> Iterator[tuple]:
        if self._too_wide is not None:
            raise self._too_wide
        source = self._input._elements()
        slots: list[Iterator[tuple] | None] = [None] * self._cycle
        ahead: collections.deque = collections.deque()  # parallel: the next input elements' datasets, being read
        exhausted = False

        def open_next() -> Iterator[tuple] | None:
            nonlocal exhausted
            element = None if exhausted else next(source, None)
            if element is None:
                exhausted = True
                return None
            elements = FlatMapDataset._call(self, element)._elements()
            return background(elements, 2 * self._block + 1) if self._parallel else elements

        def fill(index: int) -> None:  # slot `index` takes the next input element's dataset
            if self._parallel:
                while len(ahead) < 2 * self._cycle and not exhausted:
                    it = open_next()
                    if it is not None:
                        ahead.append(it)
                slots[index] = ahead.popleft() if ahead else None
            else:
                slots[index] = open_next()

        try:
            for index in range(self._cycle if self._parallel else 0):
                fill(index)
            index = 0
            while True:
                if slots[index] is None and (ahead or not exhausted):
                    fill(index)
                it = slots[index]
                if it is not None:
                    for _ in range(self._block):  # an exhausted slot is refilled when the cycle next reaches it (TF)
                        value = next(it, None)
                        if value is None:
                            slots[index] = None
                            if self._parallel:  # at once: the input goes to the slots in TF's order
                                fill(index)
                            break
                        yield value
                    else:
                        index = (index + 1) % self._cycle
                        continue
                if exhausted and not ahead and all(s is None for s in slots):
                    return
                index = (index + 1) % self._cycle
        finally:
            for it in [*slots, *ahead]:
                getattr(it, "close", lambda: None)()


class ScanDataset(Dataset):
    """`scan(initial_state, scan_func)`: `scan_func(state, element) -> (state, output)`, traced and compiled."""

    _tf_name = "_ScanDataset"

    def __init__(self, input: Dataset, initial_state: Any, scan_func: Callable):
        self._input = input
        self._state_structure, self._initial = Structure.split(initial_state, "Dataset.scan")
        self._fn = TracedFunction(scan_func, input._structure, "Dataset.scan", extra=self._state_structure)
        out = self._fn.out
        template = out.template
        if not (isinstance(template, tuple) and len(template) == 2):
            raise TypeError("The scan function must return a pair comprising the new state and the output value.")
        n_state = len(self._state_structure)
        self._structure = Structure(_shift(template[1], n_state), out.specs[n_state:])
        self._card = input._card

    def _elements(self) -> Iterator[tuple]:
        state = self._initial
        n = len(state)
        for i, element in enumerate(self._input._elements()):
            out = self._fn.single((*state, *element), i)
            state, value = out[:n], out[n:]
            yield value


def _shift(template: Any, offset: int) -> Any:
    from tapejax import nest
    return nest.map_structure(lambda i: i - offset, template)


def reduce(dataset: Dataset, initial_state: Any, reduce_func: Callable) -> Any:
    """`Dataset.reduce`: folds `reduce_func(state, element)` over the elements, compiled once."""
    structure, state = Structure.split(initial_state, "Dataset.reduce")
    fn = TracedFunction(reduce_func, dataset._structure, "Dataset.reduce", extra=structure)
    if len(fn.out.specs) != len(structure.specs):
        raise TypeError(f"The element types for the new state must match the initial state. Expected "
                        f"{structure.element_spec}; got {fn.out.element_spec}.")
    for i, element in enumerate(dataset._elements()):
        state = fn.single((*state, *element), i)
    return structure.tensors(state)


__all__ = ["FlatMapDataset", "InterleaveDataset", "MapDataset", "ScanDataset", "reduce", "INFINITE"]
