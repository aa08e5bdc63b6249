"""Stages that reorder, select or combine elements without computing on them: take, skip, repeat, zip,
concatenate, enumerate, shard, filter, cache, unique, take_while."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapejax._src import dtypes
from tapejax._src.signature import TensorSpec
from tapejax._src.tensor import TensorShape

from .api import Dataset
from .stage import INFINITE, UNKNOWN, View, keep
from .structure import Structure, most_specific_compatible, zip_structures
from .traced import TracedFunction, first


def _count(n: Any) -> int:
    return int(np.asarray(getattr(n, "_value", n)))


class TakeDataset(Dataset):
    _tf_name = "_TakeDataset"

    def __init__(self, input: Dataset, count: Any):
        self._input, self._count = input, _count(count)
        self._structure = input._structure
        c, n = self._count, input._card
        self._card = n if c < 0 else (c if n == INFINITE else (UNKNOWN if n == UNKNOWN else min(c, n)))

    def _elements(self) -> Iterator[tuple]:
        if self._count < 0:
            return self._input._elements()
        return itertools.islice(self._input._elements(), self._count)

    def _can_view(self) -> bool:
        return self._input._can_view()

    def _view(self) -> View | None:
        view = self._input._view()
        if view is None:
            return None
        return View(view.n if self._count < 0 else min(self._count, view.n), view.take)


class SkipDataset(Dataset):
    _tf_name = "_SkipDataset"

    def __init__(self, input: Dataset, count: Any):
        self._input, self._count = input, _count(count)
        self._structure = input._structure
        c, n = self._count, input._card
        self._card = n if n < 0 else (0 if c < 0 else max(0, n - c))

    def _elements(self) -> Iterator[tuple]:
        if self._count < 0:
            for _ in self._input._elements():
                pass
            return iter(())
        return itertools.islice(self._input._elements(), self._count, None)

    def _can_view(self) -> bool:
        return self._input._can_view()

    def _view(self) -> View | None:
        view = self._input._view()
        if view is None:
            return None
        skip = view.n if self._count < 0 else min(self._count, view.n)
        return View(view.n - skip, lambda idx: view.take(np.asarray(idx) + skip))


class RepeatDataset(Dataset):
    """`repeat(count)`: passes of the input one after the other (each pass reshuffles, as TF's)."""

    _tf_name = "_RepeatDataset"

    def __init__(self, input: Dataset, count: Any = None):
        self._input = input
        self._count = -1 if count is None else _count(count)
        self._structure = input._structure
        n, c = input._card, self._count
        self._card = (INFINITE if c < 0 and n != 0 else (0 if n == 0 or c == 0 else
                      (n if n < 0 else n * c)))

    def _elements(self) -> Iterator[tuple]:
        passes = itertools.count() if self._count < 0 else range(self._count)
        for _ in passes:
            empty = True
            for element in self._input._elements():
                empty = False
                yield element
            if empty:  # an empty input repeated forever is empty, as in TF
                return

    def _can_view(self) -> bool:
        return self._count >= 0 and self._input._can_view()

    def _view(self) -> View | None:
        if not self._can_view():
            return None
        first = self._input._view()  # passes are opened in order, as the element-wise path opens them
        views = [first]
        n = first.n

        def take(idx: np.ndarray) -> tuple:
            idx = np.asarray(idx)
            passes = idx // max(n, 1)
            while len(views) <= int(passes.max(initial=0)):
                views.append(self._input._view())
            parts = [(p, views[p].take(idx[passes == p] - p * n)) for p in np.unique(passes)]
            if len(parts) == 1:
                return parts[0][1]
            inverse = np.argsort(np.concatenate([np.nonzero(passes == p)[0] for p, _ in parts]), kind="stable")
            return tuple(np.concatenate([np.asarray(block[c]) for _, block in parts])[inverse]
                         for c in range(len(parts[0][1])))

        return View(n * self._count, take)


class ZipDataset(Dataset):
    _tf_name = "_ZipDataset"

    def __init__(self, datasets: Any):
        from tapejax import nest
        flat = nest.flatten(datasets)
        lists = []
        _find_lists(datasets, lists)
        for d in [*flat, *lists]:
            if not isinstance(d, Dataset):
                raise TypeError(f"Invalid input to `zip`. Inputs are expected to be (nested) structures of "
                                f"`tf.data.Dataset` objects. Python `list` is not supported and you should use "
                                f"`tuple` instead.")
        self._inputs_flat = flat
        self._structure = zip_structures(nest.map_structure(lambda d: d._structure, datasets))
        cards = [d._card for d in flat]
        finite = [c for c in cards if c >= 0]
        self._card = UNKNOWN if UNKNOWN in cards else (min(finite) if finite else INFINITE)

    def _elements(self) -> Iterator[tuple]:
        for parts in zip(*(d._elements() for d in self._inputs_flat)):
            yield tuple(itertools.chain.from_iterable(parts))

    def _can_view(self) -> bool:
        return all(d._can_view() for d in self._inputs_flat)

    def _view(self) -> View | None:
        views = [d._view() for d in self._inputs_flat]
        if any(v is None for v in views):
            return None
        return View(min(v.n for v in views), lambda idx: tuple(itertools.chain.from_iterable(
            v.take(idx) for v in views)))


def _find_lists(value: Any, found: list) -> None:
    """Lists in a zip's nest: TF refuses them (a list is a value in tf.data, not structure)."""
    if isinstance(value, list):
        found.append(value)
    elif isinstance(value, tuple):
        for v in value:
            _find_lists(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _find_lists(v, found)


class ConcatenateDataset(Dataset):
    _tf_name = "_ConcatenateDataset"

    def __init__(self, input: Dataset, other: Dataset):
        from tapejax import nest
        try:
            nest.assert_same_structure(input._structure.template, other._structure.template)
        except (ValueError, TypeError):
            raise TypeError(f"Incompatible dataset elements:\n  {input.element_spec} vs.   "
                            f"{other.element_spec}") from None
        specs = [most_specific_compatible(a, b) for a, b in zip(input._structure.specs, other._structure.specs)]
        if any(s is None for s in specs):
            raise TypeError(f"Incompatible dataset elements:\n  {input.element_spec} vs.   {other.element_spec}")
        self._first, self._second = input, other
        self._structure = input._structure.with_specs(tuple(specs))
        a, b = input._card, other._card
        self._card = INFINITE if INFINITE in (a, b) else (UNKNOWN if UNKNOWN in (a, b) else a + b)

    def _elements(self) -> Iterator[tuple]:
        yield from self._first._elements()
        yield from self._second._elements()


class EnumerateDataset(Dataset):
    _tf_name = "_EnumerateDataset"

    def __init__(self, input: Dataset, start: Any = 0):
        self._input, self._start = input, _count(start)
        counter = Structure(0, (TensorSpec(TensorShape(()), dtypes.int64),))
        self._structure = zip_structures((counter, input._structure))
        self._card = input._card

    def _elements(self) -> Iterator[tuple]:
        for i, element in enumerate(self._input._elements(), self._start):
            yield (np.int64(i), *element)

    def _can_view(self) -> bool:
        return self._input._can_view()

    def _view(self) -> View | None:
        view = self._input._view()
        if view is None:
            return None
        return View(view.n, lambda idx: (np.asarray(idx, np.int64) + self._start, *view.take(idx)))


class ShardDataset(Dataset):
    _tf_name = "_ShardDataset"

    def __init__(self, input: Dataset, num_shards: Any, index: Any):
        from tapejax._src import errors
        self._input, self._num, self._index = input, _count(num_shards), _count(index)
        if self._num <= 0:
            raise errors.InvalidArgumentError(None, None, f"Number of shards must be greater than zero "
                                              f"(currently num_shards = {self._num}).")
        if not 0 <= self._index < self._num:
            raise errors.InvalidArgumentError(None, None, f"Index must be between 0 and {self._num - 1} "
                                              f"(currently index = {self._index}).")
        self._structure = input._structure
        n = input._card
        self._card = n if n < 0 else max(0, (n - self._index + self._num - 1) // self._num)

    def _elements(self) -> Iterator[tuple]:
        return itertools.islice(self._input._elements(), self._index, None, self._num)

    def _can_view(self) -> bool:
        return self._input._can_view()

    def _view(self) -> View | None:
        view = self._input._view()
        if view is None:
            return None
        n = max(0, (view.n - self._index + self._num - 1) // self._num)
        return View(n, lambda idx: view.take(np.asarray(idx) * self._num + self._index))


class FilterDataset(Dataset):
    """`filter(predicate)`: the predicate traced once and run compiled per element."""

    _tf_name = "_FilterDataset"

    def __init__(self, input: Dataset, predicate: Callable):
        self._input = input
        self._predicate = TracedFunction(predicate, input._structure, "Dataset.filter",
                                         sample=lambda: first(input))
        out = self._predicate.out
        if len(out.specs) != 1 or out.specs[0].dtype != dtypes.bool_ or out.specs[0].shape.rank not in (0, None):
            raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its "
                             f"return type was {out.element_spec}.")
        self._structure = input._structure
        self._card = INFINITE if input._card == INFINITE else UNKNOWN

    def _elements(self) -> Iterator[tuple]:
        for i, element in enumerate(self._input._elements()):
            if bool(np.asarray(self._predicate.single(element, i)[0])):
                yield element


class TakeWhileDataset(Dataset):
    _tf_name = "_TakeWhileDataset"

    def __init__(self, input: Dataset, predicate: Callable):
        self._input = input
        self._predicate = TracedFunction(predicate, input._structure, "Dataset.take_while")
        self._structure = input._structure
        self._card = UNKNOWN

    def _elements(self) -> Iterator[tuple]:
        for i, element in enumerate(self._input._elements()):
            if not bool(np.asarray(self._predicate.single(element, i)[0])):
                return
            yield element


class CacheDataset(Dataset):
    """`cache()`: the first complete pass is kept, as one array per component (stacked), and later passes read
    it by position; elements whose shapes differ (batches with a short last one) are kept one by one. A pass that
    stops early keeps nothing (TF's memory cache keeps nothing partial either)."""

    _tf_name = "_CacheDataset"

    def __init__(self, input: Dataset, filename: str = ""):
        self._input = input
        self._filename = filename
        self._structure = input._structure
        self._card = input._card
        self._kept: tuple | None = None
        self._lock = threading.Lock()

    def _elements(self) -> Iterator[tuple]:
        if self._filename:
            from .snapshots import cached_pass
            yield from cached_pass(self)
            return
        if self._kept is not None:
            yield from self._kept[1] if type(self._kept[1]) is list else super()._elements()
            return
        seen: list[tuple] = []
        for element in self._input._elements():
            seen.append(element)
            yield element
        with self._lock:
            if self._kept is None:
                self._kept = keep(seen)

    def _can_view(self) -> bool:
        return self._kept is not None and type(self._kept[1]) is not list

    def _view(self) -> View | None:
        if not self._can_view():
            return None
        n, arrays = self._kept
        if not arrays:
            return View(0, lambda idx: tuple(np.zeros((0, *s.shape.as_list()), s.dtype._np)
                                             for s in self._structure.specs))
        return View(n, lambda idx: tuple(a[idx] for a in arrays))


class UniqueDataset(Dataset):
    _tf_name = "_UniqueDataset"

    def __init__(self, input: Dataset):
        specs = input._structure.specs
        if len(specs) != 1 or specs[0].shape.rank != 0 or not (specs[0].dtype.is_integer):
            raise TypeError(f"`tf.data.Dataset.unique` does not support type {input.element_spec}: its elements "
                            "must be integer scalars (tapejax has no string tensors).")
        self._input = input
        self._structure = input._structure
        self._card = UNKNOWN if input._card != INFINITE else INFINITE

    def _elements(self) -> Iterator[tuple]:
        seen: set = set()
        for element in self._input._elements():
            key = int(np.asarray(element[0]))
            if key not in seen:
                seen.add(key)
                yield element
