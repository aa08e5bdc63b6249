"""`strategy.run(fn, args)` on several devices: `fn` traced once, run by every replica as one `shard_map`.

`run` is called inside a `tf.function` trace (the strategy wraps an eager call in one, so eager and compiled
steps are the same program). The replicas' inputs are the stacked arrays of the `PerReplica` arguments
(`in_specs` P("replica"): each device gets its replica's slice) and, replicated (P()), the plain tensors and the
values of the variables the step reads. Inside the body, a nested `_Trace` functionalises the variables as the
tf.function's does: reads see the body's inputs, assignments become outputs. `shard_map` runs with
`check_vma=False`: a gradient taken inside `fn` is then the replica's own (JAX's replication checks would insert a
`psum` in its transpose), and the optimizer sums the replicas' gradients itself, as Keras does under a strategy.

Each assigned variable is combined over the replicas by its aggregation, as TF's distributed variables are:
NONE keeps what each replica assigned (the optimizer's updates are the same on every replica, since the
gradients were summed); SUM adds the replicas' changes (a Keras metric's ON_READ counters: `total`, `count`);
MEAN averages the values; ONLY_FIRST_REPLICA takes replica 0's. Everything comes back replicated (P()).

When a `PerReplica` argument's values differ in shape (a partial last batch split as TF splits it: 5 examples
over 4 replicas are 2, 2, 1 and 0), one shard_map cannot run them: `fn` is then traced once per replica, on its
own slice, inside the same tf.function trace, the collectives resolved by replay (sequential.py).

Variables met for the first time while `fn` runs (a model built on its first call, an optimizer's slots) are
read from the tf.function's trace, which is then redone with them as inputs, as for any tf.function.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from tapejax._src import autograph
from tapejax._src.concrete_function import _Trace, _tracing
from tapejax._src.context import CONTEXT
from tapejax._src.tensor import EagerTensor, Tensor, _Operators
from tapejax._src.variable import Variable
from tapejax.distribute._src import enums, merge, replica, sequential, variables
from tapejax.distribute._src.values import PerReplica

AXIS = replica.AXIS

class _ReplicaTrace(_Trace):
    """The variables inside the replicas' body; variable creation is checked by the tf.function's trace."""

    def __init__(self, variables_: list[Variable], values: tuple, calls: Any, outer: _Trace):
        super().__init__(variables_, values, calls, outer.first)
        self._outer = outer

    def check_creation(self, variable: Variable) -> None:
        self._outer.check_creation(variable)

    def read(self, variable: Variable) -> Any:
        if variable._uid not in self.values:
            # met for the first time: this run is done again with it as an input; until then its value, as a
            # host array (its own, replicated over the mesh, cannot enter the map's manual mesh)
            self.discovered[variable._uid] = variable
            self.values[variable._uid] = np.asarray(variable._value)
        return super().read(variable)


def _is_leaf(x: Any) -> bool:
    return isinstance(x, PerReplica | Variable | Tensor)


def run(strategy: Any, fn: Any, args: tuple, kwargs: dict) -> Any:
    """Runs `fn(*args, **kwargs)` on every replica of `strategy`; called inside a tf.function trace."""
    outer = CONTEXT.trace
    assert outer is not None, "spmd.run runs inside a tf.function trace (Strategy.run makes one)"
    n = strategy.num_replicas_in_sync
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
    for leaf in leaves:
        count = None if not isinstance(leaf, PerReplica) else leaf.stacked.shape[0] if leaf.even else len(leaf)
        if count is not None and count != n:
            raise ValueError(f"A PerReplica value of {count} replicas was passed to the `run` of a strategy "
                             f"of {n} replicas.")
    if any(isinstance(leaf, PerReplica) and not leaf.even for leaf in leaves):
        # a partial batch: the replicas' shapes differ, one shard_map cannot run them; each is traced on its own
        return sequential.run(strategy, outer, fn, leaves, treedef)
    fn = autograph.converted_call(fn)
    kinds, arrays = [], []
    for leaf in leaves:
        if isinstance(leaf, PerReplica):
            kinds.append("replica")
            arrays.append(leaf.stacked.value)
        elif isinstance(leaf, Tensor):
            kinds.append("tensor")
            arrays.append(leaf.value)
        else:
            kinds.append("python")  # Python values and variables: closed over (variables are read in the body)
    # every variable the tf.function's trace knows, read by the replicas from it
    known = {**outer.inputs, **outer.discovered, **outer.assigned}
    calls = outer.call_count() if outer.used_calls else None
    while True:
        var_list = list(known.values())
        var_vals = tuple(outer.read(v) for v in var_list)
        holder: dict[str, Any] = {}

        def body(var_vals: tuple, calls: Any, arrays: tuple) -> tuple:
            inner = _ReplicaTrace(var_list, var_vals, calls, outer)
            rid = replica.replica_id_tensor(spmd=True)
            values = iter(arrays)
            rebuilt = [EagerTensor(next(values)[0]) if k == "replica" else EagerTensor(next(values)) if k == "tensor"
                       else leaf for k, leaf in zip(kinds, leaves)]
            a, kw = jax.tree_util.tree_unflatten(treedef, rebuilt)
            with _tracing(inner, fold_constants=True), replica.replica(replica.ReplicaContext(strategy, rid, True)):
                result = fn(*a, **kw)
                out_leaves, out_tree = jax.tree_util.tree_flatten(result, is_leaf=_is_leaf)
                outs = [(leaf._value if isinstance(leaf, Tensor) else leaf._current())[None]
                        for leaf in out_leaves if isinstance(leaf, _Operators)]
            assigned = [(v, _combined(v, inner.initial.get(uid), inner.values[uid]))
                        for uid, v in inner.assigned.items()]
            holder.update(inner=inner, out=(out_tree, out_leaves), assigned=[v for v, _ in assigned])
            return tuple(outs), tuple(value for _, value in assigned)

        mapped = jax.shard_map(body, mesh=strategy._mesh, in_specs=(P(), P(), tuple(
            P(AXIS) if k == "replica" else P() for k, _ in zip(kinds, leaves) if k != "python")),
            out_specs=(P(AXIS), P()), check_vma=False)
        outs, new_vals = mapped(var_vals, calls if calls is not None else jnp.zeros((), jnp.uint32), tuple(arrays))
        inner = holder["inner"]
        if inner.used_calls and calls is None:
            calls = outer.call_count()
            continue
        fresh = {uid: v for uid, v in inner.discovered.items() if uid not in known}
        if not fresh:
            break
        known.update(fresh)  # met while the replicas ran: read from the outer trace too, and run again
        for v in fresh.values():
            outer.read(v)
    for v, value in zip(holder["assigned"], new_vals):
        outer.assign(v, value)
    out_tree, out_leaves = holder["out"]
    stacked = iter(outs)
    # a value merge_fn computed for all replicas comes back as one tensor (TF's regrouping of equal values)
    results = [(EagerTensor(next(stacked)[0]) if isinstance(leaf, Tensor) and merge.is_cross_replica(leaf)
                else PerReplica(stacked=EagerTensor(next(stacked)))) if isinstance(leaf, _Operators) else leaf
               for leaf in out_leaves]
    merge.forget()
    return jax.tree_util.tree_unflatten(out_tree, results)


def _combined(variable: Variable, old: Any, new: Any) -> Any:
    """The value every replica keeps after assigning `new` (its own), by the variable's aggregation."""
    kind = variables.aggregation_of(variable)
    if kind is enums.VariableAggregation.SUM:
        if old is None:
            return jax.lax.psum(new, AXIS)
        return old + jax.lax.psum(new - old, AXIS)
    if kind is enums.VariableAggregation.MEAN:
        return jax.lax.pmean(new, AXIS)
    if kind is enums.VariableAggregation.ONLY_FIRST_REPLICA:
        return jax.lax.psum(jnp.where(replica.axis_index() == 0, new, jnp.zeros_like(new)), AXIS)
    return new  # NONE: each replica keeps its own assignment (read: replica 0's), as TF's mirrored copies do
