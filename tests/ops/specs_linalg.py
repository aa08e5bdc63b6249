"""Specs of the tf.linalg and tf.signal rows (merged into op_specs.SPEC and op_specs.EXTRA_CASES).

References are numpy's (np.linalg, np.fft) or written here with numpy only: LU with partial pivoting, expm by
scaling and squaring of a Taylor series, the single-diagonal diag/set_diag.

Gauge. The factors of qr, svd and eigh are unique only up to a sign per column (q and r, u and v, the eigenvectors):
TF's CPU kernels (Eigen) often pick the other sign than LAPACK, which numpy and JAX use, and a gradient of
`sum(out * w)` flips with the sign. The TF comparison therefore calls these rows through `tf_call` helpers that
multiply each column by the constant +-1 that aligns it with the numpy reference (`_align`): the result is a fixed
function of the input near the sample, so values and tape gradients of TF and tapejax can be compared; tapejax's
own factors (LAPACK's, as numpy's) come out unchanged. tests/ops/test_registry.py compares the rows with numpy's
factors directly: JAX and numpy both call LAPACK and agree on the gauge.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_specs import F32, Spec, fixed, normal

C64 = np.complex64

# -- samplers -------------------------------------------------------------------------------------------------


def _well_conditioned(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Square matrices near 2 I: far from singular, so solves and inverses are accurate in float32."""
    return (rng.normal(size=shape) * 0.3 + 2 * np.eye(shape[-1])).astype(F32)


def _spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Symmetric positive definite matrices, well conditioned: the inputs of cholesky and logdet."""
    a = rng.normal(size=shape) * 0.5
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * 0.5 * np.eye(shape[-1])).astype(F32)


def _lower(rng: np.random.Generator, shape: tuple[int, ...], upper_garbage: bool = True) -> np.ndarray:
    """Well-conditioned lower-triangular matrices; with `upper_garbage` the upper triangle holds noise, which TF's
    triangular solves and Cholesky-based ops must ignore."""
    m = _well_conditioned(rng, shape)
    return m if upper_garbage else np.tril(m)


def _complex(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(C64)


# -- references -----------------------------------------------------------------------------------------------


def _t(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def slogdet_ref(x):
    sign, log_abs = np.linalg.slogdet(x)
    return sign.astype(x.dtype), log_abs.astype(x.dtype)


def logdet_ref(x):
    return np.linalg.slogdet(x.astype(np.float64))[1].astype(x.dtype)


def cholesky_solve_ref(chol, rhs):
    lower = np.tril(chol).astype(np.float64)
    return np.linalg.solve(lower @ _t(lower), rhs).astype(rhs.dtype)


def triangular_solve_ref(matrix, rhs, lower=True, adjoint=False):
    triangle = np.tril(matrix) if lower else np.triu(matrix)
    if adjoint:
        triangle = np.conj(_t(triangle))
    return np.linalg.solve(triangle.astype(np.float64), rhs).astype(rhs.dtype)


def qr_ref(x, full_matrices=False):
    return tuple(np.linalg.qr(x, mode="complete" if full_matrices else "reduced"))


def svd_ref(x, full_matrices=False, compute_uv=True):
    if not compute_uv:
        return np.linalg.svd(x, compute_uv=False)
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return s, u, np.conj(_t(vh))  # TF's order: s, u, v


def eigh_ref(x):
    return tuple(np.linalg.eigh(x, UPLO="L"))  # TF reads the lower triangle, as numpy's default


def lstsq_ref(matrix, rhs, l2_regularizer=0.0, fast=True):
    a, b = matrix.astype(np.float64), rhs.astype(np.float64)
    m, n = a.shape[-2:]
    if m >= n:
        x = np.linalg.solve(_t(a) @ a + l2_regularizer * np.eye(n), _t(a) @ b)
    else:
        x = _t(a) @ np.linalg.solve(a @ _t(a) + l2_regularizer * np.eye(m), b)
    return x.astype(rhs.dtype)


def lu_ref(x):
    """Doolittle LU with partial pivoting (the largest |pivot|, first on ties), packed as TF packs it: L's unit
    diagonal is implied, and row i of P x is row perm[i] of x."""
    lus, perms = [], []
    for a in x.reshape((-1,) + x.shape[-2:]).astype(np.float64):
        n = a.shape[-1]
        perm = np.arange(n)
        for k in range(n):
            p = k + int(np.argmax(np.abs(a[k:, k])))
            a[[k, p]], perm[[k, p]] = a[[p, k]], perm[[p, k]]
            a[k + 1:, k] /= a[k, k]
            a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
        lus.append(a)
        perms.append(perm)
    return (np.array(lus).reshape(x.shape).astype(x.dtype),
            np.array(perms, np.int32).reshape(x.shape[:-1]))


def expm_ref(x):
    """exp(x) = exp(x / 2^s)^(2^s), with exp(x / 2^s) summed as a Taylor series in float64 (|x / 2^s| < 1/2)."""
    a = x.astype(np.float64)
    norm = np.max(np.sum(np.abs(a), axis=-2))
    squarings = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0 else 0
    a = a / 2.0**squarings
    term = result = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
    for k in range(1, 25):
        term = term @ a / k
        result = result + term
    for _ in range(squarings):
        result = result @ result
    return result.astype(x.dtype)


def _diagonal_len(d: int, rows: int, cols: int) -> int:
    return max(0, min(rows + min(d, 0), cols - max(d, 0)))


def _k_range(k) -> tuple[int, int]:
    return (k[0], k[-1]) if isinstance(k, tuple) else (k, k)


def _offset(d: int, max_len: int, rows: int, cols: int, align: str) -> int:
    # TF's docs of tf.linalg.diag_part: diagonals shorter than the longest are padded on the side `align` names.
    right = (align in ("RIGHT_LEFT", "RIGHT_RIGHT") and d >= 0) or (align in ("LEFT_RIGHT", "RIGHT_RIGHT") and d <= 0)
    return max_len - _diagonal_len(d, rows, cols) if right else 0


def diag_part_ref(x, k=0, padding_value=0, align="RIGHT_LEFT"):
    """TF's formula: diagonal[..., m, n] = x[..., n + max(-d, 0) - offset, n + max(d, 0) - offset], d = k[1] - m."""
    lower, upper = _k_range(k)
    rows, cols = x.shape[-2:]
    max_len = max(_diagonal_len(d, rows, cols) for d in range(lower, upper + 1))
    out = np.full(x.shape[:-2] + (upper - lower + 1, max_len), padding_value, x.dtype)
    for m in range(upper - lower + 1):
        d = upper - m
        offset = _offset(d, max_len, rows, cols, align)
        for n in range(max_len):
            i, j = n + max(-d, 0) - offset, n + max(d, 0) - offset
            if 0 <= i < rows and 0 <= j < cols:
                out[..., m, n] = x[..., i, j]
    return out if lower != upper else out[..., 0, :]


