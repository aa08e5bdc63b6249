"""`Dataset.save` / `Dataset.load` and `cache(filename)`: a dataset's elements written to disk once and read back.

The file holds the element structure (nest and `tf.TensorSpec`s) and the elements, one numpy array per component
stacked over the elements where every element has one shape, else one array per element. It is pickled (with
numpy arrays inside), so strings (object arrays) and nests of namedtuples round-trip.

Differences from TensorFlow: TF writes its snapshot format (`save`: a directory of TFRecord shards and protobuf
metadata; `cache`: a tensor bundle `filename.index` / `.data-*`). tapejax writes its own file, so a dataset saved
by TF cannot be loaded by tapejax nor the reverse; within tapejax `save`/`load` and the file cache keep TF's
semantics (the element_spec and order round-trip; a cache file is written by the first complete pass, read by
every later pass and by any dataset cached under the same name, also in another process).
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from .api import Dataset
from .stage import View, keep
from .structure import Structure

_FILE = "tapejax_dataset.pkl"
_CACHE_SUFFIX = ".tapejax-cache"


def _write(path: str, structure: Structure, elements: list[tuple]) -> None:
    n, kept = keep(elements)
    stacked = bool(n) and type(kept) is not list
    columns = kept if stacked else [[np.asarray(e[c]) for e in elements] for c in range(len(structure))]
    record = {"template": structure.template, "specs": structure.specs, "n": n, "stacked": stacked,
              "columns": columns}
    tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
    with open(tmp, "wb") as f:
        pickle.dump(record, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)  # whole or absent: a reader never sees half a file


def _read(path: str) -> dict:
    with open(path, "rb") as f:
        return pickle.load(f)


def save(dataset: Dataset, path: str, compression: Any = None, shard_func: Any = None,
         checkpoint_args: Any = None) -> None:
    """Writes every element of one pass of `dataset` under the directory `path`."""
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    _write(os.path.join(path, _FILE), dataset._structure, list(dataset._elements()))


class LoadedDataset(Dataset):
    """What `Dataset.load` reads: the saved elements, by position."""

    _tf_name = "_LoadDataset"

    def __init__(self, record: dict):
        self._structure = Structure(record["template"], record["specs"])
        self._record = record
        self._card = record["n"]

    def _elements(self) -> Iterator[tuple]:
        if self._record["stacked"]:
            yield from super()._elements()
            return
        columns = self._record["columns"]
        for i in range(self._card):
            yield tuple(c[i] for c in columns)

    def _can_view(self) -> bool:
        return self._record["stacked"]

    def _view(self) -> View | None:
        if not self._record["stacked"]:
            return None
        columns = self._record["columns"]
        return View(self._card, lambda idx: tuple(c[idx] for c in columns))


def load(path: str, element_spec: Any = None, compression: Any = None, reader_func: Any = None) -> Dataset:
    """The dataset `save` wrote under `path` (its element_spec is the saved one; a given one must match)."""
    from tapejax._src import errors
    file = os.path.join(os.fspath(path), _FILE)
    if not os.path.exists(file):
        raise errors.NotFoundError(None, None, f"Could not find a dataset saved by tapejax under {path}.")
    out = LoadedDataset(_read(file))
    if element_spec is not None and element_spec != out.element_spec:
        raise ValueError(f"The given element_spec {element_spec} does not match the saved one {out.element_spec}.")
    return out


def cached_pass(stage: Any) -> Iterator[tuple]:
    """One pass of a CacheDataset with a filename: from the file if a complete pass wrote it, else from the
    input, writing the file at the end of a complete pass."""
    file = stage._filename + _CACHE_SUFFIX
    if stage._kept is None and os.path.exists(file):
        record = _read(file)
        if not record["stacked"] and record["n"]:  # elements of several shapes: read one by one
            columns = record["columns"]
            yield from (tuple(c[i] for c in columns) for i in range(record["n"]))
            return
        stage._kept = (record["n"], tuple(record["columns"]) if record["n"] else ())
    if stage._kept is not None:
        n, arrays = stage._kept
        if type(arrays) is list:  # elements of several shapes, kept one by one
            yield from arrays
            return
        for i in range(n):
            yield tuple(a[i] for a in arrays)
        return
    seen: list[tuple] = []
    for element in stage._input._elements():
        seen.append(element)
        yield element
    with stage._lock:
        if stage._kept is None:
            stage._kept = keep(seen)
            if not os.path.exists(file):
                _write(file, stage._structure, seen)


__all__ = ["LoadedDataset", "cached_pass", "load", "save"]
