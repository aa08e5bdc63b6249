"""tf.audio's WAV codecs without TensorFlow: against Python's `wave` module, and in a tf.data pipeline that turns
files into spectrograms, as TF's audio tutorial does. (tests/compat/test_audio_vs_tf.py compares with TF.)"""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest

import tapejax as tf


def _wav(samples: np.ndarray, rate: int = 16000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype("<i2").tobytes())
    return out.getvalue()


SAMPLES = np.random.default_rng(0).integers(-32768, 32767, (40, 2), dtype=np.int16)


def test_decode_reads_what_the_wave_module_wrote():
    audio, rate = tf.audio.decode_wav(_wav(SAMPLES, 22050))
    np.testing.assert_array_equal(audio.numpy(), SAMPLES / np.float32(32768))
    assert audio.dtype == tf.float32 and rate.dtype == tf.int32 and int(rate) == 22050


def test_desired_channels_and_samples():
    audio = tf.audio.decode_wav(_wav(SAMPLES), desired_channels=3, desired_samples=50).audio.numpy()
    assert audio.shape == (50, 3)
    np.testing.assert_array_equal(audio[:40, 2], audio[:40, 1])  # the last channel, repeated
    assert not audio[40:].any()  # zero-padded
    assert tf.audio.decode_wav(_wav(SAMPLES), desired_channels=1, desired_samples=7).audio.shape == (7, 1)


def test_encode_is_read_back_by_the_wave_module():
    audio = np.array([[0.0, 0.5], [-1.0, 2.0], [0.1, np.nan]], np.float32)
    data = tf.audio.encode_wav(audio, 8000).numpy()
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == (2, 2, 8000, 3)
        pcm = np.frombuffer(w.readframes(3), "<i2").reshape(3, 2)
    np.testing.assert_array_equal(pcm, [[0, 16384], [-32768, 32767], [3277, 0]])  # clamped, rounded, NaN is 0


@pytest.mark.parametrize("contents", [b"RIFF\0\0\0\0WAVEfmt ", b"hello, this is not a WAV file"])
def test_bad_files_raise_invalid_argument(contents):
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.audio.decode_wav(contents)


def test_a_tf_data_pipeline_of_wav_files_to_spectrograms(tmp_path):
    rng = np.random.default_rng(1)
    paths = []
    for k in range(3):
        path = tmp_path / f"clip{k}.wav"
        path.write_bytes(_wav(rng.integers(-3000, 3000, (1000 + 200 * k, 1), dtype=np.int16)))
        paths.append(str(path))

    def spectrogram(path):
        audio, _ = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1, desired_samples=1200)
        return tf.abs(tf.signal.stft(tf.squeeze(audio, axis=-1), frame_length=255, frame_step=128))

    shapes = [tuple(s.shape) for s in tf.data.Dataset.from_tensor_slices(paths).map(spectrogram)]
    assert shapes == [(8, 129)] * 3


def test_files_of_new_lengths_compile_nothing(monkeypatch):
    """Each file has its own length: decoding, squeezing and a cast to the same dtype run without an XLA compile
    (a compile per length was 2 s of TF's audio tutorial: jnp.asarray's copy, squeeze, a no-op cast)."""
    from jax._src import compiler

    from tapejax._src import checking

    monkeypatch.setattr(checking.FLAG, "on", False)  # checking mode compares host runs with the executables
    compiled = []
    original = compiler.compile_or_get_cached
    monkeypatch.setattr(compiler, "compile_or_get_cached", lambda *a, **k: compiled.append(1) or original(*a, **k))
    for length in range(1001, 1013):
        audio, _ = tf.audio.decode_wav(_wav(np.zeros((length, 1), np.int16)))
        waveform = tf.cast(tf.squeeze(audio, axis=-1), tf.float32)
        assert waveform.shape == (length,) and tf.expand_dims(waveform, -1).shape == (length, 1)
    assert compiled == []
