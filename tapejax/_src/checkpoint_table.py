"""The sorted string table of a checkpoint's `.index` file: LevelDB's table format, as TensorFlow writes it.

A table is a sequence of blocks followed by a fixed-size footer:

    [data block]* [metaindex block] [index block] [footer]

A block holds sorted key/value entries, each key stored as the length of the prefix it shares with the previous
key plus the rest (the shared length is reset to 0 every `RESTART_INTERVAL` entries, at "restart points" whose
offsets end the block), and is followed by a 5-byte trailer: a compression type (always 0: TF writes its
bundles uncompressed) and the masked CRC-32C of the block and that byte. The index block maps, for each data
block, a key at least its last key to its `BlockHandle` (varint offset and size). The footer holds the handles
of the metaindex block (empty: no filters) and of the index block, zero-padded to 40 bytes, then the magic
number. Every problem found while reading is a `DataLossError` naming the file, as in TF.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

from .errors import DataLossError

MAGIC = 0xDB4775248B80FB57
BLOCK_SIZE = 256 * 1024  # TF's table::Options default for bundles
RESTART_INTERVAL = 16
FOOTER_SIZE = 48  # two BlockHandles of at most 20 bytes each, padded, then the 8-byte magic number
_MASK_DELTA = 0xA282EAD8


def masked(crc: int) -> int:
    """LevelDB's masking of a CRC stored next to the data it covers (a CRC of CRCs is then not trivial)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmasked(crc: int) -> int:
    rot = (crc - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it; IndexError/ValueError on a malformed one."""
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


class _BlockBuilder:
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.restarts = [0]
        self.since_restart = 0
        self.last = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.since_restart == RESTART_INTERVAL:
            self.restarts.append(len(self.buffer))
            self.since_restart = 0
        else:
            limit = min(len(key), len(self.last))
            while shared < limit and key[shared] == self.last[shared]:
                shared += 1
        self.buffer += varint(shared) + varint(len(key) - shared) + varint(len(value))
        self.buffer += key[shared:] + value
        self.last = key
        self.since_restart += 1

    def finish(self) -> bytes:
        return bytes(self.buffer) + struct.pack(f"<{len(self.restarts) + 1}I", *self.restarts, len(self.restarts))

    def __len__(self) -> int:
        return len(self.buffer) + 4 * len(self.restarts) + 4


def encode_table(items: list[tuple[bytes, bytes]], crc32c: Callable[[bytes], int]) -> bytes:
    """The table of `items`, which must be sorted by key with no key twice."""
    out = bytearray()

    def write_block(block: _BlockBuilder) -> bytes:
        contents = block.finish()
        handle = varint(len(out)) + varint(len(contents))
        out.extend(contents)
        out.extend(b"\x00" + struct.pack("<I", masked(crc32c(contents + b"\x00"))))
        return handle

    index = _BlockBuilder()
    block = _BlockBuilder()
    for key, value in items:
        block.add(key, value)
        if len(block) >= BLOCK_SIZE:
            index.add(block.last, write_block(block))  # the last key separates it from the next block
            block = _BlockBuilder()
    if block.buffer or not items:
        index.add(block.last, write_block(block))
    meta_handle = write_block(_BlockBuilder())
    index_handle = write_block(index)
    footer = (meta_handle + index_handle).ljust(FOOTER_SIZE - 8, b"\x00") + struct.pack("<Q", MAGIC)
    return bytes(out + footer)


def decode_table(data: bytes, filename: str, crc32c: Callable[[bytes], int]) -> Iterator[tuple[bytes, bytes]]:
    """The entries of a table, in order; `DataLossError` naming `filename` when it is truncated or corrupt."""
    try:
        if len(data) < FOOTER_SIZE or struct.unpack_from("<Q", data, len(data) - 8)[0] != MAGIC:
            raise ValueError("not an sstable (bad magic number)")
        footer = memoryview(data)[len(data) - FOOTER_SIZE:]
        _, pos = _read_handle(footer, 0)
        index_handle, _ = _read_handle(footer, pos)
        for _, value in _entries(_read_block(data, index_handle, crc32c)):
            handle, _ = _read_handle(value, 0)
            yield from _entries(_read_block(data, handle, crc32c))
    except (ValueError, IndexError, struct.error) as error:
        raise DataLossError(None, None, f"Unable to read the checkpoint index {filename}: {error}. The file is "
                            "truncated or corrupted.") from None


def _read_handle(data: bytes | memoryview, pos: int) -> tuple[tuple[int, int], int]:
    offset, pos = read_varint(data, pos)
    size, pos = read_varint(data, pos)
    return (offset, size), pos


def _read_block(data: bytes, handle: tuple[int, int], crc32c: Callable[[bytes], int]) -> bytes:
    offset, size = handle
    if offset + size + 5 > len(data) - FOOTER_SIZE:
        raise ValueError("block handle past the end of the file")
    contents = data[offset:offset + size + 1]
    (stored,) = struct.unpack_from("<I", data, offset + size + 1)
    if unmasked(stored) != crc32c(contents):
        raise ValueError("block checksum mismatch")
    if contents[-1] != 0:
        raise ValueError("compressed blocks are not supported")
    return contents[:-1]


def _entries(block: bytes) -> Iterator[tuple[bytes, bytes]]:
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    end = len(block) - 4 * (restarts + 1)
    if end < 0:
        raise ValueError("bad block restart count")
    pos, key = 0, b""
    while pos < end:
        shared, pos = read_varint(block, pos)
        rest, pos = read_varint(block, pos)
        size, pos = read_varint(block, pos)
        if shared > len(key) or pos + rest + size > end:
            raise ValueError("bad block entry")
        key = key[:shared] + block[pos:pos + rest]
        pos += rest
        yield key, block[pos:pos + size]
        pos += size
