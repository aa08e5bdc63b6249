"""First-line features of real programs, without TensorFlow: the version, formatting tensors, linspace's dtype,
conversion to a requested dtype, random bounds, the Huber loss (numpy as the oracle) and the packaging files."""

from __future__ import annotations

import pathlib
import tomllib

import numpy as np
import pytest

import tapejax as tf

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_version_strings():
    from packaging.version import Version
    assert tf.__version__ == tf.version.VERSION
    assert Version(tf.__version__) >= Version("2.16")  # version-gated code takes the TF 2 branch
    assert tf.version.TAPEJAX_VERSION != tf.__version__


def test_packaging_files():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "tapejax.version.TAPEJAX_VERSION"
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["tapejax"]
    assert (ROOT / "tapejax" / "py.typed").exists()
    assert project["project"]["license"] == "Apache-2.0"  # an SPDX expression (PEP 639), with its file
    assert project["project"]["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]


@pytest.mark.parametrize("value", [np.float32(0.1), np.float64(-2.5), np.int32(7), np.bool_(True), np.float16(3)])
def test_format_scalar_as_numpy(value):
    for spec in ("", ".3f", ">8", "e"):
        assert format(tf.constant(value), spec) == format(np.asarray(value)[()], spec)


def test_format_array_refuses_a_spec():
    assert format(tf.constant([1.0, 2.0]), "") == format(np.array([1.0, 2.0], np.float32), "")
    with pytest.raises(TypeError):
        format(tf.constant([1.0, 2.0]), ".2f")
    with pytest.raises(TypeError):
        format(tf.Variable(1.0), ".2f")


def test_format_inside_function():
    seen = []

    @tf.function
    def step(x):
        seen.append(format(x, ""))
        with pytest.raises(TypeError, match="tf.function"):
            format(x, ".2f")
        return x
    step(tf.constant(1.0))
    assert seen and seen[0].startswith("Tensor(")


@pytest.mark.parametrize("start, stop, dtype", [(-2, 2, np.float64), (np.int64(0), 9, np.float64),
                                                (np.uint8(0), 9, np.float32), (0.0, 1, np.float32),
                                                (np.float16(0), 1, np.float16)])
def test_linspace_dtype(start, stop, dtype):
    result = tf.linspace(start, stop, 7)
    assert result.dtype.as_numpy_dtype == dtype
    np.testing.assert_allclose(result.numpy(), np.linspace(float(start), float(stop), 7), rtol=1e-3, atol=1e-12)


def test_linspace_converts_stop_to_start_dtype():
    with pytest.raises(TypeError):
        tf.linspace(0, 2.5, 3)
    with pytest.raises(ValueError):
        tf.linspace(0, tf.constant(1.0), 3)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.linspace(True, False, 3)


def test_convert_to_requested_dtype():
    assert tf.convert_to_tensor(np.float32(3.7), dtype=tf.int32).numpy() == np.float32(3.7).astype(np.int32)
    assert tf.convert_to_tensor(True, dtype=tf.float32).numpy() == 1.0
    assert tf.convert_to_tensor(np.array([1, 0]), dtype=tf.bool).numpy().tolist() == [True, False]
    with pytest.raises(TypeError):
        tf.convert_to_tensor(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.convert_to_tensor(True, dtype=tf.uint8)
    with pytest.raises(TypeError):
        tf.constant(tf.constant(3), dtype=tf.float32)
    assert tf.constant(tf.constant(3.0), dtype=tf.float32).dtype == tf.float32


def test_random_bounds_take_the_sample_dtype():
    sample = tf.random.uniform([100], np.int32(2), np.float64(3.0))
    assert sample.dtype == tf.float32 and bool(tf.reduce_all((sample >= 2) & (sample < 3)))
    assert tf.random.normal([3], np.float64(1.0), True).dtype == tf.float32
    with pytest.raises(ValueError):
        tf.random.normal([2], tf.constant(0.0, tf.float64))
    mean = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(tf.random.normal([4], mean))
    assert float(tape.gradient(total, mean)) == 4.0


def _huber(y_true, y_pred, delta):
    error = np.abs(np.asarray(y_pred, np.float64) - np.asarray(y_true, np.float64))
    return np.mean(np.where(error <= delta, 0.5 * error ** 2, delta * (error - 0.5 * delta)), axis=-1)


@pytest.mark.parametrize("delta", [1.0, 0.2, 4.0])
def test_huber_matches_its_definition(delta):
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.normal(size=(6, 3)).astype(np.float32), 3 * rng.normal(size=(6, 3)).astype(np.float32)
    per_example = _huber(y_true, y_pred, delta)
    np.testing.assert_allclose(tf.keras.losses.huber(y_true, y_pred, delta).numpy(), per_example, rtol=1e-5)
    loss = tf.keras.losses.Huber(delta=delta)
    np.testing.assert_allclose(float(loss(y_true, y_pred)), per_example.mean(), rtol=1e-5)
    weights = rng.random(6).astype(np.float32)
    weighted = tf.keras.losses.Huber(delta=delta, reduction="mean_with_sample_weight")
    np.testing.assert_allclose(float(weighted(y_true, y_pred, sample_weight=weights)),
                               (per_example * weights).sum() / weights.sum(), rtol=1e-5)
    assert tf.keras.losses.Huber(delta=delta, reduction=tf.keras.losses.Reduction.NONE)(y_true, y_pred).shape == (6,)


def test_huber_gradient_is_clipped_error():
    y_pred = tf.Variable([[0.5, 3.0, -2.0]])
    with tf.GradientTape() as tape:
        loss = tf.keras.losses.huber([[0.0, 0.0, 0.0]], y_pred, delta=1.0)
    error = y_pred.numpy()
    np.testing.assert_allclose(tape.gradient(loss, y_pred).numpy(), np.clip(error, -1, 1) / 3, rtol=1e-6)


def test_bad_reduction():
    with pytest.raises(ValueError, match="reduction"):
        tf.keras.losses.Huber(reduction="avg")
    with pytest.raises(ValueError):
        tf.keras.losses.Reduction.validate("avg")
