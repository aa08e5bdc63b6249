"""`tf.nn.compute_average_loss` and `tf.nn.scale_regularization_loss`, scaled by the replicas in sync.

Inside `strategy.run`, each replica's loss is its examples' sum over the *global* batch (the replica's batch times
the replicas), and a regularization loss is divided by the replicas, so that the optimizer's sum of the replicas'
gradients is the gradient of the global mean: one device's step.
"""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.distribute._src import replica


def _replicas(name: str) -> int:
    context = replica.get_replica_context()
    if context is None:
        raise RuntimeError(f"You are calling `{name}` in cross replica context, while it was expected to be "
                           "called in replica context.")
    return context.num_replicas_in_sync


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None) -> Any:
    """The sum of `per_example_loss` (times `sample_weight`) divided by the global batch size: this replica's
    batch size times the replicas in sync, unless `global_batch_size` is given (`tf.nn.compute_average_loss`).
    A global batch size of 0 gives 0 (TF's div_no_nan: a replica without examples in a partial batch). On a
    partial batch split unevenly, TF's default is not the batch's size (a replica of 1 example over 8 replicas
    divides by 8): pass `global_batch_size` to get one device's mean.

    >>> import tapejax as tf
    >>> print(tf.nn.compute_average_loss(tf.constant([1.0, 2.0])))
    tf.Tensor(1.5, shape=(), dtype=float32)
    >>> float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]), global_batch_size=6))
    1.0
    >>> float(tf.nn.compute_average_loss(tf.zeros([0])))  # no examples: 0 / 0 is 0, as TF's div_no_nan
    0.0
    """
    n = _replicas("compute_average_loss")
    loss = tf.convert_to_tensor(per_example_loss)
    if loss.shape.rank == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. "
                         f"Received per_example_loss={loss.numpy()} with rank 0")
    if sample_weight is not None:
        loss = loss * tf.cast(sample_weight, loss.dtype)
    if global_batch_size is None:  # tf.shape: the batch dimension may be None under an input_signature
        global_batch_size = tf.shape(loss)[0] * n
    total = tf.reduce_sum(loss)
    if total.dtype.is_integer:
        return tf.math.truediv(total, tf.cast(global_batch_size, total.dtype))
    # TF's div_no_nan: a replica with no examples of a partial batch (or a global batch size of 0) gives 0
    return tf.math.divide_no_nan(total, tf.cast(global_batch_size, total.dtype))


def scale_regularization_loss(regularization_loss: Any) -> Any:
    """`regularization_loss` divided by the replicas in sync (`tf.nn.scale_regularization_loss`).

    >>> import tapejax as tf
    >>> print(tf.nn.scale_regularization_loss(tf.constant(8.0)))
    tf.Tensor(8.0, shape=(), dtype=float32)
    >>> float(tf.nn.scale_regularization_loss([tf.constant(2.0), tf.constant(3.0)]))
    5.0
    """
    n = _replicas("scale_regularization_loss")
    if isinstance(regularization_loss, list | tuple):
        regularization_loss = tf.add_n(list(regularization_loss))
    loss = tf.convert_to_tensor(regularization_loss)
    return loss / tf.cast(n, loss.dtype)