def _write_band(out, diagonal, k, align):
    """TF's formula: out[..., i, j] = diagonal[..., k[1] - d, j - max(d, 0) + offset] for d = j - i in k's range."""
    lower, upper = _k_range(k)
    packed = diagonal if lower != upper else diagonal[..., None, :]
    rows, cols = out.shape[-2:]
    for i in range(rows):
        for j in range(cols):
            d = j - i
            if lower <= d <= upper:
                offset = _offset(d, packed.shape[-1], rows, cols, align)
                out[..., i, j] = packed[..., upper - d, j - max(d, 0) + offset]
    return out


def diag_ref(diagonal, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    lower, upper = _k_range(k)
    n = diagonal.shape[-1]
    min_rows, min_cols = n + max(-upper, 0), n + max(lower, 0)
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = max(min_rows, min_cols)
    rows = min_rows if num_rows == -1 else num_rows
    cols = min_cols if num_cols == -1 else num_cols
    batch = diagonal.shape[:-1] if lower == upper else diagonal.shape[:-2]
    return _write_band(np.full(batch + (rows, cols), padding_value, diagonal.dtype), diagonal, k, align)


def set_diag_ref(x, diagonal, k=0, align="RIGHT_LEFT"):
    return _write_band(x.copy(), diagonal, k, align)


def band_part_ref(x, num_lower, num_upper):
    rows, cols = np.indices(x.shape[-2:])
    keep = ((num_lower < 0) | (rows - cols <= num_lower)) & ((num_upper < 0) | (cols - rows <= num_upper))
    return np.where(keep, x, np.zeros_like(x))


def global_norm_ref(*ts):
    return np.sqrt(sum(np.sum(np.square(t.astype(np.float64))) for t in ts)).astype(ts[0].dtype)


def frame_ref(x, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1):
    """Frames by a loop over their starts (pad_end: every start inside the signal), on the axis moved last."""
    a = axis % x.ndim
    x = np.moveaxis(x, a, -1)
    n = x.shape[-1]
    starts = range(0, n, frame_step) if pad_end else range(0, n - frame_length + 1, frame_step)
    padded = np.concatenate([x, np.full(x.shape[:-1] + (frame_length,), pad_value, x.dtype)], axis=-1)
    if not starts:  # no whole frame: [..., 0, frame_length]
        return np.moveaxis(np.zeros(x.shape[:-1] + (0, frame_length), x.dtype), (-2, -1), (a, a + 1))
    frames = np.stack([padded[..., s:s + frame_length] for s in starts], axis=-2)
    return np.moveaxis(frames, (-2, -1), (a, a + 1))


def overlap_and_add_ref(x, frame_step):
    frames, length = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + ((frames - 1) * frame_step + length,), x.dtype)
    for k in range(frames):
        out[..., k * frame_step:k * frame_step + length] += x[..., k, :]
    return out


