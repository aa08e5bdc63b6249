"""VGG16 and VGG19 (weights=None) in tapejax and in TensorFlow's Keras: the same layers (names, kinds, output
shapes, weight shapes), parameter counts, outputs from the same weights, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax
from tests.compat.compare import assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

CONFIGS = [
    ("VGG19", {}), ("VGG16", {"input_shape": (32, 32, 3)}), ("VGG16", {"include_top": False, "pooling": "avg"}),
    ("VGG19", {"include_top": False, "input_shape": (64, 48, 3), "pooling": "max"}),
    ("VGG16", {"include_top": False}), ("VGG19", {"input_shape": (32, 32, 3), "classes": 7,
                                                  "classifier_activation": None, "name": "mine"}),
]


def _structure(tf, name, kwargs):
    tf.keras.backend.clear_session()
    model = getattr(tf.keras.applications, name)(weights=None, **kwargs)
    return (model.name, model.count_params(), model.output_shape,
            [(type(layer).__name__, layer.name, [tuple(w.shape) for w in layer.weights]) for layer in model.layers])


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_architecture_matches_keras(name, kwargs):
    got, expected = _structure(tapejax, name, kwargs), _structure(tf_real, name, kwargs)
    assert got[:3] == expected[:3]
    assert [layer[0:] for layer in got[3][1:]] == [layer[0:] for layer in expected[3][1:]]  # after the Input


def test_outputs_match_keras_from_the_same_weights():
    rng = np.random.default_rng(0)
    theirs = tf_real.keras.applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
    ours = tapejax.keras.applications.vgg16.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
    weights = [rng.normal(scale=0.05, size=w.shape).astype("float32") for w in theirs.get_weights()]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    x = rng.uniform(size=(2, 32, 32, 3)).astype("float32")
    np.testing.assert_allclose(ours(x).numpy(), theirs(x).numpy(), rtol=1e-4, atol=1e-3)  # 13 float32 convolutions deep


@pytest.mark.parametrize("snippet", [
    lambda tf: tf.keras.applications.VGG19(weights=3),
    lambda tf: tf.keras.applications.vgg19.VGG19.__name__,
])
def test_errors_match_keras(snippet):
    assert_same_outcome(snippet, tapejax, tf_real)
