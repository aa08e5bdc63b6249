"""tf.signal: discrete Fourier transforms over the innermost dimensions, framing, windows and short-time transforms.

The transforms and their derivatives are JAX's. TF's gradient of a complex function is the conjugate of JAX's
cotangent; the tape applies that convention to every op (tapejax/_src/problem.py), so the rows need nothing of
their own for it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes, errors, static_values
from tapejax._src.convert import tf_type_string
from tapejax._src.registry import abstract_check, op
from tapejax._src.tensor import OPERATORS, EagerTensor, Tensor
from tapejax.ops.array import convert_to_tensor

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


# -- framing: tf.signal.frame and overlap_and_add, the two halves of a short-time transform ----------------------

def _frame_count(length: int, frame_length: int, frame_step: int, pad_end: bool) -> int:
    if pad_end:  # every sample starts or is inside a frame: ceil(length / frame_step) frames
        return -(-length // frame_step)
    return max(0, 1 + (length - frame_length) // frame_step)


def _starts(frames: int, frame_length: int, frame_step: int) -> np.ndarray:
    """The sample index of each frame's each element: [frames, frame_length] (host constants, not traced)."""
    return frame_step * np.arange(frames)[:, None] + np.arange(frame_length)[None, :]


@abstract_check
def _check_frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1):
    if signal.ndim < 1:
        raise ValueError(f"Shape {tuple(signal.shape)} must have rank at least 1")
    if not -signal.ndim <= axis < signal.ndim:  # TF's own error here is a bare IndexError from a Python list
        raise IndexError(f"axis {axis} is out of range for a signal of rank {signal.ndim}")
    if frame_step == 0:
        raise errors.invalid_argument("FloorDiv", "Integer division by zero")
    if frame_length < 0:
        raise errors.invalid_argument("Range", f"frame_length must be non-negative, got {frame_length}")


def _frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1):
    axis %= signal.ndim
    length = signal.shape[axis]
    frames = _frame_count(length, frame_length, frame_step, pad_end)
    if pad_end:  # the last frame filled up with pad_value
        short = max(0, (frames - 1) * frame_step + frame_length - length) if frames else 0
        widths = [(0, short if d == axis else 0) for d in range(signal.ndim)]
        signal = jnp.pad(signal, widths, constant_values=jnp.asarray(pad_value, signal.dtype))
    return jnp.take(signal, _starts(frames, frame_length, frame_step), axis=axis)


_FRAME_DOC = """Same semantics as tf.signal.frame: overlapping frames of `frame_length` samples, `frame_step` apart,
along `axis`, which becomes two axes [frames, frame_length].

Without `pad_end`, only whole frames (`1 + (n - frame_length) // frame_step`, at least 0); with it,
`ceil(n / frame_step)` frames, the last ones completed with `pad_value`.

>>> import tapejax as tf
>>> print(tf.signal.frame([1.0, 2.0, 3.0, 4.0, 5.0], frame_length=3, frame_step=2))
tf.Tensor(
[[1. 2. 3.]
 [3. 4. 5.]], shape=(2, 3), dtype=float32)

Differences from TensorFlow: an `axis` out of range is an IndexError that says so (TF's is a bare "list index out
of range"), and a negative `frame_length` an InvalidArgumentError naming it.
"""
frame = op("signal.frame", _frame, static=("frame_length", "frame_step", "pad_end", "pad_value", "axis"),
           op_type="Frame", check=_check_frame, doc=_FRAME_DOC)


@abstract_check
def _check_overlap_and_add(signal, frame_step):
    if signal.ndim < 2:
        raise ValueError(f"Shape {tuple(signal.shape)} must have rank at least 2")
    if frame_step <= 0:
        raise errors.invalid_argument("Pad", f"frame_step must be positive, got {frame_step}")


def _overlap_and_add(signal, frame_step):
    frames, frame_length = signal.shape[-2:]
    length = max(0, (frames - 1) * frame_step + frame_length)
    out = jnp.zeros((*signal.shape[:-2], length), signal.dtype)
    return out.at[..., _starts(frames, frame_length, frame_step)].add(signal)


