"""tf.keras.applications.VGG16 and VGG19: Keras 3's architectures, layer by layer with Keras's layer names, so a
program that picks layers by name (`get_layer("block5_conv3")`, style transfer, Grad-CAM) finds them.

>>> import tapejax as tf
>>> model = tf.keras.applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
>>> model.name, model.get_layer("block5_conv3").filters, model.output_shape
('vgg16', 512, (None, 1, 1, 512))

Differences from TensorFlow: `weights="imagenet"` (the default) raises NotImplementedError: the pretrained
weights are a Keras 2 HDF5 download that tapejax does not load; build with `weights=None` (a path to a weights
file is passed to `model.load_weights`).
"""

from __future__ import annotations

from typing import Any

import tapejax as tf

_BLOCKS = {"vgg16": (2, 2, 3, 3, 3), "vgg19": (2, 2, 4, 4, 4)}
_FILTERS = (64, 128, 256, 512, 512)


def _vgg(kind: str, name: str, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Any,
         classes: int, classifier_activation: Any) -> Any:
    layers = tf.keras.layers
    if weights == "imagenet":
        raise NotImplementedError(f"tapejax does not load the ImageNet weights of {kind.upper()} (a Keras 2 HDF5 "
                                  "download): pass weights=None.")
    if weights is not None and not isinstance(weights, str):
        raise ValueError("The `weights` argument should be either `None` (random initialization), 'imagenet' "
                         "(pre-training on ImageNet), or the path to the weights file to be loaded. Received: "
                         f"weights={weights}")
    if input_tensor is not None:
        inputs = input_tensor
    else:
        shape = tuple(input_shape) if input_shape is not None else ((224, 224, 3) if include_top else (None, None, 3))
        inputs = tf.keras.Input(shape=shape)
    x = inputs
    for block, (convs, filters) in enumerate(zip(_BLOCKS[kind], _FILTERS), start=1):
        for conv in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{conv}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = tf.keras.Model(inputs, x, name=name)
    if weights is not None:
        model.load_weights(weights)
    return model


def VGG16(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
          pooling: Any = None, classes: int = 1000, classifier_activation: Any = "softmax", name: str = "vgg16") -> Any:
    """VGG16 (13 convolutions in 5 blocks, then 3 dense layers when `include_top`), as Keras builds it."""
    return _vgg("vgg16", name, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation)


def VGG19(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
          pooling: Any = None, classes: int = 1000, classifier_activation: Any = "softmax", name: str = "vgg19") -> Any:
    """VGG19 (16 convolutions in 5 blocks, then 3 dense layers when `include_top`), as Keras builds it."""
    return _vgg("vgg19", name, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation)