def normalize_ref(x, ord="euclidean", axis=None):
    norm = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=axis, keepdims=True)).astype(x.dtype)
    if axis is None:
        norm = norm.reshape((1,) * x.ndim)
    return x / norm, norm


def _fft_ref(fn):
    """numpy's transform, in TF's dtype: complex in, complex of the same precision out (numpy gives complex128)."""

    def ref(x, **kwargs):
        return fn(x, **kwargs).astype(C64 if x.dtype == C64 else np.complex128)

    return ref


def _rfft_ref(axes: tuple[int, ...]):
    def ref(x, fft_length=None):
        return np.fft.rfftn(x, s=fft_length, axes=axes).astype(C64 if x.dtype == F32 else np.complex128)

    return ref


def _irfft_ref(axes: tuple[int, ...]):
    def ref(x, fft_length=None):
        return np.fft.irfftn(x, s=fft_length, axes=axes).astype(F32 if x.dtype == C64 else np.float64)

    return ref


# -- calls through the public API with the gauge fixed (see the module docstring) -----------------------------


def _signs(got: Any, ref: np.ndarray) -> np.ndarray:
    """Per column, the sign (+-1) that turns the factor `got` into numpy's `ref`."""
    signs = np.sign(np.sum(np.real(np.asarray(got.numpy()) * np.conj(ref)), axis=-2, keepdims=True))
    return np.where(signs == 0, 1, signs).astype(ref.dtype)


def _numpy_args(args: list[Any]) -> list[np.ndarray]:
    return [np.asarray(a.numpy()) for a in args]


def _call_qr(m, args, kwargs):
    q, r = m.linalg.qr(*args, **kwargs)
    q_ref, _ = qr_ref(*_numpy_args(args), **kwargs)
    signs = _signs(q, q_ref)
    return q * m.constant(signs), r * m.constant(_t(signs))


def _call_svd(m, args, kwargs):
    s, u, v = m.linalg.svd(*args, **kwargs)
    _, u_ref, _ = svd_ref(*_numpy_args(args), **kwargs)
    signs = m.constant(_signs(u, u_ref))
    return s, u * signs, v * signs


def _call_eigh(m, args, kwargs):
    e, v = m.linalg.eigh(*args, **kwargs)
    _, v_ref = eigh_ref(*_numpy_args(args), **kwargs)
    return e, v * m.constant(_signs(v, v_ref))


# -- the table ------------------------------------------------------------------------------------------------

