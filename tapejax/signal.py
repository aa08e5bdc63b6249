"""tf.signal: Fourier transforms, framing, windows, short-time transforms and mel weights (tapejax/ops/signal.py)."""

from tapejax.ops.signal import fft as fft
from tapejax.ops.signal import ifft as ifft
from tapejax.ops.signal import fft2d as fft2d
from tapejax.ops.signal import ifft2d as ifft2d
from tapejax.ops.signal import fft3d as fft3d
from tapejax.ops.signal import ifft3d as ifft3d
from tapejax.ops.signal import rfft as rfft
from tapejax.ops.signal import irfft as irfft
from tapejax.ops.signal import rfft2d as rfft2d
from tapejax.ops.signal import irfft2d as irfft2d
from tapejax.ops.signal import fftshift as fftshift
from tapejax.ops.signal import ifftshift as ifftshift
from tapejax.ops.signal import frame as frame
from tapejax.ops.signal import overlap_and_add as overlap_and_add
from tapejax.ops.signal import hann_window as hann_window
from tapejax.ops.signal import hamming_window as hamming_window
from tapejax.ops.signal import stft as stft
from tapejax.ops.signal import inverse_stft as inverse_stft
from tapejax.ops.signal import inverse_stft_window_fn as inverse_stft_window_fn
from tapejax.ops.signal import linear_to_mel_weight_matrix as linear_to_mel_weight_matrix
