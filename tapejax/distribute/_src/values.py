"""`PerReplica`: one value per replica, as `strategy.run` returns and distributed datasets yield.

Where every replica's value has one shape (the usual case), the values are one stacked array `[replicas, ...]`
sharded over the strategy's mesh (each device holds its replica's slice): `strategy.run` hands it to
`shard_map` as it is, and a reduction is one XLA all-reduce. A partial last batch split as TF splits it (5
examples over 4 replicas: 2, 2, 1, 0) has values of different shapes: then they are kept one by one (and
`strategy.run` traces the replicas one at a time, sequential.py).
"""

from __future__ import annotations

from typing import Any

import jax

from tapejax._src.tensor import EagerTensor, Tensor


class PerReplica:
    """The values of one tensor on each replica (TF's `PerReplica`, a `tf.distribute.DistributedValues`)."""

    __slots__ = ("_stacked", "_values")

    def __init__(self, values: Any = None, stacked: Tensor | None = None):
        self._stacked = stacked
        self._values = None if values is None else tuple(values)

    @property
    def values(self) -> tuple[Any, ...]:
        if self._values is None:
            self._values = tuple(self._stacked[i] for i in range(self._stacked.shape[0]))
        return self._values

    @property
    def even(self) -> bool:
        """Whether every replica's value has one shape (then `stacked` holds them all)."""
        return self._stacked is not None

    @property
    def stacked(self) -> Tensor:
        return self._stacked

    def __len__(self) -> int:
        return len(self.values)

    def _text(self, show: Any) -> str:
        lines = ",\n".join(f"  {i}: {show(v)}" for i, v in enumerate(self.values))
        return f"PerReplica:{{\n{lines}\n}}"

    def __repr__(self) -> str:
        return self._text(repr)

    def __str__(self) -> str:
        return self._text(str)


def _flatten(x: PerReplica) -> tuple[tuple, Any]:
    if x._stacked is not None:
        return (x._stacked,), True
    return x._values, False


def _unflatten(stacked: bool, children: Any) -> PerReplica:
    children = tuple(children)
    return PerReplica(stacked=children[0]) if stacked else PerReplica(values=children)


# a pytree node, so that a tf.function (whose arguments are pytrees) takes a PerReplica's arrays as its inputs
jax.tree_util.register_pytree_node(PerReplica, _flatten, _unflatten)


def wrap(array: Any) -> EagerTensor:
    return array if isinstance(array, Tensor) else EagerTensor(array)