SPEC: dict[str, Spec] = {
    # determinants: random signs of det (slogdet's sign output) in the batch
    "linalg.det": Spec(lambda rng: (_well_conditioned(rng, (2, 3, 3)),), np.linalg.det, rtol=1e-4, atol=1e-5),
    "linalg.slogdet": Spec(lambda rng: (normal(rng, (3, 3, 3)) + 1.5 * np.eye(3, dtype=F32),), slogdet_ref,
                           rtol=1e-4, atol=1e-5),
    "linalg.logdet": Spec(lambda rng: (_spd(rng, (2, 3, 3)),), logdet_ref, rtol=1e-4, atol=1e-5),
    # Cholesky: symmetric input (tapejax symmetrizes where TF reads the lower triangle; see the row)
    "linalg.cholesky": Spec(lambda rng: (_spd(rng, (2, 3, 3)),), lambda x: np.linalg.cholesky(x),
                            rtol=1e-4, atol=1e-5),
    # noise above the diagonal of chol: TF's triangular solves read the lower triangle only
    "linalg.cholesky_solve": Spec(lambda rng: (_lower(rng, (2, 3, 3)), normal(rng, (2, 3, 2))), cholesky_solve_ref,
                                  rtol=1e-4, atol=1e-5),
    "linalg.triangular_solve": Spec(lambda rng: (_lower(rng, (2, 3, 3)), normal(rng, (2, 3, 2))),
                                    triangular_solve_ref, rtol=1e-4, atol=1e-5),
    # decompositions: gauge fixed by tf_call in the TF comparison
    "linalg.qr": Spec(lambda rng: (normal(rng, (2, 4, 3)),), qr_ref, tf_call=_call_qr, rtol=1e-4, atol=1e-5),
    "linalg.svd": Spec(lambda rng: (normal(rng, (2, 4, 3)),), svd_ref, tf_call=_call_svd, rtol=1e-4, atol=1e-5),
    # not symmetric: the upper triangle must be ignored; eigenvalues of the lower-mirrored matrices are distinct
    "linalg.eigh": Spec(lambda rng: (normal(rng, (2, 3, 3)),), eigh_ref, tf_call=_call_eigh, rtol=1e-4, atol=1e-5),
    "linalg.eigvalsh": Spec(lambda rng: (normal(rng, (2, 3, 3)),), lambda x: np.linalg.eigvalsh(x, UPLO="L"),
                            rtol=1e-4, atol=1e-5),
    "linalg.lstsq": Spec(lambda rng: (normal(rng, (2, 5, 3)), normal(rng, (2, 5, 2))), lstsq_ref,
                         rtol=1e-4, atol=1e-5),
    "linalg.pinv": Spec(lambda rng: (normal(rng, (2, 3, 4)),), lambda a: np.linalg.pinv(a), rtol=1e-4, atol=1e-5),
    # pivots well separated: the permutation is the same in every implementation
    "linalg.lu": Spec(lambda rng: (normal(rng, (2, 4, 4)),), lu_ref, rtol=1e-4, atol=1e-5),
    "linalg.expm": Spec(lambda rng: (normal(rng, (2, 3, 3)),), expm_ref, rtol=1e-4, atol=1e-5),
    # diagonals, bands, transposes
    "linalg.trace": Spec(lambda rng: (normal(rng, (2, 3, 3)),), lambda x: np.trace(x, axis1=-2, axis2=-1)),
    "linalg.diag": Spec(lambda rng: (normal(rng, (2, 3)),), diag_ref),
    "linalg.diag_part": Spec(lambda rng: (normal(rng, (2, 3, 4)),), diag_part_ref),
    "linalg.set_diag": Spec(lambda rng: (normal(rng, (2, 3, 4)), normal(rng, (2, 3))), set_diag_ref),
    "linalg.band_part": Spec(lambda rng: (normal(rng, (2, 4, 4)),), band_part_ref,
                             kwargs={"num_lower": 1, "num_upper": 0}),
    "linalg.matrix_transpose": Spec(lambda rng: (normal(rng, (2, 3, 4)),), lambda a: _t(a)),
    "linalg.adjoint": Spec(lambda rng: (_complex(rng, (2, 2, 3)),), lambda x: np.conj(_t(x))),
    "linalg.cross": Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (2, 3))), np.cross),
    "linalg.tensordot": Spec(lambda rng: (normal(rng, (2, 3, 4)), normal(rng, (4, 3, 5))),
                             lambda a, b, axes: np.tensordot(a, b, axes), kwargs={"axes": ((1, 2), (1, 0))}),
    "linalg.global_norm": Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (4,))), global_norm_ref,
                               variadic=True),
    "linalg.normalize": Spec(lambda rng: (normal(rng, (2, 3)),), normalize_ref, kwargs={"axis": 1}),
    # signal: complex in, complex out; rfft float32 -> complex64, irfft complex64 -> float32
    "signal.fft": Spec(lambda rng: (_complex(rng, (2, 4)),), _fft_ref(np.fft.fft)),
    "signal.ifft": Spec(lambda rng: (_complex(rng, (2, 4)),), _fft_ref(np.fft.ifft)),
    "signal.fft2d": Spec(lambda rng: (_complex(rng, (2, 3, 4)),), _fft_ref(np.fft.fft2)),
    "signal.ifft2d": Spec(lambda rng: (_complex(rng, (2, 3, 4)),), _fft_ref(np.fft.ifft2)),
    "signal.fft3d": Spec(lambda rng: (_complex(rng, (2, 2, 3, 4)),),
                         _fft_ref(lambda x: np.fft.fftn(x, axes=(-3, -2, -1)))),
    "signal.ifft3d": Spec(lambda rng: (_complex(rng, (2, 2, 3, 4)),),
                          _fft_ref(lambda x: np.fft.ifftn(x, axes=(-3, -2, -1)))),
    "signal.rfft": Spec(lambda rng: (normal(rng, (2, 6)),), _rfft_ref((-1,))),
    # a Hermitian-consistent spectrum (the rfft of a real signal): TF and numpy read DC and Nyquist differently
    # otherwise (see the irfft extra cases)
    "signal.irfft": Spec(lambda rng: (np.fft.rfft(normal(rng, (2, 6))).astype(C64),), _irfft_ref((-1,))),
    "signal.rfft2d": Spec(lambda rng: (normal(rng, (2, 3, 4)),), _rfft_ref((-2, -1))),
    "signal.irfft2d": Spec(lambda rng: (np.fft.rfft2(normal(rng, (2, 3, 4))).astype(C64),), _irfft_ref((-2, -1))),
    "signal.fftshift": Spec(lambda rng: (normal(rng, (2, 5)),), lambda x: np.fft.fftshift(x)),
    "signal.ifftshift": Spec(lambda rng: (normal(rng, (2, 5)),), lambda x, axes: np.fft.ifftshift(x, axes),
                             kwargs={"axes": 1}),
    "signal.frame": Spec(lambda rng: (normal(rng, (2, 9)),), frame_ref, kwargs={"frame_length": 4, "frame_step": 3}),
    "signal.overlap_and_add": Spec(lambda rng: (normal(rng, (2, 3, 4)),), overlap_and_add_ref,
                                   kwargs={"frame_step": 3}),
}


