"""tf.keras.datasets and tf.keras.utils.get_file: Keras's cache layout under KERAS_HOME, hash checks, downloads
(from file:// URLs: the tests run offline) and extraction. tests/compat/test_keras_datasets_vs_tf.py compares
every loader with Keras's."""

from __future__ import annotations

import hashlib
import os
import pathlib
import tarfile
import urllib.request

import numpy as np
import pytest

import tapejax as tf
from tapejax.keras.datasets import boston_housing, cifar10, imdb, mnist
from tapejax.keras.datasets import _common
from tests.compat import keras_dataset_files as files


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_mnist_reads_the_cached_file_when_its_hash_matches(home, monkeypatch):
    arrays = files.mnist(home, np.random.default_rng(0))
    monkeypatch.setattr(mnist, "FILE_HASH", _sha256(home / "datasets" / "mnist.npz"))
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: pytest.fail("no download expected"))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    for got, key in ((x_train, "x_train"), (y_train, "y_train"), (x_test, "x_test"), (y_test, "y_test")):
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, arrays[key])


def test_missing_file_is_downloaded_from_the_origin(home, tmp_path, monkeypatch, capsys):
    source = tmp_path / "server"
    arrays = files.mnist(source, np.random.default_rng(1))
    monkeypatch.setattr(_common, "ORIGIN", (source / "datasets").as_uri() + "/")
    monkeypatch.setattr(mnist, "FILE_HASH", _sha256(source / "datasets" / "mnist.npz"))
    (x_train, _), _ = tf.keras.datasets.mnist.load_data()
    np.testing.assert_array_equal(x_train, arrays["x_train"])
    assert (home / "datasets" / "mnist.npz").read_bytes() == (source / "datasets" / "mnist.npz").read_bytes()
    assert "Downloading data from file://" in capsys.readouterr().out


def test_stale_cached_file_is_downloaded_again_and_a_bad_download_raises(home, tmp_path, monkeypatch, capsys):
    files.mnist(home, np.random.default_rng(2))
    source = tmp_path / "server"
    files.mnist(source, np.random.default_rng(3))
    monkeypatch.setattr(_common, "ORIGIN", (source / "datasets").as_uri() + "/")
    with pytest.raises(ValueError, match="Incomplete or corrupted file"):
        tf.keras.datasets.mnist.load_data()  # neither file has Keras's hash
    assert "file hash does not match the original value" in capsys.readouterr().out
    monkeypatch.setattr(mnist, "FILE_HASH", _sha256(source / "datasets" / "mnist.npz"))
    assert tf.keras.datasets.mnist.load_data()[0][0].shape == (12, 28, 28)


def test_failed_download_raises_keras_exception_and_leaves_no_file(home, tmp_path, monkeypatch):
    monkeypatch.setattr(_common, "ORIGIN", (tmp_path / "nowhere").as_uri() + "/")
    with pytest.raises(Exception, match="URL fetch failure on file://"):
        tf.keras.datasets.mnist.load_data()
    assert not (home / "datasets" / "mnist.npz").exists()


def test_cifar10_extracts_keras_archive_and_transposes_to_channels_last(home, monkeypatch):
    files.cifar10(home, np.random.default_rng(4), per_batch=3, n_test=2)
    monkeypatch.setattr(cifar10, "FILE_HASH", None)
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    assert (x_train.shape, y_train.shape, x_test.shape, y_test.shape) == ((15, 32, 32, 3), (15, 1), (2, 32, 32, 3),
                                                                          (2, 1))
    assert x_train.dtype == y_train.dtype == y_test.dtype == np.uint8
    root = home / "datasets" / "cifar-10-batches-py-target" / "cifar-10-batches-py"
    data, _ = _common.load_pickled_batch(str(root / "data_batch_2"))
    np.testing.assert_array_equal(x_train[3:6], data.transpose(0, 2, 3, 1))


