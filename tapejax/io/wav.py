"""WAV codecs (`tf.audio.decode_wav`, `tf.audio.encode_wav`): 16-bit PCM, read and written on the host.

TF's decoder reads the RIFF chunks of 16-bit PCM files only, skipping chunks it does not know; samples become
float32 in [-1, 1) (divided by 32768). Its encoder writes a 44-byte header and the samples clamped to [-1, 1],
scaled by 32768 and rounded half away from zero (1.0 is 32767, NaN is 0).
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np

from tapejax._src import errors, static_values
from tapejax._src.tensor import Tensor
from tapejax.io.images import _contents
from tapejax.ops.array import convert_to_tensor
from tapejax.ops.strings import _tensor

_PCM = 1


class DecodeWav(NamedTuple):
    audio: Tensor
    sample_rate: Tensor


def _fail(op_type: str, message: str) -> None:
    raise errors.InvalidArgumentError(None, None, f"{message} [Op:{op_type}]")


def _chunks(data: bytes) -> dict[bytes, bytes]:
    """The chunks of a RIFF/WAVE file by id (the first of each), with TF's errors for a bad header."""
    if len(data) < 12:
        _fail("DecodeWav", "Data too short when trying to read string")
    if data[:4] != b"RIFF":
        _fail("DecodeWav", f"Header mismatch: Expected RIFF but found {data[:4].decode('latin-1')}")
    if data[8:12] != b"WAVE":
        _fail("DecodeWav", f"Header mismatch: Expected WAVE but found {data[8:12].decode('latin-1')}")
    chunks: dict[bytes, bytes] = {}
    at = 12
    while at + 8 <= len(data) and b"data" not in chunks:
        kind, size = data[at:at + 4], struct.unpack_from("<I", data, at + 4)[0]
        body = data[at + 8:at + 8 + size]
        if len(body) < size:
            _fail("DecodeWav", "Data too short when trying to read string")
        chunks.setdefault(kind, body)
        at += 8 + size + (size & 1)  # chunks are padded to an even size
    if b"fmt " not in chunks or b"data" not in chunks:
        _fail("DecodeWav", "Data too short when trying to read string")
    return chunks


def decode_wav(contents: Any, desired_channels: int = -1, desired_samples: int = -1, name: str | None = None):
    """Decodes a 16-bit PCM WAV file to `(audio, sample_rate)`: float32 [samples, channels] in [-1, 1) and an
    int32 scalar (`tf.audio.decode_wav`).

    `desired_channels` keeps the first channels, or repeats the last one, to that many (-1: the file's);
    `desired_samples` cuts or zero-pads to that many samples (-1: all of them).
    """
    desired_channels = int(static_values.python_int(desired_channels, "DecodeWav", "desired_channels"))
    desired_samples = int(static_values.python_int(desired_samples, "DecodeWav", "desired_samples"))
    for value, arg in ((desired_channels, "desired_channels"), (desired_samples, "desired_samples")):
        if value < -1:
            _fail("DecodeWav", f"{arg} must be >= -1, got {value}")
    chunks = _chunks(_contents(contents, "DecodeWav"))
    fmt = chunks[b"fmt "]
    if len(fmt) < 16:
        _fail("DecodeWav", "Data too short when trying to read string")
    audio_format, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", fmt)
    if audio_format != _PCM:
        _fail("DecodeWav", f"Bad audio format for WAV: Expected 1 (PCM), but got{audio_format}")
    if bits != 16:
        _fail("DecodeWav", f"Can only read 16-bit WAV files, but received {bits}")
    if channels == 0:
        _fail("DecodeWav", "Bad number of channels for WAV file: 0")
    pcm = chunks[b"data"]
    frames = len(pcm) // (2 * channels)
    samples = np.frombuffer(pcm[:frames * 2 * channels], "<i2").reshape(frames, channels)
    audio = samples.astype(np.float32) / np.float32(32768.0)
    if desired_channels >= 0:
        keep = audio[:, :desired_channels]
        extra = desired_channels - keep.shape[1]
        audio = np.concatenate([keep, np.repeat(audio[:, -1:], extra, axis=1)], axis=1) if extra > 0 else keep
    if desired_samples >= 0:
        audio = audio[:desired_samples]
        audio = np.pad(audio, ((0, desired_samples - len(audio)), (0, 0)))
    return DecodeWav(_tensor(audio), _tensor(np.int32(rate)))


def encode_wav(audio: Any, sample_rate: Any, name: str | None = None) -> Tensor:
    """Encodes float32 [samples, channels] audio as a 16-bit PCM WAV file, a string scalar (`tf.audio.encode_wav`).

    Differences from TensorFlow: a sample rate outside (0, 2^32) is reported as given (TF prints a negative one
    as its unsigned wrap-around).
    """
    array = np.asarray(convert_to_tensor(audio, dtype="float32")._value)
    rate = int(static_values.python_int(sample_rate, "EncodeWav", "sample_rate"))
    if array.ndim != 2:
        _fail("EncodeWav", f"audio must be 2-dimensional{list(array.shape)}")
    if not 0 < rate < 2 ** 32:
        _fail("EncodeWav", f"sample_rate must be in (0, 2^32), got: {rate}")
    scaled = np.clip(np.nan_to_num(array, nan=0.0), -1.0, 1.0).astype(np.float64) * 32768.0
    pcm = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5), -32768, 32767).astype("<i2").tobytes()
    channels = array.shape[1]
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(pcm), b"WAVE", b"fmt ", 16, _PCM, channels, rate,
                         rate * channels * 2, channels * 2, 16, b"data", len(pcm))
    return _tensor(np.array(header + pcm, dtype=object))
