"""The batches `fit`, `evaluate` and `predict` iterate: from arrays (sliced, shuffled each epoch), `tf.data`
datasets, Python generators and `keras.utils.PyDataset`s, as Keras 3's epoch iterator yields them.

An epoch is one pass over the data, or `steps_per_epoch` batches: then the iterator goes on where the last epoch
stopped (and starts over when it runs out), as in Keras.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Iterator
from typing import Any

import jax
import numpy as np

import tapejax as tf


def unpack_x_y_sample_weight(data: Any) -> tuple[Any, Any, Any]:
    """(x, y, sample_weight) from a batch: a tuple of one, two or three, or just x."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                     f"found: {data}")


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    if y is None:
        return x if isinstance(x, tuple | list) is False else (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray | tf.Tensor | tf.Variable | jax.Array | list) or np.isscalar(value)


def _leaves(structure: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(structure, is_leaf=lambda v: isinstance(v, tf.Tensor | tf.Variable))


def _as_numpy(structure: Any) -> Any:
    def convert(value: Any) -> Any:
        if value is None:
            return None
        return value.numpy() if isinstance(value, tf.Tensor | tf.Variable) else np.asarray(value)
    return jax.tree_util.tree_map(convert, structure, is_leaf=lambda v: isinstance(v, tf.Tensor | tf.Variable))


def _is_dataset(value: Any) -> bool:
    return isinstance(value, tf.data.Dataset)


def train_validation_split(arrays: tuple[Any, ...], validation_split: float) -> tuple[tuple, tuple]:
    """The first `1 - validation_split` of the samples for training, the rest for validation (no shuffling)."""
    leaves = [leaf for leaf in _leaves(arrays) if leaf is not None]
    if not all(_is_array(leaf) for leaf in leaves):
        raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays, found following types "
                         f"in the input: {sorted({type(leaf).__name__ for leaf in leaves})}")
    arrays = _as_numpy(arrays)
    samples = {len(leaf) for leaf in _leaves(arrays) if leaf is not None}
    split_at = int(math.floor(samples.pop() * (1.0 - validation_split)))
    if split_at == 0 or split_at == len(_leaves(arrays)[0]):
        raise ValueError(f"Training data contains {len(_leaves(arrays)[0])} samples, which is not sufficient to "
                         f"split it into a validation and training set as specified by `validation_split="
                         f"{validation_split}`. Either provide more data, or a different value for the "
                         "`validation_split` argument.")
    cut = lambda part: jax.tree_util.tree_map(lambda a: None if a is None else a[part], arrays,
                                              is_leaf=lambda v: v is None or isinstance(v, tf.Tensor | tf.Variable))
    return cut(slice(None, split_at)), cut(slice(split_at, None))


def class_weight_to_sample_weights(y: Any, class_weight: dict[int, float]) -> np.ndarray:
    """Each sample's weight is its class's (the label, or the arg max of a one-hot label)."""
    y = np.asarray(y)
    classes = np.argmax(y, axis=-1) if y.ndim > 1 and y.shape[-1] > 1 else y.reshape(len(y), -1)[:, 0]
    table = np.ones(int(max(max(class_weight), classes.max())) + 1, np.float32)
    for cls, weight in class_weight.items():
        table[int(cls)] = weight
    return table[classes.astype(np.int64)]


