"""tf.sparse: `tf.SparseTensor` (indices, values, dense_shape) and the ops real programs use on it.

A SparseTensor is a value of three tensors, as in TF; its ops are compositions of dense tapejax ops (a scatter into
a dense tensor, a gather), so gradients flow to `values` as TF's do. Indices are checked eagerly as TF's kernels
check them (in bounds; in row-major order unless `validate_indices=False`).

>>> import tapejax as tf
>>> st = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
>>> print(tf.sparse.to_dense(st))
tf.Tensor(
[[1. 0. 0. 0.]
 [0. 0. 2. 0.]
 [0. 0. 0. 0.]], shape=(3, 4), dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapejax as tf
from tapejax._src.errors import missing_symbols as _missing_symbols


class SparseTensor:
    """A sparse tensor: `values[i]` at `indices[i]` of a tensor of shape `dense_shape`, zeros elsewhere
    (`tf.SparseTensor`). Indices and dense_shape are int64, as in TF."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self._indices = tf.cast(tf.convert_to_tensor(indices, dtype_hint=tf.int64), tf.int64)
        self._values = tf.convert_to_tensor(values)
        self._dense_shape = tf.cast(tf.convert_to_tensor(dense_shape, dtype_hint=tf.int64), tf.int64)
        ishape, vshape, dshape = self._indices.shape, self._values.shape, self._dense_shape.shape
        if ishape.rank != 2 or vshape.rank != 1 or dshape.rank != 1:
            raise ValueError(f"SparseTensor takes indices of rank 2, values of rank 1 and dense_shape of rank 1; got "
                             f"ranks {ishape.rank}, {vshape.rank} and {dshape.rank}.")
        for a, b in ((ishape[0], vshape[0]), (ishape[1], dshape[0])):
            if a is not None and b is not None and a != b:
                raise ValueError(f"Dimensions {a} and {b} are not compatible")

    indices = property(lambda self: self._indices, doc="The int64 [N, rank] positions of the values.")
    values = property(lambda self: self._values, doc="The [N] values.")
    dense_shape = property(lambda self: self._dense_shape, doc="The int64 [rank] shape of the dense tensor.")
    dtype = property(lambda self: self._values.dtype, doc="The values' dtype.")

    @property
    def shape(self) -> tf.TensorShape:
        """The dense shape as a TensorShape (unknown dimensions where dense_shape is traced)."""
        value = tf.get_static_value(self._dense_shape)
        return tf.TensorShape(None if value is None else [int(d) for d in value])

    def get_shape(self) -> tf.TensorShape:
        return self.shape

    def with_values(self, new_values: Any) -> SparseTensor:
        """This sparse tensor's indices and shape with `new_values`."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self._indices!s}, values={self._values!s}, dense_shape={self._dense_shape!s})"

    __str__ = __repr__


def _concrete(t: Any) -> np.ndarray | None:
    value = tf.get_static_value(t)
    return None if value is None else np.asarray(value)


def _check_indices(sp: SparseTensor, ordered: bool, op: str) -> None:
    """TF's kernel checks, eagerly (traced indices are not checked): in bounds, and in row-major order."""
    indices, shape = _concrete(sp.indices), _concrete(sp.dense_shape)
    if indices is None or shape is None:
        return
    bounds = ",".join(map(str, shape))
    for i, index in enumerate(indices):
        if np.any(index < 0) or np.any(index >= shape):
            raise tf.errors.InvalidArgumentError(None, None, f"indices[{i}] = [{','.join(map(str, index))}] is out "
                                                             f"of bounds: need 0 <= index < [{bounds}] [Op:{op}]")
        if ordered and i and tuple(index) <= tuple(indices[i - 1]):
            kind = "repeated" if tuple(index) == tuple(indices[i - 1]) else "out of order"
            raise tf.errors.InvalidArgumentError(None, None, (
                f"indices[{i}] = [{','.join(map(str, index))}] is {kind}. Many sparse ops require sorted indices.\n"
                f"    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n [Op:{op}]"))


