"""TF's resampling weights for tf.image.resize, one [out, in] matrix per image axis, built in numpy.

A resize is separable: the output is W_h @ image @ W_w^T per channel, with each W depending only on the two sizes,
the method and `antialias` (all static), so the weights are trace-time constants and the row's derivative is
JAX's transpose of the same matrices, which is what TF's ResizeBilinearGrad, ResizeBicubicGrad and
ScaleAndTranslateGrad compute. The coordinates are computed in float32, as TF's kernels compute them, so that
the sample positions (and the bicubic coefficient table's quantisation) fall where TF's fall:

- bilinear (ResizeBilinear, half-pixel centres): in = (out + 0.5) * in/out - 0.5, the two neighbours clamped;
- bicubic (ResizeBicubic, half-pixel centres): Keys' cubic (a = -0.5) read from a 1024-entry table, taps outside
  the image weighted 0 and the rest renormalised;
- area (ResizeArea): each output pixel averages the input pixels its footprint overlaps, by overlap;
- the others, and bilinear/bicubic with `antialias` (ScaleAndTranslate): a kernel centred on
  (out + 0.5) * in/out, stretched by in/out when downsampling with `antialias`, renormalised to sum 1.
"""

from __future__ import annotations

import math

import numpy as np

F = np.float32
_TABLE_SIZE = 1024


def _triangle(x):
    return np.where(x < 1, 1 - x, 0).astype(F)


def _keys_cubic(x):
    return np.where(x >= 2, 0, np.where(x >= 1, ((F(-0.5) * x + F(2.5)) * x - F(4)) * x + F(2),
                                        ((F(1.5) * x - F(2.5)) * x) * x + F(1))).astype(F)


def _mitchell_cubic(x):
    return np.where(x >= 2, 0, np.where(
        x >= 1, ((F(-7 / 18) * x + F(2)) * x - F(10 / 3)) * x + F(16 / 9),
        ((F(7 / 6) * x - F(2)) * x) * x + F(8 / 9))).astype(F)


def _lanczos(radius: int):
    def kernel(x):
        pi = F(3.14159265359)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = F(radius) * np.sin(pi * x) * np.sin(pi * x / F(radius)) / (pi * pi * x * x)
        return np.where(x > radius, 0, np.where(x <= F(1e-3), 1, value)).astype(F)

    return kernel


def _gaussian(x):
    sigma = F(0.5)  # TF's: radius 3 sigma
    return np.where(x >= F(1.5), 0, np.exp(-x * x / (F(2) * sigma * sigma))).astype(F)


# method -> (kernel, radius) of TF's ScaleAndTranslate kernels
SCALE_AND_TRANSLATE = {
    "bilinear": (_triangle, 1), "bicubic": (_keys_cubic, 2), "lanczos3": (_lanczos(3), 3),
    "lanczos5": (_lanczos(5), 5), "gaussian": (_gaussian, 1.5), "mitchellcubic": (_mitchell_cubic, 2),
}


def _scale_and_translate(in_size: int, out_size: int, method: str, antialias: bool) -> np.ndarray:
    kernel, radius = SCALE_AND_TRANSLATE[method]
    scale = F(out_size) / F(in_size)
    inv_scale = F(1) / scale
    kernel_scale = max(inv_scale, F(1)) if antialias else F(1)
    weights = np.zeros((out_size, in_size), F)
    for x in range(out_size):
        sample = (F(x) + F(0.5)) * inv_scale
        start = math.ceil(sample - F(radius) * kernel_scale - F(0.5))
        end = math.floor(sample + F(radius) * kernel_scale - F(0.5))
        start, end = min(max(start, 0), in_size - 1), min(max(end, 0), in_size - 1) + 1
        sources = np.arange(start, end)
        w = kernel(np.abs((sources.astype(F) + F(0.5) - sample) * (F(1) / kernel_scale)))
        total = w.sum(dtype=F)
        if abs(total) >= 1000 * np.finfo(F).tiny:
            w = w * (F(1) / total)
        weights[x, start:end] = w
    return weights


def _bilinear(in_size: int, out_size: int) -> np.ndarray:
    position = (np.arange(out_size, dtype=F) + F(0.5)) * (F(in_size) / F(out_size)) - F(0.5)
    floor = np.floor(position)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(position).astype(np.int64), in_size - 1)
    lerp = position - floor
    weights = np.zeros((out_size, in_size), F)
    rows = np.arange(out_size)
    np.add.at(weights, (rows, lower), F(1) - lerp)
    np.add.at(weights, (rows, upper), lerp)
    return weights


def _cubic_table() -> np.ndarray:
    a = -0.5  # Keys' cubic; TF's table is computed in double and stored as float
    x = np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    return np.stack([near, far], axis=1).astype(F)


def _bicubic(in_size: int, out_size: int) -> np.ndarray:
    table = _cubic_table()
    position = (np.arange(out_size, dtype=F) + F(0.5)) * (F(in_size) / F(out_size)) - F(0.5)
    base = np.floor(position)
    offset = np.rint((position - base) * F(_TABLE_SIZE)).astype(np.int64)  # lrintf: half to even
    base = base.astype(np.int64)
    taps = [(base - 1, table[offset, 1]), (base, table[offset, 0]),
            (base + 1, table[_TABLE_SIZE - offset, 0]), (base + 2, table[_TABLE_SIZE - offset, 1])]
    inside = [(i, np.where((i >= 0) & (i < in_size), w, F(0))) for i, w in taps]
    total = sum(w for _, w in inside)
    norm = np.where(np.abs(total) >= 1000 * np.finfo(F).tiny, F(1) / total, F(1)).astype(F)
    weights = np.zeros((out_size, in_size), F)
    rows = np.arange(out_size)
    for i, w in inside:
        np.add.at(weights, (rows, np.clip(i, 0, in_size - 1)), w * norm)
    return weights


def _area(in_size: int, out_size: int) -> np.ndarray:
    scale = F(in_size) / F(out_size)
    weights = np.zeros((out_size, in_size), F)
    for y in range(out_size):
        low, high = F(y) * scale, F(y + 1) * scale
        for i in range(math.floor(low), math.ceil(high)):
            if i < low:
                w = scale if i + 1 > high else F(i + 1) - low
            else:
                w = high - F(i) if i + 1 > high else F(1)
            weights[y, min(i, in_size - 1)] += w
    return weights / scale


def axis_weights(in_size: int, out_size: int, method: str, antialias: bool) -> np.ndarray:
    """The [out_size, in_size] float32 matrix that resamples one axis as tf.image.resize does."""
    if method == "bilinear" and not antialias:
        return _bilinear(in_size, out_size)
    if method == "bicubic" and not antialias:
        return _bicubic(in_size, out_size)
    if method == "area":
        return _area(in_size, out_size)
    return _scale_and_translate(in_size, out_size, method, antialias)


def nearest_indices(in_size: int, out_size: int) -> np.ndarray:
    """ResizeNearestNeighbor's source index per output index (half-pixel centres: floor((out + 0.5) * in/out))."""
    position = (np.arange(out_size, dtype=F) + F(0.5)) * (F(in_size) / F(out_size))
    return np.clip(np.floor(position).astype(np.int64), 0, in_size - 1)
