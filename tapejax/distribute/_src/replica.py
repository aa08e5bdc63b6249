"""Which strategy and which replica code runs in: `get_strategy`, `get_replica_context`, `ReplicaContext`.

TF's contexts, kept per thread in the engine's `CONTEXT`: outside any scope the *default* strategy (one replica;
the replica context is the default one); inside `strategy.scope()` the *cross-replica* context (no replica
context); inside `strategy.run(fn)` the replica context of the replica `fn` runs for. Under a
`MirroredStrategy`, `fn` runs once for all replicas inside one `shard_map` (spmd.py), so a replica context's
collectives are JAX's (`psum`, `pmean`, `all_gather` over the mesh axis) and its replica id is
`lax.axis_index`. When the replicas' inputs differ in shape (a partial last batch), `fn` is traced once per
replica instead (sequential.py): the replica id is a constant and the collectives are resolved by replay.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
from jax._src import config as jax_config

import tapejax as tf
from tapejax._src.context import CONTEXT
from tapejax._src.tensor import EagerTensor, Tensor
from tapejax.distribute._src import enums, variables

AXIS = "replica"  # the mesh axis of a strategy's replicas


class ReplicaContext:
    """The context of one replica inside `strategy.run` (`tf.distribute.ReplicaContext`)."""

    def __init__(self, strategy: Any, replica_id: Any, spmd: bool, replay: Any = None):
        self._strategy = strategy
        self._replica_id = replica_id
        self._spmd = spmd  # inside shard_map: collectives over AXIS; else one replica, collectives are identities
        self._replay = replay  # replicas traced one by one (sequential.py): collectives resolved by replay

    @property
    def strategy(self) -> Any:
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> Any:
        """This replica's index: a scalar int32 tensor (a Python 0 in the default replica context, as in TF)."""
        return self._replica_id

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        """The sum or mean of `value` (a nest of tensors) over the replicas, on every replica."""
        op = enums.reduce_op(reduce_op)

        def reduce(x: Any) -> Any:
            x = tf.convert_to_tensor(x)
            if self._replay is not None:
                from tapejax.distribute._src import sequential

                return EagerTensor(self._replay.collective(f"all_reduce({op.name})", x.value,
                                                           sequential.reduced(op)))
            if not self._spmd:
                return x
            collective = jax.lax.psum if op is enums.ReduceOp.SUM else jax.lax.pmean
            return EagerTensor(collective(x.value, AXIS))

        return tf.nest.map_structure(reduce, value)

    def all_gather(self, value: Any, axis: int, options: Any = None) -> Any:
        """The replicas' values of each tensor of `value`, concatenated along `axis`, on every replica."""

        def gather(x: Any) -> Any:
            x = tf.convert_to_tensor(x)
            if self._replay is not None:
                from tapejax.distribute._src import sequential

                return EagerTensor(self._replay.collective(f"all_gather(axis={axis})", x.value,
                                                           sequential.concatenated(axis)))
            if not self._spmd:
                return x
            return EagerTensor(jax.lax.all_gather(x.value, AXIS, axis=axis, tiled=True))

        return tf.nest.map_structure(gather, value)

    def merge_call(self, merge_fn: Any, args: tuple = (), kwargs: Any = None) -> Any:
        """Calls `merge_fn(strategy, *args, **kwargs)` once in the cross-replica context, the tensors of `args`
        as `PerReplica` values of every replica; each replica gets its part of the result (see merge.py: inside
        the replicas' map, `merge_fn`'s reductions and gathers are collectives)."""
        from tapejax.distribute._src import merge

        return merge.call(self, merge_fn, tuple(args), dict(kwargs or {}))

    def merged_gradients(self, grads: list[Any], variables_: list[Any]) -> list[Any]:
        """The gradients an optimizer applies inside `strategy.run`: summed over the replicas, as Keras sums
        them under a strategy (each replica's loss is already scaled by the global batch size). A variable
        that was not created under this strategy's scope cannot be updated here (TF fails too)."""
        for v in variables_:
            if variables.strategy_of(v) is not self._strategy:
                raise variables.VariableOutsideScopeError(
                    f"The variable {v.name!r} was not created under this strategy's `scope()`, so it is not "
                    "mirrored on its replicas and an optimizer cannot update it inside `strategy.run` (TF fails "
                    "with an AssertionError). Create the model and the optimizer inside `with strategy.scope():`.")
        if self._replay is not None:  # one synchronisation for all the gradients
            from tapejax.distribute._src import sequential

            present = [tf.convert_to_tensor(g).value for g in grads if g is not None]
            summed = iter(sequential.gathered_tree(self._replay, "the optimizer's sum of gradients", present,
                                                   sequential.summed))
            return [None if g is None else EagerTensor(next(summed)) for g in grads]
        if not self._spmd:
            return grads
        return [None if g is None else EagerTensor(jax.lax.psum(tf.convert_to_tensor(g).value, AXIS))
                for g in grads]


class _DefaultReplicaContext(ReplicaContext):
    pass


def get_strategy() -> Any:
    """The strategy of the innermost `strategy.scope()` (or `strategy.run`), else the default strategy
    (`tf.distribute.get_strategy`).

    >>> import tapejax as tf
    >>> tf.distribute.get_strategy().num_replicas_in_sync
    1
    """
    if CONTEXT.replica is not None:
        return CONTEXT.replica.strategy
    if CONTEXT.strategies:
        return CONTEXT.strategies[-1]
    from tapejax.distribute._src.strategy import default_strategy

    return default_strategy()


def has_strategy() -> bool:
    """Whether a strategy other than the default one is in effect (`tf.distribute.has_strategy`)."""
    return CONTEXT.replica is not None and not isinstance(CONTEXT.replica, _DefaultReplicaContext) or bool(
        CONTEXT.strategies)


def in_cross_replica_context() -> bool:
    """Whether code runs in a strategy's scope outside `strategy.run` (`tf.distribute.in_cross_replica_context`)."""
    return CONTEXT.replica is None and bool(CONTEXT.strategies)


def get_replica_context() -> ReplicaContext | None:
    """The current replica context: None in the cross-replica context (inside `scope()`, outside `run`), the
    default one outside any strategy (`tf.distribute.get_replica_context`)."""
    if CONTEXT.replica is not None:
        return CONTEXT.replica
    if CONTEXT.strategies:
        return None
    return _DefaultReplicaContext(get_strategy(), 0, spmd=False)


@contextlib.contextmanager
def replica(context: ReplicaContext) -> Iterator[None]:
    """Runs what is inside as `context`'s replica."""
    saved = CONTEXT.replica
    CONTEXT.replica = context
    try:
        yield
    finally:
        CONTEXT.replica = saved


def replica_id_tensor(spmd: bool) -> Tensor:
    return EagerTensor(axis_index() if spmd else jnp.zeros((), jnp.int32))


def axis_index() -> Any:
    """This replica's index inside shard_map: staged even under a tf.function trace's constant folding (which
    would evaluate an op without inputs at once, outside the map)."""
    with jax_config.eager_constant_folding(False):
        return jax.lax.axis_index(AXIS)