EXTRA_CASES: list[tuple[str, str, Spec]] = [
    ("signal.frame[pad_end_axis]", "signal.frame",
     Spec(lambda rng: (normal(rng, (2, 10, 3)),), frame_ref,
          kwargs={"frame_length": 4, "frame_step": 3, "pad_end": True, "pad_value": -1.5, "axis": 1})),
    ("signal.overlap_and_add[gaps]", "signal.overlap_and_add",
     Spec(lambda rng: (normal(rng, (3, 2)),), overlap_and_add_ref, kwargs={"frame_step": 3})),
    ("linalg.qr[wide]", "linalg.qr",
     Spec(lambda rng: (normal(rng, (3, 5)),), qr_ref, tf_call=_call_qr, rtol=1e-4, atol=1e-5)),
    ("linalg.svd[no_uv]", "linalg.svd",
     Spec(lambda rng: (normal(rng, (2, 3, 4)),), svd_ref, kwargs={"compute_uv": False}, rtol=1e-4, atol=1e-5)),
    ("linalg.triangular_solve[upper_adjoint]", "linalg.triangular_solve",
     Spec(lambda rng: (_t(_lower(rng, (2, 3, 3))), normal(rng, (2, 3, 2))), triangular_solve_ref,
          kwargs={"lower": False, "adjoint": True}, rtol=1e-4, atol=1e-5)),
    # TF broadcasts the batch dimensions of matrix and rhs
    ("linalg.triangular_solve[broadcast]", "linalg.triangular_solve",
     Spec(lambda rng: (_lower(rng, (3, 3)), normal(rng, (2, 3, 2))), triangular_solve_ref, rtol=1e-4, atol=1e-5)),
    ("linalg.lstsq[underdetermined]", "linalg.lstsq",
     Spec(lambda rng: (normal(rng, (3, 5)), normal(rng, (3, 2))), lstsq_ref, kwargs={"l2_regularizer": 0.5},
          rtol=1e-4, atol=1e-5)),
    ("linalg.lstsq[slow]", "linalg.lstsq",
     Spec(lambda rng: (normal(rng, (5, 3)), normal(rng, (5, 2))), lstsq_ref, kwargs={"fast": False},
          rtol=1e-4, atol=1e-5)),
    ("linalg.det[complex64]", "linalg.det",
     Spec(lambda rng: (_complex(rng, (3, 3)),), np.linalg.det, rtol=1e-4, atol=1e-5)),
    ("linalg.trace[int32]", "linalg.trace",
     fixed(np.arange(9, dtype=np.int32).reshape(3, 3), ref=lambda x: np.trace(x).astype(np.int32))),
    ("linalg.diag[k]", "linalg.diag",
     Spec(lambda rng: (normal(rng, (2, 3)),), diag_ref, kwargs={"k": 1})),
    ("linalg.diag[shape]", "linalg.diag",
     Spec(lambda rng: (normal(rng, (3,)),), diag_ref,
          kwargs={"k": -1, "num_rows": 4, "num_cols": 3, "padding_value": 9})),
    ("linalg.diag_part[k]", "linalg.diag_part", Spec(lambda rng: (normal(rng, (2, 3, 4)),), diag_part_ref,
                                                     kwargs={"k": 1})),
    # bands k=(lower, upper), packed [num_diags, max_len] with TF's default align and another
    ("linalg.diag_part[band]", "linalg.diag_part",
     Spec(lambda rng: (normal(rng, (2, 3, 4)),), diag_part_ref, kwargs={"k": (-1, 2), "padding_value": 7})),
    ("linalg.diag_part[band_left_right]", "linalg.diag_part",
     Spec(lambda rng: (normal(rng, (4, 3)),), diag_part_ref, kwargs={"k": (-2, 1), "align": "LEFT_RIGHT"})),
    ("linalg.diag[band]", "linalg.diag",
     Spec(lambda rng: (normal(rng, (2, 3, 3)),), diag_ref, kwargs={"k": (-1, 1)})),
    ("linalg.diag[band_shape]", "linalg.diag",
     Spec(lambda rng: (normal(rng, (2, 3)),), diag_ref,
          kwargs={"k": (0, 1), "num_rows": 3, "num_cols": 4, "align": "LEFT_LEFT"})),
    ("linalg.set_diag[band]", "linalg.set_diag",
     Spec(lambda rng: (normal(rng, (2, 3, 4)), normal(rng, (2, 3, 3))), set_diag_ref,
          kwargs={"k": (-1, 1), "align": "RIGHT_RIGHT"})),
    ("linalg.set_diag[k]", "linalg.set_diag",
     Spec(lambda rng: (normal(rng, (2, 3, 4)), normal(rng, (2, 2))), set_diag_ref, kwargs={"k": -1})),
    ("linalg.band_part[upper]", "linalg.band_part",
     Spec(lambda rng: (normal(rng, (3, 4)),), band_part_ref, kwargs={"num_lower": -1, "num_upper": 1})),
    ("linalg.matrix_transpose[conjugate]", "linalg.matrix_transpose",
     Spec(lambda rng: (_complex(rng, (2, 3)),), lambda a, conjugate: np.conj(_t(a)), kwargs={"conjugate": True})),
    ("linalg.tensordot[int_axes]", "linalg.tensordot",
     Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (3, 4))), lambda a, b, axes: np.tensordot(a, b, axes),
          kwargs={"axes": 1})),
    ("linalg.normalize[all]", "linalg.normalize", Spec(lambda rng: (normal(rng, (2, 3)),), normalize_ref)),
    ("signal.rfft[crop]", "signal.rfft",
     Spec(lambda rng: (normal(rng, (2, 6)),), _rfft_ref((-1,)), kwargs={"fft_length": (4,)})),
    ("signal.rfft[pad]", "signal.rfft",
     Spec(lambda rng: (normal(rng, (2, 6)),), _rfft_ref((-1,)), kwargs={"fft_length": (9,)})),
    ("signal.irfft[odd]", "signal.irfft",
     Spec(lambda rng: (np.fft.rfft(normal(rng, (2, 5))).astype(C64),), _irfft_ref((-1,)),
          kwargs={"fft_length": (5,)})),
    ("signal.fft[complex128]", "signal.fft",
     Spec(lambda rng: (_complex(rng, (3,)).astype(np.complex128),), _fft_ref(np.fft.fft))),
    ("signal.rfft[float64]", "signal.rfft",
     Spec(lambda rng: (normal(rng, (4,)).astype(np.float64),), _rfft_ref((-1,)))),
]
