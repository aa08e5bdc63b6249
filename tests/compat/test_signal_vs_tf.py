"""tf.signal's framing, windows and short-time transforms against TensorFlow: values, dtypes and shapes over their
parameters (fft_length shorter and longer than the frame, pad_end, no window, batches, float64), tape gradients
through `stft` and `inverse_stft`, the mel weight matrix and TF's errors for bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same, assert_same_outcome  # noqa: E402


def _signal(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("window", ["hann_window", "hamming_window"])
@pytest.mark.parametrize("length", [0, 1, 2, 5, 6, 16])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_windows(window, length, periodic, dtype):
    ours = getattr(tapejax.signal, window)(length, periodic=periodic, dtype=getattr(tapejax, dtype))
    theirs = getattr(tf_real.signal, window)(length, periodic=periodic, dtype=getattr(tf_real, dtype))
    assert_same(ours, theirs, rtol=2e-3 if dtype == "float16" else 1e-5)


STFT_CASES = {
    "default": ((2, 50), dict(frame_length=16, frame_step=8)),
    "fft_longer": ((2, 50), dict(frame_length=16, frame_step=8, fft_length=20)),
    "fft_shorter": ((50,), dict(frame_length=16, frame_step=8, fft_length=8)),
    "odd_frame": ((3, 1, 40), dict(frame_length=15, frame_step=7)),
    "pad_end": ((2, 50), dict(frame_length=16, frame_step=8, pad_end=True)),
    "no_window": ((2, 50), dict(frame_length=16, frame_step=8, window_fn=None)),
    "hamming": ((2, 50), dict(frame_length=12, frame_step=5, window_fn="hamming_window")),
    "audio_tutorial": ((16000,), dict(frame_length=255, frame_step=128)),
}


def _kwargs(m, kwargs):
    if isinstance(kwargs.get("window_fn"), str):
        kwargs = dict(kwargs, window_fn=getattr(m.signal, kwargs["window_fn"]))
    return kwargs


@pytest.mark.parametrize("case", list(STFT_CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stft_and_its_gradient(case, dtype):
    shape, kwargs = STFT_CASES[case]
    x = _signal(shape, dtype)
    results = []
    for m in (tapejax, tf_real):
        source = m.constant(x)
        with m.GradientTape() as tape:
            tape.watch(source)
            spectrum = m.signal.stft(source, **_kwargs(m, kwargs))
            loss = m.reduce_sum(m.abs(spectrum) ** 2)
        try:
            results.append((spectrum, tape.gradient(loss, source)))
        except tf_real.errors.InvalidArgumentError:
            results.append((spectrum, "InvalidArgumentError"))
    # float32 sums of 16,000 squares: the gradient's last bits differ between the two FFTs
    rtol = 1e-9 if dtype == np.float64 else 1e-3 if case == "audio_tutorial" else 1e-4
    assert_same(results[0][0], results[1][0], "stft", rtol=rtol)
    if case == "fft_shorter":  # TF's RFFT gradient fails when fft_length crops the frames (as for tf.signal.rfft)
        assert results[1][1] == "InvalidArgumentError" and results[0][1] is not None
    else:
        assert_same(results[0][1], results[1][1], "gradient", rtol=rtol)


INVERSE_CASES = {
    "default": dict(frame_length=16, frame_step=8),
    "fft_longer": dict(frame_length=16, frame_step=8, fft_length=32),
    "frame_longer": dict(frame_length=20, frame_step=8, fft_length=16),
    "no_window": dict(frame_length=16, frame_step=4, window_fn=None),
}


@pytest.mark.parametrize("case", list(INVERSE_CASES))
def test_inverse_stft_and_its_gradient(case):
    kwargs = INVERSE_CASES[case]
    spectrum = np.fft.rfft(_signal((2, 5, 16)), axis=-1).astype(np.complex64)
    results = []
    for m in (tapejax, tf_real):
        source = m.constant(spectrum)
        with m.GradientTape() as tape:
            tape.watch(source)
            signal = m.signal.inverse_stft(source, **kwargs)
            loss = m.reduce_sum(signal * np.linspace(-1, 1, signal.shape[-1]).astype(np.float32))
        results.append((signal, tape.gradient(loss, source)))
    assert_same(results[0][0], results[1][0], "inverse_stft", rtol=1e-4)
    assert_same(results[0][1], results[1][1], "gradient", rtol=1e-4)


@pytest.mark.parametrize("frame_length, frame_step", [(16, 8), (16, 4), (15, 5), (8, 3)])
def test_inverse_stft_window_fn_reconstructs_as_in_tf(frame_length, frame_step):
    x = _signal((3, 64))
    outs = []
    for m in (tapejax, tf_real):
        spectrum = m.signal.stft(x, frame_length, frame_step)
        outs.append(m.signal.inverse_stft(spectrum, frame_length, frame_step,
                                          window_fn=m.signal.inverse_stft_window_fn(frame_step)))
    assert_same(outs[0], outs[1], rtol=1e-4)


MEL_CASES = [
    {},
    dict(num_mel_bins=40, num_spectrogram_bins=257, sample_rate=16000, lower_edge_hertz=20.0,
         upper_edge_hertz=8000.0),
    dict(num_mel_bins=8, num_spectrogram_bins=33, sample_rate=22050, lower_edge_hertz=0.0, upper_edge_hertz=11025.0),
    dict(num_spectrogram_bins=2),
    dict(num_mel_bins=3, num_spectrogram_bins=1),
    dict(dtype="float64"),
    dict(num_mel_bins=0), dict(lower_edge_hertz=-1.0), dict(lower_edge_hertz=4000.0, upper_edge_hertz=3000.0),
    dict(upper_edge_hertz=5000.0), dict(sample_rate=0), dict(sample_rate=0, lower_edge_hertz=4000.0,
                                                             upper_edge_hertz=3000.0),
    dict(dtype="int32"), dict(num_mel_bins=0, dtype="int32"),
]


@pytest.mark.parametrize("kwargs", MEL_CASES, ids=[str(k) for k in MEL_CASES])
def test_linear_to_mel_weight_matrix(kwargs):
    def snippet(m):
        args = dict(kwargs, dtype=getattr(m, kwargs["dtype"])) if "dtype" in kwargs else kwargs
        return m.signal.linear_to_mel_weight_matrix(**args)

    ours, theirs = _outcome(snippet, tapejax), _outcome(snippet, tf_real)
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs) and str(ours) == str(theirs)
    else:  # weights in [0, 1]: tapejax computes them in float64, TF in the dtype (float32 differs by ~1e-6)
        assert ours.dtype.name == theirs.dtype.name and tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=1e-5)


def _outcome(snippet, m):
    try:
        return snippet(m)
    except Exception as e:  # noqa: BLE001 (the exception is the outcome)
        return e


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # TF's own Python divides by a zero step
@pytest.mark.parametrize("snippet", [
    lambda m: m.signal.frame(np.float32(3.0), 3, 1),
    lambda m: m.signal.frame(np.arange(10, dtype=np.float32), 3, 0),
    lambda m: m.signal.frame(np.arange(10, dtype=np.float32), 3, -1),
    lambda m: m.signal.frame(np.arange(10, dtype=np.float32), 0, 1),
    lambda m: m.signal.frame(np.arange(10), 4, 3, pad_end=True),
    lambda m: m.signal.overlap_and_add(np.ones(4, np.float32), 2),
    lambda m: m.signal.overlap_and_add(np.ones((3, 4), np.float32), 0),
    lambda m: m.signal.overlap_and_add(np.ones((3, 4), np.int32), 2),
    lambda m: m.signal.stft(np.arange(20, dtype=np.int32), 8, 4),
    lambda m: m.signal.stft(np.float32(1.0), 8, 4),
    lambda m: m.signal.inverse_stft(np.ones((3, 5), np.float32), 8, 4),
    lambda m: m.signal.hann_window(4, dtype=m.int32),
], ids=["frame_scalar", "frame_step_0", "frame_step_negative", "frame_length_0", "frame_int_pad_end",
        "overlap_rank_1", "overlap_step_0", "overlap_int", "stft_int", "stft_scalar", "inverse_stft_real",
        "window_int"])
def test_edges_and_bad_arguments(snippet):
    assert_same_outcome(snippet, tapejax, tf_real)


def test_stft_in_tf_function():
    x = _signal((2, 50))
    ours = tapejax.function(lambda s: tapejax.signal.stft(s, 16, 8))(tapejax.constant(x))
    assert_same(ours, tf_real.signal.stft(x, 16, 8), rtol=1e-4)
