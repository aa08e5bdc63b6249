"""Image codecs (`tf.io.decode_jpeg`, `decode_png`, `decode_image`, `encode_png`, `encode_jpeg`, ...), by Pillow.

Pillow is an optional dependency (the `image` extra): it is imported on first use. PNG, GIF and BMP decode to
TF's exact pixels. JPEG decoding is lossy and TF's decoder settings (libjpeg's fast integer DCT, fancy
upsampling) are not all Pillow's, so a decoded JPEG may differ from TF's by a unit or two per pixel; encoded
bytes differ from TF's (another encoder), but decode to the same pixels (PNG) or nearly (JPEG).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from tapejax._src import dtypes, errors
from tapejax.ops.strings import _strings, _tensor, _values

_SIGNATURES = {b"\xff\xd8\xff": "JPEG", b"\x89PNG": "PNG", b"GIF8": "GIF", b"BM": "BMP"}


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("tapejax's image codecs need Pillow: pip install 'tapejax[image]' (or pillow).") from None
    return Image


def _contents(contents: Any, op_type: str) -> bytes:
    data = _strings(contents, op_type)
    if data.ndim:
        raise errors.InvalidArgumentError(None, None, f"contents must be scalar, got shape {list(data.shape)} "
                                          f"[Op:{op_type}]")
    return data.item()


def _format(data: bytes) -> str | None:
    return next((f for sig, f in _SIGNATURES.items() if data.startswith(sig)), None)


def _open(data: bytes, op_type: str, expect: tuple[str, ...]) -> Any:
    found = _format(data)
    if found not in expect:
        message = {"DecodeJpeg": "Invalid JPEG data or crop window.", "DecodePng": "Invalid PNG header, data size "
                   f"{len(data)}"}.get(op_type, "Unknown image file format. One of JPEG, PNG, GIF, BMP required.")
        raise errors.InvalidArgumentError(None, None, f"{message} [Op:{op_type}]")
    try:
        image = _pillow().open(io.BytesIO(data))
        image.load()
    except OSError as e:
        raise errors.InvalidArgumentError(None, None, f"{found} data could not be decoded ({e}) [Op:{op_type}]") from None
    return image


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _pixels(image: Any, channels: int, dtype: Any = dtypes.uint8) -> np.ndarray:
    """The image as an [h, w, c] array: c from the file when channels is 0, else converted to it."""
    wide = dtypes.as_dtype(dtype) == dtypes.uint16 and image.mode.startswith("I")
    if wide:  # a 16-bit greyscale PNG
        array = np.asarray(image, dtype=np.uint16)[..., None]
        return array if channels in (0, 1) else np.repeat(array, channels, axis=-1)
    if not channels:
        mode = image.mode if image.mode in _MODES.values() else ("RGBA" if "A" in image.mode
                                                                  or "transparency" in image.info else "RGB")
        if image.mode in ("1", "I", "I;16", "I;16B"):
            mode = "L"
    else:
        mode = _MODES[channels]
    if image.mode in ("I;16", "I;16B", "I"):  # 16 bits read as 8: TF keeps the high byte
        image = image.point(lambda v: v / 256).convert("L")
    array = np.asarray(image.convert(mode), dtype=np.uint8)
    array = array[..., None] if array.ndim == 2 else array
    if dtypes.as_dtype(dtype) == dtypes.uint16:
        array = array.astype(np.uint16) * 257  # TF scales 8-bit samples to 16 bits so
    return array


def _check_channels(channels: int, allowed: tuple[int, ...], op_type: str) -> None:
    if channels not in allowed:
        raise errors.InvalidArgumentError(None, None, f"`channels` must be {', '.join(map(str, allowed))}, but got "
                                          f"{channels} [Op:{op_type}]")


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1, dct_method: str = "",
                name: str | None = None):
    """Decodes a JPEG image to a uint8 tensor [height, width, channels] (`tf.io.decode_jpeg`).

    Differences from TensorFlow: `ratio`, `fancy_upscaling`, `try_recover_truncated`, `acceptable_fraction` and
    `dct_method` are ignored (Pillow's decoder); pixels may differ from TF's by a unit or two.
    """
    _check_channels(channels, (0, 1, 3), "DecodeJpeg")
    image = _open(_contents(contents, "DecodeJpeg"), "DecodeJpeg", ("JPEG",))
    return _tensor(_pixels(image, channels))


def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8, name: str | None = None):
    """Decodes a PNG image to a uint8 or uint16 tensor [height, width, channels] (`tf.io.decode_png`)."""
    _check_channels(channels, (0, 1, 3, 4), "DecodePng")
    image = _open(_contents(contents, "DecodePng"), "DecodePng", ("PNG",))
    return _tensor(_pixels(image, channels, dtype))


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None):
    """Decodes a BMP image (`tf.io.decode_bmp`)."""
    image = _open(_contents(contents, "DecodeBmp"), "DecodeBmp", ("BMP",))
    return _tensor(_pixels(image, channels))


def decode_gif(contents: Any, name: str | None = None):
    """Decodes a GIF to a uint8 tensor [frames, height, width, 3] (`tf.io.decode_gif`)."""
    return _tensor(_frames(_open(_contents(contents, "DecodeGif"), "DecodeGif", ("GIF",))))


def _frames(image: Any) -> np.ndarray:
    frames = []
    for i in range(getattr(image, "n_frames", 1)):
        image.seek(i)
        frames.append(np.asarray(image.convert("RGB"), dtype=np.uint8))
    return np.stack(frames)


def decode_image(contents: Any, channels: Any = None, dtype: Any = dtypes.uint8, name: str | None = None,
                 expand_animations: bool = True):
    """Decodes a JPEG, PNG, GIF or BMP image by its header (`tf.io.decode_image`); a GIF gives
    [frames, h, w, 3] (its first frame only, [h, w, 3], with expand_animations=False). A float `dtype` scales
    to [0, 1) as tf.image.convert_image_dtype."""
    data = _contents(contents, "DecodeImage")
    image = _open(data, "DecodeImage", tuple(_SIGNATURES.values()))
    channels = channels or 0
    if _format(data) == "GIF":
        array = _frames(image)
        array = array if expand_animations else array[0]
    else:
        array = _pixels(image, channels, dtypes.uint16 if dtypes.as_dtype(dtype) == dtypes.uint16 else dtypes.uint8)
    target = dtypes.as_dtype(dtype)
    if target in (dtypes.uint8, dtypes.uint16):
        return _tensor(array)
    from tapejax.ops.image import convert_image_dtype
    return convert_image_dtype(_tensor(array), target)


def _image(image: Any, op_type: str) -> np.ndarray:
    array = _values(image, op_type)
    if array.ndim != 3 or array.shape[-1] not in (1, 2, 3, 4):
        raise errors.InvalidArgumentError(None, None, f"image must be 3-dimensional [height, width, channels] "
                                          f"with 1 to 4 channels, got shape {list(array.shape)} [Op:{op_type}]")
    return array


def encode_png(image: Any, compression: int = -1, name: str | None = None):
    """Encodes a uint8 or uint16 image [height, width, channels] as PNG (`tf.io.encode_png`)."""
    array = _image(image, "EncodePng")
    if array.dtype == np.uint16:
        if array.shape[-1] != 1:
            raise NotImplementedError("tapejax encodes uint16 PNGs with one channel only (Pillow).")
        picture = _pillow().fromarray(array[..., 0].astype(np.uint16), mode="I;16")
    else:
        picture = _pillow().fromarray(array[..., 0] if array.shape[-1] == 1 else array, _MODES[array.shape[-1]])
    out = io.BytesIO()
    picture.save(out, format="PNG", compress_level=6 if compression < 0 else compression)
    return _tensor(np.asarray(out.getvalue(), dtype=object))


def encode_jpeg(image: Any, format: str = "", quality: int = 95, progressive: bool = False,  # noqa: A002
                optimize_size: bool = False, chroma_downsampling: bool = True, density_unit: str = "in",
                x_density: int = 300, y_density: int = 300, xmp_metadata: str = "", name: str | None = None):
    """Encodes a uint8 image [height, width, 1 or 3] as JPEG (`tf.io.encode_jpeg`)."""
    array = _image(image, "EncodeJpeg")
    if array.shape[-1] not in (1, 3):
        raise errors.InvalidArgumentError(None, None, f"image must have 1 or 3 channels, got {array.shape[-1]} "
                                          "[Op:EncodeJpeg]")
    picture = _pillow().fromarray(array[..., 0] if array.shape[-1] == 1 else array)
    out = io.BytesIO()
    picture.save(out, format="JPEG", quality=quality, progressive=progressive, optimize=optimize_size,
                 subsampling=2 if chroma_downsampling else 0, dpi=(x_density, y_density))
    return _tensor(np.asarray(out.getvalue(), dtype=object))


def is_jpeg(contents: Any, name: str | None = None):
    """Whether the contents start like a JPEG (`tf.io.is_jpeg`)."""
    return _tensor(np.asarray(_format(_contents(contents, "IsJpeg")) == "JPEG"))
