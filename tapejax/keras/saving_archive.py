"""Keras 3's `.keras` file: a zip of `metadata.json`, `config.json` (the model's configuration, with its
compile configuration once compiled: saving_config.py) and `model.weights.h5` (saving_weights.py's layout,
the optimizer's state included). `model.save`, `tf.keras.models.load_model` and `clone_model` live here.

Supported: Sequential and functional models of tapejax's layers, nested models, and custom layers and models
whose constructor arguments are JSON values (Keras 3's automatic config) or that define `get_config`; loading a
custom class needs `custom_objects` or `tf.keras.saving.register_keras_serializable`, as in Keras. Not
supported: functional models that apply operations to KerasTensors directly (`x + y`; use a layer), learning
rate schedules in the compile configuration, legacy `.h5` models and SavedModel directories.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import tempfile
import zipfile
from typing import Any

from tapejax.keras import saving_config, saving_weights

_KERAS_VERSION = "3.15.1"  # the Keras of TF 2.21, whose files these are


def save_model(model: Any, filepath: Any, overwrite: bool = True, zipped: bool | None = None,
               **kwargs: Any) -> None:
    """`model.save(filepath)` / `tf.keras.models.save_model`: see `Model.save`."""
    if kwargs.get("save_format") not in (None, "keras"):
        raise ValueError("The `save_format` argument is deprecated in Keras 3. Use a `.keras` extension.")
    filepath = os.fspath(filepath)
    if filepath.endswith(".h5") or filepath.endswith(".hdf5"):
        raise NotImplementedError("tapejax does not write legacy HDF5 (`.h5`) models: save to a `.keras` file "
                                  "(Keras 3's format, which real Keras reads).")
    if not filepath.endswith(".keras") or zipped is False:
        raise ValueError("Invalid filepath extension for saving. Please add either a `.keras` extension for the "
                         "native Keras format (recommended) or a `.h5` extension. Use `model.export(filepath)` if "
                         f"you want to export a SavedModel for use with TFLite/TFServing/etc. Received: "
                         f"filepath={filepath}.")
    if not overwrite and os.path.exists(filepath) and not saving_weights._ask_to_overwrite(filepath):
        return
    h5py = saving_weights._h5py()
    config = saving_config.serialize(model)
    compile_config = _compile_config(model)
    if compile_config is not None:
        config["compile_config"] = compile_config
    weights = io.BytesIO()
    with h5py.File(weights, "w") as file:
        saving_weights.write_h5(model, file)
    metadata = {"keras_version": _KERAS_VERSION,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    temporary = f"{filepath}.tmp{os.getpid()}"  # written whole, then renamed
    try:
        with zipfile.ZipFile(temporary, "w") as archive:
            archive.writestr("metadata.json", json.dumps(metadata))
            archive.writestr("config.json", json.dumps(config))
            archive.writestr("model.weights.h5", weights.getvalue())
            _write_assets(model, archive)
        os.replace(temporary, filepath)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def _compile_config(model: Any) -> dict[str, Any] | None:
    args = model.__dict__.get("_compile_config")
    if not getattr(model, "compiled", False) or args is None:
        return None
    from tapejax.keras import losses

    optimizer = model.optimizer
    return {"optimizer": optimizer_config(optimizer), **{k: _compile_value(v, losses) for k, v in args.items()}}


def _compile_value(value: Any, losses: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_compile_value(v, losses) for v in value]
    if isinstance(value, dict):
        return {k: _compile_value(v, losses) for k, v in value.items()}
    if hasattr(value, "get_config"):
        kind = "keras.losses" if isinstance(value, losses.Loss) else "keras.metrics"
        return {"module": kind, "class_name": type(value).__name__, "config": value.get_config(),
                "registered_name": None}
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    raise NotImplementedError(f"tapejax cannot write {value!r} in a model's compile config.")


def optimizer_config(optimizer: Any) -> dict[str, Any]:
    """Keras's dictionary of an optimizer (its class and hyperparameters)."""
    import inspect

    import numpy as np

    from tapejax.keras.schedules import LearningRateSchedule

    rate = optimizer._learning_rate
    if isinstance(rate, LearningRateSchedule) or (callable(rate) and not hasattr(rate, "numpy")):
        raise NotImplementedError("tapejax cannot yet write an optimizer whose learning rate is a schedule or a "
                                  "callable to a `.keras` file; save the weights (`save_weights`) instead.")
    config: dict[str, Any] = {"name": optimizer.name, "learning_rate": float(np.asarray(optimizer.learning_rate)),
                              "weight_decay": optimizer.weight_decay, "clipnorm": optimizer.clipnorm,
                              "global_clipnorm": optimizer.global_clipnorm, "clipvalue": optimizer.clipvalue}
    for name in inspect.signature(type(optimizer).__init__).parameters:
        if name not in config and name not in ("self", "kwargs") and hasattr(optimizer, name):
            value = getattr(optimizer, name)
            config[name] = value.item() if isinstance(value, np.generic) else value
    return {"module": "keras.optimizers", "class_name": type(optimizer).__name__, "config": config,
            "registered_name": None}


