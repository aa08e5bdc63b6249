"""tf.keras.utils.{load_img, img_to_array, array_to_img, save_img} (also `tf.keras.preprocessing.image.*`):
images between files, PIL images and NumPy arrays, as Keras 3 converts them (Pillow does the file formats).

>>> import numpy as np
>>> import tapejax as tf
>>> img = tf.keras.utils.array_to_img(np.array([[[0.0], [0.5]], [[1.0], [0.25]]]))
>>> img.mode, img.size
('L', (2, 2))
>>> tf.keras.utils.img_to_array(img)[..., 0]
array([[  0., 127.],
       [255.,  63.]], dtype=float32)
"""

from __future__ import annotations

import io
import pathlib
import warnings
from typing import Any

import numpy as np

from tapejax.keras import backend

_RESAMPLING = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("Could not import PIL.Image. The image utilities of tf.keras.utils require Pillow "
                          "(`pip install pillow`).") from None
    return Image


def _data_format(data_format: str | None) -> str:
    data_format = data_format or backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError('The `data_format` argument must be one of "channels_first", "channels_last". Received: '
                         f"data_format={data_format}")
    return data_format


def array_to_img(x: Any, data_format: str | None = None, scale: bool = True, dtype: Any = None) -> Any:
    """A PIL image from a rank-3 array: 'RGBA', 'RGB' or 'L' for 4, 3 or 1 channels (an 'I' image for one channel
    above 255). With `scale`, values are first mapped linearly onto [0, 255] (min to 0, max to 255).

    Raises:
      ValueError: an array not of rank 3, or a channel count other than 1, 3 and 4.
    """
    image = _pil()
    x = np.asarray(x, dtype=dtype or backend.floatx())
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if _data_format(data_format) == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        peak = np.max(x)
        if peak != 0:
            x /= peak
        x *= 255
    channels = x.shape[2]
    if channels in (3, 4):
        return image.fromarray(x.astype("uint8"), "RGB" if channels == 3 else "RGBA")
    if channels == 1:
        if np.max(x) > 255:  # 32-bit grayscale
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def img_to_array(img: Any, data_format: str | None = None, dtype: Any = None) -> np.ndarray:
    """A rank-3 array (height, width, channels; channels first under "channels_first") of `floatx()` (or
    `dtype`) from a PIL image or any array-like of rank 2 or 3.

    Raises:
      ValueError: an image of another rank.
    """
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=dtype or backend.floatx())
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x.reshape((1, *x.shape) if data_format == "channels_first" else (*x.shape, 1))
    raise ValueError(f"Unsupported image shape: {x.shape}")


def save_img(path: Any, x: Any, data_format: str | None = None, file_format: str | None = None, scale: bool = True,
             **kwargs: Any) -> None:
    """Writes an array as an image file; the format comes from `file_format` or the path's extension (an RGBA
    image saved as JPEG is converted to RGB, with Keras's warning). `kwargs` go to PIL's `Image.save`."""
    data_format = _data_format(data_format)
    if file_format is None and isinstance(path, str | pathlib.Path):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.", stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def _resized(img: Any, target_size: tuple[int, int], interpolation: str, keep_aspect_ratio: bool) -> Any:
    size = (target_size[1], target_size[0])  # PIL's (width, height)
    if img.size == size:
        return img
    if interpolation not in _RESAMPLING:
        raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                         f"{', '.join(_RESAMPLING)}")
    resample = getattr(getattr(_pil(), "Resampling", _pil()), interpolation.upper())
    if not keep_aspect_ratio:
        return img.resize(size, resample)
    # the largest centred box of the target's aspect ratio, resized to the target
    width, height = img.size
    crop_height = min(height, (width * size[1]) // size[0])
    crop_width = min(width, (height * size[0]) // size[1])
    top, left = (height - crop_height) // 2, (width - crop_width) // 2
    return img.resize(size, resample, box=[left, top, left + crop_width, top + crop_height])


def load_img(path: Any, color_mode: str = "rgb", target_size: tuple[int, int] | None = None,
             interpolation: str = "nearest", keep_aspect_ratio: bool = False) -> Any:
    """A PIL image from a file (a path, bytes path or `io.BytesIO`), converted to `color_mode` ("rgb", "rgba" or
    "grayscale", which keeps 16- and 32-bit grayscale) and resized to `target_size` (height, width) with
    `interpolation`; `keep_aspect_ratio` crops the centre to the target's aspect ratio first.

    Raises:
      TypeError: a path that is none of these. ValueError: an unknown color mode or interpolation.
    """
    image = _pil()
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, pathlib.Path | bytes | str):
        with open(str(path.resolve()) if isinstance(path, pathlib.Path) else path, "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    modes = {"grayscale": ("L", "I;16", "I"), "rgba": ("RGBA",), "rgb": ("RGB",)}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode not in modes[color_mode]:
        img = img.convert(modes[color_mode][0])
    if target_size is not None:
        img = _resized(img, target_size, interpolation, keep_aspect_ratio)
    return img

