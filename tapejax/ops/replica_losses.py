"""tf.nn's loss scaling for replicated training, under the default strategy (one replica), and tf.nn.dropout.

`compute_average_loss` and `scale_regularization_loss` divide by the global batch size and the number of replicas;
with no tf.distribute strategy in scope there is one replica. Each is one small function, for tf.distribute to
extend with its replica count.
"""

from __future__ import annotations

from typing import Any

from tapejax.ops import array as array_ops
from tapejax.ops import math as math_ops
from tapejax.ops import random as random_ops

NUM_REPLICAS = 1  # the default strategy's


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None) -> Any:
    """The sum of the (weighted) per-example losses over the global batch size (`tf.nn.compute_average_loss`);
    the global batch size defaults to the local batch (first dimension) times the number of replicas.

    >>> import tapejax as tf
    >>> float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]), global_batch_size=6))
    1.0
    """
    loss = array_ops.convert_to_tensor(per_example_loss)
    if loss.shape.rank == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. "
                         f"Received per_example_loss={loss.numpy()} with rank 0")
    if sample_weight is not None:
        loss = loss * array_ops.cast(sample_weight, loss.dtype)
    if global_batch_size is None:
        global_batch_size = array_ops.shape(loss)[0] * NUM_REPLICAS
    total = math_ops.reduce_sum(loss)
    return math_ops.truediv(total, array_ops.cast(global_batch_size, total.dtype))


def scale_regularization_loss(regularization_loss: Any) -> Any:
    """The regularization loss (a tensor, or a list summed) divided by the number of replicas
    (`tf.nn.scale_regularization_loss`).

    >>> import tapejax as tf
    >>> float(tf.nn.scale_regularization_loss([tf.constant(2.0), tf.constant(3.0)]))
    5.0
    """
    if isinstance(regularization_loss, list | tuple):
        regularization_loss = math_ops.add_n(list(regularization_loss))
    return math_ops.truediv(regularization_loss, NUM_REPLICAS) if NUM_REPLICAS != 1 else \
        array_ops.convert_to_tensor(regularization_loss)


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
