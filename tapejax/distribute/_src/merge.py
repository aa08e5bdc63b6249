"""`ReplicaContext.merge_call` inside the replicas' one `shard_map`.

TF pauses every replica at `merge_call(merge_fn, args)`, calls `merge_fn(strategy, *args)` once in the
cross-replica context with each tensor argument regrouped as a `PerReplica` of the replicas' values, and hands each
replica its component of what `merge_fn` returns. tapejax's replicas are one SPMD program, so `merge_fn` is traced
once, in the cross-replica context, inside the map: a tensor argument becomes a `MergedPerReplica` (this replica's
value, standing for all of them), and what `merge_fn` does with it is a collective over the mesh axis:

- `strategy.reduce` / `extended.reduce_to` / `extended.batch_reduce_to` with axis=None: `psum` / `pmean`;
- `strategy.gather`, `experimental_local_results`, `reduce` along an axis: through `all_gather` (the stacked
  values of every replica, as `strategy.run`'s results are outside the map);
- a `MergedPerReplica` returned by `merge_fn` gives each replica its own value back; a tensor computed from
  the reductions is the same on every replica, as TF's mirrored results are.

When the replicas are traced one by one (a partial last batch, sequential.py), the same happens with the
collectives resolved by replay: `merge_fn` is traced for each replica, and `.values` gives every replica's own value
(their shapes may differ, as TF's `PerReplica` values do).

Python code in `merge_fn` that inspects the replicas' values one by one (`.values`) gets tensors computed inside the
map, not Python numbers: as in any traced step.
"""

from __future__ import annotations

import threading
from typing import Any

import jax

from tapejax._src.context import CONTEXT
from tapejax._src.tensor import EagerTensor, Tensor
from tapejax._src.variable import Variable
from tapejax.distribute._src import enums, replica
from tapejax.distribute._src.values import PerReplica


class MergedPerReplica(PerReplica):
    """A replica-context tensor seen from `merge_fn`: this replica's value inside the map, standing for all."""

    __slots__ = ("_local", "_replay")

    def __init__(self, local: Tensor, replay: Any = None):
        super().__init__()
        self._local = local
        self._replay = replay  # replicas traced one by one: the values come from a replayed collective

    @property
    def even(self) -> bool:
        if self._replay is None:
            return True
        return all(tuple(v.shape) == tuple(self.values[0].shape) for v in self.values)

    @property
    def stacked(self) -> Tensor:
        """Every replica's value, stacked: gathered over the mesh axis (computed once, when first needed)."""
        if self._stacked is None:
            if self._replay is not None:
                if not self.even:
                    raise ValueError("The replicas' values differ in shape (a partial batch): they cannot be "
                                     "stacked; use `.values`.")
                self._stacked = EagerTensor(jax.numpy.stack([v.value for v in self.values]))
            else:
                self._stacked = EagerTensor(jax.lax.all_gather(self._local.value, replica.AXIS))
        return self._stacked

    @property
    def values(self) -> tuple[Any, ...]:
        if self._values is None:
            if self._replay is not None:
                from tapejax.distribute._src import sequential

                values = self._replay.collective("merge_fn's read of every replica's value", self._local.value,
                                                 sequential.every)
                self._values = tuple(EagerTensor(v) for v in values)
            else:
                self._values = tuple(self.stacked[i] for i in range(self.stacked.shape[0]))
        return self._values


def call(context: Any, merge_fn: Any, args: tuple, kwargs: dict) -> Any:
    """Runs `merge_fn(strategy, *args, **kwargs)` once, cross-replica, and gives each replica its result."""
    strategy = context.strategy
    replay = context._replay
    if not context._spmd and replay is None:  # one replica: its values are the regrouped values
        return _cross_replica(strategy, merge_fn, args, kwargs)

    def wrap(x: Any) -> Any:
        return MergedPerReplica(x, replay) if isinstance(x, Tensor) and not isinstance(x, Variable) else x

    args, kwargs = jax.tree_util.tree_map(wrap, (args, kwargs), is_leaf=_is_leaf)
    result = _cross_replica(strategy, merge_fn, args, kwargs, spmd=True)

    def unwrap(x: Any) -> Any:
        if isinstance(x, MergedPerReplica):
            return x._local
        if isinstance(x, Tensor) and not isinstance(x, Variable) and x._tid not in _MERGING.mirrored:
            _MERGING.cross.add(x._tid)  # one value for all replicas: `run` returns it as a tensor, as TF does
        return x

    return jax.tree_util.tree_map(unwrap, result, is_leaf=_is_leaf)


_MERGING = threading.local()


def _state() -> None:
    if not hasattr(_MERGING, "depth"):
        _MERGING.depth, _MERGING.cross, _MERGING.mirrored = 0, set(), set()


def is_cross_replica(tensor: Tensor) -> bool:
    """Whether a replica function's result is a value merge_fn computed for all replicas (not mirrored)."""
    _state()
    return tensor._tid in _MERGING.cross


def mirrored(tensor: Tensor) -> Tensor:
    """Marks a merge_fn result as mirrored (`extended.reduce_to`'s): `run` returns it per replica, as TF does."""
    _state()
    if in_map():
        _MERGING.mirrored.add(tensor._tid)
    return tensor


def forget() -> None:
    """Drops the marks of a finished `run` (tensor ids are never reused: this only bounds the sets)."""
    _state()
    _MERGING.cross.clear()
    _MERGING.mirrored.clear()


def in_map() -> bool:
    """Whether a merge_fn runs now inside the replicas' map (its cross-replica values are per replica)."""
    return getattr(_MERGING, "depth", 0) > 0


def _cross_replica(strategy: Any, merge_fn: Any, args: tuple, kwargs: dict, spmd: bool = False) -> Any:
    saved = CONTEXT.replica
    CONTEXT.replica = None
    CONTEXT.strategies.append(strategy)
    _state()
    _MERGING.depth += spmd
    try:
        return merge_fn(strategy, *args, **kwargs)
    finally:
        _MERGING.depth -= spmd
        CONTEXT.strategies.pop()
        CONTEXT.replica = saved


def reduced(reduce_op: Any, x: MergedPerReplica) -> Tensor:
    """The replicas' values combined element by element: one all-reduce."""
    op = enums.reduce_op(reduce_op)
    if x._replay is not None:
        from tapejax.distribute._src import sequential

        return EagerTensor(x._replay.collective(f"merge_fn's reduce({op.name})", x._local.value,
                                                sequential.reduced(op)))
    collective = jax.lax.psum if op is enums.ReduceOp.SUM else jax.lax.pmean
    return EagerTensor(collective(x._local.value, replica.AXIS))


def _is_leaf(x: Any) -> bool:
    return isinstance(x, PerReplica | Tensor | Variable)