def _open(filepath: str) -> zipfile.ZipFile:
    if not zipfile.is_zipfile(filepath):
        raise ValueError(f"File format not supported: filepath={filepath}. tapejax's load_model reads Keras 3's "
                         "`.keras` zip files; legacy `.h5` models and SavedModel directories are not supported.")
    return zipfile.ZipFile(filepath, "r")


def load_model(filepath: Any, custom_objects: dict[str, Any] | None = None, compile: bool = True,
               safe_mode: bool = True) -> Any:
    """`tf.keras.models.load_model`: the model of a `.keras` file written by tapejax or by real Keras, with its
    weights, and (with `compile=True`) compiled as it was, its optimizer's state restored."""
    filepath = os.fspath(filepath)
    if not filepath.endswith(".keras"):
        if not os.path.exists(filepath):
            raise ValueError(f"File not found: filepath={filepath}. Please ensure the file is an accessible "
                             "`.keras` zip file.")
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports V3 `.keras` "
                         "files (legacy `.h5` models and SavedModel directories are not read by tapejax).")
    h5py = saving_weights._h5py()
    with _open(filepath) as archive:
        config = json.loads(archive.read("config.json"))
        weights = io.BytesIO(archive.read("model.weights.h5"))
        assets = {name: archive.read(name) for name in archive.namelist() if name.startswith("assets/")}
    model = saving_config.deserialize({k: v for k, v in config.items() if k != "compile_config"}, custom_objects)
    compile_config = config.get("compile_config")
    if compile and compile_config:
        _compile_from_config(model, compile_config, custom_objects)
    with h5py.File(weights, "r") as file:
        saving_weights.read_h5(model, file)
    _read_assets(model, assets)
    return model


def _write_assets(model: Any, archive: zipfile.ZipFile) -> None:
    """Keras's `save_assets(dir)` hook (TextVectorization's vocabulary): each object's files go to
    `assets/<its path in the weights file>/` in the archive."""
    for path, obj in saving_weights.walk(model):
        if hasattr(obj, "save_assets"):
            with tempfile.TemporaryDirectory() as directory:
                obj.save_assets(directory)
                for name in sorted(os.listdir(directory)):
                    with open(os.path.join(directory, name), "rb") as f:
                        archive.writestr(f"assets/{path}/{name}" if path else f"assets/{name}", f.read())


def _read_assets(model: Any, assets: dict[str, bytes]) -> None:
    for path, obj in saving_weights.walk(model):
        prefix = f"assets/{path}/" if path else "assets/"
        files = {name[len(prefix):]: data for name, data in assets.items()
                 if name.startswith(prefix) and "/" not in name[len(prefix):]}
        if hasattr(obj, "load_assets") and files:
            with tempfile.TemporaryDirectory() as directory:
                for name, data in files.items():
                    with open(os.path.join(directory, name), "wb") as f:
                        f.write(data)
                obj.load_assets(directory)


def _compile_from_config(model: Any, config: dict[str, Any], custom_objects: dict[str, Any] | None) -> None:
    optimizer = saving_config.deserialize(config.get("optimizer"), custom_objects)
    args = {k: _compile_argument(config.get(k), custom_objects)
            for k in ("loss", "loss_weights", "metrics", "weighted_metrics")}
    model.compile(optimizer=optimizer, run_eagerly=bool(config.get("run_eagerly", False)),
                  steps_per_execution=config.get("steps_per_execution", 1),
                  jit_compile=config.get("jit_compile", "auto"), **args)
    if model.built:  # Keras builds the optimizer, so that the file's optimizer state loads into it
        model.optimizer.build(model.trainable_variables)


def _compile_argument(value: Any, custom_objects: dict[str, Any] | None) -> Any:
    if isinstance(value, dict) and "class_name" in value and "config" in value:
        if value["class_name"] == "function":  # a Keras function by name
            return value["config"]
        if custom_objects and value["class_name"] in custom_objects:
            return custom_objects[value["class_name"]].from_config(value["config"])
        return saving_config.deserialize(value, custom_objects)
    if isinstance(value, list):
        return [_compile_argument(v, custom_objects) for v in value]
    if isinstance(value, dict):
        return {k: _compile_argument(v, custom_objects) for k, v in value.items()}
    return value


def load_weights_from_archive(model: Any, filepath: str, skip_mismatch: bool = False) -> None:
    """`model.load_weights("m.keras")`: the weights of a `.keras` file."""
    h5py = saving_weights._h5py()
    with _open(filepath) as archive:
        weights = io.BytesIO(archive.read("model.weights.h5"))
        assets = {name: archive.read(name) for name in archive.namelist() if name.startswith("assets/")}
    with h5py.File(weights, "r") as file:
        saving_weights.read_h5(model, file, skip_mismatch)


def clone_model(model: Any, input_tensors: Any = None, clone_function: Any = None, **kwargs: Any) -> Any:
    """`tf.keras.models.clone_model`: a new model of the same configuration with new weights (Sequential,
    functional, or any model with a config). `input_tensors` and `clone_function` are not supported yet."""
    if input_tensors is not None or clone_function is not None or kwargs:
        raise NotImplementedError("clone_model's input_tensors, clone_function and other options are not "
                                  "implemented in tapejax.")
    return saving_config.deserialize(saving_config.serialize(model))
