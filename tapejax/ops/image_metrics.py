"""tf.image measures and derivative filters: total_variation, sobel_edges, image_gradients, psnr, ssim and
ssim_multiscale, written as TF's Python functions compose them (so their gradients are TF's too).

psnr and the SSIMs first bring both images and `max_val` to float32 with convert_image_dtype, as TF does, so a
uint8 image with max_val 255 gives the value of the float image in [0, 1] with max_val 1.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import errors
from tapejax._src.registry import abstract_check, op

from .image import convert
from .math import _abs

_F32 = np.dtype(np.float32)
_HIGHEST = jax.lax.Precision.HIGHEST


# -- total_variation, image_gradients, sobel_edges ----------------------------------------------------------

def _total_variation(images):
    axes = None if images.ndim == 3 else (1, 2, 3)
    # TF's Abs, whose gradient sign(x) is NaN at NaN
    down = _abs(images[..., 1:, :, :] - images[..., :-1, :, :])
    right = _abs(images[..., :, 1:, :] - images[..., :, :-1, :])
    return jnp.sum(down, axis=axes) + jnp.sum(right, axis=axes)


@abstract_check
def _check_total_variation(images):
    if images.ndim not in (3, 4):
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    if images.dtype.kind == "u":  # TF's Abs has no unsigned kernel
        raise errors.invalid_argument("Abs", f"Value for attr 'T' of {images.dtype} is not in the list of allowed "
                                             "values: total_variation takes float or signed integer images")


total_variation = op("image.total_variation", _total_variation, op_type="Sum", check=_check_total_variation)


def _image_gradients(image):
    dy = image[:, 1:] - image[:, :-1]
    dx = image[:, :, 1:] - image[:, :, :-1]
    # zeros in the last row of dy and the last column of dx, as TF
    return (jnp.pad(dy, [(0, 0), (0, 1), (0, 0), (0, 0)]), jnp.pad(dx, [(0, 0), (0, 0), (0, 1), (0, 0)]))


def _rank4(what: str):
    @abstract_check
    def check(image, *args, **params):
        if image.ndim != 4:
            raise ValueError(f"{what} expects a 4D tensor [batch_size, h, w, d], not {tuple(image.shape)}.")

    return check


image_gradients = op("image.image_gradients", _image_gradients, op_type="Sub", check=_rank4("image_gradients"))

_SOBEL = (((-1, -2, -1), (0, 0, 0), (1, 2, 1)), ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1)))  # d/dy, d/dx


def _sobel_edges(image):
    padded = jnp.pad(image, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    height, width = image.shape[1:3]
    edges = []
    for kernel in _SOBEL:
        total = jnp.zeros(image.shape, image.dtype)
        for a in range(3):
            for b in range(3):
                # zero taps too: TF's depthwise convolution multiplies them (a NaN or inf neighbour gives NaN)
                total = total + np.asarray(kernel[a][b], image.dtype) * padded[:, a:a + height, b:b + width]
        edges.append(total)
    return jnp.stack(edges, axis=-1)


@abstract_check
def _check_sobel(image):
    if image.ndim != 4:
        raise errors.invalid_argument("MirrorPad", f"sobel_edges takes 4-D images [batch, height, width, "
                                                   f"channels], got shape {list(image.shape)}")
    if image.dtype.kind != "f" and image.dtype != jnp.bfloat16:
        raise errors.invalid_argument("DepthwiseConv2dNative", f"Value for attr 'T' of {image.dtype} is not in the "
                                                               "list of allowed values: half, bfloat16, float, double")


sobel_edges = op("image.sobel_edges", _sobel_edges, op_type="DepthwiseConv2dNative", check=_check_sobel)


# -- psnr ---------------------------------------------------------------------------------------------------

def _to_float32(a, b, max_val):
    return convert(a, _F32), convert(b, _F32), convert(max_val.astype(a.dtype), _F32)


def _psnr(a, b, max_val):
    a, b, max_val = _to_float32(a, b, max_val)
    mse = jnp.mean(jnp.square(a - b), axis=(-3, -2, -1))
    return 20 * jnp.log(max_val) / jnp.log(np.float32(10.0)) - np.float32(10 / np.log(10)) * jnp.log(mse)


psnr = op("image.psnr", _psnr, same_dtype=False, op_type="SquaredDifference")


# -- ssim ---------------------------------------------------------------------------------------------------

def _gaussian(size: int, sigma: float) -> np.ndarray:
    """TF's _fspecial_gauss in float32: a softmax of -(x^2 + y^2) / (2 sigma^2) over the window."""
    coords = np.arange(size, dtype=_F32) - np.float32(size - 1) / np.float32(2)
    g = np.square(coords) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum(dtype=_F32)).astype(_F32).reshape(size, size)


