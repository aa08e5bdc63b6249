"""`strategy.run(fn, args)` when the replicas' inputs differ in shape: each replica traced on its own slice.

A partial last batch split as TF splits it (ceil(B / replicas) consecutive examples per replica, the last ones
fewer or none: 5 over 4 replicas is 2, 2, 1, 0) cannot run as one `shard_map`, which needs one shape. TF runs
each replica's `fn` in its own thread, the threads meeting at the cross-replica points. tapejax's trace state is
per thread, so here, inside the same tf.function trace, `fn` is traced once per replica, one replica after the
other, each on its own slice (its true shape, 0 rows included) under a `ReplicaContext` with its replica id.

The cross-replica points (`all_reduce`, `all_gather`, the optimizer's sum of the replicas' gradients, the
reductions and gathers of a `merge_call`'s `merge_fn`) are resolved by replay. A pass that knows k resolved
collectives runs every replica up to its (k+1)-th, records each replica's input to it and stops that replica
there; the combined value is computed from the inputs of all replicas, and the next pass runs the replicas
again, handing each its part of the k+1 resolved values. The pass in which every replica finishes is the
result: its outputs, and its variable assignments combined over the replicas by their aggregation as the
`shard_map` does (spmd.py). What the earlier passes traced is never used (XLA drops it). A replica that ends
before a collective the others meet, or meets another one, is an error (TF's replicas would wait forever).

The traced program runs on every device of the strategy (the slices and variables are replicated), computing
the replicas one after another: the step of a partial batch costs about what one device's step would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from tapejax._src import autograph
from tapejax._src.concrete_function import _Trace, _tracing
from tapejax._src.tensor import EagerTensor, Tensor, _Operators
from tapejax._src.variable import Variable
from tapejax.distribute._src import enums, merge, replica, variables
from tapejax.distribute._src.values import PerReplica


class _Stop(BaseException):
    """Stops a replica at a collective not yet resolved (a BaseException: user code's `except Exception` lets it
    through)."""


class Replay:
    """The collectives the replicas met so far, and each replica's place in them during a pass."""

    def __init__(self, n: int):
        self.n = n
        self.resolved: list[tuple[str, list[Any]]] = []  # (kind, each replica's result)
        self.pending: dict[int, tuple[str, Any, Callable]] = {}  # replica -> (kind, input, combine)
        self.rid = 0
        self._count = 0

    def start(self, rid: int) -> None:
        self.rid, self._count = rid, 0

    def collective(self, kind: str, value: Any, combine: Callable[[list[Any]], list[Any]]) -> Any:
        """This replica's result of its next collective; `combine` maps the replicas' inputs (in replica order)
        to their results."""
        k = self._count
        self._count += 1
        if k < len(self.resolved):
            done, results = self.resolved[k]
            if done != kind:
                raise RuntimeError(
                    f"Replica {self.rid} met a {kind} where replica 0 met a {done} (its collective number {k}): "
                    "inside `strategy.run` every replica must meet the same collectives in the same order.")
            return results[self.rid]
        self.pending[self.rid] = (kind, value, combine)
        raise _Stop

    def resolve(self) -> bool:
        """After a pass: combines the collective the replicas stopped at; False when every replica finished."""
        if not self.pending:
            return False
        if len(self.pending) < self.n:
            missing = sorted(set(range(self.n)) - set(self.pending))
            kind = next(iter(self.pending.values()))[0]
            raise RuntimeError(
                f"Replicas {missing} finished `strategy.run`'s function without meeting the {kind} the others met "
                "(TF's replicas would wait for them forever): every replica must meet the same collectives, "
                "whatever its batch size.")
        kinds = {p[0] for p in self.pending.values()}
        if len(kinds) > 1:
            raise RuntimeError(f"The replicas met different collectives at the same point: {sorted(kinds)}.")
        kind, _, combine = self.pending[0]
        results = list(combine([self.pending[i][1] for i in range(self.n)]))
        self.resolved.append((kind, results))
        self.pending = {}
        return True


# -- the combinations (each takes the replicas' inputs, in replica order, and gives each replica its result) ----


def summed(values: list[Any]) -> list[Any]:
    total = values[0]
    for v in values[1:]:
        total = total + v
    return [total] * len(values)


