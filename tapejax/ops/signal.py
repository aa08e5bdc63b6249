"""tf.signal: discrete Fourier transforms over the innermost dimensions, one row each.

The transforms and their derivatives are JAX's. TF's gradient of a complex function is the conjugate of JAX's
cotangent; the tape applies that convention to every op (tapejax/_src/problem.py), so the rows need nothing of
their own for it.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tapejax._src import errors
from tapejax._src.convert import tf_type_string
from tapejax._src.registry import abstract_check, op

_COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _complex_only(op_type: str):
    """TF registers FFT kernels for complex64 and complex128 only: a float input is InvalidArgumentError."""

    @abstract_check
    def check(input):
        if input.dtype not in _COMPLEX:
            raise errors.invalid_argument(
                op_type, f"Value for attr 'Tcomplex' of {tf_type_string(input.dtype)} is not in the list of "
                         "allowed values: complex64, complex128")

    return check


def _dtype_name(array) -> str:
    return "tf." + np.dtype(array.dtype).name


def _check_rfft(input_tensor, fft_length=None):
    # TF checks the dtype in Python, before the op: ValueError.
    if input_tensor.dtype not in _REAL:
        raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got a {_dtype_name(input_tensor)} tensor")


def _check_irfft(input_tensor, fft_length=None):
    if input_tensor.dtype not in _COMPLEX:
        raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got a {_dtype_name(input_tensor)} "
                         "tensor")


def _lengths(fft_length, rank: int) -> tuple[int, ...] | None:
    """TF's fft_length (a 1-D int tensor of `rank` entries) as a tuple, or None for TF's default."""
    if fft_length is None:
        return None
    lengths = (fft_length,) if isinstance(fft_length, int) else tuple(fft_length)
    if len(lengths) != rank:
        raise ValueError(f"fft_length must have {rank} element(s), got {list(lengths)}")
    return lengths


def _axes(rank: int) -> tuple[int, ...]:
    return tuple(range(-rank, 0))


def _rfft(rank: int):
    def impl(input_tensor, fft_length=None):
        # Each transformed dimension is cropped or zero-padded to fft_length, as in TF.
        return jnp.fft.rfftn(input_tensor, s=_lengths(fft_length, rank), axes=_axes(rank))

    return impl


def _irfft(rank: int):
    def impl(input_tensor, fft_length=None):
        # Default fft_length: the inner dimensions as they are, and 2 * (n - 1) for the innermost, as in TF.
        return jnp.fft.irfftn(input_tensor, s=_lengths(fft_length, rank), axes=_axes(rank))

    return impl


fft = op("signal.fft", lambda input: jnp.fft.fft(input), op_type="FFT", check=_complex_only("FFT"))
ifft = op("signal.ifft", lambda input: jnp.fft.ifft(input), op_type="IFFT", check=_complex_only("IFFT"))
fft2d = op("signal.fft2d", lambda input: jnp.fft.fft2(input), op_type="FFT2D", check=_complex_only("FFT2D"))
ifft2d = op("signal.ifft2d", lambda input: jnp.fft.ifft2(input), op_type="IFFT2D", check=_complex_only("IFFT2D"))
fft3d = op("signal.fft3d", lambda input: jnp.fft.fftn(input, axes=_axes(3)), op_type="FFT3D",
           check=_complex_only("FFT3D"))
ifft3d = op("signal.ifft3d", lambda input: jnp.fft.ifftn(input, axes=_axes(3)), op_type="IFFT3D",
            check=_complex_only("IFFT3D"))
_RFFT_DOC = """Same semantics as tf.signal.rfft; computed with jnp.fft.rfftn over the innermost dimension.

float32 gives complex64 and float64 complex128; fft_length crops or zero-pads the input, as in TF.

>>> import tapejax as tf
>>> print(tf.signal.rfft([1.0, 0.0, 0.0, 0.0]))
tf.Tensor([1.+0.j 1.+0.j 1.+0.j], shape=(3,), dtype=complex64)

Differences from TensorFlow: fft_length may also be a Python int (TF: a 1-D tensor or list only). With an
fft_length that crops the input, the gradient is zero on the cropped samples (TF's RFFT gradient raises).
"""
rfft = op("signal.rfft", _rfft(1), static=("fft_length",), op_type="RFFT", check=_check_rfft, doc=_RFFT_DOC)
irfft = op("signal.irfft", _irfft(1), static=("fft_length",), op_type="IRFFT", check=_check_irfft)
rfft2d = op("signal.rfft2d", _rfft(2), static=("fft_length",), op_type="RFFT2D", check=_check_rfft)
irfft2d = op("signal.irfft2d", _irfft(2), static=("fft_length",), op_type="IRFFT2D", check=_check_irfft)
fftshift = op("signal.fftshift", lambda x, axes=None: jnp.fft.fftshift(x, axes), static=("axes",),
              op_type="Roll")
ifftshift = op("signal.ifftshift", lambda x, axes=None: jnp.fft.ifftshift(x, axes), static=("axes",),
               op_type="Roll")
