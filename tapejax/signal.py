"""tf.signal: Fourier transforms (rows in tapejax/ops/signal.py)."""

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