def averaged(values: list[Any]) -> list[Any]:
    total = summed(values)[0]
    mean = (total / len(values)).astype(total.dtype) if jnp.issubdtype(total.dtype, jnp.inexact) else (
        total // len(values))
    return [mean] * len(values)


def reduced(op: Any) -> Callable[[list[Any]], list[Any]]:
    """The combination of a `ReduceOp`: SUM sums, MEAN averages."""
    return summed if op is enums.ReduceOp.SUM else averaged


def concatenated(axis: int) -> Callable[[list[Any]], list[Any]]:
    def combine(values: list[Any]) -> list[Any]:
        return [jnp.concatenate(values, axis=axis)] * len(values)

    return combine


def every(values: list[Any]) -> list[Any]:
    """Every replica gets all the replicas' values (a merge_fn's view of a per-replica value)."""
    return [tuple(values)] * len(values)


def gathered_tree(replay: Replay, kind: str, values: list[Any], combine: Callable) -> list[Any]:
    """One collective over a list of arrays (the optimizer's gradients: one synchronisation, as TF's)."""

    def combine_all(per_replica: list[list[Any]]) -> list[list[Any]]:
        columns = [combine([row[j] for row in per_replica]) for j in range(len(per_replica[0]))]
        return [[column[i] for column in columns] for i in range(len(per_replica))]

    return replay.collective(kind, values, combine_all)


# -- the run ------------------------------------------------------------------------------------------------


class _ReplicaTrace(_Trace):
    """One replica's variables: read from the tf.function's trace when first touched, assignments kept here."""

    def __init__(self, outer: _Trace):
        super().__init__([], (), None, outer.first)
        self._outer = outer

    def _load(self, variable: Variable) -> None:
        uid = variable._uid
        if uid not in self.values:
            value = self._outer.read(variable)
            self.inputs[uid] = variable
            self.values[uid] = self.initial[uid] = value

    def read(self, variable: Variable) -> Any:
        self._load(variable)
        return super().read(variable)

    def assign(self, variable: Variable, value: Any, tid: int = 0) -> None:
        self._load(variable)
        super().assign(variable, value, tid)

    def check_creation(self, variable: Variable) -> None:
        self._outer.check_creation(variable)

    def call_count(self) -> Any:
        self.used_calls = True
        return self._outer.call_count()


def _is_leaf(x: Any) -> bool:
    return isinstance(x, PerReplica | Variable | Tensor)


def _replica_args(leaves: list[Any], i: int) -> list[Any]:
    return [EagerTensor(leaf.values[i].value if isinstance(leaf.values[i], Tensor) else leaf.values[i])
            if isinstance(leaf, PerReplica) else leaf for leaf in leaves]


def run(strategy: Any, outer: _Trace, fn: Any, leaves: list[Any], treedef: Any) -> Any:
    """`fn` on every replica, one after another, on each replica's own arguments (see the module docstring)."""
    fn = autograph.converted_call(fn)
    n = strategy.num_replicas_in_sync
    replay = Replay(n)
    while True:
        traces, results = [], []
        for i in range(n):
            replay.start(i)
            inner = _ReplicaTrace(outer)
            a, kw = jax.tree_util.tree_unflatten(treedef, _replica_args(leaves, i))
            context = replica.ReplicaContext(strategy, EagerTensor(jnp.asarray(i, jnp.int32)), False, replay)
            with _tracing(inner, fold_constants=True), replica.replica(context):
                try:
                    results.append(_flattened(fn(*a, **kw)))  # read inside: a variable's value is this replica's
                except _Stop:
                    results.append(None)
            traces.append(inner)
        if not replay.resolve():
            break
    for v, value in _assignments(traces):
        outer.assign(v, value)
    out = _regrouped(results)
    merge.forget()
    return out


def _assignments(traces: list[_ReplicaTrace]) -> list[tuple[Variable, Any]]:
    """Each variable some replica assigned, with the value all replicas keep (by its aggregation, as spmd's
    `_combined`)."""
    assigned: dict[int, Variable] = {}
    for t in traces:
        assigned.update(t.assigned)
    out = []
    for uid, v in assigned.items():
        old = next(t.initial[uid] for t in traces if uid in t.initial)
        news = [t.values.get(uid, old) for t in traces]
        kind = variables.aggregation_of(v)
        if kind is enums.VariableAggregation.SUM:
            value = old + summed([new - old for new in news])[0]
        elif kind is enums.VariableAggregation.MEAN:
            value = averaged(news)[0]
        else:  # NONE and ONLY_FIRST_REPLICA: replica 0's (the mirrored copies of NONE are equal in TF's steps)
            value = news[0]
        out.append((v, value))
    return out


def _flattened(result: Any) -> tuple[list[Any], Any, list[Any]]:
    leaves, tree = jax.tree_util.tree_flatten(result, is_leaf=_is_leaf)
    values = [(leaf._value if isinstance(leaf, Tensor) else leaf._current()) if isinstance(leaf, _Operators)
              else None for leaf in leaves]
    return leaves, tree, values


def _regrouped(results: list[Any]) -> Any:
    """The replicas' results as `strategy.run` returns them: a `PerReplica` for each tensor (stacked where the
    replicas' shapes agree), a merge_fn's value for all replicas as one tensor."""
    tree = results[0][1]
    for i, (_, t, _) in enumerate(results):
        if t != tree:
            raise ValueError(f"Replica {i}'s function returned a structure {t} unlike replica 0's {tree}.")
    out = []
    for j, leaf in enumerate(results[0][0]):
        if not isinstance(leaf, _Operators):
            out.append(leaf)
            continue
        values = [r[2][j] for r in results]
        if isinstance(leaf, Tensor) and merge.is_cross_replica(leaf):
            out.append(EagerTensor(values[0]))
        elif all(v.shape == values[0].shape for v in values):
            out.append(PerReplica(stacked=EagerTensor(jnp.stack(values))))
        else:
            out.append(PerReplica(values=[EagerTensor(v) for v in values]))
    return jax.tree_util.tree_unflatten(tree, out)
