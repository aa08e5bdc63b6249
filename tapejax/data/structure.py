"""The structure of a dataset's elements: a nest of components, each a `tf.TensorSpec`.

Inside the pipeline an element is a flat tuple of arrays (numpy or JAX), one per component, and a block of
elements is the same tuple with a leading dimension: structure-of-arrays, never a Python object per element.
`Structure` packs such a tuple back into the user's nest (tuples, namedtuples and dicts are structure, as in TF;
a Python list is a value, converted to one tensor) only where the user sees it.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from tapejax import nest
from tapejax._src import dtypes
from tapejax._src.convert import on_device, to_array
from tapejax._src.signature import TensorSpec
from tapejax._src.spec_only import SpecOnly
from tapejax._src.string_values import is_host, is_text, to_bytes_array
from tapejax._src.tensor import EagerTensor, Tensor, TensorShape, _Operators


def _is_structure(x: Any) -> bool:
    return isinstance(x, tuple | dict) or (nest.is_nested(x) and not isinstance(x, list))


def _lists_to_leaves(value: Any) -> Any:
    """Python lists are values in tf.data (TF converts them to one tensor), not structure."""
    if isinstance(value, list):
        return _Leaf(value)
    if isinstance(value, dict):
        return type(value)((k, _lists_to_leaves(v)) for k, v in value.items()) if type(value) is not dict else \
            {k: _lists_to_leaves(v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [_lists_to_leaves(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def _leaves_at(template: Any, value: Any) -> Any:
    """`value` with the part at each leaf of `template` held as one leaf, as TF's `flatten_up_to` takes it: a
    generator may yield `(i,)` where its signature has one TensorSpec of shape (1,). Where the two nests differ
    above the template's leaves, `value` is returned as it is, for assert_same_structure to report."""
    if not _is_structure(template):
        return _Leaf(value) if _is_structure(value) else value
    if isinstance(template, dict) and isinstance(value, dict) and set(template) == set(value):
        parts = {k: _leaves_at(template[k], value[k]) for k in value}
        return parts if type(value) is dict else type(value)(parts.items())
    if isinstance(template, tuple) and isinstance(value, tuple) and len(template) == len(value):
        items = [_leaves_at(t, v) for t, v in zip(template, value)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


class _Leaf:
    """A list held as one leaf while the nest is flattened."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def to_component(value: Any, api: str) -> np.ndarray | jax.Array:
    """One component as an array of TF's dtype (Python floats float32, ints int32, numpy keeps its own)."""
    if isinstance(value, _Leaf):
        value = value.value
    if is_text(value):  # a string component: an object array of bytes, on the host (string_values.py)
        return to_bytes_array(value)
    if value is None:
        raise TypeError(f"{api}: a component of the element is None; TF's tf.data has no None components.")
    if isinstance(value, _Operators):
        return value._value
    if isinstance(value, jax.Array):
        return value
    array = to_array(value)
    return np.asarray(array) if not isinstance(array, jax.core.Tracer) else array


def _tensor(leaf: Any) -> EagerTensor:
    if isinstance(leaf, bytes):  # an element of a string component (a row of an object array)
        return EagerTensor(np.asarray(leaf, dtype=object))
    return EagerTensor(leaf if is_host(leaf) else on_device(leaf))


def spec_of(array: Any, batch_none: bool = False) -> TensorSpec:
    shape = tuple(array.shape)
    if batch_none:
        shape = (None, *shape[1:])
    return TensorSpec(TensorShape(shape), dtypes.from_numpy(np.dtype(array.dtype)))


class Structure:
    """A nest of components: `template` holds the nest with its leaves numbered, `specs` one TensorSpec each."""

    __slots__ = ("template", "specs")

    def __init__(self, template: Any, specs: tuple[TensorSpec, ...]):
        self.template = template
        self.specs = tuple(specs)

    @staticmethod
    def split(value: Any, api: str) -> tuple[Structure, tuple]:
        """The structure of a value and its components (lists converted to arrays)."""
        value = _lists_to_leaves(value)
        leaves = nest.flatten(value)
        arrays = tuple(to_component(leaf, api) for leaf in leaves)
        template = nest.pack_sequence_as(value, list(range(len(leaves))))
        return Structure(template, tuple(spec_of(a) for a in arrays)), arrays

    @staticmethod
    def of(value: Any, api: str) -> Structure:
        """The structure of a value whose leaves may be SpecOnly tensors (spec_only.py), known by spec alone."""
        value = _lists_to_leaves(value)
        leaves = nest.flatten(value)
        specs = tuple(leaf._spec if isinstance(leaf, SpecOnly) else spec_of(to_component(leaf, api)) for leaf in leaves)
        return Structure(nest.pack_sequence_as(value, list(range(len(leaves)))), specs)

    def flatten_like(self, value: Any, api: str, up_to: bool = False) -> tuple:
        """The components of a value that must have this structure (ValueError as TF's if it has not); with
        `up_to`, a nest inside `value` where this structure has a leaf is that component's value."""
        value = _lists_to_leaves(value)
        if up_to:
            value = _leaves_at(self.template, value)
        try:
            nest.assert_same_structure(self.template, value)
        except (ValueError, TypeError) as e:
            raise TypeError(f"{api}: the value's structure does not match the expected structure "
                            f"{self.element_spec}: {e}") from None
        return tuple(to_component(leaf, api) for leaf in nest.flatten(value))

    def pack(self, leaves: tuple | list) -> Any:
        if self.template == 0 and len(leaves) == 1 and not _is_structure(self.template):
            return leaves[0]
        return nest.pack_sequence_as(self.template, list(leaves))

    @property
    def element_spec(self) -> Any:
        return self.pack(self.specs)

    def with_specs(self, specs: tuple) -> Structure:
        return Structure(self.template, tuple(specs))

    def batched(self, size: int | None) -> Structure:
        """Each component with a leading dimension of `size` (an unknown rank stays unknown, as in TF)."""
        return self.with_specs(tuple(TensorSpec(TensorShape(None if s.shape.rank is None else
                                                            (size, *s.shape.as_list())), s.dtype)
                                     for s in self.specs))

    def unbatched(self) -> Structure:
        return self.with_specs(tuple(TensorSpec(TensorShape(None if s.shape.rank is None else
                                                            s.shape.as_list()[1:]), s.dtype) for s in self.specs))

    def tensors(self, leaves: tuple) -> Any:
        """The element as the user sees it: tapejax Tensors in the user's nest."""
        return self.pack([leaf if isinstance(leaf, Tensor) else getattr(leaf, "dataset", None)
                          or _tensor(leaf) for leaf in leaves])

    def numpy(self, leaves: tuple) -> Any:
        return self.pack([leaf if isinstance(leaf, bytes) else getattr(leaf, "dataset", None)
                          or np.asarray(leaf)[()] for leaf in leaves])

    def __len__(self) -> int:
        return len(self.specs)


def most_specific_compatible(a: TensorSpec, b: TensorSpec) -> TensorSpec | None:
    """The spec both fit (a dimension that differs becomes None), or None if dtypes or ranks differ."""
    if a.dtype != b.dtype:
        return None
    da, db = a.shape.dims, b.shape.dims
    if da is None or db is None or len(da) != len(db):
        return TensorSpec(TensorShape(None), a.dtype) if (da is None or db is None) else None
    return TensorSpec(TensorShape([x if x == y else None for x, y in zip(da, db)]), a.dtype)


def stand_in_shape(shape: TensorShape, size: int, rank: int = 0) -> tuple[int, ...]:
    """A concrete shape for a static `shape`: its unknown dimensions `size`, an unknown rank `rank + size`
    dimensions of `size`. A function called at sizes 1 and 2 shows which result dimensions follow the unknown
    ones (`merged`)."""
    if shape.rank is None:
        return (size,) * (rank + size)
    return tuple(size if d is None else d for d in shape.as_list())


def merged(a: Structure, b: Structure) -> Structure:
    """`a`, each spec's dimensions that differ from `b`'s None, and its rank unknown where the ranks differ."""
    return a.with_specs(tuple(most_specific_compatible(x, y) or TensorSpec(TensorShape(None), x.dtype)
                              for x, y in zip(a.specs, b.specs)))


def zip_structures(structures: Any) -> Structure:
    """The structure of `Dataset.zip`: the nest of the datasets' element nests."""
    leaves = nest.flatten(structures)
    templates, specs, offset = [], [], 0
    for s in leaves:
        templates.append(nest.map_structure(lambda i, o=offset: i + o, s.template))
        specs.extend(s.specs)
        offset += len(s.specs)
    return Structure(nest.pack_sequence_as(structures, templates), tuple(specs))
