"""The object graph of a checkpoint: which objects a `tf.train.Checkpoint` saves, and under which names.

As in TF, a checkpoint stores a graph, not a flat list of variables: each node is an object (the checkpoint
itself, a module, a layer, a list, a variable) and each edge is named by the attribute, key or index that
leads from one object to the next. Restoring walks the saved graph and the live objects side by side from
the root, matching edges by name, so a value reaches its variable however the program was restructured
around it, as long as the path is the same. A value's key in the bundle is the path by which a breadth-first
walk first reached its variable, plus `/.ATTRIBUTES/VARIABLE_VALUE`.

The children of an object are, in order of precedence: what its `_checkpoint_children()` method returns (the
Keras classes use it to name their state as Keras 3 does); nothing for a variable; the items of a list, tuple
or dict; the attributes of any other object (tf.Module and user classes), in assignment order. Only children
that are, or lead to, variables count.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .module import Module
from .variable import Variable

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VALUE_SUFFIX = ".ATTRIBUTES/VARIABLE_VALUE"
_ATOMS = (str, bytes, int, float, complex, bool, type(None), np.ndarray, np.generic, type, types.FunctionType,
          types.MethodType, types.BuiltinFunctionType, types.ModuleType)
# Objects of these packages are never walked for attributes (tf.function objects, datasets, tensors, JAX and
# numpy values hold caches, not state), unless they are tf.Modules or name their own checkpoint children.
_OPAQUE = frozenset({"tapejax", "jax", "jaxlib", "numpy", "builtins", "functools", "optax", "tensorflow", "keras"})


class Saveable:
    """A value that is not a `tf.Variable` but is saved like one (Keras's optimizer learning rate)."""

    def __init__(self, name: str, read: Callable[[], np.ndarray], write: Callable[[np.ndarray], None]):
        self.name, self.read, self.write = name, read, write


def is_leaf(obj: Any) -> bool:
    return isinstance(obj, Variable | Saveable)


def children(obj: Any) -> list[tuple[str, Any]]:
    """The named edges leaving `obj` that lead to saved state."""
    if is_leaf(obj) or isinstance(obj, _ATOMS):
        return []
    method = getattr(type(obj), "_checkpoint_children", None)
    if method is not None:
        items = list(method(obj))
    elif isinstance(obj, list | tuple):
        items = [(str(i), x) for i, x in enumerate(obj)]
    elif isinstance(obj, dict):
        items = [(str(k), v) for k, v in obj.items()]
    elif _has_attributes(obj):
        items = list(vars(obj).items())
    else:
        return []
    return [(name, child) for name, child in items if holds_state(child)]


def holds_state(obj: Any, _seen: set[int] | None = None) -> bool:
    """Whether `obj` is, or leads to, a variable (or is a tf.Module or names its own checkpoint children)."""
    if is_leaf(obj) or isinstance(obj, Module) or hasattr(type(obj), "_checkpoint_children"):
        return True  # trackable in TF even while empty: a module may get its variables after a restore
    if isinstance(obj, _ATOMS):
        return False
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    if isinstance(obj, list | tuple):
        values: Any = obj
    elif isinstance(obj, dict):
        values = obj.values()
    elif _has_attributes(obj):
        values = vars(obj).values()
    else:
        return False
    return any(holds_state(v, seen) for v in values)


def _has_attributes(obj: Any) -> bool:
    if isinstance(obj, Module):
        return True
    return hasattr(obj, "__dict__") and (type(obj).__module__ or "").split(".")[0] not in _OPAQUE


def escape(name: str) -> str:
    """TF's escaping of an edge name inside a key: `.` -> `..` and `/` -> `.S`."""
    return name.replace(".", "..").replace("/", ".S")


def walk(root: Any) -> Iterator[tuple[Any, str, list[tuple[str, Any]]]]:
    """Breadth-first: each object once, with its first path and its children."""
    seen = {id(root)}
    queue = [(root, "")]
    for obj, path in queue:
        edges = children(obj)
        yield obj, path, edges
        for name, child in edges:
            if id(child) not in seen:
                seen.add(id(child))
                queue.append((child, f"{path}/{escape(name)}" if path else escape(name)))


def value_of(leaf: Any) -> np.ndarray:
    if isinstance(leaf, Saveable):
        return np.asarray(leaf.read())
    array = leaf.value().value
    try:  # a view of a CPU array's buffer: np.asarray may keep a host copy on the array (a second model)
        return np.from_dlpack(array)
    except (RuntimeError, TypeError, BufferError, ValueError):  # bfloat16, or an accelerator's array
        return np.asarray(array)


def full_name(leaf: Any) -> str:
    return leaf.name if isinstance(leaf, Saveable) else leaf.name.split(":")[0]


def serialize(root: Any) -> tuple[bytes, list[tuple[str, Any]]]:
    """The `TrackableObjectGraph` of `root` and the (key, leaf) pairs to save, in walk order."""
    from tensorboard.compat.proto import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    order = list(walk(root))
    ids = {id(obj): i for i, (obj, _, _) in enumerate(order)}
    leaves = []
    for obj, path, edges in order:
        node = graph.nodes.add()
        for name, child in edges:
            node.children.add(node_id=ids[id(child)], local_name=name)
        if is_leaf(obj):
            key = f"{path}/{VALUE_SUFFIX}"
            node.attributes.add(name="VARIABLE_VALUE", full_name=full_name(obj), checkpoint_key=key)
            leaves.append((key, obj))
    has_values = [bool(node.attributes) for node in graph.nodes]
    changed = True
    while changed:  # a node has values if a descendant has; edges may point back up, so until nothing changes
        changed = False
        for i, node in enumerate(graph.nodes):
            if not has_values[i] and any(has_values[c.node_id] for c in node.children):
                has_values[i] = changed = True
    for node, value in zip(graph.nodes, has_values):
        node.has_checkpoint_values.value = value
    return graph.SerializeToString(), leaves


def parse(data: bytes) -> Any:
    from tensorboard.compat.proto import trackable_object_graph_pb2

    return trackable_object_graph_pb2.TrackableObjectGraph.FromString(data)


def match(roots: list[tuple[Any, int]], graph: Any) -> tuple[dict[int, Any], list[Any]]:
    """Pairs live objects with saved nodes by walking both from `roots` ((object, node id) pairs) by name.

    Returns {node id: object} for every matched node, and the live leaves that found no node.
    """
    matched = {node_id: obj for obj, node_id in roots}
    by_object = {id(obj): node_id for obj, node_id in roots}
    unmatched = []
    queue = list(roots)
    for obj, node_id in queue:
        saved = {c.local_name: c.node_id for c in graph.nodes[node_id].children} if node_id >= 0 else {}
        for name, child in children(obj):
            if id(child) in by_object:
                continue
            child_id = saved.get(name, -1)
            if child_id in matched:
                child_id = -1  # the node already has another object: this one stays unmatched
            by_object[id(child)] = child_id
            if child_id >= 0:
                matched[child_id] = child
            elif is_leaf(child):
                unmatched.append(child)
            queue.append((child, child_id))
    return matched, unmatched
