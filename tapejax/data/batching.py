"""Stages that group elements: batch, padded_batch, unbatch, window, rebatch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tapejax import nest
from tapejax._src import errors
from tapejax._src.signature import TensorSpec
from tapejax._src.tensor import TensorShape

from .api import Dataset
from .stage import INFINITE, UNKNOWN, View, stack
from .structure import to_component
from .transforms import _count


def _batched_card(n: int, size: int, drop_remainder: bool) -> int:
    if n < 0:
        return n
    return n // size if drop_remainder else -(-n // size)


class BatchDataset(Dataset):
    """`batch(batch_size, drop_remainder)`: blocks of `batch_size` elements. It asks its input for whole blocks
    (`_blocks`), so a from_tensor_slices/shuffle/map input gives a block per gather and one vectorised map call."""

    _tf_name = "_BatchDataset"

    def __init__(self, input: Dataset, batch_size: Any, drop_remainder: bool = False):
        self._input = input
        self._size = _count(batch_size)
        if self._size <= 0:
            raise errors.InvalidArgumentError(None, None, f"Batch size must be greater than zero, got "
                                              f"{self._size}.")
        self._drop = bool(drop_remainder)
        self._structure = input._structure.batched(self._size if self._drop else None)
        self._card = _batched_card(input._card, self._size, self._drop)

    def _elements(self) -> Iterator[tuple]:
        for block in self._input._blocks(self._size):
            if self._drop and len(block[0]) < self._size:
                return
            yield block

    def _can_view(self) -> bool:
        return self._input._can_view() and (self._drop or self._input._card % self._size == 0)

    def _view(self) -> View | None:
        if not self._can_view():
            return None
        view = self._input._view()
        size = self._size
        n = _batched_card(view.n, size, self._drop)

        def take(idx: np.ndarray) -> tuple:
            blocks = [view.take(np.arange(i * size, min((i + 1) * size, view.n))) for i in np.asarray(idx)]
            return tuple(np.stack([np.asarray(b[c]) for b in blocks]) for c in range(len(blocks[0])))

        return View(n, take)


class PaddedBatchDataset(Dataset):
    """`padded_batch`: each component padded to `padded_shapes` (None or -1: the longest in the batch)."""

    _tf_name = "_PaddedBatchDataset"

    def __init__(self, input: Dataset, batch_size: Any, padded_shapes: Any = None, padding_values: Any = None,
                 drop_remainder: bool = False):
        self._input = input
        self._size = _count(batch_size)
        self._drop = bool(drop_remainder)
        structure = input._structure
        if padded_shapes is None:
            for spec in structure.specs:
                if spec.shape.dims is None:
                    raise ValueError("You must provide `padded_shapes` argument because component 0 has unknown "
                                     "rank.")
            shapes = [s.shape.as_list() for s in structure.specs]
        else:
            shapes = [TensorShape(_shape_list(s)).as_list() for s in
                      _flatten_up_to(structure.template, padded_shapes)]
        self._shapes = [[None if d in (None, -1) else int(d) for d in s] for s in shapes]
        for spec, shape in zip(structure.specs, self._shapes):
            if spec.shape.rank is not None and spec.shape.rank != len(shape):
                raise ValueError(f"The padded shape {shape} is not compatible with the shape {spec.shape} of the "
                                 "corresponding input component.")
        if padding_values is None:
            self._padding = [np.zeros((), s.dtype._np) for s in structure.specs]
        else:
            self._padding = [np.asarray(to_component(v, "Dataset.padded_batch")).astype(s.dtype._np)
                             for v, s in zip(_flatten_up_to(structure.template, padding_values), structure.specs)]
        size = self._size if self._drop else None
        self._structure = structure.with_specs(tuple(
            TensorSpec(TensorShape((size, *shape)), s.dtype) for shape, s in zip(self._shapes, structure.specs)))
        self._card = _batched_card(input._card, self._size, self._drop)

    def _elements(self) -> Iterator[tuple]:
        batch: list[tuple] = []
        for element in self._input._elements():
            batch.append(element)
            if len(batch) == self._size:
                yield self._pad(batch)
                batch = []
        if batch and not self._drop:
            yield self._pad(batch)

    def _pad(self, batch: list[tuple]) -> tuple:
        out = []
        for c, (shape, pad) in enumerate(zip(self._shapes, self._padding)):
            parts = [np.asarray(e[c]) for e in batch]
            longest = [max(p.shape[d] for p in parts) for d in range(len(shape))]
            target = [longest[d] if s is None else s for d, s in enumerate(shape)]
            for p in parts:
                if any(a > b for a, b in zip(p.shape, target)):
                    raise errors.InvalidArgumentError(
                        None, None, f"Attempted to pad to a smaller size than the input element: the element has "
                        f"shape {list(p.shape)} and the padded shape is {target}.")
            block = np.full((len(parts), *target), pad, dtype=parts[0].dtype)
            for i, p in enumerate(parts):
                block[(i, *(slice(0, d) for d in p.shape))] = p
            out.append(block)
        return tuple(out)


def _shape_list(s: Any) -> Any:
    if isinstance(s, TensorShape):
        return s
    return [int(np.asarray(getattr(d, "_value", d))) if d is not None else None for d in np.asarray(
        getattr(s, "_value", s), dtype=object).reshape(-1)] if not isinstance(s, list | tuple) else list(s)


def _flatten_up_to(template: Any, value: Any) -> list:
    """`value` flattened as deep as the element structure goes (its leaves may be shapes, lists)."""
    if not isinstance(template, tuple | dict) and not nest.is_nested(template):
        return [value]
    if isinstance(template, dict):
        return [x for k in sorted(template) for x in _flatten_up_to(template[k], value[k])]
    return [x for t, v in zip(template, value) for x in _flatten_up_to(t, v)]


class UnbatchDataset(Dataset):
    _tf_name = "_UnbatchDataset"

    def __init__(self, input: Dataset):
        for spec in input._structure.specs:
            if spec.shape.rank == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        self._input = input
        self._structure = input._structure.unbatched()
        self._card = INFINITE if input._card == INFINITE else UNKNOWN

    def _elements(self) -> Iterator[tuple]:
        for block in self._input._elements():
            host = [np.asarray(a) for a in block]
            sizes = {len(a) for a in host}
            if len(sizes) > 1:
                raise errors.InvalidArgumentError(None, None, "Input element must have the same batch size in "
                                                  "each component.")
            for i in range(sizes.pop() if sizes else 0):
                yield tuple(a[i] for a in host)


class RebatchDataset(Dataset):
    """`rebatch(batch_size)`: the elements of the input's batches regrouped into batches of `batch_size`."""

    _tf_name = "_RebatchDataset"

    def __init__(self, input: Dataset, batch_size: Any, drop_remainder: bool = False):
        self._inner = BatchDataset(UnbatchDataset(input), batch_size, drop_remainder)
        self._structure = self._inner._structure
        self._card = UNKNOWN if input._card != INFINITE else INFINITE

    def _elements(self) -> Iterator[tuple]:
        return self._inner._elements()


