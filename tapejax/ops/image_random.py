"""tf.image's random augmentations, random_* and stateless_random_*, composed as TF composes them.

Each draws its random numbers with tf.random (ops/random.py: TF's global and op seed rules; the stateless ones
are determined by their `seed`, a shape-[2] integer tensor) and applies the deterministic rows of the other image
modules, so gradients flow to the image as in TF. The numbers differ from TF's (JAX's generators), not their
distributions: a flip is taken with probability 1/2, per image of a batch; a brightness or hue delta is uniform
in [-max_delta, max_delta); a contrast or saturation factor uniform in [lower, upper); crop offsets uniform over
the positions that fit.

random_jpeg_quality and stateless_random_jpeg_quality are not provided: they need a JPEG codec.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapejax._src import dtypes, errors
from tapejax._src.registry import hashable
from tapejax._src.tensor import OPERATORS

from . import random as random_ops
from .image import check_image, crop_at, flip_left_right, flip_up_down, static_shape
from .image_color import adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation

_INT32_MAX = 2 ** 31 - 1


def _stateful(seed: Any):
    return lambda shape, minval=0.0, maxval=1.0, dtype=dtypes.float32: random_ops.uniform(
        shape, minval, maxval, dtype=dtype, seed=seed)


def _stateless(seed: Any):
    return lambda shape, minval=0.0, maxval=1.0, dtype=dtypes.float32: random_ops.stateless_uniform(
        shape, seed, minval, maxval, dtype=dtype)


def _random_flip(image, flip, uniform):
    shape = check_image(image, at_least_3d=True)
    if len(shape) == 3:
        mirror = uniform([]) < 0.5
    else:  # one draw per image of the batch
        mirror = OPERATORS["reshape"](uniform([shape[0]]) < 0.5, [shape[0], 1, 1, 1])
    return OPERATORS["where"](mirror, flip(image), image)


def random_flip_left_right(image, seed=None):
    """Flips the image (each image of a batch on its own) left to right with probability 1/2.

    >>> import tapejax as tf
    >>> tf.image.random_flip_left_right(tf.zeros([2, 2, 1]), seed=1).shape
    TensorShape([2, 2, 1])
    """
    return _random_flip(image, flip_left_right, _stateful(seed))


def random_flip_up_down(image, seed=None):
    """Flips the image (each image of a batch on its own) upside down with probability 1/2."""
    return _random_flip(image, flip_up_down, _stateful(seed))


def stateless_random_flip_left_right(image, seed):
    """random_flip_left_right determined by `seed` (shape [2], int32 or int64): the same seed, the same flips."""
    return _random_flip(image, flip_left_right, _stateless(seed))


def stateless_random_flip_up_down(image, seed):
    """random_flip_up_down determined by `seed` (see stateless_random_flip_left_right)."""
    return _random_flip(image, flip_up_down, _stateless(seed))


def _number(value: Any) -> Any:
    value = hashable(value)
    return value if isinstance(value, int | float) else None


def _check_max_delta(max_delta: Any, limit: float | None = None) -> None:
    value = _number(max_delta)
    if value is None:
        return
    if limit is not None and value > limit:
        raise ValueError(f"max_delta must be <= {limit}.")
    if value < 0:
        raise ValueError("max_delta must be non-negative.")


def _check_range(lower: Any, upper: Any) -> None:
    low, high = _number(lower), _number(upper)
    if low is not None and high is not None and high <= low:
        raise ValueError("upper must be > lower.")
    if low is not None and low < 0:
        raise ValueError("lower must be non-negative.")


def _brightness(image, max_delta, uniform):
    _check_max_delta(max_delta)
    return adjust_brightness(image, uniform([], -max_delta, max_delta))


def _contrast(image, lower, upper, uniform):
    _check_range(lower, upper)
    return adjust_contrast(image, uniform([], lower, upper))


def _saturation(image, lower, upper, uniform):
    _check_range(lower, upper)
    return adjust_saturation(image, uniform([], lower, upper))


def _hue(image, max_delta, uniform):
    _check_max_delta(max_delta, 0.5)
    return adjust_hue(image, uniform([], -max_delta, max_delta))


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta).

    >>> import tapejax as tf
    >>> x = tf.image.random_brightness(tf.zeros([1, 1, 3]), 0.2, seed=1)
    >>> bool(tf.reduce_all(tf.abs(x) <= 0.2))
    True
    """
    return _brightness(image, max_delta, _stateful(seed))


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    return _contrast(image, lower, upper, _stateful(seed))


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    return _saturation(image, lower, upper, _stateful(seed))


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta), max_delta in [0, 0.5]."""
    return _hue(image, max_delta, _stateful(seed))


def stateless_random_brightness(image, max_delta, seed):
    """random_brightness determined by `seed` (shape [2], int32 or int64)."""
    return _brightness(image, max_delta, _stateless(seed))


def stateless_random_contrast(image, lower, upper, seed):
    """random_contrast determined by `seed` (shape [2], int32 or int64)."""
    return _contrast(image, lower, upper, _stateless(seed))


def stateless_random_saturation(image, lower, upper, seed):
    """random_saturation determined by `seed` (shape [2], int32 or int64)."""
    return _saturation(image, lower, upper, _stateless(seed))


def stateless_random_hue(image, max_delta, seed):
    """random_hue determined by `seed` (shape [2], int32 or int64)."""
    return _hue(image, max_delta, _stateless(seed))


def _crop(value, size, uniform):
    shape = static_shape(value)
    size = hashable(size)
    size = (size,) if isinstance(size, int) else tuple(int(s) for s in size)
    if len(size) != len(shape):
        raise errors.invalid_argument("GreaterEqual", f"Incompatible shapes: [{len(shape)}] vs. [{len(size)}]: "
                                                      f"`size` needs one entry per dimension of the value "
                                                      f"(shape {list(shape)})")
    if any(s > n for s, n in zip(size, shape)) or any(s < 0 for s in size):
        raise errors.InvalidArgumentError(None, None, f"Need value.shape >= size, got {list(shape)} {list(size)}")
    limit = np.array([n - s + 1 for n, s in zip(shape, size)], np.int32)
    offsets = uniform([len(shape)], 0, _INT32_MAX, dtypes.int32) % limit
    return crop_at(value, offsets, size=size)


def random_crop(value, size, seed=None, name=None):
    """A slice of `value` of shape `size` at a uniformly random position (any rank, as TF).

    >>> import tapejax as tf
    >>> tf.image.random_crop(tf.zeros([4, 5, 3]), [2, 2, 3], seed=1).shape
    TensorShape([2, 2, 3])
    """
    return _crop(value, size, _stateful(seed))


def stateless_random_crop(value, size, seed, name=None):
    """random_crop determined by `seed` (shape [2], int32 or int64)."""
    return _crop(value, size, _stateless(seed))
