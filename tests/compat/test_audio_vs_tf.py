"""tf.audio's WAV codecs against TensorFlow: decoded samples and rates (channels and samples asked for, extra
chunks), encoded bytes (exactly, rounding and clamping included), and TF's errors for files it cannot read."""

from __future__ import annotations

import io
import struct
import wave

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same, assert_same_outcome  # noqa: E402


def _wav(samples, rate=16000, width=2):
    samples = np.asarray(samples)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1 if samples.ndim == 1 else samples.shape[1])
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    return out.getvalue()


STEREO = _wav(np.random.default_rng(0).integers(-32768, 32767, (50, 2), dtype=np.int16))
MONO = _wav(np.array([0, 1, -1, 32767, -32768, 1234], np.int16), rate=8000)


def _with_chunk(data, kind, body):
    """`data` with an extra chunk before its "data" chunk (an odd size is padded to an even one)."""
    at = data.index(b"data")
    chunk = kind + struct.pack("<I", len(body)) + body + b"\0" * (len(body) & 1)
    out = data[:at] + chunk + data[at:]
    return out[:4] + struct.pack("<I", len(out) - 8) + out[8:]


@pytest.mark.parametrize("contents", [STEREO, MONO, _with_chunk(MONO, b"LIST", b"INFOabcd")],
                         ids=["stereo", "mono", "list_chunk"])
@pytest.mark.parametrize("channels, samples", [(-1, -1), (1, -1), (3, -1), (0, -1), (-1, 4), (-1, 80), (2, 0)])
def test_decode(contents, channels, samples):
    ours = tapejax.audio.decode_wav(contents, desired_channels=channels, desired_samples=samples)
    theirs = tf_real.audio.decode_wav(contents, desired_channels=channels, desired_samples=samples)
    assert type(ours).__name__ == type(theirs).__name__ == "DecodeWav"
    assert_same(ours.audio, theirs.audio, "audio")
    assert_same(ours.sample_rate, theirs.sample_rate, "sample_rate")


def test_decode_a_file_read_with_tf_io(tmp_path):
    path = tmp_path / "a.wav"
    path.write_bytes(STEREO)
    ours = tapejax.audio.decode_wav(tapejax.io.read_file(str(path)))
    assert_same(ours.audio, tf_real.audio.decode_wav(tf_real.io.read_file(str(path))).audio)


@pytest.mark.parametrize("audio", [
    np.array([[0.0, 0.5], [-1.0, 1.5], [0.25, -0.25]], np.float32),
    np.array([[0.1], [0.2], [-0.1], [1 / 65536], [-1 / 65536], [3 / 65536], [-3 / 65536], [0.99999], [np.nan],
              [-np.inf]], np.float32),
    np.zeros((0, 2), np.float32),
], ids=["stereo", "rounding", "empty"])
@pytest.mark.parametrize("rate", [8000, 44100])
def test_encode_gives_tfs_bytes(audio, rate):
    ours = tapejax.audio.encode_wav(audio, rate)
    assert ours.dtype == tapejax.string and ours.shape == ()
    assert ours.numpy() == tf_real.audio.encode_wav(audio, rate).numpy()


def _header(data, offset, value, fmt="<H"):
    return data[:offset] + struct.pack(fmt, value) + data[offset + struct.calcsize(fmt):]


@pytest.mark.parametrize("snippet", [
    lambda m: m.audio.decode_wav(_wav(np.array([1, 2, 3], np.uint8), width=1)),
    lambda m: m.audio.decode_wav(_wav(np.array([1, 2, 3], np.int32), width=4)),
    lambda m: m.audio.decode_wav(_header(MONO, 20, 3)),  # float samples
    lambda m: m.audio.decode_wav(b"RIFX" + MONO[4:]),
    lambda m: m.audio.decode_wav(b"not a wav file at all, but long enough"),
    lambda m: m.audio.decode_wav(MONO[:-1]),
    lambda m: m.audio.decode_wav(MONO[:20]),
    lambda m: m.audio.decode_wav([MONO, MONO]),
    lambda m: m.audio.decode_wav(MONO, desired_channels=-2),
    lambda m: m.audio.decode_wav(MONO, desired_samples=-2),
    lambda m: m.audio.encode_wav(np.zeros(3, np.float32), 8000),
    lambda m: m.audio.encode_wav(np.zeros((3, 1), np.float32), -5),
    lambda m: m.audio.encode_wav(np.zeros((3, 1), np.float32), 0),
], ids=["8_bit", "32_bit", "float", "rifx", "not_wav", "truncated_data", "truncated_header", "not_scalar",
        "channels_below", "samples_below", "encode_rank_1", "encode_negative_rate", "encode_zero_rate"])
def test_errors(snippet):
    assert_same_outcome(snippet, tapejax, tf_real)


def test_an_odd_sized_chunk_is_followed_by_its_pad_byte():
    # RIFF pads a chunk of odd size to an even one: TF's decoder reads no pad byte and finds no "data" chunk
    # (InvalidArgumentError); tapejax reads the file (README, "Differences from TensorFlow").
    contents = _with_chunk(MONO, b"LIST", b"INFOabc")
    with pytest.raises(tf_real.errors.InvalidArgumentError, match="No data chunk"):
        tf_real.audio.decode_wav(contents)
    assert_same(tapejax.audio.decode_wav(contents).audio, tf_real.audio.decode_wav(MONO).audio)
