"""tf.keras.applications: each family's `preprocess_input` and `decode_predictions`, and the VGG16/VGG19 models
without their ImageNet weights (tapejax/keras/applications_vgg.py; the other models are not provided).

`preprocess_input` follows Keras's three modes: "caffe" (RGB to BGR, then the ImageNet channel means
subtracted: resnet50, resnet, vgg16, vgg19), "tf" (scaled to [-1, 1]: mobilenet, mobilenet_v2, inception_v3,
xception, ...), "torch" (scaled to [0, 1], then normalized by the ImageNet mean and std: densenet);
efficientnet's is the identity (the model rescales). NumPy in, NumPy out (integer images become float32);
tensors in, tensors out.

>>> import numpy as np, tapejax as tf
>>> tf.keras.applications.mobilenet_v2.preprocess_input(np.array([[0., 255.]]))
array([[-1.,  1.]])

`decode_predictions` needs ImageNet's class index, `imagenet_class_index.json`, which Keras downloads once into
`~/.keras/models/`. tapejax downloads nothing: it reads that file when it is there (`$KERAS_HOME/models/` or
`~/.keras/models/`), and otherwise raises a RuntimeError saying where to put it.
"""

from __future__ import annotations

import json
import os
import types
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras import backend

_CAFFE_MEAN = (103.939, 116.779, 123.68)  # BGR
_TORCH_MEAN, _TORCH_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
CLASS_INDEX_URL = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"


def _preprocess_numpy(x: np.ndarray, mode: str, data_format: str) -> np.ndarray:
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(backend.floatx(), copy=False)
    channel_axis = -1 if data_format == "channels_last" else (1 if x.ndim == 4 else 0)
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        x = np.flip(x, axis=channel_axis)  # RGB -> BGR
        mean, std = _CAFFE_MEAN, None
    shape = [1] * x.ndim
    shape[channel_axis] = 3
    x = x - np.reshape(np.asarray(mean, x.dtype), shape)
    if std is not None:
        x = x / np.reshape(np.asarray(std, x.dtype), shape)
    return x


def preprocess_input(x: Any, data_format: str | None = None, mode: str = "caffe") -> Any:
    """`imagenet_utils.preprocess_input`: scales a batch of RGB images as the model family expects (`mode`)."""
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    data_format = data_format or backend.image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Expected data_format to be one of `channels_first` or `channels_last`. Received: "
                         f"data_format={data_format}")
    if isinstance(x, tf.Tensor | tf.Variable):
        dtype = x.dtype if x.dtype.is_floating else tf.as_dtype(backend.floatx())
        return tf.constant(_preprocess_numpy(np.asarray(x).astype(dtype.as_numpy_dtype), mode, data_format))
    return _preprocess_numpy(np.asarray(x), mode, data_format)


def _class_index_path() -> str:
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return os.path.join(home, "models", "imagenet_class_index.json")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[str, str, float]]]:
    """The `top` ImageNet classes of each row of `preds` (samples, 1000), as (class id, name, score), best first.

    Raises:
      ValueError: `preds` is not (samples, 1000), as in Keras.
      RuntimeError: the class index file is not on this machine (tapejax does not download it; Keras would).
    """
    preds = np.asarray(preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape (samples, "
                         f"1000)). Received array with shape: {preds.shape}")
    path = _class_index_path()
    if not os.path.exists(path):
        raise RuntimeError(f"decode_predictions needs ImageNet's class index, which Keras downloads from "
                           f"{CLASS_INDEX_URL}; tapejax downloads nothing. Save that file as {path} (or under "
                           "$KERAS_HOME/models/) and call decode_predictions again.")
    with open(path) as file:
        class_index = json.load(file)
    results = []
    for row in preds:
        best = row.argsort()[-top:][::-1]
        decoded = [(*class_index[str(i)], row[i]) for i in best]
        decoded.sort(key=lambda item: item[2], reverse=True)
        results.append([tuple(item) for item in decoded])
    return results


def _family(name: str, mode: str | None) -> types.ModuleType:
    module = types.ModuleType(f"{__name__}.{name}", f"tf.keras.applications.{name}: preprocess_input (mode "
                                                    f"{mode or 'identity'}) and decode_predictions.")

    def family_preprocess(x: Any, data_format: str | None = None) -> Any:
        if mode is None:  # efficientnet: the model rescales its own inputs
            return x
        return preprocess_input(x, data_format=data_format, mode=mode)

    family_preprocess.__name__ = "preprocess_input"
    family_preprocess.__doc__ = f"Keras's {name}.preprocess_input: " + (
        f'mode "{mode}".' if mode else "the identity (the model rescales its inputs itself).")
    module.preprocess_input = family_preprocess
    module.decode_predictions = decode_predictions
    return module


imagenet_utils = types.ModuleType(f"{__name__}.imagenet_utils")
imagenet_utils.preprocess_input = preprocess_input
imagenet_utils.decode_predictions = decode_predictions

resnet50 = _family("resnet50", "caffe")
resnet = _family("resnet", "caffe")
vgg16 = _family("vgg16", "caffe")
vgg19 = _family("vgg19", "caffe")
mobilenet = _family("mobilenet", "tf")
mobilenet_v2 = _family("mobilenet_v2", "tf")
mobilenet_v3 = _family("mobilenet_v3", None)
inception_v3 = _family("inception_v3", "tf")
inception_resnet_v2 = _family("inception_resnet_v2", "tf")
xception = _family("xception", "tf")
resnet_v2 = _family("resnet_v2", "tf")
densenet = _family("densenet", "torch")
efficientnet = _family("efficientnet", None)
efficientnet_v2 = _family("efficientnet_v2", None)
convnext = _family("convnext", None)


from tapejax.keras.applications_vgg import VGG16 as VGG16, VGG19 as VGG19  # noqa: E402

vgg16.VGG16, vgg19.VGG19 = VGG16, VGG19

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.applications")