def test_boston_housing_split_follows_the_seeded_shuffle(home, monkeypatch):
    arrays = files.housing(home, np.random.default_rng(5), n=10)
    monkeypatch.setattr(boston_housing, "FILE_HASH", None)
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.boston_housing.load_data(test_split=0.3, seed=9)
    order = np.random.RandomState(9).permutation(10)  # the permutation shuffle() draws for this seed
    np.testing.assert_array_equal(np.concatenate([x_train, x_test]), arrays["x"][order])
    np.testing.assert_array_equal(np.concatenate([y_train, y_test]), arrays["y"][order])
    assert len(x_train) == 7
    with pytest.raises(ValueError, match="test_split"):
        tf.keras.datasets.boston_housing.load_data(test_split=1)


def test_imdb_offsets_words_and_replaces_rare_ones(home, monkeypatch):
    files.imdb(home, np.random.default_rng(6))
    monkeypatch.setattr(imdb, "FILE_HASH", None)
    raw = _common.load_npz(str(home / "datasets" / "imdb.npz"))
    (x_train, y_train), (x_test, _) = tf.keras.datasets.imdb.load_data(num_words=20)
    assert x_train.dtype == object and len(x_train) == 20 and len(x_test) == 15
    # each training review is a raw one shuffled into place: 1, then its words + 3, those >= 20 as 2
    expected = {tuple(1 if i == 0 else (w if w < 20 else 2) for i, w in enumerate([-2] + [v + 3 for v in s]))
                for s in raw["x_train"]}
    assert {tuple(s) for s in x_train} <= expected
    assert sorted(y_train.tolist()) == sorted(raw["y_train"].tolist())


def test_object_arrays_load_without_running_pickled_code(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo owned",))

    evil = np.empty(1, dtype=object)
    evil[0] = Evil()
    np.savez(tmp_path / "evil.npz", x=evil)
    import pickle
    with pytest.raises(pickle.UnpicklingError, match="Refusing to deserialize"):
        _common.load_npz(str(tmp_path / "evil.npz"))


def test_get_file_caches_under_keras_home_and_extracts(home, tmp_path):
    folder = tmp_path / "src" / "folder"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text("a")
    with tarfile.open(tmp_path / "src" / "pack.tar.gz", "w:gz") as tar:
        tar.add(folder, arcname="folder")
    origin = (tmp_path / "src" / "pack.tar.gz").as_uri()
    path = tf.keras.utils.get_file("pack.tar.gz", origin, extract=True)
    assert path == str(home / "datasets" / "pack_extracted")
    assert (pathlib.Path(path) / "folder" / "a.txt").read_text() == "a"
    assert (home / "datasets" / "pack.tar.gz").exists()
    path = tf.keras.utils.get_file("pack", origin, extract=True, cache_subdir="other")
    assert path == str(home / "other" / "pack") and (home / "other" / "pack_archive").exists()


def test_get_file_argument_errors(home):
    with pytest.raises(ValueError, match="origin"):
        tf.keras.utils.get_file("x.txt")
    with pytest.raises(ValueError, match="Paths are no longer accepted"):
        tf.keras.utils.get_file(os.path.join("a", "x.txt"), "file:///x.txt")
    with pytest.raises(ValueError, match="Can't parse the file name"):
        tf.keras.utils.get_file(origin="file:///")


def test_archive_members_outside_the_target_are_skipped(tmp_path):
    archive = tmp_path / "bad.tar"
    with tarfile.open(archive, "w") as tar:
        for name in ("../escaped.txt", "ok.txt"):
            info = tarfile.TarInfo(name)
            tar.addfile(info, None)
    from tapejax.keras.file_utils import extract_archive
    with pytest.warns(UserWarning, match="Skipping invalid path"):
        assert extract_archive(archive, tmp_path / "out")
    assert (tmp_path / "out" / "ok.txt").exists() and not (tmp_path / "escaped.txt").exists()
