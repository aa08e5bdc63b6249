"""Why a tf.function traced again: what changed between a call that traced and the earlier traces.

TF's warning about frequent retracing names three generic causes. Here each trace leaves a small record (made
only when a call traces, never on the hot path): the tf.function object it belongs to, the values of the Python
function's closure, and per argument leaf its path (`x`, `batch[1]`, `config['lr']`) and what the trace is keyed
on (a tensor's shape and dtype, a Python value, a variable's identity). A retrace is explained against the
nearest earlier record of the same Python code (fewest differences; the latest on a tie), in words:

- a tensor argument's shape or dtype changed;
- a Python argument's value changed (each value is a separate trace), or a Python value took a tensor's place;
- a different tf.Variable was passed (variables are keyed by identity);
- a different object passed by identity (a model, a layer);
- the arguments' structure changed (an argument added or left out, a list of another length);
- a new tf.function object of the same code: created in a loop, or over a closure whose values changed, or a
  method called on another instance;
- none of those: the same signature was traced before and forgotten (more than MAX_TRACES signatures, or its
  variables were deleted).
"""

from __future__ import annotations

import inspect
import types
import weakref
from typing import Any, NamedTuple

import jax

from .signature import Static, Template

_MAX_REPR = 60


class Leaf(NamedTuple):
    kind: str  # "tensor", "python", "variable", "object", "string"
    key: Any  # what a trace is keyed on (compared)
    shown: str  # how it reads in a sentence


class Record(NamedTuple):
    """One trace, as a retrace is explained against it."""

    function: Any  # weak reference to the tf.function object (a Function)
    owner: Any  # the bound instance (a weak reference, or its id), None for a plain function
    closure: tuple  # (name, key, shown) per closure cell of the Python function
    treedef: Any
    leaves: dict  # path -> Leaf
    key: Any  # the call key (template.key)
    relaxed: bool  # traced with reduce_retracing=True


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[:_MAX_REPR - 3] + "..."


def _leaf(static: Any, spec: tuple | None) -> Leaf:
    if not isinstance(static, Static):  # a tensor argument
        if spec is None:  # an input_signature with None dimensions: every call alike
            return Leaf("tensor", None, "a tensor")
        shape, dtype = spec
        return Leaf("tensor", (tuple(shape), str(dtype)), f"a tensor of shape {tuple(shape)} and dtype {dtype}")
    key = static.key
    if key[0] == "variable":
        return Leaf("variable", key, f"tf.Variable #{key[1]}")
    if key[0] == "string":
        return Leaf("string", key, f"a string tensor {_short(key[2])}")
    if key[0] in ("ref", "id"):
        value = static.value
        return Leaf("object", key, f"a {type(value).__name__} object" if value is not None else "an object")
    return Leaf("python", key, f"the Python {type(static.value).__name__} {_short(static.value)}")


def _argument_names(python_function: Any) -> list[str]:
    try:
        return list(inspect.signature(python_function).parameters)
    except (TypeError, ValueError):
        return []


def _paths(treedef: Any, names: list[str]) -> list[str]:
    """The name of each leaf of a call's (args, kwargs) tree: `x`, `batch[1]`, `config['lr']`."""
    tree = jax.tree_util.tree_unflatten(treedef, [0] * treedef.num_leaves)
    paths = []
    for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]:
        where, rest = path[0], path[1:]
        first = rest[0] if rest else None
        if getattr(where, "idx", None) == 0 and first is not None:  # positional
            index = first.idx
            head = names[index] if index < len(names) else f"args[{index}]"
        elif first is not None:  # keyword
            head = str(getattr(first, "key", first))
        else:
            head = "arguments"
        paths.append(head + jax.tree_util.keystr(tuple(rest[1:])))
    return paths


def _closure(python_function: Any) -> tuple:
    target = getattr(python_function, "__func__", python_function)
    target = inspect.unwrap(target) if isinstance(target, types.FunctionType) else target
    code, cells = getattr(target, "__code__", None), getattr(target, "__closure__", None) or ()
    if code is None:
        return ()
    found = []
    for name, cell in zip(code.co_freevars, cells):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, types.FunctionType | type):  # helpers and classes: their identity is not a value
            continue
        found.append((name, Static(value).key, _short(value)))
    return tuple(found)


def _owner(python_function: Any) -> Any:
    owner = getattr(python_function, "__self__", None)
    if owner is None:
        return None
    try:
        return weakref.ref(owner)
    except TypeError:
        return id(owner)


