"""tf.linalg: matrix products, solvers and decompositions, one row each.

Decompositions are JAX's; their derivatives are JAX's too. Where TF reads only part of its input (the lower
triangle of a Hermitian matrix), the row builds the matrix TF reads before calling JAX, so that JAX's derivative is
the derivative of what TF computes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes, errors, zero_cotangent
from tapejax._src.convert import tf_type_string
from tapejax._src.indexed_slices import values_of
from tapejax._src.contracts import COMPLEX, Dtype
from tapejax._src.registry import abstract_check, op


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


def _invertible(matrix):
    """Per matrix of a batch, whether TF's kernels would invert it: every pivot of its partially pivoted LU
    factorization is at least the dtype's smallest normal number (TF flushes subnormals to zero, and a NaN pivot
    fails too). Where it is False, TF raises InvalidArgumentError."""
    pivots = jnp.abs(jnp.diagonal(jax.lax.linalg.lu(jax.lax.stop_gradient(matrix))[0], axis1=-2, axis2=-1))
    return jnp.all(pivots >= jnp.finfo(pivots.dtype).tiny, axis=-1)


def _solve(matrix, rhs, adjoint=False):
    # Eagerly the check raises before this runs; inside tf.function, where nothing can raise, a system TF would
    # refuse gives NaN rather than whatever the factorization's zero pivot makes of it.
    out = jnp.linalg.solve(_adjoint(matrix) if adjoint else matrix, rhs)
    return jnp.where(_invertible(matrix)[..., None, None], out, jnp.nan)


def _inv(input, adjoint=False):
    out = jnp.linalg.inv(_adjoint(input) if adjoint else input)
    return jnp.where(_invertible(input)[..., None, None], out, jnp.nan)


_SOLVER_DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.complex64),
                  np.dtype(np.complex128))
_SOLVER_DTYPE_NAMES = "double, float, half, complex64, complex128"


def _check_solver(op_type: str, *arrays) -> None:
    """TF's checks of MatrixSolve / MatrixInverse / Lu inputs, in TF's order: dtype, ranks, outer dimensions."""
    for a in arrays:
        if a.dtype not in _SOLVER_DTYPES:
            raise errors.invalid_argument(op_type, f"Value for attr 'T' of {tf_type_string(a.dtype)} is not in the "
                                                   f"list of allowed values: {_SOLVER_DTYPE_NAMES}")
    if len({a.ndim for a in arrays}) > 1:
        raise errors.invalid_argument(op_type, "All input tensors must have the same rank.")
    for i, a in enumerate(arrays):
        if a.ndim < 2:
            which = "Input tensor" if op_type == "Lu" else f"Input tensor {i}"
            raise errors.invalid_argument(op_type, f"{which} must have rank >= 2, got {a.ndim}")
    if len({a.shape[:-2] for a in arrays}) > 1:
        raise errors.invalid_argument(op_type, "All input tensors must have the same outer dimensions.")
    if arrays[0].shape[-1] != arrays[0].shape[-2]:
        raise errors.invalid_argument(op_type, "First input (lhs) must be a square matrix." if op_type == "MatrixSolve"
                                      else "Input matrix must be square.")
    if op_type == "MatrixSolve" and arrays[1].shape[-2] != arrays[0].shape[-1]:
        raise errors.invalid_argument(op_type, "Input matrix and rhs are incompatible.")


def _check_invertible(op_type: str, matrix, message: str) -> None:
    """TF's kernels raise on a matrix they cannot invert; eagerly, so does tapejax (inside tf.function the values
    are not known: _solve and _inv give NaN there instead)."""
    if not isinstance(matrix, jax.core.Tracer) and matrix.size and not bool(jnp.all(_invertible(matrix))):
        raise errors.invalid_argument(op_type, message)


def _check_solve(matrix, rhs, adjoint=False):
    _check_solver("MatrixSolve", matrix, rhs)
    _check_invertible("MatrixSolve", matrix, "Input matrix is not invertible.")


def _check_inv(input, adjoint=False):
    _check_solver("MatrixInverse", input)
    _check_invertible("MatrixInverse", input, "Input is not invertible.")


def _norm(tensor, ord="euclidean", axis=None, keepdims=None):
    keepdims = bool(keepdims)
    if axis is None:
        axis = None if ord in ("euclidean", "fro") else tuple(range(tensor.ndim))
    if ord in ("euclidean", "fro") and (axis is None or isinstance(axis, int) or ord == "fro" or len(axis) == 2):
        # sqrt of the sum of squares over the axes, as TF computes it (also for matrices with 'euclidean').
        return zero_cotangent.sqrt(jnp.sum(jnp.real(tensor * jnp.conj(tensor)), axis=axis, keepdims=keepdims))
    return jnp.linalg.norm(tensor, ord=ord, axis=axis, keepdims=keepdims)


_MATMUL_STATIC = ("transpose_a", "transpose_b", "adjoint_a", "adjoint_b", "a_is_sparse", "b_is_sparse",
                  "output_type")
matmul = op("linalg.matmul", _matmul, static=_MATMUL_STATIC, op_type="MatMul")
matvec = op("linalg.matvec", _matvec, static=("transpose_a", "adjoint_a", "a_is_sparse", "b_is_sparse"),
            op_type="MatMul")
_SOLVE_DOC = """Same semantics as tf.linalg.solve; computed with jnp.linalg.solve.

