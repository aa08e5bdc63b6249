"""Preprocessing layers against TF 2.21's Keras 3: exact values where they are deterministic (Rescaling,
Resizing, CenterCrop, Normalization, every augmentation when not training); properties of the random ones
(their numbers are JAX's, not TF's)."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

IMAGES = np.random.default_rng(41).uniform(0, 255, size=(2, 6, 8, 3)).astype(np.float32)


@pytest.mark.parametrize("name, kwargs, images", [
    ("Rescaling", {"scale": 1 / 255}, IMAGES), ("Rescaling", {"scale": 1 / 127.5, "offset": -1}, IMAGES),
    ("Rescaling", {"scale": 0.5}, IMAGES.astype(np.uint8)),
    ("Resizing", {"height": 4, "width": 5}, IMAGES), ("Resizing", {"height": 9, "width": 12}, IMAGES),
    ("Resizing", {"height": 4, "width": 4, "crop_to_aspect_ratio": True}, IMAGES),
    ("Resizing", {"height": 3, "width": 4, "interpolation": "nearest"}, IMAGES),
    ("CenterCrop", {"height": 4, "width": 5}, IMAGES), ("CenterCrop", {"height": 4, "width": 5}, IMAGES[0]),
    ("Normalization", {"mean": 3.0, "variance": 4.0}, IMAGES),
    ("RandomFlip", {}, IMAGES), ("RandomRotation", {"factor": 0.2}, IMAGES),
    ("RandomZoom", {"height_factor": 0.3}, IMAGES), ("RandomTranslation", {"height_factor": 0.2, "width_factor": 0.1}, IMAGES),
    ("RandomContrast", {"factor": 0.5}, IMAGES),
], ids=lambda v: str(v) if not isinstance(v, np.ndarray) else str(v.shape))
def test_deterministic_preprocessing_agrees_with_keras(name, kwargs, images):
    results = []
    for tf in (tf_real, tapejax):
        layer = getattr(tf.keras.layers, name)(**kwargs)
        out = layer(tf.constant(images), training=False) if name.startswith("Random") else layer(tf.constant(images))
        results.append(out.numpy())
    assert results[1].dtype == results[0].dtype and results[1].shape == results[0].shape
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-3)


def test_normalization_adapt_agrees_with_keras():
    data = np.random.default_rng(42).normal(3.0, 2.0, size=(20, 4)).astype(np.float32)
    results = []
    for tf in (tf_real, tapejax):
        layer = tf.keras.layers.Normalization()
        layer.adapt(data)
        inverse = tf.keras.layers.Normalization(invert=True)
        inverse.adapt(data)
        results.append((layer(data[:3]).numpy(), inverse(data[:3]).numpy(), [w.path for w in layer.weights]))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-4, atol=1e-4)
    assert [p.split("/", 1)[1] for p in results[1][2]] == [p.split("/", 1)[1] for p in results[0][2]]
    ds = tapejax.data.Dataset.from_tensor_slices(data).batch(7)
    layer = tapejax.keras.layers.Normalization()
    layer.adapt(ds)
    np.testing.assert_allclose(layer(data[:3]).numpy(), results[0][0], rtol=1e-4, atol=1e-5)


def test_random_augmentations_have_keras_properties():
    images = tapejax.constant(IMAGES)
    tapejax.random.set_seed(3)
    flipped = tapejax.keras.layers.RandomFlip("horizontal")(images, training=True).numpy()
    for out, image in zip(flipped, IMAGES):  # each image is itself or its mirror
        assert np.array_equal(out, image) or np.array_equal(out, image[:, ::-1])
    rotated = tapejax.keras.layers.RandomRotation((0.25, 0.25), interpolation="nearest")(
        tapejax.constant(IMAGES[:, :6, :6]), training=True).numpy()
    np.testing.assert_allclose(rotated, np.rot90(IMAGES[:, :6, :6], k=1, axes=(1, 2)), atol=1e-4)  # a quarter turn
    shifted = tapejax.keras.layers.RandomTranslation((0.5, 0.5), (0.0, 0.0), fill_mode="constant",
                                                     interpolation="nearest")(images, training=True).numpy()
    np.testing.assert_allclose(shifted[:, 3:], IMAGES[:, :3], atol=1e-4)
    assert np.all(shifted[:, :3] == 0)
    contrast = tapejax.keras.layers.RandomContrast(0.5)(images, training=True).numpy()
    assert contrast.shape == IMAGES.shape and contrast.min() >= 0 and contrast.max() <= 255
    tapejax.random.set_seed(3)
    again = tapejax.keras.layers.RandomFlip("horizontal")(images, training=True).numpy()
    np.testing.assert_array_equal(again, flipped)
    zoomed = tapejax.keras.layers.RandomZoom((0.0, 0.0))(images, training=True).numpy()
    np.testing.assert_allclose(zoomed, IMAGES, atol=1e-3)  # a zoom of 1 is the identity


@pytest.mark.parametrize("name, kwargs", [
    ("RandomRotation", {"factor": (0.25, 0.25), "interpolation": "nearest"}),
    ("RandomRotation", {"factor": (0.1, 0.1), "fill_mode": "constant"}),
    ("RandomRotation", {"factor": (-0.1, -0.1), "fill_mode": "wrap"}),
    ("RandomTranslation", {"height_factor": (0.5, 0.5), "width_factor": (0.0, 0.0), "fill_mode": "constant"}),
    ("RandomTranslation", {"height_factor": (0.25, 0.25), "width_factor": (-0.3, -0.3)}),
    ("RandomZoom", {"height_factor": (0.5, 0.5), "fill_mode": "nearest"}),
    ("RandomZoom", {"height_factor": (-0.4, -0.4), "width_factor": (0.2, 0.2)}),
], ids=lambda v: str(v))
def test_augmentations_with_a_fixed_factor_agree_with_keras(name, kwargs):
    x = np.arange(2 * 6 * 7, dtype=np.float32).reshape(2, 6, 7, 1)
    results = [getattr(tf.keras.layers, name)(**kwargs)(tf.constant(x), training=True).numpy()
               for tf in (tf_real, tapejax)]
    np.testing.assert_allclose(results[1], results[0], rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "nearest", "constant"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_fill_modes_agree_with_keras(fill_mode, interpolation):
    x = np.random.default_rng(43).normal(size=(1, 5, 7, 2)).astype(np.float32)
    kwargs = {"fill_mode": fill_mode, "interpolation": interpolation, "fill_value": 0.5}
    results = [tf.keras.layers.RandomRotation((0.13, 0.13), **kwargs)(tf.constant(x), training=True).numpy()
               for tf in (tf_real, tapejax)]
    np.testing.assert_allclose(results[1], results[0], rtol=1e-4, atol=1e-4)
    results = [tf.keras.layers.RandomTranslation((0.7, 0.7), (-0.9, -0.9), **kwargs)(tf.constant(x),
                                                                                      training=True).numpy()
               for tf in (tf_real, tapejax)]
    np.testing.assert_allclose(results[1], results[0], rtol=1e-4, atol=1e-4)
