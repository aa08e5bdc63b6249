"""Keras 3's configurations: `get_config`/`from_config` and the `{"module", "class_name", "config",
"registered_name"}` dictionaries of `config.json` in a `.keras` file, written so that real Keras reads them and
read from the files real Keras writes.

A layer's configuration is, as in Keras 3's automatic `get_config`, the arguments its constructor was called
with (recorded by `Layer.__new__`), plus `name`, `trainable` and `dtype`; arguments left at their defaults are
left out (Keras fills in the same defaults). A Sequential model lists its layers (its Input first); a
functional model lists its layers with the calls (`inbound_nodes`) that link them, by layer name, node and
tensor index. Arguments Keras writes that tapejax's layers do not take are dropped when tapejax reads them.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

import tapejax as tf

_REGISTERED: dict[str, type] = {}  # "Package>Name" -> class (tf.keras.saving.register_keras_serializable)


def register_keras_serializable(package: str = "Custom", name: str | None = None) -> Any:
    """Registers a class (a custom layer or model) under "package>name" for `load_model` and `from_config`."""
    def decorator(cls: type) -> type:
        key = f"{package}>{name or cls.__name__}"
        if key in _REGISTERED and _REGISTERED[key] is not cls:
            raise ValueError(f"{key} has already been registered to {_REGISTERED[key]}")
        _REGISTERED[key] = cls
        cls._registered_name = key
        return cls
    return decorator


def _module_of(obj: Any) -> str:
    from tapejax.keras.layers import Layer
    from tapejax.keras.models import Functional, Model, Sequential

    cls = type(obj)
    if not cls.__module__.startswith("tapejax"):
        return cls.__module__
    if isinstance(obj, Sequential):
        return "keras"
    if isinstance(obj, Functional):
        return "keras.src.models.functional"
    if isinstance(obj, Model):
        return "keras"
    return "keras.layers" if isinstance(obj, Layer) else "keras"


def serialize(obj: Any) -> dict[str, Any]:
    """Keras's `serialize_keras_object` for a layer or model."""
    registered = type(obj).__dict__.get("_registered_name")
    found = {"module": _module_of(obj), "class_name": type(obj).__name__, "config": obj.get_config(),
             "registered_name": registered}
    shape = obj.__dict__.get("_build_input_shape")
    if shape is not None:
        found["build_config"] = {"input_shape": _value(shape, "input_shape")}
    return found


def _value(value: Any, what: str) -> Any:
    """An argument as JSON, as Keras writes it."""
    from tapejax.keras import activations
    from tapejax.keras.layers import Layer

    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tf.TensorShape):
        return None if value.rank is None else list(value.as_list())
    if isinstance(value, list | tuple):
        return [_value(v, what) for v in value]
    if isinstance(value, dict):
        return {str(k): _value(v, what) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tf.DType):
        return value.name
    if isinstance(value, Layer):
        return serialize(value)
    if callable(value) and getattr(value, "__name__", None) in activations._BY_NAME:
        return value.__name__  # as Keras 3: a function named as an activation (tf.nn.relu too) by its name
    if hasattr(value, "get_config"):
        module = type(value).__module__.replace("tapejax.", "").split(".")
        return {"module": ".".join(module[:2]) if module[0] == "keras" else "keras.initializers",
                "class_name": type(value).__name__, "config": _value(value.get_config(), what),
                "registered_name": None}
    raise NotImplementedError(f"The argument {what}={value!r} cannot be written to a Keras config; give the class "
                              "a `get_config` method that returns JSON-serializable values (as in Keras).")


