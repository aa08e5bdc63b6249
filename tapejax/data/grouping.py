"""`group_by_window` and `bucket_by_sequence_length`: elements grouped by a key, each full window reduced to a
dataset; at the end of the input the windows left are reduced in ascending key order, as TF's kernel (whose
groups are an ordered map) does."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapejax._src import errors
from tapejax._src.signature import TensorSpec
from tapejax._src.tensor import EagerTensor, TensorShape

from .api import Dataset
from .stage import UNKNOWN
from .structure import Structure


class WindowDataset(Dataset):
    """One window of a group: its elements, kept as they came (reduce_func's argument)."""

    _tf_name = "_WindowDataset"

    def __init__(self, structure: Structure, elements: list[tuple]):
        self._structure = structure
        self._items = elements
        self._card = len(elements)

    def _elements(self) -> Iterator[tuple]:
        return iter(list(self._items))


def _scalar(value: Any, api: str) -> int:
    array = np.asarray(getattr(value, "_value", value))
    if array.shape != () or array.dtype.kind not in "iu":
        raise ValueError(f"`{api}` must return a scalar int64 tensor, got shape {array.shape} and dtype "
                         f"{array.dtype}.")
    return int(array)


class GroupByWindowDataset(Dataset):
    _tf_name = "_GroupByWindowDataset"

    def __init__(self, input: Dataset, key_func: Callable, reduce_func: Callable, window_size: Any = None,
                 window_size_func: Callable | None = None, structure: Structure | None = None):
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be "
                             "specified.")
        if window_size is not None:
            size = _scalar(window_size, "window_size")
            window_size_func = lambda key: size  # noqa: E731
        self._input, self._key, self._reduce, self._size = input, key_func, reduce_func, window_size_func
        self._card = UNKNOWN
        if structure is None:  # TF traces reduce_func on a window of unknown size: here, an empty window
            out = reduce_func(EagerTensor(np.int64(0)), WindowDataset(input._structure, []))
            if not isinstance(out, Dataset):
                raise TypeError(f"`reduce_func` must return a `Dataset` object, got {type(out).__name__}.")
            structure = out._structure
        self._structure = structure

    def _call(self, fn: Callable, element: tuple) -> Any:
        value = self._input._structure.tensors(element)
        return fn(*value) if isinstance(value, tuple) else fn(value)

    def _reduced(self, key: int, window: list[tuple]) -> Iterator[tuple]:
        out = self._reduce(EagerTensor(np.int64(key)), WindowDataset(self._input._structure, window))
        if not isinstance(out, Dataset):
            raise TypeError(f"`reduce_func` must return a `Dataset` object, got {type(out).__name__}.")
        yield from out._elements()

    def _elements(self) -> Iterator[tuple]:
        groups: dict[int, list[tuple]] = {}
        sizes: dict[int, int] = {}
        for element in self._input._elements():
            key = _scalar(self._call(self._key, element), "key_func")
            if key not in sizes:
                sizes[key] = _scalar(self._size(EagerTensor(np.int64(key))), "window_size_func")
                if sizes[key] <= 0:
                    raise errors.InvalidArgumentError(None, None, f"Window size must be greater than zero, but "
                                                      f"got {sizes[key]}.")
            group = groups.setdefault(key, [])
            group.append(element)
            if len(group) == sizes[key]:
                del groups[key]
                yield from self._reduced(key, group)
        for key in sorted(groups):
            yield from self._reduced(key, groups[key])


def bucket_by_sequence_length(input: Dataset, element_length_func: Callable, bucket_boundaries: Any,
                              bucket_batch_sizes: Any, padded_shapes: Any = None, padding_values: Any = None,
                              pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                              drop_remainder: bool = False) -> Dataset:
    """TF's `bucket_by_sequence_length`: bucket i holds lengths in [boundaries[i-1], boundaries[i]), batched by
    bucket_batch_sizes[i] and padded (to the longest in the batch, or to boundaries[i] - 1)."""
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                         f"`len(bucket_batch_sizes)={len(sizes)}` and `len(bucket_boundaries)={len(boundaries)}`.")
    if boundaries != sorted(boundaries):
        raise ValueError("`bucket_boundaries` must be sorted.")
    lows, highs = [np.iinfo(np.int32).min, *boundaries], [*boundaries, np.iinfo(np.int32).max]

    def bucket_id(*element: Any) -> int:
        length = _scalar(element_length_func(*element), "element_length_func")
        if pad_to_bucket_boundary and length >= max(boundaries):
            raise errors.InvalidArgumentError(None, None, "When pad_to_bucket_boundary=True, elements must have "
                                              "length < max(bucket_boundaries).")
        return next(i for i, (lo, hi) in enumerate(zip(lows, highs)) if lo <= length < hi)

    def shapes_for(key: int) -> Any:
        if not pad_to_bucket_boundary:
            return padded_shapes
        fill = boundaries[key] - 1 if key < len(boundaries) else None
        return input._structure.pack([TensorShape([fill if d is None else d for d in s.shape.as_list()])
                                      for s in input._structure.specs])

    def batching(key: Any, window: Dataset) -> Dataset:
        k = int(np.asarray(key._value))
        if no_padding:
            return window.batch(sizes[k], drop_remainder=drop_remainder)
        return window.padded_batch(sizes[k], shapes_for(k), padding_values, drop_remainder=drop_remainder)

    window = WindowDataset(input._structure, [])
    template = window.batch(1) if no_padding else window.padded_batch(1, padded_shapes, padding_values)
    # TF's element_spec: the batch dimension unknown, and padded dimensions unknown where the shapes differ
    specs = tuple(TensorSpec(TensorShape([None, *(d if not pad_to_bucket_boundary else None
                                                  for d in s.shape.as_list()[1:])]), s.dtype)
                  for s in template._structure.specs)
    return GroupByWindowDataset(input, bucket_id, batching, window_size_func=lambda key: sizes[int(key)],
                                structure=template._structure.with_specs(specs))


__all__ = ["GroupByWindowDataset", "WindowDataset", "bucket_by_sequence_length"]
