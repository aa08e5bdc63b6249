"""tf.io and file datasets against TensorFlow 2.21: files written by one are read by the other (TFRecord,
tf.train.Example, PNG, JPEG), parsing gives TF's tensors, and errors TF's exception types."""

from __future__ import annotations

import os

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402


def _image(shape=(5, 7, 3), seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def _example(tf, i):
    feature = {"label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i, i + 1])),
               "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i / 2])),
               "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"n{i}".encode()]))}
    return tf.train.Example(features=tf.train.Features(feature=feature))


FEATURES = lambda tf: {"label": tf.io.FixedLenFeature([2], tf.int64),  # noqa: E731
                       "x": tf.io.FixedLenFeature([], tf.float32),
                       "name": tf.io.FixedLenFeature([], tf.string),
                       "missing": tf.io.FixedLenFeature([2], tf.float32, default_value=[1.0, 2.0])}


def _parsed(parsed):
    return {k: (v.dtype.name, tuple(v.shape), np.asarray(v.numpy()).tolist()) for k, v in parsed.items()}


def test_example_serializes_to_tf_bytes():
    for i in range(3):
        assert _example(tapejax, i).SerializeToString() == _example(tf_real, i).SerializeToString()
        assert str(_example(tapejax, i)) == str(_example(tf_real, i))


def test_parse_single_example_matches_tf():
    data = _example(tf_real, 3).SerializeToString()
    assert _parsed(tapejax.io.parse_single_example(data, FEATURES(tapejax))) == \
        _parsed(tf_real.io.parse_single_example(data, FEATURES(tf_real)))
    batch = [_example(tf_real, i).SerializeToString() for i in range(3)]
    assert _parsed(tapejax.io.parse_example(batch, FEATURES(tapejax))) == \
        _parsed(tf_real.io.parse_example(batch, FEATURES(tf_real)))


@pytest.mark.parametrize("features", [
    lambda tf: {"absent": tf.io.FixedLenFeature([], tf.int64)},
    lambda tf: {"label": tf.io.FixedLenFeature([3], tf.int64)},
])
def test_parse_errors_match_tf(features):
    data = _example(tf_real, 1).SerializeToString()
    kinds = []
    for tf in (tf_real, tapejax):
        with pytest.raises(Exception) as info:
            tf.io.parse_single_example(data, features(tf))
        kinds.append(type(info.value).__name__)
    assert kinds[0] == kinds[1]


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecords_cross_read(tmp_path, compression):
    records = [_example(tf_real, i).SerializeToString() for i in range(4)] + [b"", b"x" * 1000]
    for writer_tf, reader_tf in ((tapejax, tf_real), (tf_real, tapejax)):
        path = str(tmp_path / f"{writer_tf.__name__}.tfrecord")
        with writer_tf.io.TFRecordWriter(path, options=compression) as writer:
            for r in records:
                writer.write(r)
        read = [r.numpy() for r in reader_tf.data.TFRecordDataset(path, compression_type=compression)]
        assert read == records


def test_tfrecord_dataset_parse_pipeline_matches_tf(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf_real.io.TFRecordWriter(path) as writer:
        for i in range(5):
            writer.write(_example(tf_real, i).SerializeToString())

    def pipeline(tf):
        features = FEATURES(tf)
        ds = tf.data.TFRecordDataset([path]).map(lambda r: tf.io.parse_single_example(r, features)).batch(2)
        return [{k: v.tolist() for k, v in b.items()} for b in ds.as_numpy_iterator()]
    assert pipeline(tapejax) == pipeline(tf_real)


def test_corrupt_tfrecord_is_data_loss_as_tf(tmp_path):
    path = str(tmp_path / "bad.tfrecord")
    with tf_real.io.TFRecordWriter(path) as writer:
        writer.write(b"payload")
    data = bytearray(open(path, "rb").read())
    data[14] ^= 0xFF
    open(path, "wb").write(bytes(data))
    kinds = []
    for tf in (tf_real, tapejax):
        with pytest.raises(Exception) as info:
            list(tf.data.TFRecordDataset(path))
        kinds.append(type(info.value).__name__)
    assert kinds == ["DataLossError", "DataLossError"]


@pytest.mark.parametrize("shape", [(5, 7, 1), (5, 7, 2), (5, 7, 3), (6, 4, 4)])
def test_png_decodes_exactly_as_tf(shape):
    image = _image(shape)
    for encoder in (tf_real, tapejax):
        data = encoder.io.encode_png(image).numpy()
        for channels in {0, shape[-1]} - {2}:  # TF decodes a 2-channel PNG as it is only
            got = tapejax.io.decode_png(data, channels=channels)
            expected = tf_real.io.decode_png(data, channels=channels)
            assert got.dtype.name == expected.dtype.name and got.numpy().tolist() == expected.numpy().tolist()
        assert tapejax.image.decode_image(data).numpy().tolist() == tf_real.image.decode_image(data).numpy().tolist()


def test_png_channel_conversion_matches_tf():
    data = tf_real.io.encode_png(_image((4, 4, 3))).numpy()
    for channels in (1, 4):
        got, expected = tapejax.io.decode_png(data, channels=channels), tf_real.io.decode_png(data, channels=channels)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1)  # grey: TF's and Pillow's luma rounding


def test_decode_image_float_matches_tf():
    data = tf_real.io.encode_png(_image()).numpy()
    np.testing.assert_allclose(tapejax.io.decode_image(data, dtype=tapejax.float32).numpy(),
                               tf_real.io.decode_image(data, dtype=tf_real.float32).numpy(), rtol=1e-6)


def test_jpeg_decodes_within_a_few_units_of_tf():
    """JPEG is lossy and the decoders' DCT settings differ: Pillow's pixels are within a few units of TF's."""
    smooth = np.clip(np.add.outer(np.arange(32) * 6, np.arange(48) * 4), 0, 255).astype(np.uint8)
    image = np.stack([smooth, smooth[::-1], 255 - smooth], -1)
    for encoder in (tf_real, tapejax):
        data = encoder.io.encode_jpeg(image, quality=90).numpy()
        for channels in (0, 3):
            got, expected = tapejax.io.decode_jpeg(data, channels), tf_real.io.decode_jpeg(data, channels)
            assert got.dtype.name == expected.dtype.name and got.shape == expected.shape
            diff = np.abs(got.numpy().astype(int) - expected.numpy().astype(int))
            assert diff.max() <= 4 and diff.mean() < 1.5, (diff.max(), diff.mean())
        assert bool(tapejax.io.is_jpeg(data)) and not bool(tapejax.io.is_jpeg(b"\x89PNG"))


def test_decode_errors_match_tf():
    png = tf_real.io.encode_png(_image()).numpy()
    for call in (lambda tf: tf.io.decode_png(b"garbage"), lambda tf: tf.io.decode_image(b"garbage"),
                 lambda tf: tf.io.decode_jpeg(b"garbage"), lambda tf: tf.io.decode_png(png, channels=5)):
        kinds = []
        for tf in (tf_real, tapejax):
            with pytest.raises(Exception) as info:
                call(tf)
            kinds.append(type(info.value).__name__)
        assert kinds[0] == kinds[1], kinds


def test_files_match_tf(tmp_path):
    root = str(tmp_path)

    def run(tf, sub):
        base = os.path.join(root, sub)
        tf.io.gfile.makedirs(os.path.join(base, "d", "e"))
        tf.io.write_file(os.path.join(base, "a.txt"), "line1\nline2\r\nline3")
        with tf.io.gfile.GFile(os.path.join(base, "b.txt"), "w") as f:
            f.write("x\ny\n")
        with tf.io.gfile.GFile(os.path.join(base, "b.txt")) as f:
            text = (f.readline(), f.read())
        with tf.io.gfile.GFile(os.path.join(base, "b.txt"), "rb") as f:
            raw = f.read()
        tf.io.gfile.copy(os.path.join(base, "b.txt"), os.path.join(base, "c.txt"))
        tf.io.gfile.rename(os.path.join(base, "c.txt"), os.path.join(base, "d", "c.txt"))
        listing = (sorted(tf.io.gfile.listdir(base)), sorted(os.path.relpath(p, base) for p in
                                                             tf.io.gfile.glob(os.path.join(base, "*.txt"))))
        walked = [(os.path.relpath(d, base), sorted(s), sorted(f)) for d, s, f in tf.io.gfile.walk(base)]
        content = tf.io.read_file(os.path.join(base, "a.txt")).numpy()
        lines = [x.numpy() for x in tf.data.TextLineDataset(os.path.join(base, "a.txt"))]
        files = sorted(os.path.relpath(f.numpy().decode(), base)
                       for f in tf.data.Dataset.list_files(os.path.join(base, "*.txt"), shuffle=False))
        flags = (tf.io.gfile.exists(os.path.join(base, "a.txt")), tf.io.gfile.isdir(os.path.join(base, "d")),
                 tf.io.gfile.exists(os.path.join(base, "zz")))
        tf.io.gfile.remove(os.path.join(base, "a.txt"))
        return text, raw, listing, walked, content, lines, files, flags, tf.io.gfile.exists(os.path.join(base, "a.txt"))
    assert run(tapejax, "tj") == run(tf_real, "tf")


@pytest.mark.parametrize("call", [
    lambda tf, d: tf.io.read_file(os.path.join(d, "missing")),
    lambda tf, d: tf.io.gfile.GFile(os.path.join(d, "missing")).read(),
    lambda tf, d: tf.io.gfile.remove(os.path.join(d, "missing")),
    lambda tf, d: tf.io.gfile.listdir(os.path.join(d, "missing")),
    lambda tf, d: tf.data.Dataset.list_files(os.path.join(d, "*.none")),
    lambda tf, d: list(tf.data.TextLineDataset(os.path.join(d, "missing"))),
    lambda tf, d: list(tf.data.TFRecordDataset(os.path.join(d, "missing"))),
])
def test_file_errors_match_tf(tmp_path, call):
    kinds = []
    for tf in (tf_real, tapejax):
        with pytest.raises(Exception) as info:
            call(tf, str(tmp_path))
        kinds.append(type(info.value).__name__)
    assert kinds[0] == kinds[1], kinds


def test_copy_onto_existing_file_matches_tf(tmp_path):
    kinds = []
    for tf in (tf_real, tapejax):
        a, b = str(tmp_path / f"{tf.__name__}a"), str(tmp_path / f"{tf.__name__}b")
        for p in (a, b):
            tf.io.write_file(p, "x")
        with pytest.raises(Exception) as info:
            tf.io.gfile.copy(a, b)
        kinds.append(type(info.value).__name__)
    assert kinds[0] == kinds[1], kinds