def layer_config(layer: Any) -> dict[str, Any]:
    """`Layer.get_config()`: the constructor's arguments, with the layer's name, trainable and dtype."""
    from tapejax.keras.layers import _INIT_ARGS

    args, kwargs = _INIT_ARGS.get(layer, ((), {}))
    signature = inspect.signature(type(layer).__init__)
    try:
        bound = signature.bind_partial(layer, *args, **kwargs).arguments
    except TypeError:
        bound = dict(kwargs)
    config: dict[str, Any] = {"name": layer.name, "trainable": layer.trainable, "dtype": layer.dtype.name}
    for name, value in bound.items():
        parameter = signature.parameters.get(name)
        if name == "self" or name in config:
            continue
        if parameter is not None and parameter.kind is parameter.VAR_KEYWORD:
            config.update({k: _argument(v, k) for k, v in value.items() if k not in config})
        elif parameter is not None and parameter.kind is parameter.VAR_POSITIONAL:
            if value:
                raise NotImplementedError(f"{type(layer).__name__} takes *args: give it a `get_config` method.")
        else:
            config[name] = _argument(value, name)
    return config


def _argument(value: Any, name: str) -> Any:
    """A constructor argument as JSON: an activation's name as Keras saves it ("swish" as "silu")."""
    from tapejax.keras import activations

    if name in ("activation", "recurrent_activation") and isinstance(value, str) and value in activations._BY_NAME:
        return activations.serialize(activations.get(value))
    return _value(value, name)


def model_config(model: Any) -> dict[str, Any]:
    """`Model.get_config()`: a Sequential's layers, a functional model's layers and calls, or (a subclassed
    model) its constructor's arguments."""
    from tapejax.keras.models import Functional, Sequential

    if isinstance(model, Sequential):
        layers = [serialize(layer) for layer in model.layers]
        spec = model._input_spec
        if spec is not None:
            layers.insert(0, {"module": "keras.layers", "class_name": "InputLayer", "registered_name": None,
                              "config": {"batch_shape": _value(spec.shape, "shape"), "dtype": spec.dtype.name,
                                         "sparse": False, "ragged": False, "name": _input_name(spec)}})
        config = {"name": model.name, "trainable": model.trainable, "dtype": model.dtype.name, "layers": layers}
        if spec is not None:
            config["build_input_shape"] = _value(spec.shape, "shape")
        return config
    if isinstance(model, Functional):
        return _functional_config(model)
    return layer_config(model)


def _input_name(spec: Any) -> str:
    name = spec.name or ""
    return "input_layer" if not name or name.startswith(("keras_tensor", "input_spec")) else name


def _functional_config(model: Any) -> dict[str, Any]:
    from tapejax.keras.layers import InputLayer, KerasTensor, _leaves, _Operation

    nodes = set(model._nodes)
    index_of: dict[Any, int] = {}
    for layer in model._functional_layers:
        if isinstance(layer, _Operation):
            raise NotImplementedError(f"Model {model.name!r} applies an operation to KerasTensors directly "
                                      f"({layer.name}); tapejax cannot write such a model's config yet: use a "
                                      "layer (tf.keras.layers.Add, Lambda, ...) instead.")
        for node in layer._inbound_nodes:
            if node in nodes:
                index_of[node] = len([n for n in index_of if n.layer is layer])

    def history(tensor: KerasTensor) -> list[Any]:
        layer, node_index, tensor_index = tensor._keras_history
        return [layer.name, index_of[layer._inbound_nodes[node_index]], tensor_index]

    def arguments(value: Any) -> Any:
        if isinstance(value, KerasTensor):
            return {"class_name": "__keras_tensor__", "config": {"shape": _value(value.shape, "shape"),
                    "dtype": tf.as_dtype(value.dtype).name, "keras_history": history(value)}}
        if isinstance(value, list | tuple):
            return [arguments(v) for v in value]
        if isinstance(value, dict):
            return {k: arguments(v) for k, v in value.items()}
        return _value(value, "argument")

    layers = []
    for layer in model._functional_layers:
        if isinstance(layer, InputLayer):
            entry = {"module": "keras.layers", "class_name": "InputLayer", "registered_name": None,
                     "config": {"batch_shape": list(layer.batch_shape), "dtype": layer.dtype.name, "sparse": False,
                                "ragged": False, "name": layer.name}, "name": layer.name, "inbound_nodes": []}
        else:
            entry = {**serialize(layer), "name": layer.name, "inbound_nodes": [
                {"args": [arguments(node.inputs), *arguments(list(node.args))], "kwargs": arguments(node.kwargs)}
                for node in layer._inbound_nodes if node in nodes]}
        layers.append(entry)

    def ends(structure: Any) -> Any:
        if isinstance(structure, KerasTensor):
            return history(structure)
        if isinstance(structure, dict):
            return {k: ends(v) for k, v in structure.items()}
        return [ends(v) for v in structure]

    inputs = model._inputs_structure
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": ends(inputs),
            "output_layers": ends(model._outputs_structure)}


