"""tf.nest: flatten, pack and map nested structures with TensorFlow's rules.

A structure is nested if it is a list, a tuple (namedtuples included), a mapping (dict, OrderedDict,
defaultdict, any `collections.abc.Mapping`), a mapping view, an attrs class instance, another
`collections.abc.Sequence` that is not a string (range, deque, ...) or an object implementing TF's
`__tf_flatten__` / `__tf_unflatten__`. Everything else is a leaf: Tensors, Variables, numpy arrays, sets, strings,
and None.

Written here rather than on jax.tree_util, whose rules differ from TF's: JAX treats None as an empty node, keeps
an OrderedDict's insertion order where TF sorts the keys of every mapping, and knows neither attrs classes nor
other Sequences.

>>> import tapejax as tf
>>> tf.nest.flatten({"b": [1, None], "a": (2, 3)})
[2, 3, 1, None]
>>> tf.nest.map_structure(lambda x: x * 10, {"b": 1, "a": (2, 3)})
{'b': 10, 'a': (20, 30)}

Differences from TensorFlow: tapejax has no composite tensors, so `expand_composites` is accepted and ignored.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


# -- what is nested, and its children in TF's order ---------------------------------------------------------------


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple)


def _is_attrs(value: Any) -> bool:
    return hasattr(type(value), "__attrs_attrs__")


def _is_custom(value: Any) -> bool:
    """An object implementing TF's CustomNestProtocol (`__tf_flatten__` / `__tf_unflatten__`)."""
    return hasattr(type(value), "__tf_flatten__") and hasattr(type(value), "__tf_unflatten__")


def is_nested(seq: Any) -> bool:
    """Whether `seq` is a nested structure (`tf.nest.is_nested`), as opposed to a leaf.

    >>> import tapejax as tf
    >>> tf.nest.is_nested([1]), tf.nest.is_nested(None), tf.nest.is_nested(tf.constant([1, 2]))
    (True, False, False)
    """
    if isinstance(seq, str | bytes):
        return False
    return (isinstance(seq, collections.abc.Mapping | collections.abc.MappingView | collections.abc.Sequence)
            or _is_attrs(seq) or _is_custom(seq))


def _sorted_keys(mapping: collections.abc.Mapping) -> list[Any]:
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.") from None


def _children(value: Any) -> list[Any]:
    """The direct children of a nested value, in TF's order: mappings by sorted key, attrs by field order."""
    if isinstance(value, collections.abc.Mapping):
        return [value[k] for k in _sorted_keys(value)]
    if _is_attrs(value):
        return [getattr(value, a.name) for a in type(value).__attrs_attrs__]
    if _is_custom(value):
        return list(value.__tf_flatten__()[1])
    return list(value)  # sequences and mapping views, in iteration order


def _rebuild(instance: Any, children: list[Any]) -> Any:
    """A structure of `instance`'s kind holding `children` (given in `_children`'s order)."""
    if isinstance(instance, collections.abc.Mapping):
        by_key = dict(zip(_sorted_keys(instance), children))
        kind = type(instance)
        if isinstance(instance, collections.abc.MutableMapping):
            out = kind(instance.default_factory) if isinstance(instance, collections.defaultdict) else kind()
            for key in instance:  # the instance's own key order; only the flat order is sorted
                out[key] = by_key[key]
            return out
        try:
            return kind((key, by_key[key]) for key in instance)
        except TypeError as e:
            raise TypeError(f"Error creating an object of type {kind} like {instance}. Note that it must accept a "
                            "single positional argument representing an iterable of key-value pairs, in addition "
                            f"to self. Cause: {e}") from None
    if isinstance(instance, collections.abc.MappingView):
        return list(children)  # views cannot be constructed
    if _is_namedtuple(instance) or _is_attrs(instance):
        return type(instance)(*children)
    if _is_custom(instance):
        return instance.__tf_unflatten__(instance.__tf_flatten__()[0], tuple(children))
    if isinstance(instance, range):
        return list(children)
    return type(instance)(children)


# -- flatten and pack ---------------------------------------------------------------------------------------


def _leaves(structure: Any) -> Iterator[Any]:
    if is_nested(structure):
        for child in _children(structure):
            yield from _leaves(child)
    else:
        yield structure


def flatten(structure: Any, expand_composites: bool = False) -> list[Any]:
    """The leaves of `structure`, depth first, mappings in sorted key order (`tf.nest.flatten`).

    A leaf (None included) flattens to a one-element list.

    >>> import tapejax as tf
    >>> tf.nest.flatten(None), tf.nest.flatten([[1, 2], {"y": 3, "x": 4}])
    ([None], [1, 2, 4, 3])
    """
    return list(_leaves(structure))


def _truncate(value: Any, length: int = 100) -> str:
    text = str(value)
    return text[:length] + ("..." if len(text) > length else "")