>>> import tapejax as tf
>>> print(tf.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [[2.0], [2.0]]))
tf.Tensor(
[[1. ]
 [0.5]], shape=(2, 1), dtype=float32)

A matrix TF cannot invert (a zero, subnormal or NaN pivot in its LU factorization) raises InvalidArgumentError
("Input matrix is not invertible."), as in TF.

Differences from TensorFlow: inside tf.function, where TF raises when the step runs, the solution is NaN.
"""
_INV_DOC = """Same semantics as tf.linalg.inv; computed with jnp.linalg.inv.

>>> import tapejax as tf
>>> print(tf.linalg.inv([[2.0, 0.0], [0.0, 4.0]]))
tf.Tensor(
[[0.5  0.  ]
 [0.   0.25]], shape=(2, 2), dtype=float32)

A matrix TF cannot invert raises InvalidArgumentError ("Input is not invertible."), as in TF.

Differences from TensorFlow: inside tf.function, where TF raises when the step runs, the inverse is NaN.
"""
solve = op("linalg.solve", _solve, static=("adjoint",), op_type="MatrixSolve", check=_check_solve, doc=_SOLVE_DOC)
inv = op("linalg.inv", _inv, static=("adjoint",), op_type="MatrixInverse", check=_check_inv, doc=_INV_DOC)
norm = op("norm", _norm, static=("ord", "axis", "keepdims"), op_type="Norm")


# -- dtype checks: TF's kernels are registered for these dtypes only ------------------------------------------

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128))
_REALS = _FLOATS[:2]
_FLOATS_ONLY = (Dtype(allowed=("float32", "float64", *COMPLEX)),)  # every tensor argument


def _allowed(op_type: str, allowed: tuple[np.dtype, ...], attr: str = "T"):
    """A `check` raising TF's InvalidArgumentError when a tensor argument's dtype has no kernel."""
    names = ", ".join(tf_type_string(d) for d in allowed)

    @abstract_check
    def check(*arrays, **params):
        for a in arrays:
            if a is not None and a.dtype not in allowed:
                raise errors.invalid_argument(
                    op_type, f"Value for attr '{attr}' of {tf_type_string(a.dtype)} is not in the list of allowed "
                             f"values: {names}")

    return check


# -- determinants, inverses, decompositions -----------------------------------------------------------------

def _lower_hermitian(x):
    # The matrix TF's SelfAdjointEigV2 kernel reads: the lower triangle, mirrored, with the real part of the
    # diagonal. JAX's derivative through it is TF's gradient (lower-triangular, as SelfAdjointEigV2Grad makes it).
    lower = jnp.tril(x, -1)
    diagonal = jnp.real(jnp.diagonal(x, axis1=-2, axis2=-1)).astype(x.dtype)
    return lower + _adjoint(lower) + diagonal[..., None] * jnp.eye(x.shape[-1], dtype=x.dtype)


def _slogdet(input):
    sign, log_abs = jnp.linalg.slogdet(input)
    return sign, log_abs.astype(input.dtype)  # TF: both outputs of the input's dtype (complex too)


def _cholesky(input):
    # TF's CholeskyGrad is symmetric ((G + G^H) / 2): that is JAX's derivative of the Cholesky factor of
    # (x + x^H) / 2, which jnp.linalg.cholesky factors. TF reads the lower triangle instead; on the Hermitian
    # inputs TF requires the two agree.
    return jnp.linalg.cholesky(input)


def _logdet(matrix):
    # TF: 2 * sum(log(real(diag(cholesky(matrix))))), real even for complex input.
    diagonal = jnp.diagonal(jnp.linalg.cholesky(matrix), axis1=-2, axis2=-1)
    return 2 * jnp.sum(jnp.log(jnp.real(diagonal)), axis=-1)


def _triangular_solve(matrix, rhs, lower=True, adjoint=False):
    batch = jnp.broadcast_shapes(matrix.shape[:-2], rhs.shape[:-2])  # TF broadcasts the batch dimensions
    matrix = jnp.broadcast_to(matrix, batch + matrix.shape[-2:])
    rhs = jnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    return jax.lax.linalg.triangular_solve(matrix, rhs, left_side=True, lower=lower, transpose_a=adjoint,
                                           conjugate_a=adjoint)


def _cholesky_solve(chol, rhs):
    return _triangular_solve(chol, _triangular_solve(chol, rhs), adjoint=True)  # chol chol^H x = rhs


def _qr(input, full_matrices=False):
    m, n = input.shape[-2:]
    if m < n:
        # JAX differentiates the QR of square and tall matrices only. A wide [x | y] factors as q [u | q^H y] with
        # q u the QR of x: the factors LAPACK computes, and TF's gradient splits the same way (QrGrad).
        q, u = jnp.linalg.qr(input[..., :m])
        return q, jnp.concatenate([u, _adjoint(q) @ input[..., m:]], axis=-1)
    return tuple(jnp.linalg.qr(input, mode="complete" if full_matrices else "reduced"))


def _svd(tensor, full_matrices=False, compute_uv=True):
    if not compute_uv:
        return jnp.linalg.svd(tensor, compute_uv=False)
    u, s, vh = jnp.linalg.svd(tensor, full_matrices=full_matrices)
    return s, u, _adjoint(vh)  # TF's order and v (not v^H)


def _eigh(tensor):
    e, v = jnp.linalg.eigh(_lower_hermitian(tensor))
    return e.astype(tensor.dtype), v  # TF: eigenvalues of the input's dtype (complex too)


def _eigvalsh(tensor):
    return jnp.linalg.eigvalsh(_lower_hermitian(tensor)).astype(tensor.dtype)


def _lstsq(matrix, rhs, l2_regularizer=0.0, fast=True):
    if not fast:
        return jnp.linalg.pinv(matrix) @ rhs  # the minimum-norm least-squares solution; l2_regularizer ignored
    m, n = matrix.shape[-2:]
    regularizer = jnp.asarray(l2_regularizer, matrix.dtype)
    # TF's fast path: the regularized normal equations, solved with a Cholesky factor of the Gram matrix.
    if m >= n:
        gram = _adjoint(matrix) @ matrix + regularizer * jnp.eye(n, dtype=matrix.dtype)
        return _cholesky_solve(jnp.linalg.cholesky(gram), _adjoint(matrix) @ rhs)
    gram = matrix @ _adjoint(matrix) + regularizer * jnp.eye(m, dtype=matrix.dtype)
    return _adjoint(matrix) @ _cholesky_solve(jnp.linalg.cholesky(gram), rhs)


def _check_lstsq(matrix, rhs, l2_regularizer=0.0, fast=True):
    _allowed("MatrixSolveLs", _FLOATS)(matrix, rhs)
    if matrix.dtype == np.complex128 and l2_regularizer != 0:
        raise NotImplementedError("matrix_solve_ls is currently disabled for complex128 and l2_regularizer != 0 "
                                  "due to poor accuracy.")


def _pinv(a, rcond=None, validate_args=False):
    # rcond=None is TF's default too: 10 * max(rows, cols) * eps; singular values below rcond * max(s) dropped.
    return jnp.linalg.pinv(a, rtol=rcond)


def _check_pinv(a, rcond=None, validate_args=False):
    if a.dtype not in _REALS:  # TF checks in Python
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw {dtypes.from_numpy(a.dtype).name}).")


def _lu(input, output_idx_type=np.int32):
    lower_upper, _, permutation = jax.lax.linalg.lu(input)
    return lower_upper, permutation.astype(dtypes.as_dtype(output_idx_type)._np)


def _check_lu(input, output_idx_type=np.int32):
    # TF's Lu kernel refuses what it cannot invert (eagerly; inside tf.function the factors are returned).
    _check_solver("Lu", input)
    _check_invertible("Lu", input, "Input is not invertible.")


_DET_DOC = """Same semantics as tf.linalg.det; computed with jnp.linalg.det.

