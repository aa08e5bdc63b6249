"""tf.signal's short-time transforms without TensorFlow: against numpy's FFT of hand-made frames, the window's
formula, exact reconstruction, the mel matrix's triangles, JAX's gradient, and a compiled training step.
(tests/compat/test_signal_vs_tf.py compares them with TensorFlow.)"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def _hann(n, periodic=True):
    period = n if periodic and n % 2 == 0 else n - 1
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / period)


def test_stft_is_the_rfft_of_windowed_frames():
    x = np.random.default_rng(0).normal(size=(3, 70))
    got = tf.signal.stft(x, frame_length=20, frame_step=9, fft_length=32).numpy()
    frames = np.stack([x[:, s:s + 20] for s in range(0, 70 - 20 + 1, 9)], axis=1)
    np.testing.assert_allclose(got, np.fft.rfft(frames * _hann(20), 32), rtol=1e-10, atol=1e-12)
    assert got.dtype == np.complex128 and got.shape == (3, 6, 17)


@pytest.mark.parametrize("n", [2, 7, 8])
def test_windows_follow_the_raised_cosine(n):
    for periodic in (True, False):
        np.testing.assert_allclose(tf.signal.hann_window(n, periodic, tf.float64).numpy(), _hann(n, periodic),
                                   atol=1e-15)
    symmetric = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(n) / (n - 1))
    np.testing.assert_allclose(tf.signal.hamming_window(n, periodic=False, dtype=tf.float64).numpy(), symmetric,
                               atol=1e-15)


@pytest.mark.parametrize("frame_length, frame_step", [(16, 4), (15, 5), (12, 3)])
def test_inverse_stft_with_its_window_fn_reconstructs_the_signal(frame_length, frame_step):
    x = np.random.default_rng(1).normal(size=(2, 96)).astype(np.float32)
    spectrum = tf.signal.stft(x, frame_length, frame_step)
    back = tf.signal.inverse_stft(spectrum, frame_length, frame_step,
                                  window_fn=tf.signal.inverse_stft_window_fn(frame_step)).numpy()
    inside = slice(frame_length, back.shape[-1] - frame_length)  # where every sample is covered fully
    np.testing.assert_allclose(back[:, inside], x[:, inside], atol=1e-5)


def test_frame_then_overlap_and_add_of_disjoint_frames_is_the_signal():
    x = np.arange(24, dtype=np.float32).reshape(2, 12)
    frames = tf.signal.frame(x, frame_length=4, frame_step=4)
    np.testing.assert_array_equal(tf.signal.overlap_and_add(frames, 4).numpy(), x)


def test_mel_weights_are_unit_triangles_on_the_mel_scale():
    weights = tf.signal.linear_to_mel_weight_matrix(10, 513, 16000, 100.0, 7000.0, dtype=tf.float64).numpy()
    assert weights.shape == (513, 10) and not weights[0].any()  # the DC bin has no weight
    assert weights.min() >= 0 and weights.max() <= 1
    mels = 1127 * np.log1p(np.linspace(0, 8000, 513) / 700)
    centers = np.linspace(1127 * np.log1p(100 / 700), 1127 * np.log1p(7000 / 700), 12)[1:-1]
    for band in range(10):  # each band rises to 1 at its center and is zero beyond its neighbours' centers
        peak = np.argmax(weights[:, band])
        assert abs(mels[peak] - centers[band]) <= np.diff(mels).max()
        spacing = centers[1] - centers[0]
        outside = (mels < centers[band] - spacing) | (mels > centers[band] + spacing)
        assert not weights[outside, band].any()


def test_the_tape_gradient_of_a_spectrogram_loss_is_jaxs():
    x = np.random.default_rng(2).normal(size=(40,)).astype(np.float32)
    source = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(source)
        loss = tf.reduce_sum(tf.abs(tf.signal.stft(source, 16, 8)) ** 2)
    got = tape.gradient(loss, source).numpy()

    def jax_loss(s):
        frames = jnp.stack([s[k:k + 16] for k in range(0, 40 - 16 + 1, 8)])
        return jnp.sum(jnp.abs(jnp.fft.rfft(frames * jnp.asarray(_hann(16), jnp.float32))) ** 2)

    np.testing.assert_allclose(got, jax.grad(jax_loss)(jnp.asarray(x)), rtol=1e-4, atol=1e-5)


def test_a_spectrogram_model_trains_in_tf_function():
    w = tf.Variable(np.zeros((9, 1), np.float32))
    x = np.random.default_rng(3).normal(size=(4, 64)).astype(np.float32)
    y = np.ones((4, 1), np.float32)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            features = tf.reduce_mean(tf.abs(tf.signal.stft(x, 16, 8)), axis=1)
            loss = tf.reduce_mean((tf.matmul(features, w) - y) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    losses = [float(step()) for _ in range(5)]
    assert losses[-1] < losses[0]
