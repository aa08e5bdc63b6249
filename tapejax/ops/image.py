"""tf.image geometry and dtype conversion: crops, pads, flips, rotations, patches, convert_image_dtype.

Images are [height, width, channels] or [batch, height, width, channels], as in TF; every row works on the last
three axes, so both ranks go through the same row. Offsets and sizes are static parameters (Python integers, as TF's
Python wrappers require for their checks), and TF's wrappers' ValueErrors are raised before the op runs. The
resizing rows are in image_resize.py, colour in image_color.py, quality metrics in image_metrics.py and the random
augmentations in image_random.py.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes, errors
from tapejax._src.registry import abstract_check, hashable, op


# -- shared checks ------------------------------------------------------------------------------------------

def static_shape(image: Any) -> tuple[Any, ...]:
    """The shape of a tensor, variable, array or nested list (None for an unknown dimension)."""
    shape = getattr(image, "shape", None)
    if shape is None:
        shape = np.shape(image)
    return tuple(None if d is None else int(d) for d in shape)


def check_image(image: Any, *, at_least_3d: bool = False, name: str = "image") -> tuple[Any, ...]:
    """TF's rank checks on an image: 3-D or 4-D (ValueError), or, for `at_least_3d` ops, 3-D or more first."""
    shape = static_shape(image)
    if at_least_3d and len(shape) < 3:
        raise ValueError(f"'{name}' (shape {shape}) must be at least three-dimensional.")
    if len(shape) not in (3, 4):
        raise ValueError(f"'{name}' (shape {shape}) must have either 3 or 4 dimensions.")
    return shape


def static_int(value: Any, what: str) -> int:
    """An integer parameter (a Python int or a concrete integer tensor); a float is TF's TypeError."""
    value = hashable(value)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype int32 ({what} must be an integer)")
    return int(value)


def _image_rows(check_rank: bool = True):
    """An abstract check for rows on the last three axes: 3-D or 4-D images."""

    @abstract_check
    def check(image, *args, **params):
        if check_rank:
            check_image(image, at_least_3d=True)

    return check


# -- convert_image_dtype ------------------------------------------------------------------------------------

def _saturate_cast(x, dtype: np.dtype):
    info = np.iinfo(dtype)
    low = max(float(info.min), float(np.finfo(x.dtype).min) if jnp.issubdtype(x.dtype, jnp.floating) else info.min)
    if jnp.issubdtype(x.dtype, jnp.floating):
        # TF clamps to the largest value of x's dtype below a 32-bit maximum (2**31 - 1 is 2**31 in float32), but
        # to 64-bit maxima as they round (2**63, which then overflows to the minimum, as TF's cast does)
        high = np.asarray(info.max, x.dtype)
        if float(high) > info.max and dtype.itemsize <= 4:
            high = np.nextafter(high, np.asarray(0, x.dtype))
        return dtypes.cast_array(jnp.clip(x, np.asarray(low, x.dtype), high), dtype)
    xi = np.iinfo(x.dtype)
    return jnp.clip(x, max(info.min, xi.min), min(info.max, xi.max)).astype(dtype)


