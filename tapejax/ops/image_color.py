"""tf.image colour: brightness, contrast, saturation, hue, gamma, and the RGB/HSV/YUV/grayscale conversions.

TF's adjustments work in float32: a float16 or float32 image is used as it is, any other dtype goes through
convert_image_dtype to float32 and back (saturating), so a uint8 image stays uint8 and a float64 one is computed
in float32 and returned as float64. The rows do the same. TF has no gradient for AdjustContrastv2,
AdjustSaturation and AdjustHue (LookupError) and declares HSVToRGB's gradient None; the rows follow it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import deferred, errors
from tapejax._src.contracts import check_traced
from tapejax._src.registry import abstract_check, hashable, op

from .image import convert
from .math import _pow

_F32 = np.dtype(np.float32)
_HIGHEST = jax.lax.Precision.HIGHEST


def _to_float(image):
    return image if image.dtype in (np.float16, np.float32) else convert(image, _F32)


def _back(adjusted, like):
    return convert(adjusted, like.dtype, saturate=True)


def _channels(op_type: str, *, matmul: bool = False):
    """TF's check that the last axis holds 3 channels (InvalidArgumentError from the kernel or its MatMul)."""

    @abstract_check
    def check(image, *args, **params):
        if image.ndim < 1 or image.shape[-1] != 3:
            got = image.shape[-1] if image.ndim else "no"
            raise errors.invalid_argument(op_type, f"input must have 3 channels (RGB) in its last dimension, but "
                                                   f"it has {got}: shape {list(image.shape)}")

    return check


# -- brightness, contrast, gamma ----------------------------------------------------------------------------

def _adjust_brightness(image, delta):
    flt = _to_float(image)
    return _back(flt + delta.astype(flt.dtype), image)


adjust_brightness = op("image.adjust_brightness", _adjust_brightness, same_dtype=False, op_type="AddV2")


def _adjust_contrast(images, contrast_factor):
    # Per channel: (x - mean over height and width) * factor + mean, images shaped [..., height, width, channels].
    flt = _to_float(images)
    factor = contrast_factor.astype(flt.dtype)  # TF casts the factor to the images' dtype
    mean = jnp.mean(flt, axis=(-3, -2), keepdims=True)
    return _back((flt - mean) * factor + mean, images)


@abstract_check
def _check_contrast(images, contrast_factor):
    if images.ndim < 3:
        raise errors.invalid_argument("AdjustContrastv2", f"input must be at least 3-D, got shape"
                                                          f"{list(images.shape)}")


# TF registers no gradient for AdjustContrastv2: a gradient through it raises LookupError, as in TF.
adjust_contrast = op("image.adjust_contrast", _adjust_contrast, has_gradient=False, op_type="AdjustContrastv2",
                     same_dtype=False, check=_check_contrast)


def _adjust_gamma(image, gamma=1, gain=1):
    flt = _to_float(image)  # TF's Pow, with its gradient in gamma (0 where the image is not positive)
    return _back(gain.astype(flt.dtype) * _pow(flt, gamma.astype(flt.dtype)), image)


_GAMMA = "Gamma should be a non-negative real number."


def _check_gamma(image, gamma, gain):
    # TF asserts gamma >= 0 on a tensor gamma: a NaN gamma fails too (a Python gamma: ValueError, adjust_gamma)
    if isinstance(gamma, jax.core.Tracer):
        check_traced("Assert", jnp.all(gamma >= 0), _GAMMA)
    elif not np.all(np.asarray(deferred.resolve(gamma)) >= 0):
        raise errors.invalid_argument("Assert", f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                                                f"Summarized data: b'{_GAMMA}'")


_adjust_gamma_op = op("image.adjust_gamma", _adjust_gamma, same_dtype=False, op_type="Pow", check=_check_gamma)


def adjust_gamma(image, gamma=1, gain=1):
    """`gain * image ** gamma` (TF's gamma correction); integer images go through float32 and back.

    >>> import tapejax as tf
    >>> tf.image.adjust_gamma(tf.constant([[[0.5]]]), 2.0).numpy().tolist()
    [[[0.25]]]
    """
    value = hashable(gamma)
    if isinstance(value, int | float) and not value >= 0:  # NaN too
        raise ValueError(_GAMMA)
    return _adjust_gamma_op(image, gamma, gain)


# -- HSV: TF's RGBToHSV and HSVToRGB kernels ----------------------------------------------------------------

def rgb_to_hsv_array(rgb):
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    value = jnp.max(rgb, axis=-1)
    spread = value - jnp.min(rgb, axis=-1)
    saturation = jnp.where(value > 0, spread / jnp.where(value > 0, value, 1), 0)
    norm = 1 / (6 * jnp.where(spread > 0, spread, 1))
    hue = jnp.where(r == value, norm * (g - b),
                    jnp.where(g == value, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6))
    hue = jnp.where(spread > 0, hue, 0)
    hue = jnp.where(hue < 0, hue + 1, hue)
    return jnp.stack([hue, saturation, value], axis=-1).astype(rgb.dtype)


def hsv_to_rgb_array(hsv):
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    dh = h * 6
    dr = jnp.clip(jnp.abs(dh - 3) - 1, 0, 1)
    dg = jnp.clip(-jnp.abs(dh - 2) + 2, 0, 1)
    db = jnp.clip(-jnp.abs(dh - 4) + 2, 0, 1)
    one_minus_s = 1 - s
    return jnp.stack([(one_minus_s + s * d) * v for d in (dr, dg, db)], axis=-1).astype(hsv.dtype)


