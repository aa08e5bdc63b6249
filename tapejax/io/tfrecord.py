"""TFRecord files: `tf.io.TFRecordWriter` and the reader behind `tf.data.TFRecordDataset`.

A record is its length (uint64, little-endian), the masked CRC-32C of those 8 bytes (uint32), the data, and the
masked CRC-32C of the data. The CRC comes from `google-crc32c` (or `crc32c`), an optional dependency (the
`io` extra), imported on first use. GZIP and ZLIB compression are Python's gzip and zlib.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Iterator
from typing import Any

from tapejax._src import errors
from tapejax.io.files import not_found, path_of
from tapejax.ops.strings import _strings


def _crc32c() -> Any:
    try:
        import google_crc32c
        return google_crc32c.value
    except ImportError:
        pass
    try:
        import crc32c
        return crc32c.crc32c
    except ImportError:
        raise ImportError("TFRecord files need a CRC-32C implementation: pip install 'tapejax[io]' "
                          "(google-crc32c).") from None


def masked_crc(data: bytes) -> int:
    """TFRecord's masked CRC-32C: rotated right by 15 bits plus a constant, so CRCs of CRCs look random."""
    crc = _crc32c()(data) & 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _compression(options: Any) -> str:
    kind = getattr(options, "compression_type", options) or ""
    kind = kind.upper() if isinstance(kind, str) else kind
    if kind not in ("", "GZIP", "ZLIB"):
        raise ValueError(f"Unsupported compression_type: {kind!r} (expected '', 'GZIP' or 'ZLIB').")
    return kind


class TFRecordOptions:
    """`tf.io.TFRecordOptions`: the compression of a TFRecord file ('', 'GZIP' or 'ZLIB')."""

    def __init__(self, compression_type: str | None = None, flush_mode: Any = None, input_buffer_size: Any = None,
                 output_buffer_size: Any = None, window_bits: Any = None, compression_level: Any = None,
                 compression_method: Any = None, mem_level: Any = None, compression_strategy: Any = None):
        self.compression_type = compression_type or ""
        self.compression_level = compression_level


class TFRecordWriter:
    """Writes records to a TFRecord file (`tf.io.TFRecordWriter`), as a context manager or with close().

    >>> import tapejax as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     writer.write(b"first")
    >>> [r.numpy() for r in tf.data.TFRecordDataset(path)]
    [b'first']
    """

    def __init__(self, path: Any, options: Any = None):
        self._path = path_of(path, "TFRecordWriter")
        self._kind = _compression(options)
        self._crc = _crc32c()  # fail now, not at the first write
        raw = open(self._path, "wb")
        self._file: Any = gzip.GzipFile(fileobj=raw, mode="wb") if self._kind == "GZIP" else raw
        self._raw = raw
        self._zlib = zlib.compressobj() if self._kind == "ZLIB" else None

    def write(self, record: Any) -> None:
        data = record if isinstance(record, bytes) else _strings(record, "TFRecordWriter").item()
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "TFRecordWriter is closed.")
        length = struct.pack("<Q", len(data))
        chunk = length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))
        self._file.write(self._zlib.compress(chunk) if self._zlib else chunk)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is None:
            return
        if self._zlib is not None:
            self._file.write(self._zlib.flush())
        self._file.close()
        if self._raw is not self._file:
            self._raw.close()
        self._file = None

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_records(path: str, compression_type: Any = None) -> Iterator[bytes]:
    """The records of one TFRecord file, their CRCs checked (TF's DataLossError when one does not match)."""
    kind = _compression(compression_type)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise not_found(path) from None
    if kind == "GZIP":
        data = gzip.decompress(data)
    elif kind == "ZLIB":
        data = zlib.decompress(data)
    offset = 0
    while offset < len(data):
        if offset + 12 > len(data):
            raise errors.DataLossError(None, None, f"truncated record at {offset} in {path}")
        header = data[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        (crc,) = struct.unpack("<I", data[offset + 8:offset + 12])
        if crc != masked_crc(header):
            raise errors.DataLossError(None, None, f"corrupted record at {offset} in {path}")
        body = data[offset + 12:offset + 12 + length]
        footer = data[offset + 12 + length:offset + 16 + length]
        if len(body) != length or len(footer) != 4:
            raise errors.DataLossError(None, None, f"truncated record at {offset} in {path}")
        if struct.unpack("<I", footer)[0] != masked_crc(body):
            raise errors.DataLossError(None, None, f"corrupted record at {offset} in {path}")
        yield body
        offset += 16 + length