def convert(image, dtype, saturate: bool = False):
    """convert_image_dtype on a JAX array (shared with the colour and metric rows)."""
    src, dst = np.dtype(image.dtype), dtypes.as_dtype(dtype)._np
    if src == dst:
        return image
    src_int, dst_int = src.kind in "iu", dst.kind in "iu"
    if src_int and dst_int:
        scale_in, scale_out = int(np.iinfo(src).max), int(np.iinfo(dst).max)
        if scale_in > scale_out:  # scale down, then cast
            scaled = jnp.floor_divide(image, np.asarray((scale_in + 1) // (scale_out + 1), src))
            return _saturate_cast(scaled, dst) if saturate else scaled.astype(dst)
        cast = _saturate_cast(image, dst) if saturate else image.astype(dst)
        return cast * np.asarray((scale_out + 1) // (scale_in + 1), dst)
    if not src_int and not dst_int:
        return image.astype(dst)
    if src_int:  # to float: cast, then scale
        return image.astype(dst) * np.asarray(1.0 / np.iinfo(src).max, dst)
    scaled = image * np.asarray(np.iinfo(dst).max + 0.5, src)  # from float: scale, then cast
    return _saturate_cast(scaled, dst) if saturate else dtypes.cast_array(scaled, dst)


def _check_convert(image, dtype, saturate=False):
    if image.dtype.kind not in "iuf" and image.dtype != jnp.bfloat16:
        raise AttributeError("image dtype must be either floating point or integer")


_convert_op = op("image.convert_image_dtype", convert, static=("dtype", "saturate"), same_dtype=False,
                 op_type="ConvertImageDtype", check=abstract_check(_check_convert))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts `image` to `dtype`, scaling values: floats are in [0, 1), integers in [0, MAX] (TF's rules).

    Integer to float divides by the input's MAX; float to integer multiplies by MAX + 0.5 and truncates, wrapping
    around out of range unless `saturate` clips first; integer to integer rescales by the ratio of the ranges.
    Float to float is a cast (differentiable, as in TF).

    >>> import tapejax as tf
    >>> tf.image.convert_image_dtype(tf.constant([0.0, 0.5, 1.0]), tf.uint8).numpy().tolist()
    [0, 127, 255]
    """
    target = dtypes.as_dtype(dtype)
    if not (target.is_floating or target.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    return _convert_op(image, dtype=target, saturate=bool(saturate))


# -- flips, rotations, transposition ------------------------------------------------------------------------

flip_left_right = op("image.flip_left_right", lambda image: jnp.flip(image, axis=-2), op_type="ReverseV2",
                     check=_image_rows())
flip_up_down = op("image.flip_up_down", lambda image: jnp.flip(image, axis=-3), op_type="ReverseV2",
                  check=_image_rows())
transpose = op("image.transpose", lambda image: jnp.swapaxes(image, -3, -2), op_type="Transpose",
               check=_image_rows())
_rot90_op = op("image.rot90", lambda image, k=1: jnp.rot90(image, k, axes=(-3, -2)), static=("k",),
               op_type="ReverseV2", check=_image_rows())


def rot90(image, k=1, name=None):
    """Rotates images counter-clockwise by `k` quarter turns (3-D or 4-D, as TF).

    >>> import tapejax as tf
    >>> tf.image.rot90(tf.reshape(tf.range(4.0), [2, 2, 1]))[..., 0].numpy().tolist()
    [[1.0, 3.0], [0.0, 2.0]]
    """
    return _rot90_op(image, k=static_int(k, "k") % 4)


# -- crops and pads -----------------------------------------------------------------------------------------

def _crop(image, offset_height, offset_width, target_height, target_width):
    return image[..., offset_height:offset_height + target_height, offset_width:offset_width + target_width, :]


@abstract_check
def _check_crop(image, offset_height, offset_width, target_height, target_width):
    shape = check_image(image)
    height, width = shape[-3], shape[-2]
    for what, value, rule in (("offset_width", offset_width, ">= 0"), ("offset_height", offset_height, ">= 0"),
                              ("target_width", target_width, "> 0"), ("target_height", target_height, "> 0")):
        if value < 0 or (rule == "> 0" and value == 0):
            raise ValueError(f"{what} must be {rule}.")
    if width is not None and width < target_width + offset_width:
        raise ValueError("width must be >= target + offset.")
    if height is not None and height < target_height + offset_height:
        raise ValueError("height must be >= target + offset.")


_BOX = ("offset_height", "offset_width", "target_height", "target_width")
_crop_op = op("image.crop_to_bounding_box", _crop, static=_BOX, op_type="StridedSlice", check=_check_crop)


def _pad(image, offset_height, offset_width, target_height, target_width):
    height, width = image.shape[-3], image.shape[-2]
    pads = [(0, 0)] * (image.ndim - 3) + [(offset_height, target_height - offset_height - height),
                                          (offset_width, target_width - offset_width - width), (0, 0)]
    return jnp.pad(image, pads)


@abstract_check
def _check_pad(image, offset_height, offset_width, target_height, target_width):
    shape = check_image(image)
    height, width = shape[-3], shape[-2]
    if offset_height < 0:
        raise ValueError("offset_height must be >= 0")
    if offset_width < 0:
        raise ValueError("offset_width must be >= 0")
    if height is not None and target_height - offset_height - height < 0:
        raise ValueError("height must be <= target - offset")
    if width is not None and target_width - offset_width - width < 0:
        raise ValueError("width must be <= target - offset")


_pad_op = op("image.pad_to_bounding_box", _pad, static=_BOX, op_type="Pad", check=_check_pad)


def _box(offset_height, offset_width, target_height, target_width) -> dict[str, int]:
    return {n: static_int(v, n) for n, v in zip(_BOX, (offset_height, offset_width, target_height, target_width))}


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The box of `image` whose top-left corner is at (offset_height, offset_width) (3-D or 4-D images).

    Raises ValueError, as TF, for a box outside the image or an empty box.

    >>> import tapejax as tf
    >>> tf.image.crop_to_bounding_box(tf.zeros([4, 5, 3]), 1, 1, 2, 3).shape
    TensorShape([2, 3, 3])
    """
    return _crop_op(image, **_box(offset_height, offset_width, target_height, target_width))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`image` placed at (offset_height, offset_width) in zeros of [target_height, target_width] (3-D or 4-D).

    >>> import tapejax as tf
    >>> tf.image.pad_to_bounding_box(tf.ones([1, 1, 1]), 1, 0, 2, 2)[..., 0].numpy().tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    """
    return _pad_op(image, **_box(offset_height, offset_width, target_height, target_width))


def central_crop(image, central_fraction):
    """The central `central_fraction` (in (0, 1]) of each image's height and width, as TF rounds it.

    >>> import tapejax as tf
    >>> tf.image.central_crop(tf.zeros([4, 5, 3]), 0.5).shape
    TensorShape([2, 3, 3])
    """
    fraction = float(hashable(central_fraction))
    if fraction <= 0.0 or fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    shape = check_image(image, at_least_3d=True)
    if fraction == 1.0:
        return _crop_op(image, offset_height=0, offset_width=0, target_height=shape[-3], target_width=shape[-2])
    height, width = shape[-3], shape[-2]
    top = int((height - height * fraction) / 2)
    left = int((width - width * fraction) / 2)
    return _crop_op(image, offset_height=top, offset_width=left, target_height=height - 2 * top,
                    target_width=width - 2 * left)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Crops (centrally) or zero-pads (evenly) each image to [target_height, target_width], as TF.

    >>> import tapejax as tf
    >>> tf.image.resize_with_crop_or_pad(tf.zeros([4, 5, 3]), 6, 3).shape
    TensorShape([6, 3, 3])
    """
    shape = check_image(image)
    target_height, target_width = static_int(target_height, "target_height"), static_int(target_width,
                                                                                         "target_width")
    if target_width <= 0:
        raise ValueError("target_width must be > 0.")
    if target_height <= 0:
        raise ValueError("target_height must be > 0.")
    height, width = shape[-3], shape[-2]
    crop_height, crop_width = max((height - target_height) // 2, 0), max((width - target_width) // 2, 0)
    pad_height, pad_width = max((target_height - height) // 2, 0), max((target_width - width) // 2, 0)
    cropped = _crop_op(image, offset_height=crop_height, offset_width=crop_width,
                       target_height=min(target_height, height), target_width=min(target_width, width))
    return _pad_op(cropped, offset_height=pad_height, offset_width=pad_width, target_height=target_height,
                   target_width=target_width)


def _crop_at(value, offsets, size):
    return jax.lax.dynamic_slice(value, [offsets[i] for i in range(value.ndim)], size)


# The crop of random_crop and stateless_random_crop: the offsets are drawn outside, so the row replays.
crop_at = op("image.crop_at", _crop_at, static=("size",), same_dtype=False, op_type="Slice")


# -- extract_patches ----------------------------------------------------------------------------------------

def _extract_patches(images, sizes, strides, rates, padding):
    # Strided slices of the (zero-padded) images, one per position in the patch: values are copied, never
    # multiplied (a convolution with an identity filter would spread a NaN to every patch feature).
    (_, kh, kw, _), (_, sh, sw, _), (_, rh, rw, _) = sizes, strides, rates
    height, width = images.shape[1:3]
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if padding == "VALID":
        oh, ow = (height - eh) // sh + 1, (width - ew) // sw + 1
        pads = [(0, 0), (0, 0)]
    else:  # SAME: TF's padding, the odd pixel at the bottom and right
        oh, ow = -(-height // sh), -(-width // sw)
        ph, pw = max((oh - 1) * sh + eh - height, 0), max((ow - 1) * sw + ew - width, 0)
        pads = [(ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2)]
    padded = jnp.pad(images, [(0, 0), *pads, (0, 0)])
    taps = [padded[:, a * rh:a * rh + (oh - 1) * sh + 1:sh, q * rw:q * rw + (ow - 1) * sw + 1:sw, :]
            for a in range(kh) for q in range(kw)]
    return jnp.stack(taps, axis=3).reshape(images.shape[0], oh, ow, -1)


@abstract_check
def _check_patches(images, sizes, strides, rates, padding):
    if images.ndim != 4:
        raise errors.invalid_argument("ExtractImagePatches", f"input must be 4-dimensional [batch, height, width, "
                                                             f"channels], got shape {list(images.shape)}")
    for what, value in (("ksizes", sizes), ("strides", strides), ("rates", rates)):
        if len(value) != 4 or value[0] != 1 or value[3] != 1:
            raise errors.UnimplementedError(None, None, (
                f"Only support {what} across space: {what} must be [1, rows, cols, 1], got {list(value)} "
                "[Op:ExtractImagePatches]"))
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")


extract_patches = op("image.extract_patches", _extract_patches, static=("sizes", "strides", "rates", "padding"),
                     op_type="ExtractImagePatches", check=_check_patches)