def _filter(x, kernel):
    """Depthwise VALID convolution of [..., h, w, c] images with one 2-D kernel."""
    lead, (h, w, c) = x.shape[:-3], x.shape[-3:]
    flat = x.reshape((-1, h, w, c))
    weights = jnp.broadcast_to(jnp.asarray(kernel)[:, :, None, None], (*kernel.shape, 1, c))
    y = jax.lax.conv_general_dilated(flat, weights, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=c, precision=_HIGHEST)
    return y.reshape((*lead, *y.shape[1:]))


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2):
    """(ssim, cs) per channel, averaged over height and width (TF's _ssim_per_channel with _ssim_helper)."""
    kernel = _gaussian(filter_size, filter_sigma)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = _filter(x, kernel), _filter(y, kernel)
    num0 = mean0 * mean1 * 2.0
    den0 = jnp.square(mean0) + jnp.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = _filter(x * y, kernel) * 2.0
    den1 = _filter(jnp.square(x) + jnp.square(y), kernel)
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance * cs, cs


def _ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    x, y, max_val = _to_float32(img1, img2, max_val)
    ssim_map, _ = _ssim_per_channel(x, y, max_val, filter_size, np.float32(filter_sigma), k1, k2)
    if return_index_map:
        return jnp.mean(ssim_map, axis=-1)
    return jnp.mean(jnp.mean(ssim_map, axis=(-3, -2)), axis=-1)


def _check_ssim_shapes(img1, img2, filter_size, scales=1):
    if img1.ndim < 3:
        raise ValueError(f"Shape {tuple(img1.shape)} must have rank at least 3 (images are [..., height, width, "
                         "channels])")
    if img1.shape[-3:] != img2.shape[-3:]:
        raise ValueError(f"Shapes {tuple(img1.shape)} and {tuple(img2.shape)} are incompatible")
    height, width = img1.shape[-3:-1]
    factor = 2 ** (scales - 1)  # the smallest scale of ssim_multiscale is about 1/factor of the image
    if -(-height // factor) < filter_size or -(-width // factor) < filter_size:
        raise errors.InvalidArgumentError(None, None, (
            f"the images' height and width ({height}, {width}) must be at least filter_size {filter_size}"
            + (f" at each of the {scales} scales (at least {factor} * {filter_size} - {factor - 1})" if scales > 1
               else "") + "; use a smaller filter_size or larger images"))


@abstract_check
def _check_ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    _check_ssim_shapes(img1, img2, filter_size)


_SSIM = ("filter_size", "filter_sigma", "k1", "k2")
# Both images must share a dtype: TF reads their shapes with one ShapeN op (InvalidArgumentError otherwise).
ssim = op("image.ssim", _ssim, static=(*_SSIM, "return_index_map"), same_dtype=(0, 1), op_type="SSIM",
          check=_check_ssim)

_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01,
                     k2=0.03):
    images = list(_to_float32(img1, img2, max_val)[:2])
    max_val = _to_float32(img1, img2, max_val)[2]
    sigma = np.float32(filter_sigma)
    mcs = []
    for k in range(len(power_factors)):
        if k > 0:
            # halve with a 2x2 average, after repeating the last row or column of an odd size (TF's SYMMETRIC pad)
            h, w = images[0].shape[-3:-1]
            pads = [(0, 0)] * (images[0].ndim - 3) + [(0, h % 2), (0, w % 2), (0, 0)]
            images = [jnp.pad(x, pads, mode="symmetric") for x in images]
            images = [0.25 * (x[..., 0::2, 0::2, :] + x[..., 1::2, 0::2, :] + x[..., 0::2, 1::2, :]
                              + x[..., 1::2, 1::2, :]) for x in images]
        ssim_map, cs_map = _ssim_per_channel(*images, max_val, filter_size, sigma, k1, k2)
        mcs.append(jax.nn.relu(jnp.mean(cs_map, axis=(-3, -2))))
    ssim_per_channel = jnp.mean(ssim_map, axis=(-3, -2))
    stacked = jnp.stack(mcs[:-1] + [jax.nn.relu(ssim_per_channel)], axis=-1)
    weights = jnp.asarray(power_factors, _F32)
    # Where a scale's relu is 0, TF's gradient is NaN (its Pow gradient is inf at 0, times ReluGrad's zero mask);
    # JAX's gives 0 there (README, "Differences from TensorFlow").
    return jnp.mean(jnp.prod(stacked ** weights, axis=-1), axis=-1)


@abstract_check
def _check_ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5,
                           k1=0.01, k2=0.03):
    _check_ssim_shapes(img1, img2, filter_size, len(power_factors))


ssim_multiscale = op("image.ssim_multiscale", _ssim_multiscale, static=("power_factors", *_SSIM), same_dtype=(0, 1),
                     op_type="SSIM", check=_check_ssim_multiscale)
