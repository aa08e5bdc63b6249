"""VGG16/VGG19 built with weights=None: Keras's layer names and sizes, and the ImageNet weights refused."""

from __future__ import annotations

import pytest

import tapejax as tf


def test_vgg19_layers_and_parameter_count():
    model = tf.keras.applications.VGG19(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    convs = [layer for layer in model.layers if isinstance(layer, tf.keras.layers.Conv2D)]
    assert len(convs) == 16 and convs[-1].name == "block5_conv4"
    # each 3x3 convolution has 9 * in * out weights and out biases
    sizes = [3] + [64] * 2 + [128] * 2 + [256] * 4 + [512] * 8
    assert model.count_params() == sum(9 * i * o + o for i, o in zip(sizes, sizes[1:]))
    assert model.output_shape == (None, 512)
    assert tf.keras.applications.vgg19.VGG19 is tf.keras.applications.VGG19


def test_top_and_errors():
    model = tf.keras.applications.VGG16(weights=None, input_shape=(32, 32, 3), classes=5)
    assert [layer.name for layer in model.layers[-4:]] == ["flatten", "fc1", "fc2", "predictions"]
    assert model.output_shape == (None, 5) and model(tf.zeros([1, 32, 32, 3])).shape == (1, 5)
    with pytest.raises(NotImplementedError, match="weights=None"):
        tf.keras.applications.VGG16()
    with pytest.raises(ValueError, match="weights"):
        tf.keras.applications.VGG16(weights=3)