overlap_and_add = op("signal.overlap_and_add", _overlap_and_add, static=("frame_step",), op_type="OverlapAndAdd",
                     check=_check_overlap_and_add)


# -- windows and short-time transforms: Python compositions of the rows, as in TF -------------------------------

def _window(title: str, a: float, b: float):
    def window(window_length, periodic=True, dtype=dtypes.float32, name=None) -> Tensor:
        dtype = dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"dtype must be a floating point type. Found {dtype}")
        n = int(static_values.python_int(window_length, title, "window_length"))
        kind = dtype.as_numpy_dtype
        if n == 1:
            return EagerTensor(jax.device_put(np.ones((1,), kind)))
        # TF's raised cosine: the period is n for a periodic window of even length, else n - 1 (an odd-length
        # window is the same either way). Computed in `dtype`, as TF does (a float16 window rounds as TF's), and
        # on the host: no compile per length.
        period = n if periodic and n % 2 == 0 else n - 1
        angles = kind(2.0 * np.pi) * np.arange(n).astype(kind) / kind(period)
        return EagerTensor(jax.device_put(kind(a) - kind(b) * np.cos(angles)))

    window.__name__ = window.__qualname__ = title
    window.__doc__ = (f"Same semantics as tf.signal.{title}: the raised cosine `{a} - {b} * cos(2 pi k / N)`, "
                      "k = 0..window_length - 1, with N = window_length for a periodic window of even length and "
                      "window_length - 1 otherwise (TF's rule: an odd-length periodic window is the symmetric one).")
    return window


hann_window = _window("hann_window", 0.5, 0.5)
hamming_window = _window("hamming_window", 0.54, 0.46)


def _enclosing_power_of_two(n: int) -> int:
    return 1 << (n - 1).bit_length() if n > 1 else 1