def pack_sequence_as(structure: Any, flat_sequence: Any, expand_composites: bool = False) -> Any:
    """The leaves of `flat_sequence` arranged like `structure` (`tf.nest.pack_sequence_as`), the inverse of
    `flatten`.

    >>> import tapejax as tf
    >>> tf.nest.pack_sequence_as({"b": [0, 0], "a": 0}, [1, 2, 3])
    {'b': [2, 3], 'a': 1}

    Raises:
      TypeError: `flat_sequence` is not a sequence.
      ValueError: the number of leaves differs.
    """
    if not is_nested(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {_truncate(flat_sequence)}\ninto a structure, but found "
                        f"incompatible type `{type(flat_sequence)}` instead.")
    flat = flat_sequence if isinstance(flat_sequence, collections.abc.Mapping) else list(flat_sequence)
    if not is_nested(structure):
        if len(flat) != 1:
            raise ValueError(f"The target structure is of type `{type(structure)}`\n  {_truncate(structure)}\n"
                             f"However the input is a sequence ({type(flat_sequence)}) of length {len(flat)}.\n  "
                             f"{_truncate(flat_sequence)}\nnest cannot guarantee that it is safe to map one to the "
                             "other.")
        return flat[0]
    n_leaves = sum(1 for _ in _leaves(structure))
    if n_leaves != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {n_leaves} atoms, but flat_sequence had "
                         f"{len(flat)} items.  Structure: {structure}, flat_sequence: {flat_sequence}.")
    position = iter(range(n_leaves))

    def pack(node: Any) -> Any:
        if not is_nested(node):
            return flat[next(position)]
        return _rebuild(node, [pack(child) for child in _children(node)])

    return pack(structure)


# -- comparing structures -----------------------------------------------------------------------------------


class _Dot:
    """A leaf printed as `.` in the outline of a structure that error messages show."""

    def __repr__(self) -> str:
        return "."


def _outline(structure: Any) -> str:
    if not is_nested(structure):
        return "."
    return repr(pack_sequence_as(structure, [_Dot()] * len(flatten(structure))))


def _describe(value: Any) -> str:
    return f"type={type(value).__name__} str={value}"


def _same_kind(a: Any, b: Any) -> bool:
    """TF's check_types: any two mappings match (their keys are compared next); namedtuples match by name and
    fields; anything else by exact type."""
    if isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping):
        return True
    if _is_namedtuple(a) and _is_namedtuple(b):
        return type(a).__name__ == type(b).__name__ and type(a)._fields == type(b)._fields
    return type(a) is type(b)


def _mismatch(a: Any, b: Any, check_types: bool) -> tuple[type[Exception], str] | None:
    """The first difference between two structures (exception type, "More specifically" text), or None."""
    if is_nested(a) != is_nested(b):
        nested, flat = (a, b) if is_nested(a) else (b, a)
        return ValueError, (f'Substructure "{_describe(nested)}" is a sequence, while substructure '
                            f'"{_describe(flat)}" is not')
    if not is_nested(a):
        return None
    if check_types and not _same_kind(a, b):
        return TypeError, ("The two namedtuples don't have the same sequence type. First structure "
                           f"{_describe(a)} has type {type(a).__name__}, while second structure {_describe(b)} has "
                           f"type {type(b).__name__}")
    if check_types and isinstance(a, collections.abc.Mapping) and set(a) != set(b):
        return ValueError, ("The two dictionaries don't have the same set of keys. First structure has keys "
                            f"{_describe(list(a))}, while second structure has keys {_describe(list(b))}")
    children_a, children_b = _children(a), _children(b)
    if len(children_a) != len(children_b):
        return ValueError, ("The two structures don't have the same number of elements. First structure: "
                            f"{_describe(a)}. Second structure: {_describe(b)}")
    for x, y in zip(children_a, children_b):
        found = _mismatch(x, y, check_types)
        if found is not None:
            return found
    return None


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    """Raises unless the two structures nest the same way (`tf.nest.assert_same_structure`).

    Leaves may differ (a number matches a string or None). With `check_types` (the default), the sequence types
    must match too: a list is not a tuple, namedtuples match by name and fields, and mappings must have the same
    keys; any two mappings match each other.

    >>> import tapejax as tf
    >>> tf.nest.assert_same_structure([1, (2, 3)], ["a", ("b", None)])
    >>> tf.nest.assert_same_structure([1, 2], (1, 2))
    Traceback (most recent call last):
    ...
    TypeError: The two structures don't have the same nested structure.
    ...

    Raises:
      ValueError: the nesting or the number of elements differs, or two mappings' keys differ.
      TypeError: with `check_types`, the types of two sequences differ.
    """
    found = _mismatch(nest1, nest2, check_types)
    if found is None:
        return
    kind, detail = found
    raise kind(f"The two structures don't have the same nested structure.\n\nFirst structure: {_describe(nest1)}"
               f"\n\nSecond structure: {_describe(nest2)}\n\nMore specifically: {detail}\nEntire first structure:\n"
               f"{_outline(nest1)}\nEntire second structure:\n{_outline(nest2)}")


def map_structure(func: Callable[..., Any], *structure: Any, **kwargs: Any) -> Any:
    """`func` applied to the leaves of one or more structures of the same shape (`tf.nest.map_structure`).

    Keyword arguments: `check_types` (default True, as in assert_same_structure) and `expand_composites`.

    >>> import tapejax as tf
    >>> tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", False)
    if kwargs:
        raise ValueError("Only valid keyword arguments are `check_types` and `expand_composites`, not: "
                         + ", ".join(f"`{k}`" for k in kwargs))
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
