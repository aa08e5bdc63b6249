"""`tf.data.experimental.make_csv_dataset`: CSV files as batches of (features dict, label), with TF's column
type inference (int32, int64, float32, float64, then string, from the first rows) and TF's pipeline order
(shuffle, repeat for `num_epochs`, batch, prefetch)."""

from __future__ import annotations

import collections
import csv
import glob
import os
from typing import Any

import numpy as np

from tapejax._src import dtypes, errors

from .api import Dataset

_ORDER = (np.int32, np.int64, np.float32, np.float64)


def _infer(values: list[str], na_value: str) -> Any:
    """The narrowest of TF's types every (non-missing) value parses as; string if none."""
    present = [v for v in values if v != na_value and v != ""]
    for t in _ORDER:
        try:
            for v in present:
                if np.issubdtype(t, np.integer):
                    x = int(v)
                    if not np.iinfo(t).min <= x <= np.iinfo(t).max:
                        raise ValueError(v)
                else:
                    float(v)
            return t
        except ValueError:
            continue
    return object


def _parse(values: list[str], kind: Any, default: Any, na_value: str, name: str) -> np.ndarray:
    out = []
    for v in values:
        if v == "" or v == na_value:
            if default is None:
                raise errors.InvalidArgumentError(None, None, f"Field {name} is required but missing.")
            out.append(default)
        elif kind is object:
            out.append(v.encode())
        else:
            out.append(kind(v) if np.issubdtype(kind, np.integer) else float(v))
    return np.asarray(out, dtype=kind) if kind is not object else np.asarray(out, dtype=object)


def _kind_of(default: Any) -> Any:
    """The column type a `column_defaults` entry gives: a dtype (required column) or a value's type."""
    if isinstance(default, dtypes.DType) or (isinstance(default, type) and default is not str):
        return dtypes.as_dtype(default)._np.type, None
    if isinstance(default, bool | int | float) and not isinstance(default, np.generic):
        return (np.float32, default) if isinstance(default, float) else (np.int32, default)  # TF's Python types
    value = np.asarray(getattr(default, "_value", default))
    if value.dtype.kind in "OSU":
        item = value.item()
        return object, item if isinstance(item, bytes) else str(item).encode()
    return value.dtype.type, value.item()


def make_csv_dataset(file_pattern: Any, batch_size: int, column_names: Any = None, column_defaults: Any = None,
                     label_name: str | None = None, select_columns: Any = None, field_delim: str = ",",
                     use_quote_delim: bool = True, na_value: str = "", header: bool = True, num_epochs: Any = None,
                     shuffle: bool = True, shuffle_buffer_size: int = 10000, shuffle_seed: Any = None,
                     prefetch_buffer_size: Any = None, num_parallel_reads: Any = None, sloppy: bool = False,
                     num_rows_for_inference: int = 100, compression_type: Any = None, ignore_errors: bool = False,
                     encoding: str = "utf-8") -> Dataset:
    """Reads CSV files into a dataset of (OrderedDict of feature batches, label batch) (TF's function).

    Differences from TensorFlow: the files are read when this is called (TF reads them lazily); `compression_type`
    other than None and `ignore_errors` are not supported.
    """
    patterns = [file_pattern] if isinstance(file_pattern, str | bytes | os.PathLike) else list(file_pattern)
    files = sorted(f for p in patterns for f in glob.glob(os.fsdecode(p)))
    if not files:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    rows: list[list[str]] = []
    names = list(column_names) if column_names is not None else None
    for path in files:
        with open(path, encoding=encoding, newline="") as f:
            reader = csv.reader(f, delimiter=field_delim, quoting=csv.QUOTE_MINIMAL if use_quote_delim
                                else csv.QUOTE_NONE)
            lines = [r for r in reader if r]
        if header:
            if names is None:
                names = lines[0]
            lines = lines[1:]
        rows.extend(lines)
    if names is None:
        raise ValueError("Expected `column_names` when `header` is False.")
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. Received: {label_name}.")
    keep = list(select_columns) if select_columns is not None else names
    keep = [names[c] if isinstance(c, int) else c for c in keep]
    columns = {n: [r[i] if i < len(r) else "" for r in rows] for i, n in enumerate(names)}
    features: collections.OrderedDict = collections.OrderedDict()
    for i, name in enumerate(names):
        if name not in keep:
            continue
        if column_defaults is not None:
            kind, default = _kind_of(list(column_defaults)[keep.index(name) if select_columns else i])
        else:
            kind = _infer(columns[name][:num_rows_for_inference], na_value)
            default = b"" if kind is object else kind(0)
        features[name] = _parse(columns[name], kind, default, na_value, name)
    if label_name is not None:
        label = features.pop(label_name)
        ds = Dataset.from_tensor_slices((features, label))
    else:
        ds = Dataset.from_tensor_slices(features)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None)
    return ds.prefetch(prefetch_buffer_size if prefetch_buffer_size is not None else -1)


__all__ = ["make_csv_dataset"]
