"""Specs of the tf.image rows (merged into op_specs.SPEC and op_specs.EXTRA_CASES).

Images are small ([height, width, channels] or [batch, ...]) with values in [0, 1), away from the ties of
max/min (HSV) and of the kinks of abs (total_variation). The references are numpy: the formulas TF documents, and,
for resize, the per-axis weight matrices of tapejax/ops/image_kernels.py (a numpy module; its numbers are TF's
kernels', which test_reference_matches_tf and tests/compat/test_image_vs_tf.py check against TensorFlow for every
method).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_specs import F32, Spec, fixed

from tapejax.ops import image_kernels


def pixels(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.05, 0.95, shape).astype(F32)


# -- references ---------------------------------------------------------------------------------------------

def convert_ref(image, dtype, saturate=False):
    dst, src = np.dtype(dtype), image.dtype
    if src.kind == "u" and dst.kind == "f":
        return (image.astype(dst) * np.asarray(1.0 / np.iinfo(src).max, dst)).astype(dst)
    if src.kind == "f" and dst.kind == "u":
        scaled = image * np.asarray(np.iinfo(dst).max + 0.5, src)
        info = np.iinfo(dst)
        return np.trunc(np.clip(scaled, info.min, info.max) if saturate else scaled).astype(dst)
    return image.astype(dst)


def resize_ref(images, size, method="bilinear", antialias=False):
    (h, w), (oh, ow) = images.shape[-3:-1], size
    if method == "nearest":
        rows, cols = image_kernels.nearest_indices(h, oh), image_kernels.nearest_indices(w, ow)
        return images[..., rows, :, :][..., cols, :]
    wh = image_kernels.axis_weights(h, oh, method, antialias).astype(np.float64)
    ww = image_kernels.axis_weights(w, ow, method, antialias).astype(np.float64)
    return np.einsum("oh,...hwc,pw->...opc", wh, images.astype(np.float64), ww).astype(F32)


def crop_ref(image, offset_height, offset_width, target_height, target_width):
    return image[..., offset_height:offset_height + target_height, offset_width:offset_width + target_width, :]


def pad_ref(image, offset_height, offset_width, target_height, target_width):
    h, w = image.shape[-3:-1]
    pads = [(0, 0)] * (image.ndim - 3) + [(offset_height, target_height - h - offset_height),
                                          (offset_width, target_width - w - offset_width), (0, 0)]
    return np.pad(image, pads)


def patches_ref(images, sizes, strides, rates, padding):
    _, kh, kw, _ = sizes
    _, sh, sw, _ = strides
    _, rh, rw, _ = rates
    b, h, w, c = images.shape
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if padding == "VALID":
        oh, ow, top, left = (h - eh) // sh + 1, (w - ew) // sw + 1, 0, 0
    else:
        oh, ow = -(-h // sh), -(-w // sw)
        top = max((oh - 1) * sh + eh - h, 0) // 2
        left = max((ow - 1) * sw + ew - w, 0) // 2
    out = np.zeros((b, oh, ow, kh, kw, c), images.dtype)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for q in range(kw):
                    y, x = i * sh - top + a * rh, j * sw - left + q * rw
                    if 0 <= y < h and 0 <= x < w:
                        out[:, i, j, a, q] = images[:, y, x]
    return out.reshape(b, oh, ow, -1)


def rgb_to_hsv_ref(rgb):
    out = np.zeros_like(rgb)
    for index in np.ndindex(rgb.shape[:-1]):
        r, g, b = (float(v) for v in rgb[index])
        v, low = max(r, g, b), min(r, g, b)
        spread = v - low
        s = spread / v if v > 0 else 0.0
        if spread <= 0:
            h = 0.0
        elif r == v:
            h = ((g - b) / spread / 6) % 1.0
        elif g == v:
            h = (b - r) / spread / 6 + 1 / 3
        else:
            h = (r - g) / spread / 6 + 2 / 3
        out[index] = (h, s, v)
    return out


def hsv_to_rgb_ref(hsv):
    h, s, v = hsv[..., 0] * 6, hsv[..., 1], hsv[..., 2]
    curves = (np.clip(np.abs(h - 3) - 1, 0, 1), np.clip(2 - np.abs(h - 2), 0, 1), np.clip(2 - np.abs(h - 4), 0, 1))
    return np.stack([((1 - s) + s * d) * v for d in curves], axis=-1).astype(hsv.dtype)


def adjust_saturation_ref(image, factor):
    hsv = rgb_to_hsv_ref(image)
    hsv[..., 1] = np.clip(hsv[..., 1] * factor, 0, 1)
    return hsv_to_rgb_ref(hsv)


def adjust_hue_ref(image, delta):
    hsv = rgb_to_hsv_ref(image)
    hsv[..., 0] = np.mod(hsv[..., 0] + delta, 1)
    return hsv_to_rgb_ref(hsv)


def via_float32(ref):
    """A reference for a row that computes in float32 (TF's adjustments): float64 inputs are rounded to float32
    first and the result returned as float64, as TF does."""

    def wrapped(x, *rest, **kwargs):
        if x.dtype != np.float64:
            return ref(x, *rest, **kwargs)
        rest = tuple(np.asarray(r, F32) if np.asarray(r).dtype == np.float64 else r for r in rest)
        return np.asarray(ref(x.astype(F32), *rest, **kwargs)).astype(np.float64)

    return wrapped


def contrast_ref(x, f):
    mean = x.mean(axis=(-3, -2), keepdims=True)
    return ((x - mean) * f + mean).astype(x.dtype)


def standardization_ref(image):
    x = image.astype(np.float64)
    axes = (-3, -2, -1)
    mean = x.mean(axis=axes, keepdims=True)
    floor = 1 / math.sqrt(np.prod(image.shape[-3:]))
    return ((x - mean) / np.maximum(x.std(axis=axes, keepdims=True), floor)).astype(F32)


def total_variation_ref(images):
    axes = None if images.ndim == 3 else (1, 2, 3)
    return (np.abs(np.diff(images, axis=-3)).sum(axis=axes) + np.abs(np.diff(images, axis=-2)).sum(axis=axes)
            ).astype(images.dtype)


def image_gradients_ref(image):
    dy, dx = np.zeros_like(image), np.zeros_like(image)
    dy[:, :-1] = np.diff(image, axis=1)
    dx[:, :, :-1] = np.diff(image, axis=2)
    return dy, dx


def sobel_ref(image):
    p = np.pad(image, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    h, w = image.shape[1:3]
    kernels = ([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])
    return np.stack([sum(k[a][b] * p[:, a:a + h, b:b + w] for a in range(3) for b in range(3)) for k in kernels],
                    axis=-1).astype(image.dtype)


def psnr_ref(a, b, max_val):
    mse = np.mean((a.astype(np.float64) - b) ** 2, axis=(-3, -2, -1))
    return (20 * np.log10(float(max_val)) - 10 * np.log10(mse)).astype(F32)


def _gauss(size, sigma):
    coords = np.arange(size) - (size - 1) / 2
    g = np.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2))
    return g / g.sum()


def _filter(x, kernel):
    windows = np.lib.stride_tricks.sliding_window_view(x, kernel.shape, axis=(-3, -2))
    return np.einsum("...hwcij,ij->...hwc", windows, kernel)


def _ssim_maps(x, y, max_val, filter_size, filter_sigma, k1, k2):
    kernel = _gauss(filter_size, filter_sigma)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = _filter(x, kernel), _filter(y, kernel)
    luminance = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * _filter(x * y, kernel) - 2 * mx * my + c2) / (_filter(x * x + y * y, kernel) - mx ** 2 - my ** 2 + c2)
    return luminance * cs, cs


def ssim_ref(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    ssim_map, _ = _ssim_maps(img1.astype(np.float64), img2.astype(np.float64), float(max_val), filter_size,
                             filter_sigma, k1, k2)
    out = ssim_map.mean(axis=-1) if return_index_map else ssim_map.mean(axis=(-3, -2, -1))
    return np.asarray(out, F32)


def ssim_multiscale_ref(img1, img2, max_val, power_factors, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    x, y = img1.astype(np.float64), img2.astype(np.float64)
    factors = []
    for k, weight in enumerate(power_factors):
        if k:
            x, y = (0.25 * (v[..., ::2, ::2, :] + v[..., 1::2, ::2, :] + v[..., ::2, 1::2, :] + v[..., 1::2, 1::2, :])
                    for v in (x, y))  # the specs use even sizes: no padding
        ssim_map, cs = _ssim_maps(x, y, float(max_val), filter_size, filter_sigma, k1, k2)
        last = k == len(power_factors) - 1
        factors.append(np.maximum((ssim_map if last else cs).mean(axis=(-3, -2)), 0) ** weight)
    return np.asarray(np.prod(factors, axis=0).mean(axis=-1), F32)


def _correlated(rng):
    """Two similar images: every scale's contrast-structure term is positive (where one is not, the relu stops
    it and TF's gradient is NaN, JAX's 0: README's "Differences from TensorFlow")."""
    x = pixels(rng, (1, 8, 8, 2))
    return x, (x + rng.uniform(-0.1, 0.1, x.shape)).astype(F32), np.array(1.0, F32)


def _call_resize_area(m, args, kwargs):
    return m.image.resize(args[0], kwargs["size"], method="area")


# -- the table ----------------------------------------------------------------------------------------------

def image(shape: tuple[int, ...]) -> Any:
    return lambda rng: (pixels(rng, shape),)


_BOX = {"offset_height": 1, "offset_width": 0, "target_height": 2, "target_width": 3}

SPEC: dict[str, Spec] = {
    "image.convert_image_dtype": Spec(image((2, 3, 2)), convert_ref, kwargs={"dtype": np.float64}),
    "image.flip_left_right": Spec(image((2, 3, 2)), lambda x: x[..., ::-1, :]),
    "image.flip_up_down": Spec(image((2, 2, 3, 2)), lambda x: x[..., ::-1, :, :]),
    "image.transpose": Spec(image((2, 3, 2)), lambda x: np.swapaxes(x, -3, -2)),
    "image.rot90": Spec(image((2, 3, 2)), lambda x, k: np.rot90(x, k, axes=(-3, -2)), kwargs={"k": 1}),
    "image.crop_to_bounding_box": Spec(image((4, 3, 2)), crop_ref, kwargs=_BOX),
    "image.pad_to_bounding_box": Spec(image((1, 2, 3, 2)), pad_ref,
                                      kwargs={"offset_height": 1, "offset_width": 2, "target_height": 4,
                                              "target_width": 6}),
    "image.crop_at": Spec(lambda rng: (pixels(rng, (4, 3, 2)), np.array([1, 0, 1], np.int32)),
                          lambda x, offsets, size: x[1:3, 0:2, 1:2], kwargs={"size": (2, 2, 1)}),
    "image.extract_patches": Spec(image((1, 4, 5, 2)), patches_ref,
                                  kwargs={"sizes": (1, 2, 2, 1), "strides": (1, 1, 2, 1), "rates": (1, 1, 1, 1),
                                          "padding": "VALID"}),
    "image.resize": Spec(image((4, 5, 2)), resize_ref, kwargs={"size": (3, 7), "method": "bilinear",
                                                                "antialias": False}, float32_inside=True),
    "image.resize_area": Spec(image((4, 6, 2)), resize_ref, kwargs={"size": (3, 4), "method": "area"},
                              tf_call=_call_resize_area),
    "image.adjust_brightness": Spec(lambda rng: (pixels(rng, (2, 3, 3)), np.array(0.1, F32)),
                                    via_float32(lambda x, d: (x + d).astype(x.dtype)), mixed="",
                                    float32_inside=True),
    # per channel (x - mean over height and width) * factor + mean
    "image.adjust_contrast": Spec(lambda rng: (pixels(rng, (2, 2, 3)), np.array(0.1, F32)), via_float32(contrast_ref),
                                  mixed="", float32_inside=True),  # TF casts contrast_factor to the images' dtype
    "image.adjust_gamma": Spec(lambda rng: (pixels(rng, (2, 3, 2)), np.array(1.5, F32), np.array(0.8, F32)),
                               via_float32(lambda x, g, k: (k * x ** g).astype(x.dtype)), mixed="",
                               float32_inside=True),
    "image.adjust_saturation": Spec(lambda rng: (pixels(rng, (2, 3, 3)), np.array(0.6, F32)),
                                    via_float32(adjust_saturation_ref), mixed="",
                                    float32_inside=True),
    "image.adjust_hue": Spec(lambda rng: (pixels(rng, (2, 3, 3)), np.array(0.3, F32)), via_float32(adjust_hue_ref),
                             mixed="", float32_inside=True),
    "image.rgb_to_hsv": Spec(image((2, 3, 3)), rgb_to_hsv_ref),
    "image.hsv_to_rgb": Spec(image((2, 3, 3)), hsv_to_rgb_ref),
    "image.rgb_to_grayscale": Spec(image((2, 3, 3)), via_float32(
        lambda x: (x @ np.array([0.2989, 0.5870, 0.1140]))[..., None].astype(x.dtype)), float32_inside=True),
    "image.grayscale_to_rgb": Spec(image((2, 3, 1)), lambda x: np.repeat(x, 3, axis=-1)),
    "image.rgb_to_yuv": Spec(image((2, 3, 3)), lambda x: (x @ np.array(
        [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
         [0.114, 0.43601035, -0.10001026]])).astype(x.dtype)),
    "image.yuv_to_rgb": Spec(image((2, 3, 3)), lambda x: (x @ np.array(
        [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]])).astype(x.dtype)),
    "image.per_image_standardization": Spec(image((2, 3, 4, 2)), standardization_ref, rtol=1e-4, atol=1e-5,
                                            float32_inside=True),
    "image.total_variation": Spec(image((2, 3, 4, 2)), total_variation_ref, rtol=1e-4),
    "image.image_gradients": Spec(image((2, 3, 4, 2)), image_gradients_ref),
    "image.sobel_edges": Spec(image((1, 3, 4, 2)), sobel_ref, rtol=1e-4, atol=1e-5),
    "image.psnr": Spec(lambda rng: (pixels(rng, (2, 3, 4, 2)), pixels(rng, (2, 3, 4, 2)), np.array(1.0, F32)),
                       psnr_ref, mixed="", rtol=1e-4, float32_inside=True),
    "image.ssim": Spec(lambda rng: (pixels(rng, (6, 7, 2)), pixels(rng, (6, 7, 2)), np.array(1.0, F32)), ssim_ref,
                       kwargs={"filter_size": 3, "filter_sigma": 1.5, "k1": 0.01, "k2": 0.03},
                       rtol=1e-4, atol=1e-5, float32_inside=True),
    "image.ssim_multiscale": Spec(
        _correlated, ssim_multiscale_ref,
        kwargs={"power_factors": (0.6, 0.4), "filter_size": 3}, rtol=1e-4, atol=1e-5, float32_inside=True),
}

