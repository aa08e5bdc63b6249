"""Stages that run user functions: map, flat_map, interleave, scan (and `reduce`, which ends a pipeline).

`map` traces its function once (traced.py) and runs it compiled: per element, or, when a `batch` after it asks
for a block, once per block under `jax.vmap`. Either way element i of a pass gets the same counter for its
random ops, so the two give the same values.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapejax._src import errors

from .api import Dataset
from .stage import INFINITE, UNKNOWN, View, rows, stack
from .structure import Structure
from .traced import TracedFunction, first, mix_counter


class MapDataset(Dataset):
    _tf_name = "_MapDataset"

    def __init__(self, input: Dataset, map_func: Callable, num_parallel_calls: Any = None,
                 deterministic: Any = None):
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
        self._structure = _probe(map_func, input._structure, "Dataset.flat_map")._structure
        self._card = UNKNOWN if input._card != 0 else 0

    def _call(self, element: tuple) -> Dataset:
        value = self._input._structure.tensors(element)
        args = value if isinstance(value, tuple) else (value,)
        return _dataset_of(self._fn(*args), "Dataset.flat_map")

    def _elements(self) -> Iterator[tuple]:
        for element in self._input._elements():
            yield from self._call(element)._elements()


def _probe(fn: Callable, structure: Structure, api: str) -> Dataset:
    from .api import DatasetSpec
    from .batching import _WindowComponent
    from .sources import TensorSliceDataset
    zeros = tuple(_WindowComponent(TensorSliceDataset(np.zeros([1, *[d or 1 for d in s.element_spec.shape.as_list()]],
                                                               s.element_spec.dtype._np)))
                  if isinstance(s, DatasetSpec) else np.full([d if d is not None else 1 for d in s.shape.as_list()],
                                                             b"" if s.dtype._np.kind == "O" else 0, s.dtype._np)
                  for s in structure.specs)  # strings: empty ones (a file dataset of b"" opens nothing yet)
    value = structure.tensors(zeros)
    return _dataset_of(fn(*(value if isinstance(value, tuple) else (value,))), api)


class InterleaveDataset(Dataset):
    """`interleave(fn, cycle_length, block_length)`: TF's order. `cycle_length` slots each hold the dataset of
    one input element; `block_length` elements are taken from a slot before moving to the next; an exhausted
    slot is refilled from the next input element when the cycle reaches it."""

    _tf_name = "_InterleaveDataset"

    def __init__(self, input: Dataset, map_func: Callable, cycle_length: Any = None, block_length: Any = None,
                 num_parallel_calls: Any = None, deterministic: Any = None):
        self._input = input
        self._fn = map_func
        cycle = -1 if cycle_length is None else int(cycle_length)
        # TF's AUTOTUNE / default: the number of schedulable CPU cores
        self._cycle = cycle if cycle > 0 else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                               else os.cpu_count() or 1)
        self._block = 1 if block_length is None else int(block_length)
        if self._block <= 0:
            raise errors.InvalidArgumentError(None, None, "block_length must be greater than zero.")
        self._structure = _probe(map_func, input._structure, "Dataset.interleave")._structure
        self._card = UNKNOWN if input._card != 0 else 0
        if num_parallel_calls is not None:
            self._tf_name = "_ParallelInterleaveDataset"

    def _elements(self) -> Iterator[tuple]:
        source = self._input._elements()
        slots: list[Iterator[tuple] | None] = [None] * self._cycle
        exhausted = False
        index = 0
        while True:
            if slots[index] is None and not exhausted:
                element = next(source, None)
                if element is None:
                    exhausted = True
                else:
                    slots[index] = FlatMapDataset._call(self, element)._elements()
            it = slots[index]
            if it is not None:
                for _ in range(self._block):  # an exhausted slot is refilled when the cycle next reaches it (TF)
                    value = next(it, None)
                    if value is None:
                        slots[index] = None
                        break
                    yield value
                else:
                    index = (index + 1) % self._cycle
                    continue
            if exhausted and all(s is None for s in slots):
                return
            index = (index + 1) % self._cycle


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
