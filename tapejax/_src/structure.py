"""Slices memoized by the structure of the trace: a training loop records the same structure every step.

`lowering.slice_trace` depends on a trace only through its structure: which op each entry applies with which
static params, how entries are wired to each other, which inputs are sources and targets, and the values of
the Python literals a program bakes in. Tensor ids and array values do not matter. So `slice_trace` below keys
each call by that structure (one pass over the entries, cheaper than slicing) and, for a structure it has seen,
rebuilds the slice from a template of positions: which entries it keeps, which sources it uses, which inputs
it captures (by where they are used, so an input produced by an entry that depends on no source works too).
The program is the same object every time, so the executable cache finds it at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from . import caches, checking, lowering
from .convert import literal
from .tape import TapeEntry

_NONE = "none"  # the code of tid 0: an absent optional input


def structure(entries: Sequence[TapeEntry], leaf_tids: Sequence[int], target_tids: Sequence[int],
              reverse: bool) -> tuple:
    """The structure of slicing `entries` from `leaf_tids` to `target_tids`: a hashable key.

    Each tensor id is coded by position: an entry's k-th output overall is k, an input no entry produces is ~i
    for the i-th distinct one (in order of first use), and each of those carries its baked literal (or None).
    """
    code: dict[int, Any] = {0: _NONE}
    literals: list[Any] = []
    wiring: list[tuple] = []
    get = code.get
    n = 0
    for e in entries:  # by position (op, params, in_tids, in_vals, out_tids): the per-gradient hot path
        ins = e[2]
        if len(ins) == 1:
            wires = (get(ins[0]),)
        elif len(ins) == 2:
            wires = (get(ins[0]), get(ins[1]))
        else:
            wires = tuple(map(get, ins))
        if None in wires:  # an input seen for the first time
            for t, v in zip(ins, e[3]):
                if t not in code:
                    code[t] = ~len(literals)
                    literals.append(literal(v))
            wires = tuple(map(get, ins))
        wiring.append((e[0], e[1], wires))
        outs = e[4]
        if len(outs) == 1:
            code[outs[0]] = n
            n += 1
        else:
            code.update(zip(outs, range(n, n + len(outs))))
            n += len(outs)
    leaves, targets = tuple(map(get, leaf_tids)), tuple(map(get, target_tids))
    if None in leaves or None in targets:
        # A source or target that no entry uses or produces still has an identity the slice depends on:
        # `gradient(a, a)` (the target is the source: connected) and `gradient(tf.constant(7.), a)` (unconnected)
        # are both empty traces. Such ids are coded by their first appearance among the sources and targets.
        loose: dict[int, str] = {}
        leaves, targets = (tuple([get(t) if t in code else loose.setdefault(t, f"loose{len(loose)}") for t in ids])
                           for ids in (leaf_tids, target_tids))
    return tuple(wiring), leaves, targets, tuple(literals), reverse


class Template(NamedTuple):
    """A slice by positions, rebuilt for any trace of the same structure."""

    program: lowering.Program
    kept: tuple[int, ...]  # indices of the entries the steps replay
    leaves: tuple[int, ...]  # indices (into leaf_tids) of the sources that connect, in slot order
    perturbed: tuple[int, ...]  # indices (into leaf_tids) of the sources produced inside the slice
    consts: tuple[tuple[int, int], ...]  # each captured constant as (entry index, input position)
    connected_targets: tuple[int, ...]


def _template(sl: lowering.Slice, entries: Sequence[TapeEntry], leaf_tids: Sequence[int]) -> Template:
    entry_index = {id(e): i for i, e in enumerate(entries)}
    kept = tuple(entry_index[id(e)] for e in sl.entries)
    leaf_index: dict[int, int] = {}
    for i, t in enumerate(leaf_tids):
        leaf_index.setdefault(t, i)
    where: dict[int, tuple[int, int]] = {}  # tid -> where it is first an input of a kept entry
    for i, e in zip(kept, sl.entries):
        for p, t in enumerate(e.in_tids):
            where.setdefault(t, (i, p))
    return Template(sl.program, kept, tuple(leaf_index[t] for t in sl.leaf_tids),
                    tuple(leaf_index[t] for t in sl.perturbed), tuple(where[t] for t in sl.const_tids),
                    sl.connected_targets)


def _instantiate(tm: Template, entries: Sequence[TapeEntry], leaf_tids: Sequence[int]) -> lowering.Slice:
    consts = [entries[i] for i, _ in tm.consts]
    return lowering.Slice(
        tm.program,
        tuple([leaf_tids[i] for i in tm.leaves]),
        frozenset([leaf_tids[i] for i in tm.perturbed]) if tm.perturbed else frozenset(),
        tuple([e.in_tids[p] for e, (_, p) in zip(consts, tm.consts)]),
        tuple([e.in_vals[p] for e, (_, p) in zip(consts, tm.consts)]),
        tm.connected_targets,
        tuple([entries[i] for i in tm.kept]),
    )


_TEMPLATES = caches.Memo("slices by structure (structure.py)", 1024)


def slice_trace(entries: Sequence[TapeEntry], leaf_tids: Sequence[int], target_tids: Sequence[int],
                reverse: bool = True) -> lowering.Slice:
    """`lowering.slice_trace`, memoized by the trace's structure."""
    key = structure(entries, leaf_tids, target_tids, reverse)
    tm = _TEMPLATES.get(key)
    if tm is not None:
        sl = _instantiate(tm, entries, leaf_tids)
        if checking.FLAG.on:
            fresh = lowering.slice_trace(entries, leaf_tids, target_tids, reverse)
            checking.require("structure memo (structure.py)", lambda: _same_slice(sl, fresh),
                             f"a trace of {len(entries)} entries")
        return sl
    sl = lowering.slice_trace(entries, leaf_tids, target_tids, reverse)
    _TEMPLATES[key] = _template(sl, entries, leaf_tids)
    return sl


def template(key: tuple) -> Template | None:
    """The template memoized for a structure (`structure(...)`'s key), if any."""
    return _TEMPLATES.get(key)


def clear() -> None:
    _TEMPLATES.clear()


def _same_slice(a: lowering.Slice, b: lowering.Slice) -> bool:
    """Field by field, captured values by identity (a memoized slice must capture the very same arrays)."""
    return (a.program == b.program and a.leaf_tids == b.leaf_tids and a.perturbed == b.perturbed
            and a.const_tids == b.const_tids and a.connected_targets == b.connected_targets
            and len(a.const_vals) == len(b.const_vals) and all(x is y for x, y in zip(a.const_vals, b.const_vals))
            and len(a.entries) == len(b.entries) and all(x is y for x, y in zip(a.entries, b.entries)))