def _lengths_of(op_name: str, frame_length, frame_step, fft_length) -> tuple[int, int, int]:
    frame_length = int(static_values.python_int(frame_length, op_name, "frame_length"))
    frame_step = int(static_values.python_int(frame_step, op_name, "frame_step"))
    fft_length = (_enclosing_power_of_two(frame_length) if fft_length is None
                  else int(static_values.python_int(fft_length, op_name, "fft_length")))
    return frame_length, frame_step, fft_length


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False,
         name=None) -> Tensor:
    """Same semantics as tf.signal.stft: the rfft of each windowed frame of `signals` ([..., samples], float32 or
    float64), [..., frames, fft_length // 2 + 1] (complex64 or complex128).

    `fft_length` defaults to the smallest power of two at least `frame_length`; `window_fn(frame_length,
    dtype=...)` makes the window (None: no window). Differentiable: each step is a recorded op.

    >>> import tapejax as tf
    >>> print(tf.signal.stft(tf.ones([8]), frame_length=4, frame_step=4, window_fn=None))
    tf.Tensor(
    [[4.+0.j 0.+0.j 0.+0.j]
     [4.+0.j 0.+0.j 0.+0.j]], shape=(2, 3), dtype=complex64)
    """
    signals = convert_to_tensor(signals)
    frame_length, frame_step, fft_length = _lengths_of("stft", frame_length, frame_step, fft_length)
    framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(frame_length, dtype=framed.dtype)
    return rfft(framed, [fft_length])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None) -> Tensor:
    """Same semantics as tf.signal.inverse_stft: the irfft of each frame of `stfts` ([..., frames, bins]), cut or
    zero-padded to `frame_length`, windowed and overlapped-and-added: [..., (frames - 1) * frame_step +
    frame_length]. With `window_fn=tf.signal.inverse_stft_window_fn(frame_step)` it inverts `stft`'s default
    window where the frames overlap fully."""
    stfts = convert_to_tensor(stfts)
    if stfts.shape.rank is not None and stfts.shape.rank < 2:
        raise ValueError(f"Shape {tuple(stfts.shape)} must have rank at least 2")
    frame_length, frame_step, fft_length = _lengths_of("inverse_stft", frame_length, frame_step, fft_length)
    real_frames = irfft(stfts, [fft_length])
    if frame_length <= fft_length:
        real_frames = real_frames[..., :frame_length]
    else:
        real_frames = OPERATORS["pad"](real_frames, [[0, 0]] * (real_frames.shape.rank - 1)
                                       + [[0, frame_length - fft_length]])
    if window_fn is not None:
        real_frames = real_frames * window_fn(frame_length, dtype=real_frames.dtype)
    return overlap_and_add(real_frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """Same semantics as tf.signal.inverse_stft_window_fn: a window function for `inverse_stft` that undoes
    `forward_window_fn`: the forward window divided by the sum of its squares over the frames overlapping each
    sample."""
    frame_step = int(static_values.python_int(frame_step, "inverse_stft_window_fn", "frame_step"))

    def window_fn(frame_length, dtype=dtypes.float32) -> Tensor:
        forward = forward_window_fn(frame_length, dtype=dtype)
        squares = np.square(np.asarray(forward.numpy(), np.float64))
        overlaps = -(-len(squares) // frame_step)
        padded = np.pad(squares, (0, overlaps * frame_step - len(squares)))
        # every sample meets the windows shifted by multiples of frame_step: the sum of their squares
        denominator = np.tile(padded.reshape(overlaps, frame_step).sum(axis=0), overlaps)[:len(squares)]
        return forward / EagerTensor(jax.device_put(denominator.astype(forward.dtype.as_numpy_dtype)))

    return window_fn


_MEL_BREAK_HZ, _MEL_HIGH_Q = 700.0, 1127.0


def _mel(hertz: np.ndarray) -> np.ndarray:
    return _MEL_HIGH_Q * np.log1p(hertz / _MEL_BREAK_HZ)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0, dtype=dtypes.float32,
                                name=None) -> Tensor:
    """Same semantics as tf.signal.linear_to_mel_weight_matrix: [num_spectrogram_bins, num_mel_bins] weights
    that turn a linear spectrogram (bins from 0 to sample_rate / 2) into `num_mel_bins` triangular bands, evenly
    spaced on the HTK mel scale (1127 ln(1 + f / 700)) between the two edges; the DC bin gets no weight.

    TF's argument checks, as ValueError, in TF's order. Computed on the host in float64, then cast to `dtype`.
    """
    num_mel_bins = int(static_values.python_int(num_mel_bins, "linear_to_mel_weight_matrix", "num_mel_bins"))
    bins = int(static_values.python_int(num_spectrogram_bins, "linear_to_mel_weight_matrix",
                                        "num_spectrogram_bins"))
    rate, lower, upper = (float(static_values.python_value(v, "linear_to_mel_weight_matrix", arg))
                          if isinstance(v, Tensor) else float(v)
                          for v, arg in ((sample_rate, "sample_rate"), (lower_edge_hertz, "lower_edge_hertz"),
                                         (upper_edge_hertz, "upper_edge_hertz")))
    dtype = dtypes.as_dtype(dtype)
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower >= upper:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz} >= upper_edge_hertz {upper_edge_hertz}")
    if rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if upper > rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). Got "
                         f"{upper_edge_hertz} for sample_rate: {sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")
    bin_mels = _mel(np.linspace(0.0, rate / 2, bins)[1:])[:, None]  # the DC bin is left out, and zero below
    edges = np.linspace(_mel(np.float64(lower)), _mel(np.float64(upper)), num_mel_bins + 2)
    low, center, high = edges[:-2], edges[1:-1], edges[2:]
    rising, falling = (bin_mels - low) / (center - low), (high - bin_mels) / (high - center)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    weights = np.concatenate([np.zeros((1, num_mel_bins)), weights])
    return EagerTensor(jax.device_put(weights.astype(dtype.as_numpy_dtype)))