>>> import tapejax as tf
>>> print(tf.linalg.det([[2.0, 1.0], [1.0, 3.0]]))
tf.Tensor(5.0, shape=(), dtype=float32)

Differences from TensorFlow: for complex inputs the gradient is conj(det) * inv(input)^H times the upstream
gradient, what TF's own ops give for a*d - b*c; TF's MatrixDeterminant gradient leaves out the conj.
"""
_CHOLESKY_DOC = """Same semantics as tf.linalg.cholesky; computed with jnp.linalg.cholesky.

>>> import tapejax as tf
>>> print(tf.linalg.cholesky([[4.0, 2.0], [2.0, 2.0]]))
tf.Tensor(
[[2. 0.]
 [1. 1.]], shape=(2, 2), dtype=float32)

Differences from TensorFlow: the factor is that of (input + input^H) / 2, where TF reads the lower triangle only;
the two agree on the Hermitian inputs TF requires. The gradient is TF's symmetric one on every input.
"""
_SVD_DOC = """Same semantics as tf.linalg.svd; computed with jnp.linalg.svd. Returns s, or (s, u, v) in TF's order,
with `input = u @ diag(s) @ adjoint(v)` (v, not numpy's v^H).

>>> import tapejax as tf
>>> s, u, v = tf.linalg.svd([[3.0, 0.0], [0.0, -2.0]])
>>> print(s)
tf.Tensor([3. 2.], shape=(2,), dtype=float32)

The signs of the columns of u and v are LAPACK's; TF's CPU kernel (Eigen) may pick the other sign of a column, as
TF's documentation allows.
"""
_LSTSQ_DOC = """Same semantics as tf.linalg.lstsq: with fast=True, TF's regularized normal equations solved with a
Cholesky factor; with fast=False, the minimum-norm least-squares solution (computed with jnp.linalg.pinv).

>>> import tapejax as tf
>>> print(tf.linalg.lstsq([[1.0], [0.0]], [[3.0], [5.0]]))
tf.Tensor([[3.]], shape=(1, 1), dtype=float32)

Differences from TensorFlow: fast=False is differentiable (TF raises ValueError).
"""
det = op("linalg.det", jnp.linalg.det, signature="input", op_type="MatrixDeterminant",
         contract=_FLOATS_ONLY, doc=_DET_DOC)
slogdet = op("linalg.slogdet", _slogdet, op_type="LogMatrixDeterminant",
             contract=_FLOATS_ONLY)
logdet = op("linalg.logdet", _logdet, op_type="Cholesky", contract=_FLOATS_ONLY)
cholesky = op("linalg.cholesky", _cholesky, contract=_FLOATS_ONLY, doc=_CHOLESKY_DOC)
cholesky_solve = op("linalg.cholesky_solve", _cholesky_solve, op_type="MatrixTriangularSolve",
                    contract=_FLOATS_ONLY)
triangular_solve = op("linalg.triangular_solve", _triangular_solve, static=("lower", "adjoint"),
                      op_type="MatrixTriangularSolve", contract=_FLOATS_ONLY)
qr = op("linalg.qr", _qr, static=("full_matrices",), op_type="Qr", contract=_FLOATS_ONLY)
svd = op("linalg.svd", _svd, static=("full_matrices", "compute_uv"), op_type="Svd", contract=_FLOATS_ONLY,
          doc=_SVD_DOC)
eigh = op("linalg.eigh", _eigh, op_type="SelfAdjointEigV2", contract=_FLOATS_ONLY)
eigvalsh = op("linalg.eigvalsh", _eigvalsh, op_type="SelfAdjointEigV2", contract=_FLOATS_ONLY)
lstsq = op("linalg.lstsq", _lstsq, static=("l2_regularizer", "fast"), op_type="MatrixSolveLs", check=_check_lstsq,
            doc=_LSTSQ_DOC)
pinv = op("linalg.pinv", _pinv, static=("rcond", "validate_args"), op_type="Svd", check=_check_pinv)
lu = op("linalg.lu", _lu, static=("output_idx_type",), op_type="Lu", check=_check_lu,
        has_gradient=False)  # TF registers no gradient for Lu
expm = op("linalg.expm", lambda input: jax.scipy.linalg.expm(input), op_type="MatrixExponential",
          contract=_FLOATS_ONLY)

# -- diagonals, bands, transposes -----------------------------------------------------------------------------


def _diagonal_range(k) -> tuple[int, int, bool]:
    """(lower, upper, band) from TF's k: one diagonal (an int, or a pair of equal ints) or a band (lower, upper)."""
    lower, upper = (k[0], k[-1]) if isinstance(k, tuple) else (k, k)
    return lower, upper, lower != upper


def _diagonal_length(d: int, rows: int, cols: int) -> int:
    return max(0, min(rows + min(d, 0), cols - max(d, 0)))


def _packing(k, rows: int, cols: int, align: str) -> tuple[np.ndarray, ...]:
    """Where TF's MatrixDiagV3 ops put diagonals k[0]..k[1] of a rows x cols matrix in their packed form.

    The packed band is [num_diags, max_len]: row m holds diagonal `upper - m`, shorter diagonals padded on the
    side `align` names ("RIGHT_LEFT": superdiagonals aligned right, subdiagonals left). Returns index arrays
    (i, j, m, n): matrix element (i, j) is packed element (m, n).
    """
    lower, upper, _ = _diagonal_range(k)
    max_len = max(_diagonal_length(d, rows, cols) for d in range(lower, upper + 1))
    right_super, right_sub = align.split("_")[0] == "RIGHT", align.split("_")[-1] == "RIGHT"
    indices = []
    for m, d in enumerate(range(upper, lower - 1, -1)):
        t = np.arange(_diagonal_length(d, rows, cols))
        right = (d >= 0 and right_super) or (d <= 0 and right_sub)
        offset = max_len - len(t) if right else 0
        indices.append((t + max(-d, 0), t + max(d, 0), np.full_like(t, m), t + offset))
    return tuple(np.concatenate(column) for column in zip(*indices))


def _diag(diagonal, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    lower, upper, band = _diagonal_range(k)
    packed = diagonal if band else diagonal[..., None, :]
    max_len = packed.shape[-1]
    min_rows, min_cols = max_len + max(-upper, 0), max_len + max(lower, 0)
    if num_rows == -1 and num_cols == -1:  # TF's inference: the smallest square matrix
        num_rows = num_cols = max(min_rows, min_cols)
    num_rows = min_rows if num_rows == -1 else num_rows
    num_cols = min_cols if num_cols == -1 else num_cols
    i, j, m, n = _packing(k, num_rows, num_cols, align)
    if n.max(initial=-1) + 1 != max_len:  # JAX would clamp the indices: TF's error instead
        raise ValueError(f"The number of diagonals provided in the input does not match num_rows={num_rows} and "
                         f"num_cols={num_cols} with k={k}: diagonal shape {list(diagonal.shape)}")
    out = jnp.full(packed.shape[:-2] + (num_rows, num_cols), padding_value, diagonal.dtype)
    return out.at[..., i, j].set(packed[..., m, n])


def _diag_part(input, k=0, padding_value=0, align="RIGHT_LEFT"):
    lower, upper, band = _diagonal_range(k)
    i, j, m, n = _packing(k, *input.shape[-2:], align)
    max_len = max(_diagonal_length(d, *input.shape[-2:]) for d in range(lower, upper + 1))
    out = jnp.full(input.shape[:-2] + (upper - lower + 1, max_len), padding_value, input.dtype)
    out = out.at[..., m, n].set(input[..., i, j])
    return out if band else out[..., 0, :]


def _set_diag(input, diagonal, k=0, align="RIGHT_LEFT"):
    lower, upper, band = _diagonal_range(k)
    i, j, m, n = _packing(k, *input.shape[-2:], align)
    max_len = max(_diagonal_length(d, *input.shape[-2:]) for d in range(lower, upper + 1))
    expected = input.shape[:-2] + ((upper - lower + 1,) if band else ()) + (max_len,)
    if diagonal.shape != expected:  # JAX would clamp the indices: TF's error instead
        raise ValueError(f"diagonal must have shape {list(expected)} to set diagonals k={k} of an input of shape "
                         f"{list(input.shape)}, got {list(diagonal.shape)}")
    packed = diagonal if band else diagonal[..., None, :]
    return input.at[..., i, j].set(packed[..., m, n])


def _band_part(input, num_lower, num_upper):
    rows = np.arange(input.shape[-2])[:, None]
    cols = np.arange(input.shape[-1])[None, :]
    keep = (((num_lower < 0) | (rows - cols <= num_lower)) & ((num_upper < 0) | (cols - rows <= num_upper)))
    return jnp.where(keep, input, jnp.zeros_like(input))


def _trace(x):
    return jnp.sum(jnp.diagonal(x, axis1=-2, axis2=-1), axis=-1, dtype=x.dtype)  # int32 stays int32, as in TF


def _matrix_transpose(a, conjugate=False):
    return _adjoint(a) if conjugate else jnp.swapaxes(a, -1, -2)


def _check_matrix(a, conjugate=False):
    if a.ndim < 2:  # TF checks in Python
        raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = {np.asarray(a)} "
                         f"with shape: {a.shape}")


@abstract_check
def _check_cross(a, b):
    if a.shape != b.shape:
        raise errors.invalid_argument("Cross", f"Both inputs must be of same shape: {list(a.shape)} vs. "
                                               f"{list(b.shape)}")
    if a.ndim == 0 or a.shape[-1] != 3:
        raise errors.FailedPreconditionError(None, None, "Cross-products are only defined for 3-element vectors. "
                                                         "[Op:Cross] name: ")


trace = op("linalg.trace", _trace, op_type="Trace")
_DIAG_DOC = """Same semantics as tf.linalg.diag (MatrixDiagV3: one diagonal k, or a band k=(lower, upper) packed
as TF packs it, with `align`); computed with jnp scatters.

>>> import tapejax as tf
>>> print(tf.linalg.diag([1.0, 2.0], k=1))
tf.Tensor(
[[0. 1. 0.]
 [0. 0. 2.]
 [0. 0. 0.]], shape=(3, 3), dtype=float32)

Differences from TensorFlow: `name` is keyword-only here (TF's second positional parameter), as in every
tapejax op; so in diag_part and set_diag.
"""
diag = op("linalg.diag", _diag, static=("k", "num_rows", "num_cols", "padding_value", "align"),
          op_type="MatrixDiagV3", doc=_DIAG_DOC)
diag_part = op("linalg.diag_part", _diag_part, static=("k", "padding_value", "align"), op_type="MatrixDiagPartV3")
set_diag = op("linalg.set_diag", _set_diag, static=("k", "align"), op_type="MatrixSetDiagV3")
band_part = op("linalg.band_part", _band_part, static=("num_lower", "num_upper"), op_type="MatrixBandPart")
matrix_transpose = op("linalg.matrix_transpose", _matrix_transpose, static=("conjugate",), op_type="Transpose",
                      check=_check_matrix)
adjoint = op("linalg.adjoint", _adjoint, signature="matrix", op_type="Transpose", check=_check_matrix)
cross = op("linalg.cross", jnp.cross, signature="a, b", op_type="Cross", check=_check_cross)
tensordot = op("linalg.tensordot", lambda a, b, axes: jnp.tensordot(a, b, axes), static=("axes",),
               op_type="Tensordot")

# -- norms -----------------------------------------------------------------------------------------------------


def _global_norm(*t_list):
    # TF: sqrt(2 * sum of l2_loss(t)) over the tensors given; None entries are skipped.
    return zero_cotangent.sqrt(sum(jnp.sum(jnp.square(t)) for t in t_list if t is not None))


def _normalize(tensor, ord="euclidean", axis=None):
    norm = _norm(tensor, ord=ord, axis=axis, keepdims=True).astype(tensor.dtype)
    return tensor / norm, norm


_global_norm_op = op("linalg.global_norm", _global_norm, op_type="L2Loss",
                     contract=(Dtype(allowed=("float16", "bfloat16", "float32", "float64")),))


def global_norm(t_list, name=None):
    """The l2 norm of all the tensors of `t_list` together (`tf.linalg.global_norm`); of an IndexedSlices, its
    values (each repeated row on its own, as TF)."""
    if isinstance(t_list, list | tuple):
        t_list = [values_of(t) for t in t_list]
    return _global_norm_op(t_list)
normalize = op("linalg.normalize", _normalize, static=("ord", "axis"), op_type="Normalize")