# -- reading -----------------------------------------------------------------------------------------------

def find_class(config: dict[str, Any], custom_objects: dict[str, Any] | None) -> type:
    """The class a Keras dictionary names: custom objects and registered classes first, then tapejax's."""
    from tapejax.keras import layers, models

    name, registered = config.get("class_name"), config.get("registered_name")
    for key in (registered, name):
        if key and custom_objects and key in custom_objects:
            return custom_objects[key]
        if key and key in _REGISTERED:
            return _REGISTERED[key]
    module = config.get("module") or ""
    if module == "keras" or module.startswith("keras."):
        for namespace in (models, layers):
            found = namespace.__dict__.get(name)
            if isinstance(found, type):
                return found
    raise TypeError(f"Could not locate class '{name}'. Make sure custom classes are decorated with "
                    "`@keras.saving.register_keras_serializable()` (tf.keras.saving in tapejax) or passed in "
                    f"`custom_objects`. Full object config: {config}")


def deserialize(config: Any, custom_objects: dict[str, Any] | None = None) -> Any:
    """Keras's `deserialize_keras_object` for the layers and models tapejax has, and the objects their
    arguments hold (initializers, regularizers, constraints, dtype policies, tuples)."""
    if isinstance(config, list):
        return [deserialize(v, custom_objects) for v in config]
    if not isinstance(config, dict):
        return config
    if "class_name" not in config or "config" not in config:
        return {k: deserialize(v, custom_objects) for k, v in config.items()}
    name, module, inner = config["class_name"], config.get("module") or "", config["config"]
    if name == "__tuple__":
        return tuple(deserialize(inner["value"], custom_objects))
    if name == "__keras_tensor__":
        return config
    if name in ("DTypePolicy", "FloatDTypePolicy"):
        return inner["name"]
    kinds = {"keras.initializers": "initializers", "keras.regularizers": "regularizers",
             "keras.constraints": "constraints", "keras.optimizers": "optimizers", "keras.losses": "losses",
             "keras.metrics": "metrics"}
    if module in kinds:
        import importlib

        namespace = importlib.import_module(f"tapejax.keras.{kinds[module]}")
        cls = getattr(namespace, "_BY_NAME", {}).get(name) or getattr(namespace, name, None)
        if isinstance(cls, str):
            cls = getattr(namespace, cls)
        if not isinstance(cls, type):
            raise NotImplementedError(f"tapejax has no {module}.{name} to read this config: {config}")
        inner = deserialize(inner, custom_objects)
        if module == "keras.optimizers" and not inner.get("use_ema"):
            for key in ("use_ema", "ema_momentum", "ema_overwrite_frequency"):  # Keras writes them always
                inner.pop(key, None)
        return _construct(cls, inner)
    cls = find_class(config, custom_objects)
    from_config = getattr(cls, "from_config")
    built = from_config(deserialize(inner, custom_objects)) if module != "keras.src.models.functional" and \
        not issubclass_functional(cls) else from_config(inner, custom_objects)
    shape = (config.get("build_config") or {}).get("input_shape")
    if shape is not None and not built.built and _is_model(built):  # other layers build when called
        built.build(_shape(shape))
    return built


def _is_model(obj: Any) -> bool:
    from tapejax.keras.models import Model

    return isinstance(obj, Model)


def issubclass_functional(cls: type) -> bool:
    from tapejax.keras.models import Functional, Sequential

    return issubclass(cls, Functional | Sequential)


def _shape(shape: Any) -> Any:
    if isinstance(shape, list) and all(d is None or isinstance(d, int) for d in shape):
        return tuple(shape)
    return [_shape(s) for s in shape] if isinstance(shape, list) else shape


