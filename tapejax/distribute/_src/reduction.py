"""`strategy.reduce` and `strategy.gather` in the cross-replica context, as TF computes them.

`reduce(SUM|MEAN, v, axis=None)` combines the replicas' values element by element; with an `axis` each value is
first summed along it, and MEAN divides by the total count of elements along the axis over all replicas (TF's
element-count weighting: a partial batch of 2, 2, 1, 0 examples gives the mean of the 5). Even values are one
stacked array, so a reduction is one op on it (an all-reduce inside a compiled step).
"""

from __future__ import annotations

from typing import Any

import jax

import tapejax as tf
from tapejax._src.tensor import EagerTensor
from tapejax.distribute._src import enums, merge
from tapejax.distribute._src.values import PerReplica


def _is_leaf(x: Any) -> bool:
    return isinstance(x, PerReplica)


def _check_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"Invalid reduction dimension {axis} for input with {rank} dimensions. "
                         "(strategy.reduce's `axis` is a dimension of each replica's value: axis=None combines "
                         "the replicas' values element by element.)")
    return axis % rank


def reduce(strategy: Any, reduce_op: Any, value: Any, axis: int | None) -> Any:
    op = enums.reduce_op(reduce_op)

    def one(x: Any) -> Any:
        if isinstance(x, merge.MergedPerReplica) and axis is None:
            return merge.reduced(op, x)
        if not isinstance(x, PerReplica):
            x = tf.convert_to_tensor(x)
            if axis is None:
                if op is enums.ReduceOp.SUM and strategy.num_replicas_in_sync > 1:
                    raise ValueError(f"A non-DistributedValues value {x} cannot be reduced with the given "
                                     f"reduce op {op}.")
                return x
            a = _check_axis(axis, x.shape.rank)
            return tf.reduce_sum(x, a) if op is enums.ReduceOp.SUM else tf.reduce_mean(x, a)
        if x.even:
            stacked = x.stacked
            if axis is None:
                return tf.reduce_sum(stacked, 0) if op is enums.ReduceOp.SUM else tf.reduce_mean(stacked, 0)
            a = _check_axis(axis, stacked.shape.rank - 1) + 1
            total = tf.reduce_sum(stacked, [0, a])
            if op is enums.ReduceOp.SUM:
                return total
            return total / tf.cast(stacked.shape[0] * stacked.shape[a], total.dtype)
        values = _on_one_device(strategy, x)
        if axis is None:
            shapes = {tuple(v.shape) for v in values}
            if len(shapes) > 1:
                raise tf.errors.InvalidArgumentError(
                    None, None, f"Inputs to operation AddN of type AddN must have the same size and shape. "
                    f"strategy.reduce(axis=None) got the replicas' shapes {[list(v.shape) for v in values]}: "
                    "pass the batch axis (axis=0) to reduce over examples.")
            total = tf.add_n(values)
            return total if op is enums.ReduceOp.SUM else total / tf.cast(len(values), total.dtype)
        a = _check_axis(axis, values[0].shape.rank)
        total = tf.add_n([tf.reduce_sum(v, a) for v in values])
        if op is enums.ReduceOp.SUM:
            return total
        return total / tf.cast(sum(v.shape[a] for v in values), total.dtype)

    return tf.nest.map_structure(one, value)


def gather(strategy: Any, value: Any, axis: int) -> Any:
    def one(x: Any) -> Any:
        if not isinstance(x, PerReplica):
            return tf.convert_to_tensor(x)
        values = _on_one_device(strategy, x)
        if values[0].shape.rank == 0:
            raise ValueError("strategy.gather needs values of rank 1 or more (they are concatenated along "
                             "`axis`); got scalars. Gather `tf.expand_dims(value, 0)` instead.")
        if x.even and axis == 0:
            stacked = x.stacked
            return tf.reshape(stacked, [-1, *stacked.shape[2:]])
        return tf.concat(values, axis)

    return tf.nest.map_structure(one, value)


def _on_one_device(strategy: Any, x: PerReplica) -> list[Any]:
    """The replicas' values on the first replica's device (uneven values are replicated on every device; inside
    a traced step they are the program's values, placed by it; across workers they stay replicated: every
    worker computes the result)."""
    values = [tf.convert_to_tensor(v) for v in x.values]
    if x.even or any(isinstance(v.value, jax.core.Tracer) for v in values) or strategy._in_multi_worker_mode():
        return values
    return [EagerTensor(jax.device_put(v.value, strategy._devices[0])) for v in values]
