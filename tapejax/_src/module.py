"""tf.Module: a named container whose variables and submodules are found through its attributes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import jax

from . import checkpoint_pending
from .variable import Variable, name_scope


def camel_to_snake(name: str) -> str:
    """`MyModule` -> `my_module`, as TF names modules and Keras names layers."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


class Module:
    """A named container of variables and submodules (`tf.Module`).

    `variables`, `trainable_variables` and `submodules` are found by walking the module's attributes (and the
    lists, tuples and dicts in them) in sorted attribute order, as TF does, each object once.

    >>> import tapejax as tf
    >>> class Scale(tf.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = tf.Variable(2.0, name="w")
    >>> [v.name for v in Scale().trainable_variables]
    ['w:0']
    """

    def __init__(self, name: str | None = None):
        self._name = camel_to_snake(type(self).__name__) if name is None else name

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if checkpoint_pending.PENDING:  # a checkpoint restored earlier may hold this new state's value
            checkpoint_pending.attached(value)

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> name_scope:
        """A `tf.name_scope` of the module's name: variables created in it are named `module_name/...:0`."""
        return name_scope(self._name)

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(self._flatten(lambda x: isinstance(x, Variable)))

    @property
    def trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(self._flatten(lambda x: isinstance(x, Variable) and x.trainable))

    @property
    def non_trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(self._flatten(lambda x: isinstance(x, Variable) and not x.trainable))

    @property
    def submodules(self) -> tuple[Module, ...]:
        return tuple(self._flatten(lambda x: isinstance(x, Module)))

    def _flatten(self, predicate: Callable[[Any], bool]) -> Iterator[Any]:
        seen: set[int] = {id(self)}
        yield from _walk(self, predicate, seen)


def _walk(module: Module, predicate: Callable[[Any], bool], seen: set[int]) -> Iterator[Any]:
    children = []
    for key in sorted(vars(module)):
        leaves = jax.tree_util.tree_leaves(vars(module)[key],
                                           is_leaf=lambda x: isinstance(x, Module | Variable))
        for leaf in leaves:
            if id(leaf) in seen or not isinstance(leaf, Module | Variable):
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                yield leaf
            if isinstance(leaf, Module):
                children.append(leaf)
    for child in children:  # TF walks breadth first: a module's own attributes before its submodules'
        yield from _walk(child, predicate, seen)