rgb_to_hsv = op("image.rgb_to_hsv", rgb_to_hsv_array, op_type="RGBToHSV", check=_channels("RGBToHSV"))
# TF 2.21's gradient of HSVToRGB is None (the op is not differentiable there).
hsv_to_rgb = op("image.hsv_to_rgb", hsv_to_rgb_array, differentiable=False, op_type="HSVToRGB",
                check=_channels("HSVToRGB"))


def _adjust_saturation(image, saturation_factor):
    flt = _to_float(image).astype(_F32)  # TF's kernel computes in float32
    hsv = rgb_to_hsv_array(flt)
    saturation = jnp.clip(hsv[..., 1] * saturation_factor.astype(_F32), 0, 1)
    rgb = hsv_to_rgb_array(hsv.at[..., 1].set(saturation))
    return _back(rgb.astype(_to_float(image).dtype), image)


def _adjust_hue(image, delta):
    flt = _to_float(image).astype(_F32)
    hsv = rgb_to_hsv_array(flt)
    hue = jnp.mod(hsv[..., 0] + delta.astype(_F32), 1)
    rgb = hsv_to_rgb_array(hsv.at[..., 0].set(hue))
    return _back(rgb.astype(_to_float(image).dtype), image)


# TF registers no gradient for AdjustSaturation or AdjustHue: LookupError, as in TF.
adjust_saturation = op("image.adjust_saturation", _adjust_saturation, has_gradient=False, same_dtype=False,
                       op_type="AdjustSaturation", check=_channels("AdjustSaturation"))
_adjust_hue_op = op("image.adjust_hue", _adjust_hue, has_gradient=False, same_dtype=False, op_type="AdjustHue",
                    check=_channels("AdjustHue"))


def adjust_hue(image, delta, name=None):
    """Rotates the hue of RGB images by `delta` (in [-1, 1], a fraction of the colour circle).

    >>> import tapejax as tf
    >>> tf.image.adjust_hue(tf.constant([[[1.0, 0.0, 0.0]]]), 1 / 3).numpy().round(4).tolist()
    [[[0.0, 1.0, 0.0]]]
    """
    value = hashable(delta)
    if isinstance(value, int | float) and not -1 <= value <= 1:
        raise ValueError("delta must be in the interval [-1, 1]")
    return _adjust_hue_op(image, delta)


# -- grayscale and YUV --------------------------------------------------------------------------------------

_GRAY = np.array([0.2989, 0.5870, 0.1140])
_RGB_TO_YUV = np.array([[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
                        [0.114, 0.43601035, -0.10001026]])
_YUV_TO_RGB = np.array([[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]])


def _rgb_to_grayscale(images):
    flt = convert(images, _F32)
    gray = jnp.einsum("...c,c->...", flt, _GRAY.astype(np.float32), precision=_HIGHEST)[..., None]
    return convert(gray, images.dtype)


rgb_to_grayscale = op("image.rgb_to_grayscale", _rgb_to_grayscale, op_type="MatMul", check=_channels("MatMul"))


def _grayscale_to_rgb(images):
    return jnp.repeat(images, 3, axis=-1)


@abstract_check
def _check_gray(images):
    if images.ndim < 2:
        raise ValueError(f"A grayscale image (shape {tuple(images.shape)}) must be at least two-dimensional.")
    if images.shape[-1] != 1:
        raise ValueError("Last dimension of a grayscale image should be size 1.")


grayscale_to_rgb = op("image.grayscale_to_rgb", _grayscale_to_rgb, op_type="Tile", check=_check_gray)


def _matrix_row(kernel: np.ndarray):
    def impl(images):
        return jnp.einsum("...c,cd->...d", images, kernel.astype(images.dtype), precision=_HIGHEST)

    return impl


@abstract_check
def _check_float(images):
    if images.dtype.kind != "f" and images.dtype != jnp.bfloat16:
        raise TypeError(f"Cannot convert the colour-space matrix to EagerTensor of dtype {images.dtype}: "
                        "rgb_to_yuv and yuv_to_rgb take float images (use tf.image.convert_image_dtype first)")
    _channels("MatMul")(images)


rgb_to_yuv = op("image.rgb_to_yuv", _matrix_row(_RGB_TO_YUV), op_type="MatMul", check=_check_float)
yuv_to_rgb = op("image.yuv_to_rgb", _matrix_row(_YUV_TO_RGB), op_type="MatMul", check=_check_float)


# -- per_image_standardization ------------------------------------------------------------------------------

def _per_image_standardization(image):
    image = image.astype(_F32)
    pixels = float(np.prod(image.shape[-3:]))
    mean = jnp.mean(image, axis=(-3, -2, -1), keepdims=True)
    stddev = jnp.sqrt(jnp.mean(jnp.square(image - mean), axis=(-3, -2, -1), keepdims=True))
    adjusted = jnp.maximum(stddev, np.float32(1 / np.sqrt(np.float32(pixels))))
    return (image - mean) / adjusted


@abstract_check
def _check_standardization(image):
    if image.ndim < 3:
        raise ValueError(f"'image' (shape {tuple(image.shape)}) must be at least three-dimensional.")


per_image_standardization = op("image.per_image_standardization", _per_image_standardization, op_type="RealDiv",
                               check=_check_standardization)
