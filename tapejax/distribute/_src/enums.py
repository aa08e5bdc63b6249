"""`tf.distribute.ReduceOp`, `tf.VariableAggregation` and `tf.VariableSynchronization`, with TF's values."""

from __future__ import annotations

import enum
from typing import Any


class ReduceOp(enum.Enum):
    """How values of the replicas are combined (`tf.distribute.ReduceOp`): their sum or their mean.

    >>> import tapejax as tf
    >>> tf.distribute.ReduceOp("SUM")
    <ReduceOp.SUM: 'SUM'>
    """

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation: Any) -> ReduceOp:
        return ReduceOp(VariableAggregation(aggregation).name)


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies agree (`tf.VariableSynchronization`)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How the replicas' assignments to a distributed variable are combined (`tf.VariableAggregation`)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


def reduce_op(value: Any) -> ReduceOp:
    """A ReduceOp from a ReduceOp or its name; TF's ValueError otherwise."""
    if isinstance(value, ReduceOp):
        return value
    try:
        return ReduceOp(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a valid ReduceOp") from None


def synchronization(value: Any) -> VariableSynchronization:
    """Keras's strings ("on_read") or TF's enum."""
    if value is None:
        return VariableSynchronization.AUTO
    if isinstance(value, str):
        return VariableSynchronization[value.upper()]
    return VariableSynchronization(getattr(value, "value", value))


def aggregation(value: Any) -> VariableAggregation:
    """Keras's strings ("sum", "mean", "only_first_replica", "none") or TF's enum."""
    if value is None:
        return VariableAggregation.NONE
    if isinstance(value, str):
        return VariableAggregation[value.upper()]
    return VariableAggregation(getattr(value, "value", value))