def record(function: Any, template: Template) -> Record:
    """The record of a trace of `function` (a tf.function object) for a call keyed by `template`."""
    python_function = function.python_function
    specs = template.key[2]
    names = _argument_names(python_function)
    paths = _paths(template.treedef, names)
    tensors = iter(specs) if specs is not None else None
    leaves = {}
    for path, static in zip(paths, template.statics):
        spec = next(tensors) if tensors is not None and not isinstance(static, Static) else None
        leaves[path] = _leaf(static, spec)
    return Record(weakref.ref(function), _owner(python_function), _closure(python_function), template.treedef,
                  leaves, template.key, bool(getattr(function, "_reduce_retracing", False)))


def _leaf_change(path: str, old: Leaf, new: Leaf, relaxed: bool) -> str | None:
    if old.key == new.key and old.kind == new.kind:
        return None
    if old.kind == new.kind == "tensor" and None in (old.key, new.key):
        return (f"argument `{path}`: {new.shown} (the step needs concrete sizes: its input_signature's None "
                "dimensions are traced per size)")
    if old.kind == new.kind == "tensor":
        (old_shape, old_dtype), (new_shape, new_dtype) = old.key, new.key
        if old_dtype != new_dtype:
            return f"argument `{path}`: dtype {old_dtype} -> {new_dtype}"
        if relaxed:
            return (f"argument `{path}`: shape {old_shape} -> {new_shape} (reduce_retracing=True: traced once more, "
                    "for the shapes joined, with None where they differ)")
        return (f"argument `{path}`: shape {old_shape} -> {new_shape} (each new shape is a new trace; "
                "reduce_retracing=True or an input_signature with None dimensions traces once for many shapes)")
    if old.kind == new.kind == "python":
        return (f"argument `{path}`: Python value {_short(old.key[1])} -> {_short(new.key[1])} (each Python value "
                "is a separate trace: pass a tensor, e.g. tf.constant(...), to trace once)")
    if old.kind == new.kind == "variable":
        return (f"argument `{path}`: a new tf.Variable (#{old.key[1]} -> #{new.key[1]}; a variable argument is "
                "traced per variable object: create it once, outside the loop, and assign to it)")
    if old.kind == new.kind == "object":
        return f"argument `{path}`: a different object ({new.shown}; objects are compared by identity)"
    if old.kind == new.kind == "string":
        return f"argument `{path}`: string value {_short(old.key[2])} -> {_short(new.key[2])}"
    return (f"argument `{path}`: {old.shown} -> {new.shown} (a Python value is part of the trace's key, a "
            "tensor only by its shape and dtype)")


def _closure_changes(old: tuple, new: tuple) -> list[str]:
    before = {name: (key, shown) for name, key, shown in old}
    changes = []
    for name, key, shown in new:
        if name in before and before[name][0] != key:
            changes.append(f"closure variable `{name}`: {before[name][1]} -> {shown}")
    return changes


def differences(old: Record, new: Record) -> list[str]:
    """What changed from the trace `old` to the trace `new`, one sentence per change (empty: nothing did)."""
    changes = []
    if old.function() is not new.function():
        closure = _closure_changes(old.closure, new.closure)
        if closure:
            changes.append("a new tf.function object over a changed closure (" + "; ".join(closure) + "): a "
                           "tf.function created anew per value traces anew; pass the value as an argument instead")
        elif new.owner is not None and old.owner != new.owner:
            changes.append("a method called on another instance (each instance traces its own tf.function, as "
                           "in TF)")
        else:
            changes.append("a new tf.function object of the same Python function (created repeatedly, e.g. in "
                           "a loop): define the tf.function once, outside the loop")
    if old.treedef != new.treedef:
        added = [p for p in new.leaves if p not in old.leaves]
        removed = [p for p in old.leaves if p not in new.leaves]
        parts = ([f"now also {', '.join(f'`{p}`' for p in added)}"] if added else []) + (
            [f"no longer {', '.join(f'`{p}`' for p in removed)}"] if removed else [])
        changes.append("the arguments' structure changed" + (f" ({'; '.join(parts)})" if parts else
                                                               f": {old.treedef} -> {new.treedef}"))
    for path, leaf in new.leaves.items():
        if path in old.leaves:
            change = _leaf_change(path, old.leaves[path], leaf, new.relaxed)
            if change:
                changes.append(change)
    return changes


def explain(history: list[Record], new: Record) -> str:
    """Why `new` traced, against the nearest record in `history` (records of the same Python code)."""
    if not history:
        return "the first trace of this Python function"
    best: list[str] | None = None
    for old in reversed(history):  # the latest first: it wins a tie
        changes = differences(old, new)
        if best is None or len(changes) < len(best):
            best = changes
    if best:
        return "; ".join(best)
    return ("the same arguments as an earlier trace, which was dropped: more signatures were traced than a "
            "tf.function keeps (the least recently used are forgotten), or the variables that trace read were "
            "deleted")
