"""tf.IndexedSlices: rows of a tensor by index, the form TF gives the gradient of a gather.

`values[i]` is a slice of the dense tensor at row `indices[i]`; rows listed more than once add up, and rows not
listed are zero. A tape returns one for a source that only gathers read (sparse_gradients.py), and Keras's
optimizers read its rows one by one, as TF's do. Anything else converts it to a dense tensor (an unsorted
segment sum, recorded like any op), as TF's registered conversion does.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np

from . import convert, deferred, dispatch, errors
from .registry import OpDef
from .tensor import EagerTensor, Tensor, TensorShape
from .variable import Variable


def _as_tensor(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, Variable):
        return value.read_value()
    return EagerTensor(jax.numpy.asarray(convert.to_array(value)))


class IndexedSlices:
    """Slices of a dense tensor of shape `dense_shape`: row `indices[i]` is `values[i]` (`tf.IndexedSlices`).

    `tape.gradient` returns one for a source that is read only by gathers on its first axis (`tf.gather`,
    `tf.nn.embedding_lookup`, a Keras `Embedding`), with one row per gathered index, repeats included: rows that
    repeat add up when it becomes dense. Ops convert it to a dense tensor as TF's do; it has no arithmetic
    besides negation.

    >>> import tapejax as tf
    >>> table = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> with tf.GradientTape() as tape:
    ...     loss = tf.reduce_sum(tf.gather(table, [2, 0, 2]))
    >>> grad = tape.gradient(loss, table)
    >>> grad.indices.numpy(), grad.dense_shape.numpy()
    (array([2, 0, 2], dtype=int32), array([3, 2], dtype=int32))
    >>> print(tf.convert_to_tensor(grad))
    tf.Tensor(
    [[1. 1.]
     [0. 0.]
     [2. 2.]], shape=(3, 2), dtype=float32)

    Differences from TensorFlow: the arguments are converted to tensors (TF keeps them as given, so that
    `.dtype` of a list fails). Where a source is gathered more than once, the slices of each gather come in the
    order the gathers ran; TF's order follows its backward schedule. The dense sum is the same.
    """

    __slots__ = ("_values", "_indices", "_dense_shape")

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None):
        self._values = _as_tensor(values)
        self._indices = _as_tensor(indices)
        self._dense_shape = None if dense_shape is None else _as_tensor(dense_shape)

    values = property(lambda self: self._values, doc="The slices: one row per index.")
    indices = property(lambda self: self._indices, doc="The 1-D integer row of each slice.")
    dense_shape = property(lambda self: self._dense_shape, doc="The shape of the dense tensor (None if unknown).")
    dtype = property(lambda self: self._values.dtype, doc="The dtype of the values.")
    device = property(lambda self: self._values.device, doc="The device of the values.")

    @property
    def shape(self) -> TensorShape:
        """The dense shape, as a TensorShape (unknown where `dense_shape` is not given or not concrete)."""
        shape = _static_shape(self._dense_shape)
        return TensorShape(None if shape is None else shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    def __neg__(self) -> IndexedSlices:
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __str__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape!s}"
        return f"IndexedSlices(indices={self._indices!s}, values={self._values!s}{shape})"


def on_values(fn: Any) -> Any:
    """`fn`, an op whose first argument may be an IndexedSlices: then it applies to the values, and the result
    has the same rows (TF's clip ops: repeated rows are clipped each on its own)."""

    def on_slices(t: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(t, IndexedSlices):
            return IndexedSlices(fn(t.values, *args, **kwargs), t.indices, t.dense_shape)
        return fn(t, *args, **kwargs)

    return functools.wraps(fn)(on_slices)


def dense(t: Any) -> Any:
    """`t`, an IndexedSlices made a dense tensor (for code that needs the array of a gradient)."""
    return to_tensor(t) if isinstance(t, IndexedSlices) else t


def values_of(t: Any) -> Any:
    """An IndexedSlices' values (what TF's norms read: each repeated row on its own), anything else as it is."""
    return t.values if isinstance(t, IndexedSlices) else t


def _static_shape(dense_shape: Tensor | None) -> tuple[int, ...] | None:
    if dense_shape is None:
        return None
    value = deferred.raw(dense_shape)
    if isinstance(value, jax.core.Tracer):
        return None
    return tuple(int(d) for d in np.asarray(deferred.resolve(value)))


def _segment_sum(values: Any, indices: Any, rows: int) -> Any:
    return jax.ops.segment_sum(values, indices.reshape(-1), num_segments=rows)


def _check_rows(values: Any, indices: Any, rows: int) -> None:
    """TF's UnsortedSegmentSum kernel refuses indices outside the dense rows (JAX would drop them)."""
    if isinstance(indices, jax.core.Tracer):
        return
    ids = np.asarray(indices).reshape(-1)
    outside = np.flatnonzero((ids < 0) | (ids >= rows))
    if outside.size:
        k = int(outside[0])
        raise errors.invalid_argument("UnsortedSegmentSum", f"segment_ids[{k}] = {ids[k]} is out of range [0, {rows})")


_DENSE = OpDef("IndexedSlices.to_dense", _segment_sum, static=("rows",), same_dtype=False,
               op_type="UnsortedSegmentSum", check=_check_rows)


def to_tensor(slices: IndexedSlices) -> Tensor:
    """The dense tensor: each row the sum of the slices at its index (TF's conversion of an IndexedSlices)."""
    shape = _static_shape(slices.dense_shape)
    if shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without a known dense_shape: {slices}")
    if tuple(slices.values.shape[1:]) != shape[1:]:
        raise ValueError(f"IndexedSlices of dense_shape {list(shape)} has values of shape "
                         f"{list(slices.values.shape)}: each slice must have the shape {list(shape[1:])}.")
    return dispatch.apply(_DENSE, (slices.values, slices.indices), {"rows": shape[0]})


convert.CONVERSIONS[IndexedSlices] = to_tensor


def _rebuild(_: None, children: Any) -> IndexedSlices:
    # as JAX hands them back (a tf.function's outputs, a tree_map's results): not converted again
    slices = object.__new__(IndexedSlices)
    slices._values, slices._indices, slices._dense_shape = children
    return slices


# A pytree node, so that it crosses a tf.function's boundary (arguments and results) as its three tensors.
jax.tree_util.register_pytree_node(IndexedSlices, lambda s: ((s._values, s._indices, s._dense_shape), None),
                                   _rebuild)
