"""TensorFlow's tensor bundle: a checkpoint's `PREFIX.index` table and `PREFIX.data-00000-of-00001` shard.

The index (see checkpoint_table.py) maps each tensor's key to a `BundleEntryProto` (dtype, shape, shard, offset,
size, masked CRC-32C of the bytes), and the empty key to a `BundleHeaderProto` (shard count, endianness,
version). The data shard holds the tensors' bytes back to back, little-endian, C order. A string tensor's bytes
are the varint lengths of its elements, a masked CRC-32C of those lengths (4 bytes), then the elements; its
checksums cover the lengths as fixed 4-byte integers (not varints), as TF computes them.

The two messages are declared here at run time with protobuf's descriptor API, with TF's field numbers, in a
private pool (TF's own classes may be loaded in the same process); `crc32c` comes from the `google-crc32c`
package, imported only when a checkpoint is read or written.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from . import checkpoint_table as table
from .errors import DataLossError, NotFoundError

DATA_SUFFIX = ".data-00000-of-00001"
_INSTALL = "pip install google-crc32c tensorboard  (or: pip install tapejax[checkpoint])"

# TF's DataType enum (types.proto) for the dtypes tapejax has.
_ENUMS = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3, np.dtype(np.uint8): 4,
          np.dtype(np.int16): 5, np.dtype(np.int8): 6, np.dtype(np.complex64): 8, np.dtype(np.int64): 9,
          np.dtype(np.bool_): 10, np.dtype(np.uint16): 17, np.dtype(np.complex128): 18,
          np.dtype(np.float16): 19, np.dtype(np.uint32): 22, np.dtype(np.uint64): 23}
DT_STRING = 7
DT_BFLOAT16 = 14


def _bfloat16() -> np.dtype:
    import ml_dtypes  # installed with jax
    return np.dtype(ml_dtypes.bfloat16)


def dtype_enum(dtype: np.dtype) -> int:
    if dtype == _bfloat16():
        return DT_BFLOAT16
    return _ENUMS[np.dtype(dtype)]


def numpy_dtype(enum: int) -> np.dtype | None:
    """The numpy dtype of a DataType enum; None for strings and types tapejax has no dtype for."""
    if enum == DT_BFLOAT16:
        return _bfloat16()
    return next((dtype for dtype, value in _ENUMS.items() if value == enum), None)


def crc32c_function() -> Callable[[Any], int]:
    try:
        import google_crc32c
    except ImportError:
        raise ImportError("tf.train.Checkpoint needs the google-crc32c package for TensorFlow's checksums: "
                          + _INSTALL) from None
    return google_crc32c.value


_MESSAGES: dict[str, Any] = {}


def messages() -> dict[str, Any]:
    """BundleHeaderProto and BundleEntryProto (TF's tensor_bundle.proto, without tensor slices)."""
    if not _MESSAGES:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        file = descriptor_pb2.FileDescriptorProto(name="tapejax_tensor_bundle.proto", package="tapejax.bundle",
                                                  syntax="proto3")
        fields = descriptor_pb2.FieldDescriptorProto
        kinds = {"int32": fields.TYPE_INT32, "int64": fields.TYPE_INT64, "bool": fields.TYPE_BOOL,
                 "string": fields.TYPE_STRING, "fixed32": fields.TYPE_FIXED32}

        def declare(name: str, spec: Iterable[tuple[str, int, str, bool]]) -> None:
            message = file.message_type.add(name=name)
            for field_name, number, kind, repeated in spec:
                field = message.field.add(name=field_name, number=number,
                                          label=fields.LABEL_REPEATED if repeated else fields.LABEL_OPTIONAL)
                if kind in kinds:
                    field.type = kinds[kind]
                else:
                    field.type, field.type_name = fields.TYPE_MESSAGE, f".tapejax.bundle.{kind}"

        declare("VersionDef", [("producer", 1, "int32", False), ("min_consumer", 2, "int32", False),
                               ("bad_consumers", 3, "int32", True)])
        declare("Dim", [("size", 1, "int64", False), ("name", 2, "string", False)])
        declare("TensorShapeProto", [("dim", 2, "Dim", True), ("unknown_rank", 3, "bool", False)])
        declare("BundleHeaderProto", [("num_shards", 1, "int32", False), ("endianness", 2, "int32", False),
                                      ("version", 3, "VersionDef", False)])
        declare("BundleEntryProto", [("dtype", 1, "int32", False), ("shape", 2, "TensorShapeProto", False),
                                     ("shard_id", 3, "int32", False), ("offset", 4, "int64", False),
                                     ("size", 5, "int64", False), ("crc32c", 6, "fixed32", False)])
        pool = descriptor_pool.DescriptorPool()
        pool.Add(file)
        for name in ("BundleHeaderProto", "BundleEntryProto"):
            _MESSAGES[name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tapejax.bundle.{name}"))
    return _MESSAGES


def _bytes_of(array: np.ndarray) -> np.ndarray:
    """The array's bytes as a read-only uint8 view (no copy for a C-contiguous array)."""
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    flat.flags.writeable = False  # google_crc32c takes read-only buffers only
    return flat


def _fixed_lengths(lengths: list[int]) -> bytes:
    return b"".join(struct.pack("<I", n) if n <= 0xFFFFFFFF else struct.pack("<Q", n) for n in lengths)


def encode_strings(values: list[bytes], crc32c: Callable[[Any], int]) -> tuple[bytes, int]:
    """A string tensor's bytes and their (unmasked) checksum, as TF's BundleWriter computes it."""
    lengths = [len(v) for v in values]
    length_checksum = struct.pack("<I", table.masked(crc32c(_fixed_lengths(lengths))))
    strings = b"".join(values)
    checksum = crc32c(_fixed_lengths(lengths) + length_checksum + strings)
    return b"".join(table.varint(n) for n in lengths) + length_checksum + strings, checksum


def write_bundle(prefix: str, tensors: Iterable[tuple[str, Any]]) -> None:
    """Writes `prefix.index` and `prefix.data-00000-of-00001`.

    `tensors` gives (key, value) pairs, values being numpy arrays, lists of bytes (a string tensor of that
    many elements; a one-element list is a scalar), or callables returning either, called when the value is
    written: one array is alive at a time, written and checksummed in place, so memory does not grow with the
    checkpoint's size. Both files are written under temporary names and renamed when
    complete, the index last: a save interrupted at any point leaves no index, so no checkpoint, behind.
    """
    crc32c = crc32c_function()
    header_cls, entry_cls = messages()["BundleHeaderProto"], messages()["BundleEntryProto"]
    temp = f"_temp_{os.getpid()}_{id(tensors)}"
    index_path, data_path = prefix + ".index", prefix + DATA_SUFFIX
    entries = []
    offset = 0
    try:
        with open(data_path + temp, "wb") as data:
            for key, value in sorted(tensors, key=lambda kv: kv[0].encode()):
                value = value() if callable(value) else value
                entry = entry_cls(shard_id=0, offset=offset)
                if isinstance(value, list):
                    payload, checksum = encode_strings(value, crc32c)
                    entry.dtype, entry.size, entry.crc32c = DT_STRING, len(payload), table.masked(checksum)
                    if len(value) != 1:
                        entry.shape.dim.add(size=len(value))
                    data.write(payload)
                else:
                    raw = _bytes_of(value)
                    entry.dtype, entry.size = dtype_enum(value.dtype), raw.size
                    entry.crc32c = table.masked(crc32c(raw))
                    for size in value.shape:
                        entry.shape.dim.add(size=size)
                    data.write(raw.data)
                offset += entry.size
                entries.append((key.encode(), entry.SerializeToString()))
        header = header_cls(num_shards=1, endianness=0)
        header.version.producer = 1
        items = [(b"", header.SerializeToString())] + entries
        with open(index_path + temp, "wb") as index:
            index.write(table.encode_table(items, crc32c))
        os.replace(data_path + temp, data_path)
        os.replace(index_path + temp, index_path)
    finally:
        for path in (data_path + temp, index_path + temp):
            if os.path.exists(path):
                os.remove(path)


def _aligned_empty(shape: list[int], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array on a 64-byte boundary, which XLA's CPU client can use without copying it."""
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(size + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + size].view(dtype).reshape(shape)


class BundleReader:
    """The entries of a checkpoint, read from its index at once; tensors read from the data shard on demand,
    each checked against its CRC-32C (a mismatch or a short read is a `DataLossError` naming the file)."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self._crc32c = crc32c_function()
        index_path = prefix + ".index"
        if not os.path.exists(index_path):
            raise NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                                f"matching files for {prefix}")
        with open(index_path, "rb") as f:
            raw = f.read()
        entry_cls, header_cls = messages()["BundleEntryProto"], messages()["BundleHeaderProto"]
        self.entries: dict[str, Any] = {}
        header = None
        try:
            for key, value in table.decode_table(raw, index_path, self._crc32c):
                if key == b"":
                    header = header_cls.FromString(value)
                else:
                    self.entries[key.decode()] = entry_cls.FromString(value)
        except DataLossError:
            raise
        except Exception as error:  # a protobuf DecodeError, a key that is not UTF-8
            raise DataLossError(None, None, f"Unable to read the checkpoint index {index_path}: {error}") from None
        if header is None:
            raise DataLossError(None, None, f"Unable to read the checkpoint index {index_path}: no bundle header")
        if header.num_shards != 1:
            raise DataLossError(None, None, f"{index_path}: checkpoints of {header.num_shards} shards are not "
                                "supported by tapejax (TF writes one shard per device; save on one device)")
        self.data_path = prefix + DATA_SUFFIX
        try:  # kept open: a restoration still pending reads from it after a manager deleted the files
            self._data = open(self.data_path, "rb")
        except FileNotFoundError:
            raise NotFoundError(None, None, f"The checkpoint data file {self.data_path} does not exist") from None

    def __del__(self) -> None:
        if getattr(self, "_data", None) is not None:
            self._data.close()

    def shape(self, key: str) -> list[int]:
        return [d.size for d in self.entries[key].shape.dim]

    def read(self, key: str) -> np.ndarray | list[bytes]:
        """The tensor under `key`: a numpy array, or a list of bytes for a string tensor."""
        entry = self.entries[key]
        try:
            if entry.dtype == DT_STRING:
                raw = os.pread(self._data.fileno(), entry.size, entry.offset)
                if len(raw) != entry.size:
                    raise ValueError("short read")
                return self._strings(raw, int(np.prod(self.shape(key), dtype=np.int64)), entry, key)
            dtype = numpy_dtype(entry.dtype)
            if dtype is None:
                raise NotImplementedError(f"tapejax cannot read the checkpoint value {key!r}: its dtype (TF "
                                          f"DataType {entry.dtype}) has no tapejax dtype")
            array = _aligned_empty(self.shape(key), dtype)
            flat = array.reshape(-1).view(np.uint8)
            if entry.size != flat.size or os.preadv(self._data.fileno(), [flat.data], entry.offset) != flat.size:
                raise ValueError("short read")
        except (ValueError, IndexError, struct.error):
            raise DataLossError(None, None, f"Unable to read {key!r} from the checkpoint data file "
                                f"{self.data_path}: the file is truncated or corrupted.") from None
        flat.flags.writeable = False
        self._check(flat, entry, key)
        flat.flags.writeable = True
        return array

    def _check(self, raw: Any, entry: Any, key: str) -> None:
        if table.masked(self._crc32c(raw)) != entry.crc32c:
            raise DataLossError(None, None, f"Checksum does not match: stored {entry.crc32c} vs. calculated on the "
                                f"restored bytes for {key!r} in {self.data_path}: the file is corrupted.")

    def _strings(self, raw: bytes, count: int, entry: Any, key: str) -> list[bytes]:
        lengths, pos = [], 0
        for _ in range(count):
            length, pos = table.read_varint(raw, pos)
            lengths.append(length)
        values = []
        start = pos + 4
        for length in lengths:
            values.append(raw[start:start + length])
            start += length
        if start != len(raw):
            raise ValueError("string lengths do not match the entry's size")
        self._check(_fixed_lengths(lengths) + raw[pos:], entry, key)
        return values
