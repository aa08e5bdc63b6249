"""tf.io: files, TFRecord files (read back by our reader and checked byte by byte against the record format),
tf.train.Example round trips, image codecs (PNG exact round trip)."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

import tapejax as tf

pytest.importorskip("google_crc32c")


def test_read_write_file(tmp_path):
    path = str(tmp_path / "sub" / "a.bin")
    tf.io.write_file(path, b"\x00\xffdata")
    assert tf.io.read_file(path).numpy() == b"\x00\xffdata"
    assert tf.io.read_file(tf.constant(path)).dtype == tf.string
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.read_file(str(tmp_path / "missing"))


def test_tfrecord_format(tmp_path):
    import google_crc32c
    path = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(b"abc")
    data = open(path, "rb").read()

    def masked(b):
        crc = google_crc32c.value(b)
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert data == struct.pack("<Q", 3) + struct.pack("<I", masked(struct.pack("<Q", 3))) + b"abc" + \
        struct.pack("<I", masked(b"abc"))
    assert [r.numpy() for r in tf.data.TFRecordDataset(path)] == [b"abc"]


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_round_trip(tmp_path, compression):
    pytest.importorskip("google.protobuf")
    path = str(tmp_path / "e.tfrecord")
    with tf.io.TFRecordWriter(path, options=compression) as writer:
        for i in range(4):
            feature = {"y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                       "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"x" * i]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    spec = {"y": tf.io.FixedLenFeature([], tf.int64), "s": tf.io.FixedLenFeature([], tf.string),
            "z": tf.io.FixedLenFeature([2], tf.float32, default_value=[0.5, 1.5])}
    ds = tf.data.TFRecordDataset(path, compression_type=compression).map(
        lambda r: tf.io.parse_single_example(r, spec))
    got = list(ds.as_numpy_iterator())
    assert [g["y"] for g in got] == [0, 1, 2, 3] and [g["s"] for g in got] == [b"", b"x", b"xx", b"xxx"]
    assert got[0]["z"].tolist() == [0.5, 1.5] and got[0]["y"].dtype == np.int64
    with pytest.raises(NotImplementedError, match="SparseTensor"):
        tf.io.parse_single_example(b"", {"v": tf.io.VarLenFeature(tf.int64)})


def test_png_round_trip_is_exact():
    pytest.importorskip("PIL")
    image = np.random.default_rng(1).integers(0, 256, (6, 5, 3), dtype=np.uint8)
    data = tf.io.encode_png(image)
    assert data.dtype == tf.string
    decoded = tf.image.decode_png(data)
    assert decoded.dtype == tf.uint8 and decoded.numpy().tolist() == image.tolist()
    assert tf.io.decode_image(data, dtype=tf.float32).numpy().max() <= 1.0


def test_gfile_and_text_lines(tmp_path):
    base = str(tmp_path)
    with tf.io.gfile.GFile(os.path.join(base, "t.txt"), "w") as f:
        f.write("a\nb\r\n\nc")
    assert [x.numpy() for x in tf.data.TextLineDataset(os.path.join(base, "t.txt"))] == [b"a", b"b", b"", b"c"]
    assert tf.io.gfile.listdir(base) == ["t.txt"] and tf.io.gfile.exists(os.path.join(base, "t.txt"))
    files = tf.data.Dataset.list_files(os.path.join(base, "*.txt"), shuffle=False)
    assert [f.numpy() for f in files] == [os.path.join(base, "t.txt").encode()]
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.io.gfile.copy(os.path.join(base, "t.txt"), os.path.join(base, "t.txt"))