class WindowDataset(Dataset):
    """`window(size, shift, stride, drop_remainder)`: each element is a Dataset of `size` elements."""

    _tf_name = "_WindowDataset"

    def __init__(self, input: Dataset, size: Any, shift: Any = None, stride: Any = 1,
                 drop_remainder: bool = False):
        self._input = input
        self._size = _count(size)
        self._shift = self._size if shift is None else _count(shift)
        self._stride = _count(stride)
        self._drop = drop_remainder
        if min(self._size, self._shift, self._stride) <= 0:
            raise errors.InvalidArgumentError(None, None, "Window size, shift and stride must be positive.")
        from .api import DatasetSpec
        self._structure = input._structure.with_specs(tuple(
            DatasetSpec(s, TensorShape(())) for s in input._structure.specs))
        self._card = INFINITE if input._card == INFINITE else UNKNOWN

    def _elements(self) -> Iterator[tuple]:
        from .sources import TensorSliceDataset
        buffer = list(self._input._elements())  # a finite input (TF's window reads it as it goes)
        span = (self._size - 1) * self._stride + 1
        for start in range(0, len(buffer), self._shift):
            picked = buffer[start:start + span:self._stride]
            if not picked or (self._drop and len(picked) < self._size):
                break
            block = stack(picked, "window")
            yield tuple(_WindowComponent(_variant(TensorSliceDataset(np.asarray(b)))) for b in block)


def _variant(dataset: Dataset) -> Dataset:
    dataset._tf_name = "_VariantDataset"  # a window's dataset prints as TF's (a dataset held in a tensor)
    return dataset


class _WindowComponent:
    """A window's component: a dataset, held in the element tuple where arrays usually are."""

    __slots__ = ("dataset",)

    def __init__(self, dataset: Dataset):
        self.dataset = dataset


__all__ = ["BatchDataset", "PaddedBatchDataset", "RebatchDataset", "UnbatchDataset", "WindowDataset", "UNKNOWN"]
