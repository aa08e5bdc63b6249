"""`shuffle(buffer_size, seed, reshuffle_each_iteration)` with TF's buffer semantics.

A buffer holds the next `buffer_size` elements; each output is a uniformly chosen element of the buffer, whose
place the next input element takes (once the input is exhausted, the buffer's last element takes it). So a
buffer of 1 keeps the order, and a buffer at least as long as the dataset gives a uniform permutation. The
random numbers are numpy's (PCG64), not TF's Philox stream: the order is TF's kind of order, never TF's order.

Over an input with positions (from_tensor_slices, range, map...), the same algorithm runs over the positions
only, and the elements are then fetched by position in blocks: the buffer holds integers, not elements, and the
order is the one the element-by-element path gives with the same seed.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from tapejax._src import errors
from tapejax._src.context import CONTEXT

from .api import Dataset
from .stage import View
from .transforms import _count

_DEFAULT_GLOBAL_SEED = 87654321  # TF's, when only an op seed is given


class _Draws:
    """Uniform floats in [0, 1) from one generator, drawn in chunks (the same numbers however they are read)."""

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._chunk = np.empty(0)
        self._at = 0

    def index(self, n: int) -> int:
        if self._at == len(self._chunk):
            self._chunk, self._at = self._rng.random(4096), 0
        u = self._chunk[self._at]
        self._at += 1
        return min(int(u * n), n - 1)


def shuffled(items: Iterator[Any], buffer_size: int, draws: _Draws) -> Iterator[Any]:
    """TF's shuffle buffer over any items (elements, or their positions)."""
    buffer: list = list(itertools.islice(items, buffer_size))
    for item in items:
        j = draws.index(len(buffer))
        yield buffer[j]
        buffer[j] = item
    while buffer:
        j = draws.index(len(buffer))
        yield buffer[j]
        buffer[j] = buffer[-1]
        buffer.pop()


class ShuffleDataset(Dataset):
    _tf_name = "_ShuffleDataset"

    def __init__(self, input: Dataset, buffer_size: Any, seed: Any = None,
                 reshuffle_each_iteration: bool | None = None):
        self._input = input
        self._buffer = _count(buffer_size)
        if self._buffer == -1:  # AUTOTUNE: TF then buffers the whole dataset
            self._buffer = input._card if input._card >= 0 else 1 << 20
        if self._buffer <= 0:
            raise errors.InvalidArgumentError(None, None, f"buffer_size must be greater than zero or "
                                              f"UNKNOWN_CARDINALITY, got {self._buffer}.")
        self._reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        self._seeds = _op_seeds(None if seed is None else _count(seed))
        self._epochs = itertools.count()
        self._structure = input._structure
        self._card = input._card

    def _draws(self) -> _Draws:
        epoch = next(self._epochs) if self._reshuffle else 0
        return _Draws(np.random.Generator(np.random.PCG64([*self._seeds, epoch])))

    def _elements(self) -> Iterator[tuple]:
        if self._input._can_view():
            yield from super()._elements()
            return
        yield from shuffled(self._input._elements(), self._buffer, self._draws())

    def _can_view(self) -> bool:
        return self._input._can_view()

    def _view(self) -> View | None:
        if not self._can_view():
            return None
        view = self._input._view()
        order = np.fromiter(shuffled(iter(range(view.n)), self._buffer, self._draws()), np.int64, view.n)
        return View(view.n, lambda idx: view.take(order[np.asarray(idx)]))


def _op_seeds(seed: int | None) -> tuple[int, int]:
    """(global seed, op seed) by TF's rules: with neither, fresh entropy; with only a global seed, an op seed
    from the global sequence, so that the program's orders repeat run after run."""
    state = CONTEXT
    if state.global_seed is None and seed is None:
        return int.from_bytes(os.urandom(4), "little"), int.from_bytes(os.urandom(4), "little")
    if seed is None:
        op = state.seed_counter
        state.seed_counter += 1
        return state.global_seed, op
    return (_DEFAULT_GLOBAL_SEED if state.global_seed is None else state.global_seed), seed
