"""Which gradients TF returns as IndexedSlices: those of sources that only gathers read.

TF's gradient of a gather along the first axis (`tf.gather`, `tf.nn.embedding_lookup`, a variable's
`sparse_read`, a `tf.gather_nd` of whole rows) is an IndexedSlices: the cotangent of the gathered rows and their
indices. Identity, Cast and a variable's read pass one on, any other op makes it dense, and so does a second, dense
path to the same source.
So the gradient of a source whose every use on the way to the targets is such a gather is the cotangent of each
gather's output, re-indexed. `GradientTape.gradient` asks the tape for those cotangents, with the gathers' outputs
as sources (still one `jax.vjp`: no gradient code here), and packs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from . import deferred, dispatch, tape as tape_lib
from .indexed_slices import IndexedSlices
from .registry import REGISTRY, OpDef
from .tensor import EagerTensor, Tensor
from .variable import Variable

_GATHER, _PASS = "gather", "pass"

# The ops whose TF gradient gives or keeps an IndexedSlices (op name -> kind, given the entry's params and
# inputs). TF makes rows of a gather with a static axis of 0 (axis=-rank is dense) and no batch dimensions, and of a
# gather_nd of whole rows (indices of shape [n, 1]).
_KINDS = {
    "gather": lambda p, ins: _GATHER if p["axis"] in (None, 0) and p["batch_dims"] == 0 else None,
    # tf.nn.embedding_lookup's max_norm is a clip_by_norm after the gather (ops/nn.py); only the row has it
    "nn.embedding_lookup": lambda p, ins: _GATHER if p["max_norm"] is None else None,
    "gather_nd": lambda p, ins: _GATHER if p["batch_dims"] == 0 and jnp.ndim(ins[1]) == 2
    and jnp.shape(ins[1])[1] == 1 else None,
    "identity": lambda p, ins: _PASS,
    "cast": lambda p, ins: _PASS,  # a float source's gradient comes back in its own dtype (see pack)
}
_BY_OP: dict[OpDef, Any] = {}


class Gathered(NamedTuple):
    """One gather that reads a source: its output (a source of the gradient call) and its indices."""

    tid: int
    value: Any
    indices: Any


class Leaf(NamedTuple):
    """A source given by its tape id and value (Problem takes it like a tensor): a gather's output, or nothing
    (tid 0, never tracked) in the place of a source whose gradient is packed from its gathers."""

    tid: int
    value: Any


def _kinds() -> dict[OpDef, Any]:
    if len(_BY_OP) < len(_KINDS):  # the op table is built when tapejax is imported, before any gradient
        _BY_OP.update({REGISTRY[name]: kind for name, kind in _KINDS.items() if name in REGISTRY})
    return _BY_OP


def plan(tape: tape_lib.Tape, targets: Sequence[Any], sources: Sequence[Any]) -> dict[int, list[Gathered]]:
    """The sources (by position) whose gradient is an IndexedSlices, with the gathers that read them."""
    kinds = _kinds()
    entries = tape.entries
    if kinds.keys().isdisjoint([e.op for e in entries]):
        return {}
    target_tids = {t._tid for t in targets if isinstance(t, Tensor)}
    target_vars = {t._uid for t in targets if isinstance(t, Variable)}
    owner: dict[int, int] = {}  # tid of a source's leaf, or of what an identity or cast made of it -> position
    dense: set[int] = set()  # positions whose gradient is dense after all
    for k, s in enumerate(sources):
        if isinstance(s, Variable):
            s = getattr(s, "_target", s)
            if s._uid in target_vars:  # d v / d v: TF's dense seed
                dense.add(k)
            tids = [tid for tid, _ in tape.reads.get(s._uid, ())]
        else:
            tids = [s._tid] if isinstance(s, Tensor) and s._tid in tape.tracked else []
        for tid in tids:
            if tid in owner or tid in target_tids:  # a source given twice, or a target itself
                dense.update((k, owner.get(tid, k)))
            owner[tid] = k
    live = _live(entries, target_tids)
    found: dict[int, list[Gathered]] = {}
    values: dict[int, Any] = {}  # gather output tid -> its value, read where a later entry takes it as input
    wanted: set[int] = set()
    owned = owner.keys()  # a view: it sees what identity and cast add
    for i, e in enumerate(entries):
        if wanted and not wanted.isdisjoint(e.in_tids):
            for j, tid in enumerate(e.in_tids):
                if tid in wanted:
                    values[tid] = e.in_vals[j]
                    wanted.discard(tid)
        if not live[i] or owned.isdisjoint(e.in_tids):
            continue
        hits = [(j, owner[t]) for j, t in enumerate(e.in_tids) if t in owner]
        rule = kinds.get(e.op)
        kind = rule(dict(e.params), e.in_vals) if rule is not None else None
        for j, k in hits:
            if kind is _GATHER and j == 0 and len(hits) == 1:
                found.setdefault(k, []).append(Gathered(e.out_tids[0], None, e.in_vals[1]))
                wanted.add(e.out_tids[0])
            elif kind is _PASS and len(hits) == 1 and e.out_tids[0] not in target_tids:
                owner[e.out_tids[0]] = k
            else:
                dense.add(k)
    for t in targets:  # a gather's output that is a target has the target's value
        if isinstance(t, Tensor) and t._tid in wanted:
            values[t._tid] = deferred.raw(t)
    return {k: [g._replace(value=deferred.resolve(values[g.tid])) for g in gathers]
            for k, gathers in found.items() if k not in dense}


def _live(entries: Sequence[tape_lib.TapeEntry], target_tids: set[int]) -> list[bool]:
    """Whether each entry is on a path to a target (a use that is not makes no gradient)."""
    needed = set(target_tids)
    live = [False] * len(entries)
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if not needed.isdisjoint(e.out_tids):
            live[i] = True
            needed.update(e.in_tids)
    return live


def expand(sources: Sequence[Any], rows: dict[int, list[Gathered]]) -> list[Any]:
    """The sources to ask the tape for: a packed source gives its place to nothing, and its gathers' outputs come
    after all the sources."""
    asked = [Leaf(0, None) if k in rows else s for k, s in enumerate(sources)]
    return asked + [Leaf(g.tid, g.value) for k in sorted(rows) for g in rows[k]]


def pack(sources: Sequence[Any], rows: dict[int, list[Gathered]], results: list[Any]) -> list[Any]:
    """The results of `expand`'s sources, with each packed source's gathers' cotangents as its IndexedSlices."""
    packed = results[:len(sources)]
    extra = iter(results[len(sources):])
    for k in sorted(rows):
        cts, indices = [], []
        for g in rows[k]:
            ct = next(extra)
            if ct is not None:
                cts.append(ct)
                indices.append(jnp.reshape(deferred.resolve(g.indices), (-1,)))
        if not cts:
            continue  # every path cut by a custom gradient's None
        source = sources[k]
        shape, dtype = tuple(source.shape), source.dtype._np
        values = dispatch.apply(_VALUES, tuple(cts), {"rows": shape[1:], "dtype": np.dtype(dtype)})
        if len({i.dtype for i in indices}) > 1:
            indices = [i.astype(np.int64) for i in indices]
        index = indices[0] if len(indices) == 1 else jnp.concatenate(indices)
        packed[k] = IndexedSlices(values, EagerTensor(index), EagerTensor(np.asarray(shape, np.int32)))
    return packed


def _values(*cts: Any, rows: tuple[int, ...], dtype: np.dtype) -> Any:
    parts = [ct.reshape((-1, *rows)).astype(dtype) for ct in cts]
    return parts[0] if len(parts) == 1 else jnp.concatenate(parts)


# The slices of all the gathers of one source, as one op: an outer tape differentiates through it.
_VALUES = OpDef("IndexedSlices.values", _values, static=("rows", "dtype"), op_type="ConcatV2")