class EpochIterator:
    """Batches of (x, y, sample_weight) (or x alone for predict) for each epoch; `num_batches` is None when the
    data does not say how many."""

    def __init__(self, x: Any, y: Any = None, sample_weight: Any = None, batch_size: int | None = None,
                 steps_per_epoch: int | None = None, shuffle: Any = False, class_weight: Any = None):
        self.steps_per_epoch, self._shuffle, self._iterator, self.ran_out = steps_per_epoch, shuffle, None, False
        self._arrays = None
        if _is_dataset(x) or hasattr(x, "__getitem__") and hasattr(x, "__len__") and not _is_array(x) \
                and not isinstance(x, dict | tuple):
            if y is not None or sample_weight is not None:
                raise ValueError("`y` and `sample_weight` must be None when `x` is a dataset, a generator or a "
                                 f"PyDataset; received y={type(y).__name__}.")
            if batch_size is not None and _is_dataset(x):
                raise ValueError("The `batch_size` argument must not be specified for the given input type. "
                                 f"Received input: {x}, batch_size: {batch_size}")
            self._source, self._class_weight = x, class_weight
            size = int(x.cardinality()) if _is_dataset(x) else len(x)
            self._size = size if size >= 0 else None
        elif isinstance(x, Iterator) or hasattr(x, "__next__"):
            self._source, self._size, self._class_weight = x, None, class_weight
        else:
            if class_weight is not None:
                if sample_weight is not None:
                    raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
                sample_weight = class_weight_to_sample_weights(_as_numpy(y), class_weight)
            self._arrays = _as_numpy((x, y, sample_weight))
            lengths = {len(leaf) for leaf in _leaves(self._arrays) if leaf is not None and np.ndim(leaf)}
            if len(lengths) > 1:
                raise ValueError(f"Data cardinality is ambiguous: the arrays have different numbers of samples "
                                 f"{sorted(lengths)}. Make sure all arrays contain the same number of samples.")
            self._samples = lengths.pop() if lengths else 0
            self._batch_size = batch_size or 32
            self._size = math.ceil(self._samples / self._batch_size)

    @property
    def batch_unknown(self) -> bool:
        """Whether the batch dimension is unknown (None) in the step's trace, as in Keras's data adapters on TF: for
        arrays, when the last batch is partial; for a dataset, as its `element_spec` says; for generators and
        PyDatasets, always (their batch size is not guaranteed)."""
        if self._arrays is not None:
            return self._samples % self._batch_size != 0
        if _is_dataset(self._source):
            return any(spec.shape.rank and spec.shape[0] is None
                       for spec in tf.nest.flatten(self._source.element_spec) if hasattr(spec, "shape"))
        return True

    @property
    def num_batches(self) -> int | None:
        return self.steps_per_epoch or self._size

    def _array_batches(self) -> Iterator[Any]:
        order = np.arange(self._samples)
        if self._shuffle == "batch":
            starts = np.random.permutation(self._size) * self._batch_size
        else:
            if self._shuffle:
                order = np.random.permutation(self._samples)
            starts = np.arange(self._size) * self._batch_size
        for start in starts:
            index = order[start:start + self._batch_size]
            if self._shuffle != "batch" and not self._shuffle:
                index = slice(start, start + self._batch_size)
            yield self._rows(index)

    def _rows(self, index: Any) -> Any:
        """The arrays' rows at `index`, as Keras yields a batch: x alone (`(x,)` if x is a list or tuple), (x, y)
        or (x, y, sample_weight)."""
        x, y, sample_weight = jax.tree_util.tree_map(lambda a: None if a is None else a[index], self._arrays,
                                                     is_leaf=lambda v: v is None or isinstance(v, tf.Tensor | tf.Variable))
        return pack_x_y_sample_weight(x) if y is None and sample_weight is None else (x, y) \
            if sample_weight is None else (x, y, sample_weight)

    def _new_iterator(self) -> Iterator[Any]:
        if self._arrays is not None:
            return self._array_batches()
        if isinstance(self._source, Iterator) or hasattr(self._source, "__next__"):
            return self._source
        if _is_dataset(self._source):
            return iter(self._source)
        # A PyDataset / Sequence: with `shuffle`, Keras shuffles its batch order with Python's `random`, as here.
        indices = list(range(len(self._source)))
        if self._shuffle:
            random.shuffle(indices)
        return (self._source[i] for i in indices)

    def _with_class_weight(self, data: Any) -> Any:
        if self._arrays is not None or self._class_weight is None:
            return data
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        return x, y, class_weight_to_sample_weights(_as_numpy(y), self._class_weight)

    def ahead(self) -> Iterator[tuple[int, Any, Any]]:
        """(step, batch, the next batch or None) for one epoch, the next batch fetched before the step runs (as a
        prefetching tf.data iterator does), for arrays and datasets iterated a whole pass at a time; a generator's
        or a `steps_per_epoch` epoch's next batch belongs to whoever reads it next, so it is not looked at."""
        if self.steps_per_epoch is not None or (self._arrays is None and not _is_dataset(self._source)):
            yield from self.without_ahead()
            return
        batches = iter(self)
        current = next(batches, None)
        while current is not None:
            upcoming = next(batches, None)
            yield (*current, None if upcoming is None else upcoming[1])
            current = upcoming

    def without_ahead(self) -> Iterator[tuple[int, Any, Any]]:
        for step, data in self:
            yield step, data, None

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        """(step, batch) for one epoch; `ran_out` tells afterwards whether the epoch found no data at all."""
        if self.steps_per_epoch is None or self._iterator is None:
            self._iterator = self._new_iterator()
        step, self.ran_out = 0, False
        while self.steps_per_epoch is None or step < self.steps_per_epoch:
            try:
                data = next(self._iterator)
            except StopIteration:
                self._iterator = None  # the next epoch starts a new pass
                if self._size is None and self.steps_per_epoch is None:
                    self._size = step
                if step == 0:
                    self.ran_out = True
                    warnings.warn("Your input ran out of data; interrupting training. Make sure that your dataset "
                                  "or generator can generate at least `steps_per_epoch * epochs` batches. You may "
                                  "need to use the `.repeat()` function when building your dataset.", stacklevel=3)
                return
            yield step, self._with_class_weight(data)
            step += 1
