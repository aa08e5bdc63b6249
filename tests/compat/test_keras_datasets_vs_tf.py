"""tf.keras.datasets and tf.keras.utils.get_file in tapejax and in TensorFlow's Keras: the same arrays from the
same files in Keras's cache layout, the same cache paths, the same exception types (offline: the files are made
by tests/compat/keras_dataset_files.py, downloads come from file:// URLs)."""

from __future__ import annotations

import hashlib
import importlib
import os
import pathlib
import shutil

import numpy as np
import pytest

import tapejax
from tests.compat import keras_dataset_files as files
from tests.compat.compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _keras_loader(monkeypatch, name: str, home: pathlib.Path):
    """Keras's `load_data` of `name`, reading `home` and checking no hash (the stand-in files have their own)."""
    module = importlib.import_module(f"keras.src.datasets.{name}")
    real = module.get_file

    def get_file(*args, **kwargs):
        kwargs.pop("file_hash", None)
        return real(*args, cache_dir=str(home), **kwargs)

    monkeypatch.setattr(module, "get_file", get_file)
    return tf_real.keras.datasets.__getattribute__(name).load_data


def _ours(monkeypatch, name: str, home: pathlib.Path):
    monkeypatch.setenv("KERAS_HOME", str(home))
    module = importlib.import_module(f"tapejax.keras.datasets.{name}")
    if hasattr(module, "FILE_HASH"):
        monkeypatch.setattr(module, "FILE_HASH", None)
    return getattr(tapejax.keras.datasets, name).load_data


def _same_sets(got, expected):
    """Data set tuples: numeric arrays by assert_same, object arrays of word lists element by element."""
    for (gx, gy), (ex, ey) in zip(got, expected):
        assert gx.dtype == ex.dtype and gx.shape == ex.shape
        if ex.dtype == object:
            assert [list(s) for s in gx] == [list(s) for s in ex]
        elif ex.dtype == np.uint8:  # images: exact (and without assert_allclose's float copies)
            assert np.array_equal(gx, ex)
        else:
            assert_same(gx, ex)
        assert_same(gy, ey)


WRITERS = {
    "mnist": ((), lambda home, rng: files.mnist(home, rng)),
    "fashion_mnist": ((), lambda home, rng: files.fashion_mnist(home, rng)),
    "cifar100": ((), lambda home, rng: files.cifar100(home, rng)),
    "boston_housing": ((), lambda home, rng: files.housing(home, rng)),
    "california_housing": ((), lambda home, rng: files.housing(home, rng, "california_housing.npz", 700, 8)),
    "imdb": ((), lambda home, rng: files.imdb(home, rng)),
    "reuters": ((), lambda home, rng: files.reuters(home, rng)),
}

CALLS = [
    ("mnist", {}), ("fashion_mnist", {}), ("cifar100", {}), ("cifar100", {"label_mode": "coarse"}),
    ("boston_housing", {}), ("boston_housing", {"test_split": 0.3, "seed": 7}), ("boston_housing", {"test_split": 1.0}),
    ("california_housing", {}), ("california_housing", {"version": "small", "test_split": 0.1}),
    ("california_housing", {"version": "medium"}),
    ("imdb", {}), ("imdb", {"num_words": 20, "skip_top": 4}), ("imdb", {"maxlen": 8, "oov_char": None}),
    ("imdb", {"start_char": None, "index_from": 0}), ("imdb", {"maxlen": 1}),
    ("reuters", {}), ("reuters", {"num_words": 15, "test_split": 0.5, "seed": 3, "start_char": None}),
    ("reuters", {"maxlen": 6, "skip_top": 2, "oov_char": None}),
]

ERRORS = [{"test_split": 1.0}, {"version": "medium"}, {"maxlen": 1}, {"label_mode": "medium"}]
CALLS += [("cifar100", {"label_mode": "medium"})]


@pytest.mark.parametrize("name,kwargs", CALLS)
def test_load_data_matches_keras(tmp_path, monkeypatch, name, kwargs):
    ours_home, keras_home = tmp_path / "ours", tmp_path / "keras"
    for home in (ours_home, keras_home):
        WRITERS[name][1](home, np.random.default_rng(0))
    if kwargs in ERRORS:  # the same exception type as Keras
        with pytest.raises(Exception) as expected:
            _keras_loader(monkeypatch, name, keras_home)(**kwargs)
        with pytest.raises(expected.type):
            _ours(monkeypatch, name, ours_home)(**kwargs)
        return
    expected = _keras_loader(monkeypatch, name, keras_home)(**kwargs)
    got = _ours(monkeypatch, name, ours_home)(**kwargs)
    _same_sets(got, expected)


