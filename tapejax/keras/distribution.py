"""Keras's training loop under a `tf.distribute` strategy, as Keras 3 runs it on TensorFlow.

A model remembers the strategy in effect when it was made (`model.distribute_strategy`). Under a strategy of
several replicas, `fit`, `evaluate` and `predict` split each global batch over the replicas (as
`experimental_distribute_dataset` splits it) and run the step with `strategy.run`: one `shard_map` inside the
step's `tf.function`. Keras's scaling keeps one device's answers: a loss reduced over the batch
("sum_over_batch_size") and the regularization losses are divided by the replicas (`scale_loss`), the optimizer
sums the replicas' gradients, the loss tracker gets the unscaled loss weighted by the replica's batch size, and
the metrics' variables (ON_READ, SUM) add the replicas' counts. The step's logs are the mean over the replicas
(`predict`'s outputs are concatenated), as Keras's `reduce_per_replica` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

import tapejax as tf
from tapejax.distribute._src import input as input_lib
from tapejax.distribute._src.values import PerReplica


def current_strategy() -> Any:
    """The strategy a model made now belongs to: the one in effect, or None outside any strategy's scope."""
    return tf.distribute.get_strategy() if tf.distribute.has_strategy() else None


def _replicas() -> int:
    return tf.distribute.get_strategy().num_replicas_in_sync


def scale_loss(value: Any) -> Any:
    """`value / replicas` under a strategy of several replicas (Keras's `scale_loss_for_distribution`)."""
    n = _replicas()
    return value if n == 1 else value * tf.cast(1.0 / n, value.dtype)


def unscale_loss(value: Any) -> Any:
    """`value * replicas`: a scaled loss back to the replica's own mean (for the loss tracker)."""
    n = _replicas()
    return value if n == 1 else value * tf.cast(n, value.dtype)


def split_batch(strategy: Any, data: Any) -> Any:
    """A global batch's components split over the strategy's replicas (None components stay None)."""
    return jax.tree_util.tree_map(lambda x: None if x is None else input_lib.split(strategy, x), data,
                                  is_leaf=lambda x: x is None or isinstance(x, tf.Tensor | tf.Variable))


def _reduced(strategy: Any, value: Any, reduction: str) -> Any:
    if not isinstance(value, PerReplica):
        return value
    if reduction == "concat":
        return strategy.gather(value, axis=0)
    values = [tf.convert_to_tensor(v) for v in strategy.experimental_local_results(value)]
    return tf.reduce_mean(tf.stack(values), axis=0)  # Keras's "auto" off TPUs: the mean over the replicas


def distributed_step(strategy: Any, step: Callable, reduction: str) -> Callable:
    """`step(data)` on every replica of `strategy`, its results reduced as Keras reduces them ("mean" for the
    logs of fit and evaluate, "concat" for predict's outputs)."""

    def run(data: Any) -> Any:
        outputs = strategy.run(step, args=(data,))
        return jax.tree_util.tree_map(lambda v: _reduced(strategy, v, reduction), outputs,
                                      is_leaf=lambda v: isinstance(v, PerReplica | tf.Tensor))

    return run
