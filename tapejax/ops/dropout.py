"""tf.nn.dropout (tf.nn's replica loss scaling is tapejax/distribute/_src/losses.py)."""

from __future__ import annotations

from typing import Any

from tapejax.ops import array as array_ops
from tapejax.ops import random as random_ops


def dropout(x: Any, rate: Any, noise_shape: Any = None, seed: int | None = None, name: str | None = None) -> Any:
    """Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate) (`tf.nn.dropout`);
    gradients flow through the kept elements.

    >>> import tapejax as tf
    >>> tf.nn.dropout(tf.ones([2, 3]), 0.5).shape
    TensorShape([2, 3])

    Differences from TensorFlow: the mask is drawn from JAX's generator, not TF's, for a given seed.
    """
    x = array_ops.convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. Got a {x.dtype} "
                         "tensor instead.")
    if isinstance(rate, int | float) and not 0 <= rate < 1:
        raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
    shape = array_ops.shape(x) if noise_shape is None else noise_shape
    keep = random_ops.uniform(shape, dtype=x.dtype, seed=seed) >= rate
    scale = 1.0 / (1.0 - array_ops.cast(rate, x.dtype))
    return array_ops.where(keep, x * scale, array_ops.zeros_like(x))