def test_cifar10_matches_keras(tmp_path, monkeypatch):
    # Keras needs the real batch sizes (5 x 10,000 training images, 10,000 test images)
    files.cifar10(tmp_path / "ours", np.random.default_rng(1))
    shutil.copytree(tmp_path / "ours", tmp_path / "keras")
    expected = _keras_loader(monkeypatch, "cifar10", tmp_path / "keras")()
    got = _ours(monkeypatch, "cifar10", tmp_path / "ours")()
    _same_sets(got, expected)
    assert sorted(p.name for p in (tmp_path / "ours" / "datasets").iterdir()) == \
        sorted(p.name for p in (tmp_path / "keras" / "datasets").iterdir())


def _tree(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _get_file_outcome(get_file, cache: pathlib.Path, kwargs: dict):
    cache.mkdir(exist_ok=True)  # a cache_dir that cannot be written to means /tmp/.keras, for both
    try:
        path = get_file(cache_dir=str(cache), **kwargs)
    except Exception as e:  # noqa: BLE001 (the type is the outcome)
        return type(e).__name__, _tree(cache)
    return os.path.relpath(path, cache), _tree(cache)


def _sources(tmp_path: pathlib.Path) -> dict[str, str]:
    src = tmp_path / "src"
    src.mkdir()
    (src / "data.txt").write_text("some data\n")
    inner = src / "inner"
    inner.mkdir()
    (inner / "a.txt").write_text("a")
    import shutil
    import tarfile
    import zipfile
    with tarfile.open(src / "bundle.tar.gz", "w:gz") as tar:
        tar.add(inner, arcname="inner")
    with zipfile.ZipFile(src / "bundle.zip", "w") as z:
        z.write(inner / "a.txt", "inner/a.txt")
    shutil.rmtree(inner)
    data = (src / "data.txt").read_bytes()
    return {"txt": (src / "data.txt").as_uri(), "tar": (src / "bundle.tar.gz").as_uri(),
            "zip": (src / "bundle.zip").as_uri(), "missing": (src / "nothing.bin").as_uri(),
            "sha256": hashlib.sha256(data).hexdigest(), "md5": hashlib.md5(data).hexdigest()}


GET_FILE_CASES = [
    lambda s: {"origin": s["txt"]},
    lambda s: {"fname": "renamed.txt", "origin": s["txt"], "cache_subdir": "mine"},
    lambda s: {"origin": s["txt"], "file_hash": s["sha256"]},
    lambda s: {"origin": s["txt"], "file_hash": s["md5"]},
    lambda s: {"origin": s["txt"], "md5_hash": s["md5"]},
    lambda s: {"origin": s["txt"], "file_hash": s["sha256"], "hash_algorithm": "sha256"},
    lambda s: {"origin": s["txt"], "file_hash": "0" * 64},
    lambda s: {"origin": s["missing"]},
    lambda s: {"origin": None},
    lambda s: {"fname": "a/b.txt", "origin": s["txt"]},
    lambda s: {"origin": s["tar"], "extract": True},
    lambda s: {"fname": "bundle", "origin": s["tar"], "extract": True},
    lambda s: {"fname": "bundle.tar.gz", "origin": s["tar"], "extract": True},
    lambda s: {"fname": "b.zip", "origin": s["zip"], "extract": True},
    lambda s: {"fname": "b", "origin": s["tar"], "untar": True},
    lambda s: {"origin": s["txt"], "extract": True},
]


@pytest.mark.parametrize("case", range(len(GET_FILE_CASES)))
def test_get_file_matches_keras(tmp_path, case, capsys):
    kwargs = GET_FILE_CASES[case](_sources(tmp_path))
    expected = _get_file_outcome(tf_real.keras.utils.get_file, tmp_path / "keras", dict(kwargs))
    got = _get_file_outcome(tapejax.keras.utils.get_file, tmp_path / "ours", dict(kwargs))
    assert got == expected
    # a second call finds the file in the cache (no download) and gives the same answer again
    again = _get_file_outcome(tapejax.keras.utils.get_file, tmp_path / "ours", dict(kwargs))
    assert again == _get_file_outcome(tf_real.keras.utils.get_file, tmp_path / "keras", dict(kwargs))
