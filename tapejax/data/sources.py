"""Where elements come from: tensors sliced along their first dimension, one element, a range, a generator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapejax._src import dtypes, errors
from tapejax._src.signature import TensorSpec
from tapejax._src.tensor import TensorShape

from .api import Dataset
from .stage import INFINITE, UNKNOWN, View
from .structure import Structure, to_component


class TensorSliceDataset(Dataset):
    """`from_tensor_slices`: element i holds row i of every component; the components are kept as arrays."""

    _tf_name = "_TensorSliceDataset"

    def __init__(self, tensors: Any):
        structure, arrays = Structure.split(tensors, "Dataset.from_tensor_slices")
        arrays = tuple(np.asarray(a) for a in arrays)
        if not arrays:
            raise ValueError("Invalid `element`. `element` should not be empty.")
        for a in arrays:
            if a.ndim == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, but got a scalar: the "
                                 f"components of Dataset.from_tensor_slices need a first dimension to slice.")
        first = arrays[0].shape[0]
        for a in arrays[1:]:
            if a.shape[0] != first:
                raise ValueError(f"Dimensions {first} and {a.shape[0]} are not compatible")
        self._arrays = arrays
        self._structure = structure.unbatched()
        self._card = first

    def _can_view(self) -> bool:
        return True

    def _view(self) -> View:
        return View(self._card, lambda idx: tuple(a[idx] for a in self._arrays))

    def _elements(self) -> Iterator[tuple]:
        arrays = self._arrays
        for i in range(self._card):
            yield tuple(a[i] for a in arrays)


class TensorDataset(Dataset):
    """`from_tensors`: the whole value as one element."""

    _tf_name = "_TensorDataset"

    def __init__(self, tensors: Any):
        self._structure, arrays = Structure.split(tensors, "Dataset.from_tensors")
        self._arrays = tuple(np.asarray(a) for a in arrays)
        self._card = 1

    def _can_view(self) -> bool:
        return True

    def _view(self) -> View:
        return View(1, lambda idx: tuple(np.broadcast_to(a, (len(idx), *a.shape)) for a in self._arrays))


class RangeDataset(Dataset):
    """`range(start, stop, step)` as Python's range, elements int64 (or `dtype`)."""

    _tf_name = "_RangeDataset"

    def __init__(self, *args: int, output_type: Any = dtypes.int64):
        if not args or len(args) > 3:
            raise ValueError("Dataset.range takes 1 to 3 arguments (start, stop, step).")
        values = [int(a) for a in args]
        if len(values) == 3 and values[2] == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        self._range = range(*values)
        self._dtype = dtypes.as_dtype(output_type)
        self._structure = Structure(0, (TensorSpec(TensorShape(()), self._dtype),))
        self._card = len(self._range)

    def _can_view(self) -> bool:
        return True

    def _view(self) -> View:
        r, np_dtype = self._range, self._dtype._np
        return View(self._card, lambda idx: ((r.start + r.step * np.asarray(idx, np.int64)).astype(np_dtype),))


class GeneratorDataset(Dataset):
    """`from_generator`: a Python generator called anew for each pass, its values checked against the
    signature (TF's InvalidArgumentError when a value does not fit)."""

    _tf_name = "_FlatMapDataset"

    def __init__(self, generator: Callable, output_signature: Any, args: tuple = ()):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        specs, template = _flatten_signature(output_signature)
        self._generator = generator
        self._args = tuple(_generator_arg(a) for a in args)
        self._structure = Structure(template, specs)

    def _elements(self) -> Iterator[tuple]:
        for value in self._generator(*self._args):
            try:
                leaves = self._structure.flatten_like(value, "Dataset.from_generator", up_to=True)
            except TypeError as e:
                raise TypeError(f"`generator` yielded an element that did not match the expected structure. The "
                                f"expected structure was {self._structure.element_spec}, but the yielded element "
                                f"was {value}. ({e})") from None
            out = []
            for leaf, spec in zip(leaves, self._structure.specs):
                array = np.asarray(leaf)
                if array.dtype != spec.dtype._np:
                    if not np.can_cast(array.dtype, spec.dtype._np, "same_kind") and array.dtype.kind != "i":
                        raise TypeError(f"`generator` yielded an element of dtype {array.dtype} where an element "
                                        f"of dtype {spec.dtype.name} was expected.")
                    array = array.astype(spec.dtype._np)
                if not spec.shape.is_compatible_with(array.shape):
                    raise errors.InvalidArgumentError(
                        None, None, f"`generator` yielded an element of shape {TensorShape(array.shape)} where an "
                        f"element of shape {spec.shape} was expected.")
                out.append(array)
            yield tuple(out)


def _generator_arg(value: Any) -> Any:
    """An `args` entry as TF passes it to the generator: converted as a tensor (Python ints int32), then as
    `.numpy()` gives it: a numpy scalar (hashable) or bytes for a scalar, an array otherwise."""
    array = np.asarray(to_component(value, "Dataset.from_generator"))
    return array[()] if array.ndim == 0 else array


def _flatten_signature(signature: Any) -> tuple[tuple, Any]:
    from tapejax import nest
    leaves = nest.flatten(signature)
    for leaf in leaves:
        if not isinstance(leaf, TensorSpec):
            raise TypeError(f"`output_signature` must contain objects that are subclass of `tf.TypeSpec` but "
                            f"found {type(leaf)} which is not.")
    return tuple(leaves), nest.pack_sequence_as(signature, list(range(len(leaves))))


def signature_from_types(output_types: Any, output_shapes: Any) -> Any:
    """TF's deprecated (output_types, output_shapes) pair as one signature."""
    from tapejax import nest
    if output_shapes is None:
        return nest.map_structure(lambda t: TensorSpec(TensorShape(None), t), output_types)
    # the shapes follow the types' structure only as deep as the types go (TF's map_structure_up_to): a shape
    # is itself a tuple, so `output_types=tf.int32, output_shapes=()` is one scalar
    def pair(types: Any, shapes: Any) -> Any:
        if not nest.is_nested(types):
            return TensorSpec(TensorShape(shapes), types)
        if isinstance(types, dict):
            return type(types)((k, pair(types[k], shapes[k])) for k in types)
        parts = [pair(t, s) for t, s in zip(types, shapes)]
        return type(types)(*parts) if hasattr(types, "_fields") else type(types)(parts)

    return pair(output_types, output_shapes)


__all__ = ["GeneratorDataset", "RangeDataset", "TensorDataset", "TensorSliceDataset", "INFINITE", "UNKNOWN",
           "to_component"]
