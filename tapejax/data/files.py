"""Datasets read from files: `TextLineDataset` (lines), `TFRecordDataset` (records), `Dataset.list_files`.

Their elements are scalar strings, kept as numpy object arrays of bytes (strings live on the host); a map over
them runs eagerly, per element (traced.py). Files are read lazily, one after the other, on each pass.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from tapejax._src import dtypes, errors
from tapejax._src.signature import TensorSpec
from tapejax._src.tensor import TensorShape

from .api import Dataset
from .structure import Structure


def _filenames(filenames: Any, api: str) -> list[str]:
    from tapejax.io.files import path_of
    from tapejax.ops.strings import _strings
    if isinstance(filenames, Dataset):
        return [path_of(np.asarray(e[0], dtype=object).item(), api) for e in filenames._elements()]
    if isinstance(filenames, str | bytes):
        return [path_of(filenames, api)]
    return [path_of(f, api) for f in np.atleast_1d(_strings(filenames, api)).tolist()]


def _scalar_strings() -> Structure:
    return Structure(0, (TensorSpec(TensorShape(()), dtypes.string),))


def _string(value: bytes) -> tuple:
    return (np.asarray(value, dtype=object),)


class TextLineDataset(Dataset):
    """The lines of text files, without their line endings (`tf.data.TextLineDataset`)."""

    _tf_name = "_TextLineDataset"

    def __init__(self, filenames: Any, compression_type: str | None = None, buffer_size: Any = None,
                 num_parallel_reads: Any = None, name: str | None = None):
        self._files = _filenames(filenames, "TextLineDataset")
        self._compression = (compression_type or "").upper()
        self._structure = _scalar_strings()

    def _elements(self) -> Iterator[tuple]:
        from tapejax.io.files import not_found
        for path in self._files:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                raise not_found(path) from None
            if self._compression == "GZIP":
                data = gzip.decompress(data)
            elif self._compression == "ZLIB":
                data = zlib.decompress(data)
            lines = data.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()  # a final newline ends the last line; it does not start another
            for line in lines:
                yield _string(line[:-1] if line.endswith(b"\r") else line)


class TFRecordDataset(Dataset):
    """The records of TFRecord files, as scalar strings (`tf.data.TFRecordDataset`); a record whose CRC does
    not match raises DataLossError, as in TF."""

    _tf_name = "_TFRecordDataset"

    def __init__(self, filenames: Any, compression_type: str | None = None, buffer_size: Any = None,
                 num_parallel_reads: Any = None, name: str | None = None):
        self._files = _filenames(filenames, "TFRecordDataset")
        self._compression = compression_type
        self._structure = _scalar_strings()

    def _elements(self) -> Iterator[tuple]:
        from tapejax.io.tfrecord import read_records
        for path in self._files:
            for record in read_records(path, self._compression):
                yield _string(record)


def list_files(file_pattern: Any, shuffle: bool | None = None, seed: Any = None, name: str | None = None) -> Dataset:
    """The files matching glob patterns, sorted, then shuffled unless `shuffle=False` (`Dataset.list_files`)."""
    from tapejax.io.files import matching_files
    names = matching_files(file_pattern)
    if not names.shape[0]:
        raise errors.InvalidArgumentError(None, None, "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be "
                                          f"true. Summarized data: b'No files matched pattern: "
                                          f"{file_pattern if isinstance(file_pattern, str) else file_pattern!r}'")
    dataset = Dataset.from_tensor_slices(names)
    return dataset.shuffle(names.shape[0], seed=seed) if shuffle is None or shuffle else dataset
