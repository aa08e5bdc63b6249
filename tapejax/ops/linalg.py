"""tf.linalg: matrix products and solvers, one row each."""

from __future__ import annotations

import jax.numpy as jnp

from tapejax._src.registry import op


def _adjoint(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
            b_is_sparse=False, output_type=None):
    if transpose_a:
        a = jnp.swapaxes(a, -1, -2)
    if transpose_b:
        b = jnp.swapaxes(b, -1, -2)
    if adjoint_a:
        a = _adjoint(a)
    if adjoint_b:
        b = _adjoint(b)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"In[0] and In[1] must be at least rank 2 (matrices), got shapes {a.shape} and {b.shape}")
    return jnp.matmul(a, b)


def _matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False):
    if transpose_a:
        a = jnp.swapaxes(a, -1, -2)
    if adjoint_a:
        a = _adjoint(a)
    return jnp.einsum("...ij,...j->...i", a, b)


def _solve(matrix, rhs, adjoint=False):
    return jnp.linalg.solve(_adjoint(matrix) if adjoint else matrix, rhs)


def _inv(input, adjoint=False):
    return jnp.linalg.inv(_adjoint(input) if adjoint else input)


def _norm(tensor, ord="euclidean", axis=None, keepdims=None):
    keepdims = bool(keepdims)
    if axis is None:
        axis = None if ord in ("euclidean", "fro") else tuple(range(tensor.ndim))
    if ord in ("euclidean", "fro") and (axis is None or isinstance(axis, int) or ord == "fro" or len(axis) == 2):
        # sqrt of the sum of squares over the axes, as TF computes it (also for matrices with 'euclidean').
        return jnp.sqrt(jnp.sum(jnp.real(tensor * jnp.conj(tensor)), axis=axis, keepdims=keepdims))
    return jnp.linalg.norm(tensor, ord=ord, axis=axis, keepdims=keepdims)


_MATMUL_STATIC = ("transpose_a", "transpose_b", "adjoint_a", "adjoint_b", "a_is_sparse", "b_is_sparse",
                  "output_type")
matmul = op("linalg.matmul", _matmul, static=_MATMUL_STATIC, op_type="MatMul")
matvec = op("linalg.matvec", _matvec, static=("transpose_a", "adjoint_a", "a_is_sparse", "b_is_sparse"),
            op_type="MatMul")
solve = op("linalg.solve", _solve, static=("adjoint",), op_type="MatrixSolve")
inv = op("linalg.inv", _inv, static=("adjoint",), op_type="MatrixInverse")
norm = op("norm", _norm, static=("ord", "axis", "keepdims"), op_type="Norm")