def to_dense(sp_input: SparseTensor, default_value: Any = None, validate_indices: bool = True,
             name: str | None = None) -> tf.Tensor:
    """The dense tensor: `default_value` (0) everywhere but at the indices (`tf.sparse.to_dense`); of repeated
    indices (with `validate_indices=False`) the last value wins, as in TF."""
    _check_indices(sp_input, validate_indices, "SparseToDense")
    fill = tf.zeros([], sp_input.dtype) if default_value is None else tf.cast(default_value, sp_input.dtype)
    dense = tf.fill(tf.cast(sp_input.dense_shape, tf.int32), fill)
    return tf.tensor_scatter_nd_update(dense, sp_input.indices, sp_input.values)


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The nonzero entries of `tensor`, in row-major order (`tf.sparse.from_dense`)."""
    tensor = tf.convert_to_tensor(tensor)
    indices = tf.where(tf.not_equal(tensor, tf.zeros([], tensor.dtype)))
    return SparseTensor(indices, tf.gather_nd(tensor, indices), tf.shape(tensor, out_type=tf.int64))


def reorder(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """The same entries with indices in row-major order (`tf.sparse.reorder`); values follow their indices."""
    _check_indices(sp_input, False, "SparseReorder")
    strides = tf.math.cumprod(sp_input.dense_shape, exclusive=True, reverse=True)
    order = tf.argsort(tf.reduce_sum(sp_input.indices * strides, axis=1), stable=True)
    return SparseTensor(tf.gather(sp_input.indices, order), tf.gather(sp_input.values, order), sp_input.dense_shape)


def sparse_dense_matmul(sp_a: SparseTensor, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: str | None = None) -> tf.Tensor:
    """`sp_a @ b`, with `sp_a` sparse and `b` dense (`tf.sparse.sparse_dense_matmul`); repeated indices add, as
    in TF's kernel."""
    _check_indices(sp_a, False, "SparseTensorDenseMatMul")
    shape = tf.cast(sp_a.dense_shape, tf.int32)
    dense = tf.tensor_scatter_nd_add(tf.zeros(shape, sp_a.dtype), sp_a.indices, sp_a.values)
    return tf.linalg.matmul(dense, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


def reduce_sum(sp_input: SparseTensor, axis: Any = None, keepdims: bool = False, output_is_sparse: bool = False,
               name: str | None = None) -> Any:
    """The sum of the entries over `axis` (`tf.sparse.reduce_sum`); dense unless `output_is_sparse`."""
    dense = tf.tensor_scatter_nd_add(tf.zeros(tf.cast(sp_input.dense_shape, tf.int32), sp_input.dtype),
                                     sp_input.indices, sp_input.values)
    total = tf.reduce_sum(dense, axis=axis, keepdims=keepdims)
    return from_dense(total) if output_is_sparse else total


def add(a: Any, b: Any, threshold: Any = 0, name: str | None = None) -> Any:
    """`a + b` (`tf.sparse.add`): sparse + sparse is sparse, with the entries of equal indices summed and the
    indices in row-major order; sparse + dense is dense."""
    if not isinstance(a, SparseTensor):
        a, b = b, a
    if not isinstance(b, SparseTensor):
        return to_dense(a, validate_indices=False) + tf.convert_to_tensor(b, dtype=a.dtype)
    indices = tf.concat([a.indices, b.indices], axis=0)
    values = tf.concat([a.values, b.values], axis=0)
    strides = tf.math.cumprod(a.dense_shape, exclusive=True, reverse=True)
    keys, slot = tf.unique(tf.reduce_sum(indices * strides, axis=1), out_idx=tf.int64)
    order = tf.argsort(keys)
    rank = tf.math.invert_permutation(order)  # slot -> position in row-major order
    summed = tf.math.unsorted_segment_sum(values, tf.gather(rank, slot), tf.size(keys))
    firsts = tf.math.unsorted_segment_min(tf.range(tf.size(slot), dtype=tf.int64), tf.gather(rank, slot), tf.size(keys))
    out = SparseTensor(tf.gather(indices, firsts), summed, a.dense_shape)
    if threshold:
        keep = tf.where(tf.abs(summed) >= tf.cast(threshold, summed.dtype))[:, 0]
        out = SparseTensor(tf.gather(out.indices, keep), tf.gather(summed, keep), a.dense_shape)
    return out


__getattr__ = _missing_symbols("tf.sparse")