def _construct(cls: type, config: dict[str, Any]) -> Any:
    """`cls(**config)`, leaving out the arguments Keras writes that `cls` does not take."""
    from tapejax.keras.layers import READING_CONFIG

    parameters = inspect.signature(cls.__init__).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        config = {k: v for k, v in config.items() if k in parameters}
    previous, READING_CONFIG.on = getattr(READING_CONFIG, "on", False), True
    try:
        return cls(**config)
    finally:
        READING_CONFIG.on = previous


def layer_from_config(cls: type, config: dict[str, Any]) -> Any:
    """`Layer.from_config(config)`: the layer made from its configuration (new weights)."""
    config = {k: deserialize(v) for k, v in config.items()}
    return _construct(cls, config)


def model_from_config(cls: type, config: dict[str, Any], custom_objects: dict[str, Any] | None) -> Any:
    from tapejax.keras.models import Functional, Sequential

    if issubclass(cls, Sequential):
        layers = [deserialize(entry, custom_objects) for entry in config.get("layers", [])]
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for layer in layers:
            model.add(layer.output if _is_input_layer(layer) else layer)
        shape = config.get("build_input_shape")
        if shape is not None and not model.built:
            model.build(_shape(shape))
        return model
    if issubclass(cls, Functional) or "input_layers" in config:
        return _functional_from_config(cls, config, custom_objects)
    return _construct(cls, deserialize(config, custom_objects))


def _is_input_layer(layer: Any) -> bool:
    from tapejax.keras.layers import InputLayer

    return isinstance(layer, InputLayer)


def _functional_from_config(cls: type, config: dict[str, Any], custom_objects: dict[str, Any] | None) -> Any:
    from tapejax.keras.models import Functional

    made: dict[str, Any] = {}
    outputs: dict[tuple[str, int], list[Any]] = {}
    pending: list[tuple[str, int, dict[str, Any]]] = []
    for entry in config["layers"]:
        layer = deserialize({k: v for k, v in entry.items() if k not in ("name", "inbound_nodes")}, custom_objects)
        made[entry["name"]] = layer
        if _is_input_layer(layer):
            outputs[(entry["name"], 0)] = [layer.output]
        pending += [(entry["name"], i, node) for i, node in enumerate(entry.get("inbound_nodes", []))]

    def resolve(value: Any) -> Any:
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            name, node, index = value["config"]["keras_history"]
            return outputs[(name, node)][index]
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    def ready(value: Any) -> bool:
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            return tuple(value["config"]["keras_history"][:2]) in outputs
        if isinstance(value, list | dict):
            return all(ready(v) for v in (value.values() if isinstance(value, dict) else value))
        return True

    while pending:  # calls in an order whose inputs exist (Keras lists layers, not calls, in order)
        progress = [p for p in pending if ready(p[2]) and all((p[0], i) in outputs for i in range(p[1]))]
        if not progress:
            raise ValueError(f"Cannot rebuild the functional model {config.get('name')!r}: the calls of "
                             f"{sorted({p[0] for p in pending})} refer to tensors that no call makes.")
        name, index, node = progress[0]
        args, kwargs = resolve(node.get("args", [])), resolve(node.get("kwargs", {}))
        result = made[name](*args, **kwargs)
        outputs[(name, index)] = list(tf.nest.flatten(result))
        pending.remove(progress[0])

    def ends(structure: Any) -> Any:
        if isinstance(structure, list) and len(structure) == 3 and isinstance(structure[0], str):
            return outputs[(structure[0], structure[1])][structure[2]]
        if isinstance(structure, dict):
            return {k: ends(v) for k, v in structure.items()}
        return [ends(v) for v in structure]

    inputs, result = ends(config["input_layers"]), ends(config["output_layers"])
    if isinstance(inputs, list) and len(inputs) == 1:
        inputs = inputs[0]
    if isinstance(result, list) and len(result) == 1 and not isinstance(config["output_layers"][0], list):
        result = result[0]
    target = cls if issubclass(cls, Functional) else Functional
    return target(inputs=inputs, outputs=result, name=config.get("name"), trainable=config.get("trainable", True))
