"""How a traced loop carries a tf.TensorArray: as one buffer of static shape (tensor_array.py), made ready before
the loop. An unknown element shape is learned from one trial capture of the loop body, in which the array is a
`_Probe` that records the shape of the first value written into it; a dynamic_size array grows by the loop's
trip count, which must then be known when the step is traced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from .context import CONTEXT
from .capture import as_tensor, capture_each, is_leaf, symbolic
from .tensor import EagerTensor, TensorShape
from .tensor_array import DYNAMIC_UNBOUNDED, UNKNOWN_IN_LOOP, TensorArray, static_int


class _Probe:
    """Stands for an array of unknown element shape during one trial capture of a loop body: it learns the shape
    of the first value written into it. It has no leaves, so the loop's structure does not depend on it."""

    def __init__(self, array: TensorArray, learned: dict):
        self.array, self.learned = array, learned

    def write(self, index: Any, value: Any, name: str | None = None) -> _Probe:
        self.learned.setdefault(id(self.array), self.array._check_shape(self.array._convert(value).shape))
        return self

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> _Probe:
        shape = TensorShape(self.array._convert(value).shape.as_list()[1:])
        self.learned.setdefault(id(self.array), self.array._check_shape(shape))
        return self

    def __getattr__(self, name: str) -> Any:
        raise ValueError(UNKNOWN_IN_LOOP.format(why=f"the loop body calls `{name}` before writing to it"))


jax.tree_util.register_pytree_node(_Probe, lambda p: ((), p), lambda p, _: p)


def _needs_shape(x: Any) -> bool:
    if not isinstance(x, TensorArray) or x._items is None:
        return False
    shape = x._element_shape
    known = shape.rank is not None and shape.is_fully_defined()
    return not known and all(t is None for t in x._items.tensors)


def seed_loop_vars(loop_vars: Any, call_body: Callable[[Any], Any], bound: Any) -> Any:
    """The loop variables with each TensorArray ready to be carried by a traced loop: its element shape learned
    from one trial capture of the body if unknown, and, if dynamic_size, grown by the loop's trip count `bound`."""
    is_array = lambda x: isinstance(x, TensorArray) or is_leaf(x)  # noqa: E731
    arrays = [x for x in jax.tree_util.tree_leaves(loop_vars, is_leaf=is_array) if isinstance(x, TensorArray)]
    if not arrays:
        return loop_vars
    learned: dict[int, TensorShape] = {}
    if any(_needs_shape(a) for a in arrays):
        probed = jax.tree_util.tree_map(lambda x: _Probe(x, learned) if _needs_shape(x) else x, loop_vars,
                                        is_leaf=is_array)
        leaves, treedef = jax.tree_util.tree_flatten(probed, is_leaf=is_leaf)
        placeholders = [EagerTensor(symbolic(as_tensor(x)._value)) for x in leaves]
        capture_each([lambda *p: call_body(jax.tree_util.tree_unflatten(treedef, p))], placeholders,
                     CONTEXT.trace)

    def ready(x: Any) -> Any:
        if not isinstance(x, TensorArray):
            return x
        if _needs_shape(x):
            if id(x) not in learned:
                raise ValueError(UNKNOWN_IN_LOOP.format(why="the loop body writes nothing to it"))
            x = x._as_buffer(learned[id(x)])
        if x._dynamic_size:
            trips = None if bound is None else static_int(bound)
            if trips is None:
                raise ValueError(DYNAMIC_UNBOUNDED)
            return x._grown(trips)
        return x._as_buffer()

    return jax.tree_util.tree_map(ready, loop_vars, is_leaf=is_array)