_METHODS = ("bilinear", "nearest", "bicubic", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")

EXTRA_CASES: list[tuple[str, str, Spec]] = [
    ("image.convert_image_dtype[uint8_to_float32]", "image.convert_image_dtype",
     fixed(np.array([[[0, 1, 128, 255]]], np.uint8), ref=convert_ref, kwargs={"dtype": np.float32})),
    ("image.convert_image_dtype[float32_to_uint8_saturate]", "image.convert_image_dtype",
     fixed(np.array([[[-0.5, 0.25, 0.999, 1.5]]], F32), ref=convert_ref,
           kwargs={"dtype": np.uint8, "saturate": True})),
    ("image.rot90[k3_batch]", "image.rot90", Spec(image((2, 2, 3, 1)), lambda x, k: np.rot90(x, k, axes=(1, 2)),
                                                  kwargs={"k": 3})),
    ("image.extract_patches[same_rates]", "image.extract_patches",
     Spec(image((1, 5, 4, 2)), patches_ref, kwargs={"sizes": (1, 2, 3, 1), "strides": (1, 2, 2, 1),
                                                   "rates": (1, 1, 2, 1), "padding": "SAME"})),
    ("image.resize[nearest_uint8]", "image.resize",
     Spec(lambda rng: (rng.integers(0, 256, (2, 3, 5, 1)).astype(np.uint8),), resize_ref,
          kwargs={"size": (4, 2), "method": "nearest", "antialias": False})),
    ("image.ssim[index_map]", "image.ssim",
     Spec(lambda rng: (pixels(rng, (2, 5, 5, 1)), pixels(rng, (2, 5, 5, 1)), np.array(1.0, F32)), ssim_ref,
          kwargs={"filter_size": 3, "filter_sigma": 1.0, "k1": 0.01, "k2": 0.03, "return_index_map": True},
          rtol=1e-4, atol=1e-5)),
] + [
    (f"image.resize[{method}_{'down' if down else 'up'}{'_antialias' if aa else ''}]", "image.resize",
     Spec(image((1, 6, 5, 2) if down else (3, 4, 1)), resize_ref,
          kwargs={"size": (4, 3) if down else (5, 7), "method": method, "antialias": aa}, rtol=1e-4, atol=1e-5))
    for method in _METHODS for down in (False, True) for aa in ((False, True) if down else (False,))
]
