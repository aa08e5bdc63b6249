"""tf.keras.Model (subclassed and functional) and tf.keras.Sequential, with Keras 3's `summary()` table.

A subclassed model is a Layer whose sublayers are its attributes: it builds on its first call, and its weights
have paths under its own name (`my_model/dense/kernel`). A Sequential model with a `tf.keras.Input` first, and
any model given to `build(input_shape)`, is built at once by running it on zeros (`layers._probe`), which also
gives every layer its output shape for `summary()`, with None where the batch (or another unknown dimension) is.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import warnings
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import tapejax as tf
from tapejax.keras import checkpointing, distribution
from tapejax.keras.training import Trainer
from tapejax.keras.layers import (InputLayer, KerasTensor, Layer, _leaves, _Node, _Operation, _probe, _shapes_of,
                                  _takes_training, _unique_name)


class Model(Trainer, Layer):
    """A model (`tf.keras.Model`): subclass it, make layers in `__init__`, and define `call`.

    `layers` lists the layers held by its attributes in assignment order; `weights` (= `variables`),
    `trainable_weights` and `non_trainable_weights` list theirs in that order. The model builds on its first
    call, or at `build(input_shape)`. `tf.keras.Model(inputs=..., outputs=...)` makes a functional model from
    `tf.keras.Input` tensors.

    >>> import tapejax as tf
    >>> class TwoLayers(tf.keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = tf.keras.layers.Dense(4, activation="relu")
    ...         self.out = tf.keras.layers.Dense(1)
    ...     def call(self, inputs, training=None):
    ...         return self.out(self.hidden(inputs))
    >>> model = TwoLayers()
    >>> model(tf.ones([2, 3])).shape
    TensorShape([2, 1])
    >>> [layer.name for layer in model.layers] == [model.hidden.name, model.out.name]
    True
    >>> model.trainable_variables[0].path == f"{model.name}/{model.hidden.name}/kernel"
    True

    Differences from TensorFlow: `build(input_shape)` on a subclassed model builds its layers by running
    `call` on zeros (TF 2.21's Keras 3 only warns and marks the model built, leaving its layers unbuilt).
    """

    def __new__(cls, *args: Any, **kwargs: Any):
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            cls = Functional  # as Keras does: Model(inputs, outputs) is a Functional
        elif (len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or {"inputs", "outputs"} <= kwargs.keys()) \
                and not issubclass(cls, Functional | Sequential) and _symbolic_arguments(args, kwargs):
            cls = _functional_subclass(cls)  # a subclass given inputs/outputs (the "customizing fit" guide)
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, *args: Any, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 **kwargs: Any):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError(f"{type(self).__name__}.__init__ got inputs/outputs: tapejax makes functional models "
                            "only as tf.keras.Model(inputs=..., outputs=...), not from a subclass.")
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._distribute_strategy = distribution.current_strategy()

    @property
    def layers(self) -> list[Layer]:
        return self._sublayers()

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """The layer of `layers` with this name, or at this index."""
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[layer.name for layer in self.layers]}.")

    def _build_for_call(self, inputs: Any) -> None:
        self.__dict__["_build_input_shape"] = _shapes_of(inputs)  # Keras's build_config, for `.keras` files
        if type(self).build is not Model.build:  # a user's build; else the first call builds the layers
            self.build(_shapes_of(inputs))

    def build(self, input_shape: Any) -> None:
        """Builds the model by running `call` on zeros of `input_shape` (None dimensions allowed)."""
        self.__dict__["_build_input_shape"] = input_shape
        self._build_from(_specs(input_shape, tf.float32))

    def _build_from(self, specs: Any) -> None:
        with self._own_name_scope():
            treedef, shapes, _ = _probe(self.call, specs)
        self._clear_losses()  # the probe's losses are not a forward pass's
        self._output_shape = jax.tree_util.tree_unflatten(treedef, shapes)
        self.built = True

    def save_weights(self, filepath: Any, overwrite: bool = True, max_shard_size: Any = None) -> None:
        """Writes the weights (and the optimizer's state, once compiled) to `filepath`, which must end in
        `.weights.h5`, in Keras 3's HDF5 layout: real Keras's `load_weights` reads it, and a file real Keras
        wrote loads here (tapejax/keras/saving_weights.py). Needs h5py (`pip install tapejax[keras]`)."""
        from tapejax.keras import saving_weights

        saving_weights.save_weights(self, filepath, overwrite, max_shard_size)

    def load_weights(self, filepath: Any, skip_mismatch: bool = False, **kwargs: Any) -> None:
        """Loads a `.weights.h5` file (or the weights of a `.keras` file) written by `save_weights` or by real
        Keras. Layers are matched by their place in the model, not by name. A missing layer or a wrong shape
        raises Keras's ValueError naming the layers, and then no variable has changed (Keras 3 assigns the
        layers that fit); `skip_mismatch=True` warns instead and loads the rest. An optimizer whose number of
        variables differs (not built yet) is skipped with Keras's warning."""
        from tapejax.keras import saving_weights

        saving_weights.load_weights(self, filepath, skip_mismatch)

    def save(self, filepath: Any, overwrite: bool = True, zipped: bool | None = None, **kwargs: Any) -> None:
        """Saves the model as a `.keras` file, Keras 3's zip of `config.json`, `metadata.json` and
        `model.weights.h5`, which real Keras's `load_model` reads (tapejax/keras/saving_archive.py)."""
        from tapejax.keras import saving_archive

        saving_archive.save_model(self, filepath, overwrite, zipped, **kwargs)

    def get_config(self) -> dict[str, Any]:
        """The model's configuration as Keras 3 writes it (layers and, for a functional model, their calls)."""
        from tapejax.keras import saving_config

        return saving_config.model_config(self)

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> Model:
        """A new model (new weights) from `get_config()`'s dictionary, tapejax's or real Keras's."""
        from tapejax.keras import saving_config

        return saving_config.model_from_config(cls, config, custom_objects)

    def to_json(self, **kwargs: Any) -> str:
        """The model's `get_config()` as Keras's JSON (`tf.keras.models.model_from_json` reads it back)."""
        import json

        from tapejax.keras import saving_config

        return json.dumps(saving_config.serialize(self), **kwargs)

    def summary(self, line_length: int | None = None, positions: list[float] | None = None,
                print_fn: Callable[[str], Any] | None = None, expand_nested: bool = False,
                show_trainable: bool = False, layer_range: Any = None) -> None:
        """Prints Keras 3's summary table (`Model.summary`), as TF 2.21 prints it to a non-terminal.

        `print_fn` receives the whole text in one call, as in Keras 3. The width is Keras's:
        min(88, terminal columns - 4), or `line_length`; a layer's output shape is "?" until it has run.
        """
        text = _summary_text(self, line_length, positions, expand_nested, show_trainable, layer_range)
        if print_fn is None:
            print(text, end="")
        else:
            print_fn(text)


def _specs(input_shape: Any, dtype: Any) -> Any:
    """KerasTensors for a shape (a tuple of ints and None) or a list/dict of shapes."""
    if isinstance(input_shape, tf.TensorShape):
        return KerasTensor(input_shape, dtype, name="input_spec")
    if isinstance(input_shape, dict):
        return {k: _specs(v, dtype) for k, v in input_shape.items()}
    if isinstance(input_shape, list | tuple) and all(d is None or isinstance(d, int | np.integer)
                                                     for d in input_shape):
        return KerasTensor(input_shape, dtype, name="input_spec")
    if isinstance(input_shape, list | tuple):
        return type(input_shape)(_specs(s, dtype) for s in input_shape)
    raise ValueError(f"build() expects an input shape such as (None, 8), or a list of them; got {input_shape!r}.")


class Sequential(Model):
    """Layers applied in order (`tf.keras.Sequential`); `training=` reaches the layers that take it.

    With a `tf.keras.Input` first (or `build(input_shape)`), the model is built at once, so `summary()` and
    `weights` work before any call.

    >>> import tapejax as tf
    >>> model = tf.keras.Sequential([tf.keras.Input(shape=(8,)), tf.keras.layers.Dense(4)])
    >>> model.built, model.count_params(), model.layers[0].kernel.shape
    (True, 36, TensorShape([8, 4]))
    """

    _compiles_eager_calls = True  # an eager call in inference runs compiled whole (compiled_calls.py)

    def __init__(self, layers: list[Any] | None = None, trainable: bool = True, name: str | None = None):
        super().__init__(trainable=trainable, name=name)
        self._layers: list[Layer] = []
        self._input_spec: KerasTensor | None = None  # from an Input, or the first layer's `input_shape=`
        self._has_input_layer = False
        self._shapes_recorded = False
        self._called_spec: KerasTensor | None = None  # the first call's input, when no Input built the model
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._rebuild()

    @property
    def layers(self) -> list[Layer]:
        return list(self._layers)

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        return checkpointing.sequential_children(self)

    def add(self, layer: Any, rebuild: bool = True) -> None:
        """Appends a layer (or, first, a `tf.keras.Input`); a model that has its input shape is rebuilt."""
        if isinstance(layer, KerasTensor) and layer._keras_history is not None:
            layer = layer._keras_history[0]
        if isinstance(layer, InputLayer):
            if self._layers or self._input_spec is not None:
                raise ValueError(f"Sequential model '{self.name}' can take an Input only as its first element.")
            self._input_spec = KerasTensor(layer.batch_shape, layer.dtype, name=layer.output.name)
            self._has_input_layer = True
            return
        if not isinstance(layer, Layer):
            raise TypeError("Sequential.add expects an instance of tf.keras.layers.Layer (or a tf.keras.Input "
                            f"first); received {layer!r} of type {type(layer).__name__}.")
        if not self._layers and self._input_spec is None and layer._input_shape_arg is not None:
            warnings.warn("Do not pass an `input_shape`/`input_dim` argument to a layer. When using Sequential "
                          "models, prefer using an `Input(shape)` object as the first layer in the model instead.",
                          UserWarning, stacklevel=2)
            self._input_spec = KerasTensor((None, *layer._input_shape_arg), layer.dtype, name="input_spec")
            self._use_up_input_layer_name()
        self._layers.append(layer)
        if rebuild:
            self._rebuild()

    def pop(self, rebuild: bool = True) -> Layer:
        """Removes and returns the last layer."""
        if not self._layers:
            raise IndexError(f"There are no layers in the Sequential model '{self.name}' to pop.")
        layer = self._layers.pop()
        if rebuild:
            self._rebuild()
        return layer

    # Keras 3 defines `input_shape` (and `output_shape`, below) on Sequential and functional models only: a
    # tuple with None for the batch, known once the model is built (from an Input, or by its first call).
    @property
    def input_shape(self) -> tuple:
        spec = self._input_spec if self._input_spec is not None else self._called_spec
        if spec is None:
            raise AttributeError(f"Sequential model '{self.name}' has no defined input shape yet.")
        return tuple(spec.shape.as_list())

    def _rebuild(self) -> None:
        if self._input_spec is not None and self._layers:
            self._build_from(self._input_spec)

    def build(self, input_shape: Any = None) -> None:
        """Builds every layer for inputs of `input_shape`, such as (None, 8) (None: any size)."""
        if not self._layers:
            raise ValueError(f"Sequential model {self.name} cannot be built because it has no layers. "
                             "Call `model.add(layer)`.")
        if input_shape is None:
            if self._input_spec is None:
                raise ValueError("Sequential.build needs an input shape, e.g. model.build((None, 8)), or an "
                                 "Input first: tf.keras.Sequential([tf.keras.Input(shape=(8,)), ...]).")
            input_shape = self._input_spec.shape
        spec = _specs(input_shape, self._input_spec.dtype if self._input_spec is not None else tf.float32)
        if not isinstance(spec, KerasTensor):
            raise ValueError(f"A Sequential model has one input; build() got the shapes {input_shape!r}.")
        self._input_spec = spec
        self._build_from(spec)

    # Keras 3 builds a Sequential model as a functional model, from an InputLayer it makes if it has none, so
    # each build uses up a `functional` name, and the first an `input_layer` one; tapejax does the same, so that
    # the layers and models made later are named as in TF.
    def _use_up_input_layer_name(self) -> None:
        if not self._has_input_layer:
            _unique_name("input_layer"), _unique_name("keras_tensor")
            self._has_input_layer = True

    def _build_from(self, specs: Any) -> None:
        self._use_up_input_layer_name()
        _unique_name("functional")
        super()._build_from(specs)

    @property
    def output_shape(self) -> tuple[int | None, ...]:
        """The shape of the model's output, as a tuple (the batch size None when built from an Input or
        `build`; the first call's batch size when built by it, as in Keras)."""
        shape = getattr(self._layers[-1], "_output_shape", None) if self._layers and self._shapes_recorded else None
        if shape is None:
            raise AttributeError(f"Sequential model '{self.name}' has no defined output shape yet.")
        return tuple(tf.TensorShape(shape).as_list())

    def _build_for_call(self, inputs: Any) -> None:  # the first call builds the layers
        if hasattr(inputs, "shape") and hasattr(inputs, "dtype"):
            self._called_spec = KerasTensor(tuple(inputs.shape), tf.as_dtype(inputs.dtype), name="input_spec")
        self._use_up_input_layer_name()
        _unique_name("functional")

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        record = not self._shapes_recorded  # Keras records every layer's output shape when the model builds
        self._shapes_recorded = True
        for layer in self._layers:
            if training is not None and _takes_training(layer):
                inputs = layer(inputs, training=training)
            else:
                inputs = layer(inputs)
            if record and hasattr(inputs, "shape"):
                layer._output_shape = tf.TensorShape(inputs.shape)
        return inputs


class Functional(Model):
    """The model `tf.keras.Model(inputs=..., outputs=...)` makes from `tf.keras.Input` tensors: calling it
    replays the layer calls that produced `outputs` on new inputs. Its `layers` include the InputLayers.

    >>> import tapejax as tf
    >>> inputs = tf.keras.Input(shape=(3,))
    >>> model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(2)(inputs))
    >>> model(tf.ones([5, 3])).shape, [type(layer).__name__ for layer in model.layers]
    (TensorShape([5, 2]), ['InputLayer', 'Dense'])
    """

    _compiles_eager_calls = True  # an eager call in inference runs compiled whole (compiled_calls.py)

    def __init__(self, inputs: Any, outputs: Any, name: str | None = None, trainable: bool = True,
                 **kwargs: Any):
        Layer.__init__(self, trainable=trainable, name=name, **kwargs)
        self._distribute_strategy = distribution.current_strategy()
        self._inputs_structure, self._outputs_structure = inputs, outputs
        self._input_tensors, self._output_tensors = _leaves(inputs), _leaves(outputs)
        for tensor in self._input_tensors + self._output_tensors:
            if not isinstance(tensor, KerasTensor) or tensor._keras_history is None:
                raise TypeError("tf.keras.Model(inputs=..., outputs=...) expects tf.keras.Input tensors and "
                                f"the KerasTensors layers return for them; got {tensor!r}.")
        for tensor in self._input_tensors:
            if not isinstance(tensor._keras_history[0], InputLayer):
                raise ValueError(f"Model inputs must come from tf.keras.Input; {tensor.name} is a layer's output.")
        depths, layers = _graph_depths(self._output_tensors)
        self._nodes = sorted(depths, key=lambda node: (-depths[node], node.order))
        # Pairs, not a dict keyed by nodes: tf.Module's variable walk sorts dict keys, and nodes have no order.
        self._node_depths = [(node, depths[node]) for node in self._nodes]
        given = {id(t) for t in self._input_tensors}
        for node in self._nodes:
            if isinstance(node.layer, InputLayer) and id(node.outputs) not in given:
                raise ValueError(f"Graph disconnected: the outputs need the input {node.outputs.name}, which is "
                                 "not among the model's inputs.")
        self._functional_layers: list[Layer] = layers
        self._output_shape = jax.tree_util.tree_map(lambda t: t.shape, outputs,
                                                    is_leaf=lambda x: isinstance(x, KerasTensor))
        self.built = True

    @property
    def layers(self) -> list[Layer]:
        return [layer for layer in self._functional_layers if not isinstance(layer, _Operation)]

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        return checkpointing.functional_children(self)

    @property
    def inputs(self) -> list[KerasTensor]:
        return list(self._input_tensors)

    @property
    def outputs(self) -> list[KerasTensor]:
        return list(self._output_tensors)

    @property
    def input_shape(self) -> Any:
        """The inputs' shapes as tuples (None: any size); a list of them if the model has several inputs."""
        shapes = [tuple(t.shape.as_list()) for t in self._input_tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self) -> Any:
        """The shapes of the outputs as tuples: one tuple for a single output, else a list of them."""
        shapes = [tuple(tf.TensorShape(t.shape).as_list()) for t in self._output_tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def input(self) -> Any:
        """The model's inputs, in the structure given (`base_model.input`)."""
        return self._inputs_structure

    @property
    def output(self) -> Any:
        """The model's outputs, in the structure given."""
        return self._outputs_structure

    def _build_for_call(self, inputs: Any) -> None:
        pass  # built from the start

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        given = jax.tree_util.tree_leaves(inputs, is_leaf=_is_value)
        if len(given) != len(self._input_tensors):
            raise ValueError(f"Model '{self.name}' expects {len(self._input_tensors)} input(s), got {len(given)}.")
        # Keras 3 converts each input to its Input's dtype (MNIST's uint8 pixels into a float32 model).
        values = {id(t): _as_input(value, t.dtype) for t, value in zip(self._input_tensors, given)}
        is_symbol = lambda x: isinstance(x, KerasTensor)
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args, call_args, kwargs = jax.tree_util.tree_map(lambda x: values[id(x)] if is_symbol(x) else x,
                                                             (node.inputs, node.args, dict(node.kwargs)),
                                                             is_leaf=lambda x: is_symbol(x) or _is_value(x))
            if training is not None and kwargs.get("training") is None and _takes_training(node.layer):
                kwargs["training"] = training
            outputs = node.layer(args, *call_args, **kwargs)
            for symbol, value in zip(_leaves(node.outputs), jax.tree_util.tree_leaves(outputs, is_leaf=_is_value)):
                values[id(symbol)] = value
        return jax.tree_util.tree_map(lambda t: values[id(t)], self._outputs_structure, is_leaf=is_symbol)


def _symbolic_arguments(args: tuple, kwargs: dict) -> bool:
    """Whether a subclass's constructor arguments are a functional model's inputs and outputs (KerasTensors). Keras
    decides in `Model.__init__`, from what the subclass passes up; tapejax decides when the object is made, so it
    also looks at the values: `VAE(encoder, decoder)`, whose `__init__` takes two models, is a plain subclass."""
    given = list(args[:2]) + [kwargs[k] for k in ("inputs", "outputs") if k in kwargs]
    leaves = jax.tree_util.tree_leaves(given, is_leaf=lambda x: isinstance(x, KerasTensor))
    return bool(leaves) and all(isinstance(x, KerasTensor) for x in leaves)


@functools.lru_cache(maxsize=256)
def _functional_subclass(cls: type) -> type:
    """`cls` (a Model subclass that overrides train_step and the like) built as a functional model from
    inputs and outputs, as Keras 3 builds `class CustomModel(keras.Model)` called as `CustomModel(inputs, outputs)`."""
    return type(cls.__name__, (cls, Functional), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})


def _as_input(value: Any, dtype: tf.DType) -> Any:
    value = tf.convert_to_tensor(value) if not isinstance(value, tf.Tensor | tf.Variable) else value
    return value if value.dtype == dtype else tf.cast(value, dtype)


def _graph_depths(outputs: list[KerasTensor]) -> tuple[dict[_Node, int], list[Layer]]:
    """Each node that the outputs depend on -> its depth (0 for the outputs' nodes, else one more than the deepest
    node that uses it, and at least its layer's depth), and the layers in Keras's order: deepest first, and within
    a depth in the order a walk from the outputs first meets them (the order of `model.layers`, so of
    `get_weights`)."""
    finished: list[_Node] = []  # parents before the nodes that use them
    seen: set[_Node] = set()
    first_met: dict[Layer, int] = {}

    def walk(tensor: KerasTensor) -> None:
        layer, node_index, _ = tensor._keras_history
        node = layer._inbound_nodes[node_index]
        if node in seen:
            return
        seen.add(node)
        first_met.setdefault(layer, len(first_met))
        for parent in _parents(node):
            walk(parent)
        finished.append(node)

    for tensor in outputs:
        walk(tensor)
    depths: dict[_Node, int] = {}
    layer_depths: dict[Layer, int] = {}
    for node in reversed(finished):  # users before their parents
        depth = max(depths.get(node, 0), layer_depths.get(node.layer, 0))  # a shared layer: its deepest use
        depths[node] = layer_depths[node.layer] = depth
        for parent in _parents(node):
            parent_node = parent._keras_history[0]._inbound_nodes[parent._keras_history[1]]
            depths[parent_node] = max(depths.get(parent_node, 0), depth + 1)
    return depths, sorted(layer_depths, key=lambda layer: (-layer_depths[layer], first_met[layer]))


def _parents(node: _Node) -> list[KerasTensor]:
    return [t for t in _leaves((node.inputs, node.args, node.kwargs)) if isinstance(t, KerasTensor)]


# summary(): Keras 3 lays the table out with rich; this renders the same text without it.

def _summary_text(model: Model, line_length: int | None, positions: list[float] | None, expand_nested: bool,
                  show_trainable: bool, layer_range: Any) -> str:
    layers, sequential_like, nodes = model.layers, True, set()
    if isinstance(model, Functional):
        layers, nodes = list(model._functional_layers), set(model._nodes)  # with its operations, as Keras shows
        sequential_like = _is_sequential_like(model)
    if sequential_like:
        default_length, positions = 88, positions or [0.45, 0.80, 1.0]
        header, justify = ["Layer (type)", "Output Shape", "Param #"], ["left", "left", "right"]
    else:
        default_length, positions = 108, positions or [0.3, 0.56, 0.74, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        justify = ["left", "left", "right", "left"]
    if show_trainable:
        default_length += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header, justify = header + ["Trainable"], justify + ["center"]
    line_length = line_length or min(default_length, shutil.get_terminal_size().columns - 4)

    def fields(layer: Layer, prefix: str = "") -> list[str]:
        if not layer.built:
            params = "0 (unbuilt)"
        else:
            params = f"{layer.count_params():,}"
        row = [f"{prefix}{layer.name} ({type(layer).__name__})", _output_shape_text(layer), params]
        if not sequential_like:
            row.append(_connections(layer, nodes))
        if show_trainable:
            row.append(("Y" if layer.trainable else "N") if layer.weights else "-")
        return row

    def rows_of(layer: Layer, level: int = 0) -> list[list[str]]:
        rows = [fields(layer, "   " * level + "└ " if level else "")]
        if expand_nested and getattr(layer, "layers", None):
            for sublayer in layer.layers:
                rows += rows_of(sublayer, level + 1)
        return rows

    first, last = _layer_range(layers, layer_range)
    rows = [row for layer in layers[first:last] for row in rows_of(layer)]
    table = _render_table(header, justify, _column_widths(line_length, positions), rows)
    width = _console_width()
    lines = [f'Model: "{model.name}"', *(line[:width] for line in table)]
    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    for label, weights in (("Total", trainable + non_trainable), ("Trainable", trainable),
                           ("Non-trainable", non_trainable)):
        count = sum(int(np.prod(w.shape)) for w in weights)
        lines.append(f" {label} params: {count:,} ({_readable_size(_memory_size(weights))})")
    return "\n".join(lines) + "\n"


def _is_sequential_like(model: Functional) -> bool:
    """Keras's test for the three-column table: one node per depth, one input each, no layer used twice."""
    by_depth: defaultdict[int, list[_Node]] = defaultdict(list)
    for node, depth in model._node_depths:
        by_depth[depth].append(node)
    for depth_nodes in by_depth.values():
        inputs = [t for t in _leaves(depth_nodes[0].inputs) if isinstance(t, KerasTensor)]
        if len(depth_nodes) > 1 or len(inputs) > 1:
            return False
    uses = [node.layer for node in model._nodes]
    return len(uses) == len(set(map(id, uses)))


def _output_shape_text(layer: Layer) -> str:
    shapes = layer._output_shape
    if layer._inbound_nodes:  # the functional API's symbolic shapes come first, as in Keras
        shapes = jax.tree_util.tree_map(lambda t: t.shape, layer._inbound_nodes[-1].outputs,
                                        is_leaf=lambda x: isinstance(x, KerasTensor))
    flat = _leaves(shapes)
    if not flat or any(not isinstance(s, tf.TensorShape) or s.rank is None for s in flat):
        return "?"
    text = lambda s: f"({', '.join(str(d) for d in s.as_list())})"
    if len(flat) == 1:
        return text(flat[0])
    return str(jax.tree_util.tree_map(text, shapes, is_leaf=lambda x: isinstance(x, tf.TensorShape))).replace(
        "'", "")


def _connections(layer: Layer, nodes: set[_Node]) -> str:
    sources = []
    for node in layer._inbound_nodes:
        if node in nodes:
            for tensor in _leaves((node.inputs, node.args, node.kwargs)):
                if isinstance(tensor, KerasTensor):
                    source, node_index, tensor_index = tensor._keras_history
                    sources.append(f"{source.name}[{node_index}][{tensor_index}]")
    return ", ".join(sources) or "-"


def _layer_range(layers: list[Layer], layer_range: Any) -> tuple[int, int]:
    """The slice of `layers` from the first name matching layer_range[0] to the last matching layer_range[1]."""
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2 or not all(isinstance(r, str) for r in layer_range):
        raise ValueError(f"layer_range must be two layer names (or regexes); received {layer_range!r}.")
    lower = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    upper = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not lower or not upper:
        raise ValueError(f"Passed layer_names do not match the layer names in the model. Received: {layer_range}")
    if min(lower) > max(upper):
        return min(upper), max(lower) + 1
    return min(lower), max(upper) + 1


def _memory_size(weights: list[tf.Variable]) -> float:
    unique = {id(w): w for w in weights}.values()
    return float(sum(int(np.prod(w.shape)) * w.dtype.size for w in unique))


def _readable_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _column_widths(line_length: int, positions: list[float]) -> list[int]:
    """Keras's column widths from `positions`, then fitted as rich fits fixed-width columns into a table of
    `line_length`: each column gains its two padding cells, and the excess over the width left by the borders is
    taken from the columns in turn, evenly (rounding half to even). The widths returned include the padding."""
    widths, current = [], 0
    for position in positions:
        width = int(position * line_length) - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(width + 2)
        current += width
    excess = sum(widths) - (line_length - len(widths) - 1)
    fitted, remaining, count = [], excess, len(widths)
    for width in widths:
        cut = min(width, round(remaining / count)) if remaining > 0 else 0
        fitted.append(width - cut)
        remaining, count = remaining - cut, count - 1
    return fitted


_WORD = re.compile(r"\s*\S+\s*")


def _wrap(text: str, width: int) -> list[str]:
    """rich's word wrap for a table cell: a line breaks before a word that does not fit; a word longer than the
    whole width gets a line of its own, cut to the width with '…'."""
    lines = []
    for paragraph in text.split("\n"):
        breaks, offset = [], 0
        for match in _WORD.finditer(paragraph):
            start, word = match.start(), match.group()
            length = len(word.rstrip())
            if width - offset >= length:
                offset += len(word)
            elif length > width or (offset and start):
                if start:
                    breaks.append(start)
                offset = len(word)
        for a, b in zip([0, *breaks], [*breaks, len(paragraph)]):
            line = paragraph[a:b].rstrip()
            lines.append(line if len(line) <= width else line[:width - 1] + "…")
    return lines


def _justify(line: str, width: int, how: str) -> str:
    if how == "right":
        return line.rjust(width)
    if how == "center":
        left = (width - len(line)) // 2
        return (" " * left + line).ljust(width)
    return line.ljust(width)


def _render_table(header: list[str], justify: list[str], widths: list[int], rows: list[list[str]]) -> list[str]:
    """The lines of rich's default table (heavy head, a rule between rows), cells padded by one space."""
    inner = [w - 2 for w in widths]

    def rule(left: str, fill: str, middle: str, right: str) -> str:
        return left + middle.join(fill * w for w in widths) + right

    def row_lines(cells: list[str], bar: str) -> list[str]:
        wrapped = [_wrap(cell, w) for cell, w in zip(cells, inner)]
        height = max(len(lines) for lines in wrapped)
        return [bar + bar.join(f" {_justify(lines[i] if i < len(lines) else '', w, how)} "
                               for lines, w, how in zip(wrapped, inner, justify)) + bar
                for i in range(height)]

    lines = [rule("┏", "━", "┳", "┓"), *row_lines(header, "┃"), rule("┡", "━", "╇", "┩")]
    for index, row in enumerate(rows):
        if index:
            lines.append(rule("├", "─", "┼", "┤"))
        lines += row_lines(row, "│")
    lines.append(rule("└", "─", "┴", "┘"))
    return lines


def _console_width() -> int:
    """The width rich's console crops lines at: $COLUMNS, else the first terminal among stdin, stdout and stderr,
    else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    for descriptor in (0, 1, 2):
        try:
            return os.get_terminal_size(descriptor).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def load_model(filepath: Any, custom_objects: dict[str, Any] | None = None, compile: bool = True,
               safe_mode: bool = True) -> Model:
    """Loads a `.keras` file written by `model.save` or by real Keras (tapejax/keras/saving_archive.py)."""
    from tapejax.keras import saving_archive

    return saving_archive.load_model(filepath, custom_objects, compile, safe_mode)


def save_model(model: Model, filepath: Any, overwrite: bool = True, zipped: bool | None = None,
               **kwargs: Any) -> None:
    """`model.save(filepath)`: a `.keras` file that real Keras reads."""
    model.save(filepath, overwrite=overwrite, zipped=zipped, **kwargs)


def clone_model(model: Model, input_tensors: Any = None, clone_function: Any = None, **kwargs: Any) -> Model:
    """A new model with `model`'s configuration and new weights (built from `model.get_config()`)."""
    from tapejax.keras import saving_archive

    return saving_archive.clone_model(model, input_tensors, clone_function, **kwargs)


def model_from_json(json_string: str, custom_objects: dict[str, Any] | None = None) -> Model:
    """The model (new weights) of `model.to_json()`'s text, tapejax's or real Keras's."""
    import json

    from tapejax.keras import saving_config

    return saving_config.deserialize(json.loads(json_string), custom_objects)


def _is_value(x: Any) -> bool:
    return isinstance(x, tf.Tensor | tf.Variable)  # Tensors are pytree nodes: keep them whole


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.models")
