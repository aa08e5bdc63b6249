"""What tf.summary writes for each kind of summary, computed on the host from numpy values, as TF 2.21 (with
TensorBoard's summary ops) computes it: the tensor of the event and its TensorBoard plugin.

- scalar: the value cast to float32, plugin "scalars".
- histogram: a float64 [k, 3] tensor of (left edge, right edge, count), plugin "histograms". TF's bucketing:
  the data cast to float64 and flattened; k equal-width buckets between min and max, a value's bucket
  floor((x - min) / ((max - min) / k)) clamped to k - 1; the edges `linspace(min, max, k + 1)` with the last
  one exactly max. All values equal: every edge is that value and the last bucket holds them all. No data:
  k zero rows.
- image: strings [width, height, png...] of the first `max_outputs` images, after TF's
  `convert_image_dtype(data, uint8, saturate=True)`; plugin "images".
- text: the strings as they are, plugin "text".
- audio: WAV files (16-bit PCM) of the first `max_outputs` clips, with empty labels, shape [k, 2]; plugin
  "audio" (encoding WAV).
"""

from __future__ import annotations

import io
import struct
import wave
import zlib
from typing import Any

import numpy as np

DEFAULT_BUCKETS = 30  # TensorBoard's DEFAULT_BUCKET_COUNT, which TF 2.21's tf.summary.histogram uses


def tensor_proto(array: np.ndarray) -> Any:
    from tensorboard.util import tensor_util  # noqa: PLC0415 (optional dependency; its numpy-only encoder)

    return tensor_util.make_tensor_proto(array)


def metadata(plugin: str, description: str | None) -> Any:
    """The SummaryMetadata of a TensorBoard plugin's summary, made by that plugin's own module."""
    # noqa comments: optional dependency, imported when a summary is written
    if plugin == "scalar":
        from tensorboard.plugins.scalar import metadata as module  # noqa: PLC0415
    elif plugin == "histogram":
        from tensorboard.plugins.histogram import metadata as module  # noqa: PLC0415
    elif plugin == "image":
        from tensorboard.plugins.image import metadata as module  # noqa: PLC0415
    elif plugin == "text":
        from tensorboard.plugins.text import metadata as module  # noqa: PLC0415
    else:
        from tensorboard.plugins.audio import metadata as module  # noqa: PLC0415

        return module.create_summary_metadata(display_name=None, description=description,
                                              encoding=module.Encoding.Value("WAV"))
    return module.create_summary_metadata(display_name=None, description=description)


def scalar(data: np.ndarray) -> np.ndarray:
    return np.asarray(data).astype(np.float32)


def histogram(data: np.ndarray, buckets: int) -> np.ndarray:
    buckets = max(0, int(buckets))
    data = np.asarray(data).reshape(-1).astype(np.float64)
    if data.size == 0 or buckets == 0:
        return np.zeros((buckets, 3), np.float64)
    low, high = data.min(), data.max()
    span = high - low
    if span == 0:
        counts = np.zeros(buckets)
        counts[-1] = data.size
        edges = np.full(buckets, high)
        return np.stack([edges, edges, counts], axis=1)
    width = span / np.float64(buckets)
    index = np.minimum(np.floor((data - low) / width).astype(np.int32), buckets - 1)
    counts = np.bincount(index, minlength=buckets).astype(np.float64)
    edges = low + np.arange(buckets + 1, dtype=np.float64) * (span / np.float64(buckets))  # TF's LinSpace
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def to_uint8(images: np.ndarray) -> np.ndarray:
    """TF's `convert_image_dtype(images, tf.uint8, saturate=True)`."""
    dtype = images.dtype
    if dtype == np.uint8:
        return images
    if dtype == np.bool_:
        return images.astype(np.uint8)  # TF casts bool images as numbers (True is 1)
    if dtype.kind == "f":
        scaled = images * dtype.type(255.5)  # TF scales by max + 0.5, in the image's own dtype, then casts
        return np.clip(np.nan_to_num(scaled, nan=0.0), 0, 255).astype(np.uint8)
    info = np.iinfo(dtype)
    if info.max > 255:  # scaling down: floor-divide by (in.max + 1) // 256, then saturate
        scaled = images // ((int(info.max) + 1) // 256)
        return np.clip(scaled, 0, 255).astype(np.uint8)
    return (np.clip(images, 0, None).astype(np.int64) * (255 // int(info.max))).astype(np.uint8)


def png(image: np.ndarray) -> bytes:
    """A PNG file of an [h, w, c] uint8 image (c = 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA), no row filter."""
    height, width, channels = image.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = np.concatenate([np.zeros((height, 1), np.uint8), image.reshape(height, width * channels)], axis=1)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + chunk(b"IEND", b""))


def image(data: np.ndarray, max_outputs: int) -> np.ndarray:
    if data.ndim != 4:
        raise ValueError(f"Tensor  must have rank 4.  Received rank {data.ndim}, shape {data.shape}")
    if int(max_outputs) < 0:
        raise ValueError(f"tf.summary.image: `max_outputs` must be non-negative, got {int(max_outputs)}.")
    images = to_uint8(data)
    encoded = [png(im) for im in images[:int(max_outputs)]]
    return np.array([str(data.shape[2]).encode(), str(data.shape[1]).encode(), *encoded], dtype=object)


def text(data: Any) -> np.ndarray:
    array = np.asarray(data, dtype=object)
    return np.vectorize(lambda s: s if isinstance(s, bytes) else str(s).encode("utf-8"), otypes=[object])(array) \
        if array.size else array


def wav(clip: np.ndarray, sample_rate: int) -> bytes:
    """A 16-bit PCM WAV file of a [t, c] float clip in [-1, 1], as TF's `tf.audio.encode_wav`."""
    samples = np.asarray(clip, np.float32) * np.float32(32768.0)  # TF scales by 2^15, rounds, saturates
    rounded = np.sign(samples) * np.floor(np.abs(samples) + 0.5)  # half away from zero, as C's round
    pcm = np.clip(rounded, -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(clip.shape[1])
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def audio(data: np.ndarray, sample_rate: int, max_outputs: int) -> np.ndarray:
    if data.ndim != 3:
        raise ValueError(f"Tensor  must have rank 3.  Received rank {data.ndim}, shape {data.shape}")
    clips = [wav(c, sample_rate) for c in data[:int(max_outputs)]]
    return np.array([[c, b""] for c in clips], dtype=object).reshape(len(clips), 2)
