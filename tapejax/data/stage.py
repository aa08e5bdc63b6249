"""The stage protocol of `tf.data`: a pipeline as a chain of stages, each a Dataset with TF's semantics.

Each stage knows its element structure (`element_spec`), its cardinality, and how to run one pass over its
elements (`_elements`: flat tuples of arrays). A stage whose elements can be fetched by position for one pass
(a `View`: from_tensor_slices, range, and map, shuffle, batch, take, skip, enumerate, zip, shard, repeat over
such stages) lets `batch` fetch a whole block at once: a shuffle is then a permutation of positions, and a
`map` before the `batch` runs vectorised by `jax.vmap` over the block. Every fast path computes exactly what the
element-by-element path computes (same order, same random numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from tapejax._src import errors
from tapejax._src.tensor import EagerTensor

from .structure import Structure

AUTOTUNE = -1
INFINITE = -1
UNKNOWN = -2
_ROWS = 64  # elements fetched per block when a view is iterated element by element


class View(NamedTuple):
    """One pass over a stage by position: `n` elements, `take(positions)` a block of them (leading dim)."""

    n: int
    take: Callable[[np.ndarray], tuple]


def rows(block: tuple) -> Iterator[tuple]:
    """The elements of a block, one tuple of arrays each (a JAX block is copied to host memory once)."""
    host = [np.asarray(a) for a in block]
    for i in range(len(host[0]) if host else 0):
        yield tuple(a[i] for a in host)


def stack(elements: list[tuple], api: str = "batch") -> tuple:
    """A block of elements: each component stacked, TF's InvalidArgumentError if their shapes differ."""
    out = []
    for c in range(len(elements[0])):
        parts = [np.asarray(e[c]) for e in elements]
        first = parts[0].shape
        for i, p in enumerate(parts):
            if p.shape != first:
                raise errors.InvalidArgumentError(
                    None, None, f"Cannot {api} tensors with different shapes in component {c}. First element had "
                    f"shape {list(first)} and element {i} had shape {list(p.shape)}.")
        block = np.stack(parts)
        out.append(block.astype(object) if block.dtype.kind in "SU" else block)  # strings stay object arrays
    return tuple(out)


def keep(elements: list[tuple]) -> tuple[int, tuple | list]:
    """What a cache (or a saved dataset) keeps of a pass: (n, one stacked array per component), read by position;
    or, where the elements' shapes differ (a short last batch), (n, the elements themselves), read one by one."""
    if elements and any(np.shape(e[c]) != np.shape(elements[0][c]) for e in elements for c in range(len(e))):
        return len(elements), list(elements)
    return len(elements), stack(elements, "cache") if elements else ()


class Stage:
    """What every stage of a pipeline is: its structure, cardinality and passes (`Dataset` adds TF's methods)."""

    _structure: Structure
    _card: int = UNKNOWN
    _tf_name = "_Dataset"

    # -- the stage protocol ---------------------------------------------------------------------------------

    def _elements(self) -> Iterator[tuple]:
        """One pass over the elements, each a flat tuple of arrays."""
        view = self._view()
        if view is None:
            raise NotImplementedError(type(self).__name__)
        for start in range(0, view.n, _ROWS):
            yield from rows(view.take(np.arange(start, min(start + _ROWS, view.n))))

    def _view(self) -> View | None:
        """A pass by position, or None where positions are not known in advance (filter, generators...)."""
        return None

    def _can_view(self) -> bool:
        """Whether `_view` gives a View (asked without starting a pass: a pass may draw a shuffle order)."""
        return False

    def _blocks(self, size: int) -> Iterator[tuple]:
        """One pass, `size` elements at a time (the last block may be shorter)."""
        view = self._view()
        if view is not None:
            for start in range(0, view.n, size):
                yield view.take(np.arange(start, min(start + size, view.n)))
            return
        batch: list[tuple] = []
        for element in self._elements():
            batch.append(element)
            if len(batch) == size:
                yield stack(batch)
                batch = []
        if batch:
            yield stack(batch)

    def _inputs(self) -> list[Stage]:
        return []

    # -- structure --------------------------------------------------------------------------------------------

    @property
    def element_spec(self) -> Any:
        """The structure of an element, each component a `tf.TensorSpec` (None for dimensions that vary)."""
        return self._structure.element_spec

    def cardinality(self) -> Any:
        """The number of elements as an int64 scalar; `tf.data.INFINITE_CARDINALITY` (-1) or
        `UNKNOWN_CARDINALITY` (-2)."""
        return EagerTensor(np.asarray(self._card, np.int64))

    def __len__(self) -> int:
        if self._card == INFINITE:
            raise TypeError("The dataset is infinite.")
        if self._card == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return self._card

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<{self._tf_name} element_spec={self.element_spec}>"

    # -- iteration ----------------------------------------------------------------------------------------------

    def __iter__(self) -> Any:
        from .iteration import OwnedIterator
        return OwnedIterator(self)

    def _ag_for_stmt(self, *loop: Any) -> tuple:
        """AutoGraph's `for x in dataset:` inside a tf.function: a graph loop (graph_loop.py)."""
        from .graph_loop import for_stmt
        return for_stmt(self, *loop)

    def as_numpy_iterator(self) -> Any:
        """Iterates the elements as numpy values (`Dataset.as_numpy_iterator`)."""
        from .iteration import NumpyIterator
        return NumpyIterator(self)
