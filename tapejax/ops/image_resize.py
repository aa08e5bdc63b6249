"""tf.image.resize and resize_with_pad: TF's resampling kernels, half-pixel centres and antialiasing.

Each method resamples the height and width axes with the weight matrices of image_kernels.py (TF's coordinates
and kernels, computed in float32 as TF's kernels compute them), so values match TF's kernels to float32 rounding
and the gradient is the transpose of the same weights, which is what TF's resize gradients compute. Nearest
neighbour gathers, so it keeps the input's dtype; every other method returns float32, as in TF. jax.image.resize is
not used: its kernels differ from TF's (antialiasing by default, no renormalisation at the borders for bicubic,
other Gaussian and nearest conventions).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import convert, errors
from tapejax._src.registry import abstract_check, hashable, op

from . import image_kernels
from .image import _pad_op, check_image, static_int, static_shape


class ResizeMethod:
    """The methods of tf.image.resize (their values are TF's strings)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
# TF's op that resizes with each method, for error messages
_OP_TYPES = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor", "bicubic": "ResizeBicubic",
             "area": "ResizeArea"}


def _resize(images, size, method="bilinear", antialias=False):
    (in_h, in_w), (out_h, out_w) = images.shape[-3:-1], size
    if method == "nearest":
        rows = image_kernels.nearest_indices(in_h, out_h)
        cols = image_kernels.nearest_indices(in_w, out_w)
        return jnp.take(jnp.take(images, rows, axis=-3), cols, axis=-2)
    # device_put, not jnp.asarray: in a trace's constant folding, that compiled a copy per shape (convert.py)
    rows = convert.on_device(image_kernels.axis_weights(in_h, out_h, method, antialias))
    cols = convert.on_device(image_kernels.axis_weights(in_w, out_w, method, antialias))
    highest = jax.lax.Precision.HIGHEST  # a GPU's or TPU's default matmul precision would round the pixels
    out = jnp.einsum("oh,...hwc->...owc", rows, images.astype(np.float32), precision=highest)
    return jnp.einsum("pw,...owc->...opc", cols, out, precision=highest)


@abstract_check
def _check_resize(images, size, method="bilinear", antialias=False):
    if images.ndim not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    if len(size) != 2:
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if method not in _METHODS:
        raise ValueError(f"Resize method is not implemented: {method}")
    if min(size) <= 0:
        raise errors.invalid_argument(_OP_TYPES.get(method, "ScaleAndTranslate"),
                                      f"output dimensions must be positive, got size {list(size)}")


_STATIC = ("size", "method", "antialias")
_resize_op = op("image.resize", _resize, static=_STATIC, op_type="ResizeBilinear", check=_check_resize)
# TF registers no gradient for ResizeArea: a gradient through it raises LookupError, as in TF.
_resize_area_op = op("image.resize_area", _resize, static=_STATIC, op_type="ResizeArea", check=_check_resize,
                     has_gradient=False)


def _size(size) -> tuple[int, int]:
    value = hashable(size)
    if not isinstance(value, tuple) or len(value) != 2 or any(isinstance(v, tuple) for v in value):
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value):
        raise ValueError("'size' must be a 1-D int32 Tensor")
    return int(value[0]), int(value[1])


def _aspect_size(shape, size: tuple[int, int]) -> tuple[int, int]:
    """TF's preserve_aspect_ratio: the largest size within `size` that keeps the aspect ratio (float32, rounded
    half to even)."""
    height, width = np.float32(shape[-3]), np.float32(shape[-2])
    scale = min(np.float32(size[0]) / height, np.float32(size[1]) / width)
    return int(np.rint(scale * height)), int(np.rint(scale * width))


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """Resizes [height, width, channels] or [batch, height, width, channels] images to `size`, as TF does.

    Every TF method (`tf.image.ResizeMethod`) with half-pixel centres; `antialias` widens the kernel when
    downsampling (bilinear, bicubic, lanczos3/5, gaussian, mitchellcubic; nearest and area ignore it, as TF).
    The result is float32, except for "nearest", which keeps the input's dtype. Gradients flow to float images
    for every method but "area", for which TF has no gradient (LookupError).

    >>> import tapejax as tf
    >>> tf.image.resize(tf.reshape(tf.range(4.0), [2, 2, 1]), [4, 4])[0, :, 0].numpy().tolist()
    [0.0, 0.25, 0.75, 1.0]
    """
    shape = static_shape(images)
    if len(shape) not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    size = _size(size)
    method = str(method).lower()
    if method not in _METHODS:
        raise ValueError(f"Resize method is not implemented: {method}")
    if preserve_aspect_ratio and None not in shape[-3:-1]:
        size = _aspect_size(shape, size)
    row = _resize_area_op if method == "area" else _resize_op
    return row(images, size=size, method=method, antialias=bool(antialias))


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """Resizes to fit inside [target_height, target_width] keeping the aspect ratio, then zero-pads evenly (TF).

    >>> import tapejax as tf
    >>> tf.image.resize_with_pad(tf.ones([2, 4, 1]), 4, 4)[:, 0, 0].numpy().tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    shape = check_image(image)
    target_height = static_int(target_height, "target_height")
    target_width = static_int(target_width, "target_width")
    if target_width <= 0:
        raise ValueError("target_width must be > 0.")
    if target_height <= 0:
        raise ValueError("target_height must be > 0.")
    height, width = shape[-3], shape[-2]
    # TF's arithmetic, in float32: the ratio that fits, the resized size (floored), the padding from the
    # unfloored size.
    ratio = max(np.float32(width) / np.float32(target_width), np.float32(height) / np.float32(target_height))
    height_float, width_float = np.float32(height) / ratio, np.float32(width) / ratio
    pad_height = max(0, int(np.floor((np.float32(target_height) - height_float) / np.float32(2))))
    pad_width = max(0, int(np.floor((np.float32(target_width) - width_float) / np.float32(2))))
    resized_height, resized_width = int(np.floor(height_float)), int(np.floor(width_float))
    resized = resize(image, [resized_height, resized_width], method=method, antialias=antialias)
    return _pad_op(resized, offset_height=pad_height, offset_width=pad_width, target_height=target_height,
                   target_width=target_width)
