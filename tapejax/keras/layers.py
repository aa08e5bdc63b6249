"""tf.keras.layers: the base Layer, Input and the core layers; the other families live in layers_*.py and are
re-exported at the end. Built on tapejax's public API (shape inference excepted: keras/symbolic.py).

Layers are tf.Modules that build their weights on first call, inside a name scope of their unique name, so a
weight has Keras 3's short `name` (`kernel`) and `path`: `dense/kernel` for a layer built on its own,
`my_model/dense_1/bias` for one built inside a model's first call. Layers take symbolic `tf.keras.Input` tensors
too (the functional API); their output shapes come from running them under `jax.eval_shape` (see `_probe`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import re
import threading
import warnings
import weakref
from collections import defaultdict
from typing import Any

import jax
import numpy as np

import tapejax as tf
from tapejax.keras import activations, checkpointing, initializers
from tapejax.keras import compiled_calls as _compiled_calls
from tapejax.keras import constraints as _constraints
from tapejax.keras import masks as _masking
from tapejax.keras import regularizers as _regularizers
from tapejax.keras import symbolic as _symbolic
from tapejax.keras.attributes import Declared, built_weight
from tapejax.keras.host_inputs import given_output as _given_output
from tapejax.keras.layer_names import LayerNames
from tapejax.keras.variables import Variable as KerasVariable

class _Names(threading.local):
    """How many objects of each base name this thread has named: Keras 3 keeps these counts per thread (its
    global state is a `threading.local`), so `Dense()` is `dense` in every new thread."""

    def __init__(self):
        self.counts: defaultdict[str, int] = defaultdict(int)


_NAMES = _Names()


# layer -> the (args, kwargs) its constructor was called with: Keras 3's automatic get_config (saving_config.py).
# Kept outside the layer, so that no walk over a layer's attributes (sublayers, checkpoints) sees them.
_INIT_ARGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _unique_name(base: str) -> str:
    counts = _NAMES.counts
    n = counts[base]
    counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def _snake_case(name: str) -> str:
    """A class name as Keras spells it in layer names: `MaxPooling2D` -> `max_pooling2d`, `MyModel` -> `my_model`.

    (tf.Module's spelling differs on digits: `max_pooling2_d`.)
    """
    name = re.sub(r"\W+", "", name)
    return re.sub(r"(?<=.)(?=[A-Z][a-z])|(?<=[a-z])(?=[A-Z])", "_", name).lower()


class _CallState(threading.local):
    """What enclosing layer calls hand down to the layers they call.

    `training` holds the `training` value in force, innermost last: a layer whose `call` takes `training` and
    is called without it gets the enclosing call's value, as in Keras. `probes` holds the shape probes in
    progress (`_probe`): every layer called under one reports its output shape to it.
    """

    def __init__(self):
        self.training: list[bool | None] = []
        self.probes: list[dict[int, tuple[Layer, Any]]] = []


_STATE = _CallState()
_ARGUMENT_INDEX: dict[tuple[type, str], int | None] = {}


def _argument_index(layer: Layer, argument: str) -> int | None:
    """Where the layer's `call` takes `argument` (`training`, `mask`): its index among the positional arguments
    after `inputs`, -1 if only by keyword, None if it does not take it (Keras 3 then drops it: `**kwargs` do not
    count)."""
    key = (type(layer), argument)
    if key not in _ARGUMENT_INDEX:
        index = None  # published once found: another thread must never read a half-made answer
        for i, parameter in enumerate(inspect.signature(layer.call).parameters.values()):
            if parameter.name == argument:
                positional = parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
                index = i - 1 if positional else -1
                break
        _ARGUMENT_INDEX[key] = index
    return _ARGUMENT_INDEX[key]


def _training_index(layer: Layer) -> int | None:
    return _argument_index(layer, "training")


def _takes_training(layer: Layer) -> bool:
    return _training_index(layer) is not None


def _leaves(structure: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(structure, is_leaf=lambda x: isinstance(
        x, KerasTensor | tf.TensorShape | tf.Tensor | tf.Variable))


def _shapes_of(structure: Any) -> Any:
    """The TensorShape of a tensor, or the same structure of TensorShapes for a list/tuple/dict of tensors."""
    if hasattr(structure, "shape"):
        return tf.TensorShape(structure.shape)
    if isinstance(structure, list | tuple):
        return type(structure)(_shapes_of(s) for s in structure)
    if isinstance(structure, dict):
        return {k: _shapes_of(v) for k, v in structure.items()}
    return None


# Set while saving_config.py makes a layer from a saved configuration (Layer.__init__ then drops what it does not
# take, as from_config's contract says).
READING_CONFIG = threading.local()


class Layer(LayerNames, tf.Module):
    """The base class of layers (`tf.keras.layers.Layer`): `build(input_shape)` on first call, then `call`.

    Sublayers are the layers held by attributes (and by lists, tuples and dicts in them), in assignment order,
    as Keras tracks them. `weights` lists the layer's own weights (trainable first, each group in creation
    order), then each sublayer's `weights`; `trainable_weights` and `non_trainable_weights` keep that order, and
    a layer with `trainable=False` puts all of its weights in `non_trainable_weights`.

    >>> import tapejax as tf
    >>> layer = tf.keras.layers.Dense(3, name="head")
    >>> layer
    <Dense name=head, built=False>
    >>> _ = layer(tf.ones([2, 4]))
    >>> [w.name for w in layer.weights], [w.path for w in layer.weights], layer.count_params()
    (['kernel', 'bias'], ['head/kernel', 'head/bias'], 15)
    """

    # Keras builds the stateless layers that have no `build` (Dropout, Activation, pooling) in `__init__`;
    # it shows in summary(): such a layer is never "(unbuilt)", and a subclassed model shows no output shape
    # for it, since its calls build nothing.
    _built_at_init = False
    _compiles_eager_calls = False  # Sequential and functional models: keras/compiled_calls.py
    supports_masking = False  # Keras's: a layer that passes its inputs' mask on to its outputs
    # Keras 3 passes integer and boolean inputs on as they are, but the layers whose ops meet them with float
    # weights or average them (Dense, the normalisations, recurrent layers, average pooling) compute in float32:
    # its ops promote. Those layers set this, and `_convert_input` casts such inputs to the layer's dtype for them.
    _casts_integer_inputs = False

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 activity_regularizer: Any = None, **kwargs: Any):
        super().__init__(name=name or _unique_name(_snake_case(type(self).__name__)))
        self.activity_regularizer = activity_regularizer
        self.trainable = trainable
        self.built = self._built_at_init
        self._own_weights: list[tf.Variable] = []
        self._output_shape: Any = None  # recorded by the call that builds the layer, or by a shape probe
        self._inbound_nodes: list[_Node] = []  # the functional API's calls of this layer on KerasTensors
        self._in_own_scope = False
        self.dtype = tf.as_dtype(dtype or tf.float32)
        shape = kwargs.pop("input_shape", None)
        if "input_dim" in kwargs:
            shape = (kwargs.pop("input_dim"),)
        self._input_shape_arg = None if shape is None else tuple(shape)
        kwargs.pop("autocast", None)  # Keras 3's mixed-precision switch: tapejax layers compute in their dtype
        # Keras 3's error: an argument this layer does not take is never silently ignored, except in a saved
        # configuration, where Keras writes options tapejax's layer may not have (from_config drops them)
        if kwargs and not getattr(READING_CONFIG, "on", False):
            raise ValueError(f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}")

    def __new__(cls, *args: Any, **kwargs: Any):
        layer = super().__new__(cls)
        _INIT_ARGS[layer] = (args, dict(kwargs))
        return layer

    def get_config(self) -> dict[str, Any]:
        """The layer's configuration, as Keras 3's automatic one: the arguments its constructor was called with
        (defaults left out), `name`, `trainable` and `dtype`. A class whose arguments are not JSON values (nor
        layers, initializers, regularizers, constraints, activations) must define its own, as in Keras."""
        from tapejax.keras import saving_config

        return saving_config.layer_config(self)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        """A new layer (new weights) from `get_config()`'s dictionary, tapejax's or real Keras's (the arguments
        Keras writes that tapejax's layer does not take are dropped)."""
        from tapejax.keras import saving_config

        return saving_config.layer_from_config(cls, config)

    def __init_subclass__(cls, **kwargs: Any):
        # As in Keras, `build` runs in the layer's name scope and marks it built however it is called: from
        # the first call, or by the user (`layer.build(shape)`), so that a later call does not build it again.
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = _scoped_build(cls.__dict__["build"])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    def __getattr__(self, name: str) -> Any:  # only reached when the attribute is missing
        if name in ("input", "output") and "_inbound_nodes" in self.__dict__:
            self._only_node(name)  # the property raised: raise its message, not the generic one below
        declared = getattr(type(self), name, None)
        if isinstance(declared, Declared):  # a weight or attribute not made yet: Keras's message for it
            raise declared.error(self)
        if isinstance(declared, property) and declared.fget is not None:
            declared.fget(self)  # the property raised AttributeError: raise its message, not the generic one
        if "_own_weights" not in self.__dict__ and not name.startswith("_"):
            raise RuntimeError(f"{type(self).__name__} has no attribute {name!r}: it looks like its __init__ does "
                               "not call super().__init__(); call it first, before assigning layers or weights.")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def build(self, input_shape: tf.TensorShape) -> None:
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        given = _given_output(self)
        if given is not None:  # a text model's string-reading layer, run before the compiled step (host_inputs.py)
            return given
        if any(isinstance(leaf, KerasTensor) for leaf in _leaves((inputs, args, kwargs))):
            return self._call_symbolically(inputs, args, kwargs)
        if self._compiles_eager_calls:  # a model: an eager call in inference may run compiled whole
            outputs = _compiled_calls.call(self, inputs, args, kwargs)
            if outputs is not _compiled_calls.DECLINED:
                return outputs
        inputs = jax.tree_util.tree_map(self._convert_input, inputs, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))
        inherited = _STATE.training[-1] if _STATE.training else None
        training, index = inherited, _training_index(self)
        if index is not None and 0 <= index < len(args):  # training given by position
            if args[index] is None:
                args = (*args[:index], inherited, *args[index + 1:])
            training = args[index]
        elif index is not None:
            if kwargs.get("training") is None and inherited is not None:
                kwargs["training"] = inherited
            training = kwargs.get("training", inherited)
        else:  # Keras 3 drops `training` for a call that does not take it; the layers it calls still see it
            given = kwargs.pop("training", None)
            training = inherited if given is None else given
        previous_mask = _masking.mask_of(inputs)
        if _argument_index(self, "mask") is None:
            kwargs.pop("mask", None)
        elif kwargs.get("mask") is None and previous_mask is not None and len(args) <= _argument_index(self, "mask"):
            kwargs["mask"] = previous_mask
        building = not self.built
        # A first call that raised after building (a symbolic probe that needs values is retried on zeros) left
        # its sublayers unbuilt: the next call, building nothing, still runs in the layer's name scope.
        retrying = self.__dict__.pop("_first_call_failed", False)
        if not _STATE.training:  # the outermost call: losses added by an earlier forward pass are dropped
            self._clear_losses()
        _STATE.training.append(training)
        try:
            if building or retrying:  # the first call runs in the layer's name scope: the weights its sublayers
                with self._own_name_scope():  # make too
                    if building:
                        self._build_for_call(inputs)
                        self.built = True
                    try:
                        outputs = self.call(inputs, *args, **kwargs)
                    except BaseException:
                        self.__dict__["_first_call_failed"] = True
                        raise
            else:
                outputs = self.call(inputs, *args, **kwargs)
        finally:
            _STATE.training.pop()
        if self.activity_regularizer is not None:  # Keras 3 divides by the batch size
            for output in _leaves(outputs):
                if isinstance(output, tf.Tensor) and output.shape.rank:
                    self.add_loss(self.activity_regularizer(output) / tf.cast(tf.shape(output)[0], output.dtype))
        if self.supports_masking or type(self).compute_mask is not Layer.compute_mask:
            _masking.attach(outputs, self.compute_mask(inputs, kwargs.get("mask", previous_mask)))
        if building:
            self._output_shape = _shapes_of(outputs)
        if _STATE.probes:
            _STATE.probes[-1].setdefault(id(self), (self, _shapes_of(outputs)))
        return outputs

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The mask of the outputs (Keras's masking): the inputs' mask if the layer `supports_masking`, else None."""
        return mask if self.supports_masking else None

    def __setattr__(self, name: str, value: Any) -> None:
        # Keras 3 layers take a new activation after construction (`layer.activation = "relu"`, or None).
        if name == "activation" and isinstance(value, str):
            value = activations.get(value)
        elif name == "activity_regularizer":
            value = _regularizers.get(value)
        super().__setattr__(name, value)

    def _activate(self, outputs: Any) -> Any:
        return outputs if self.activation is None else self.activation(outputs)

    @contextlib.contextmanager
    def _own_name_scope(self) -> Any:
        """The layer's name scope, entered once even when a build inside its first call asks for it again."""
        if self._in_own_scope:
            yield
            return
        self._in_own_scope = True
        try:
            with tf.name_scope(self.name):
                yield
        finally:
            self._in_own_scope = False

    def _convert_input(self, value: Any) -> Any:
        # Keras 3 converts NumPy inputs, and casts floating inputs to the layer's dtype (a float64 batch into a
        # float32 layer computes in float32). A float input of the layer's dtype passes untouched (no op).
        if isinstance(value, np.ndarray):
            cast = np.issubdtype(value.dtype, np.floating) or (self._casts_integer_inputs and (
                np.issubdtype(value.dtype, np.integer) or value.dtype == np.bool_))
            return tf.convert_to_tensor(value.astype(self.dtype.as_numpy_dtype) if cast else value)
        if isinstance(value, tf.Tensor) and value.dtype != self.dtype:
            dtype = value.dtype
            if dtype.is_floating or (self._casts_integer_inputs and (dtype.is_integer or dtype == tf.bool)):
                return tf.cast(value, self.dtype)
        return value

    def _build_for_call(self, inputs: Any) -> None:
        self.build(_shapes_of(inputs))

    def _call_symbolically(self, inputs: Any, args: tuple, kwargs: dict) -> Any:
        """A call on KerasTensors (the functional API): builds the layer and returns KerasTensors."""
        # KerasTensors may come as other arguments too (`attention(query, value)`): all are probed.
        treedef, shapes, dtypes = _probe(lambda c: self(c[0], *c[1], **c[2]), (inputs, args, kwargs))
        self._clear_losses()  # the probe's losses are not a forward pass's
        node = _Node(self, len(self._inbound_nodes), inputs, args, kwargs)
        outputs = []
        for index, (shape, dtype) in enumerate(zip(shapes, dtypes)):
            output = KerasTensor(shape, dtype)
            output._keras_history = (self, node.index, index)
            outputs.append(output)
        node.outputs = jax.tree_util.tree_unflatten(treedef, outputs)
        self._inbound_nodes.append(node)
        return node.outputs

    def add_weight(self, *args: Any, **kwargs: Any) -> tf.Variable:
        """Creates a weight of this layer (Keras 3's `add_weight(shape, initializer, dtype, trainable, autocast,
        regularizer, constraint, aggregation, overwrite_with_gradient, name)`), named `name` with the path
        `layer_name/name` when called from `build`. Keras 2's order, a name first (`add_weight("w", shape)`),
        is accepted too. The regularizer's penalty joins `losses`; optimizers apply the constraint."""
        order = _LEGACY_ADD_WEIGHT if args and isinstance(args[0], str) else _ADD_WEIGHT
        if len(args) > len(order):
            raise TypeError(f"add_weight() takes at most {len(order)} positional arguments ({len(args)} given)")
        for key, value in zip(order, args):
            if key in kwargs:
                raise TypeError(f"add_weight() got multiple values for argument '{key}'")
            kwargs[key] = value
        shape = () if kwargs.get("shape") is None else kwargs["shape"]
        dtype = tf.as_dtype(kwargs.get("dtype") or self.dtype)
        initializer = kwargs.get("initializer")
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = initializers.get(initializer)
        trainable = kwargs.get("trainable")
        with tf.init_scope():  # built on a first tf.function call too: the initial value is computed concretely
            variable = KerasVariable(init(shape, dtype), name=kwargs.get("name") or "variable",
                                     trainable=True if trainable is None else bool(trainable), dtype=dtype,
                                     constraint=_constraints.get(kwargs.get("constraint")),
                                     regularizer=_regularizers.get(kwargs.get("regularizer")))
        self._own_weights.append(variable)
        return variable

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        """The state a tf.train.Checkpoint saves, named as Keras 3 names it (tapejax/keras/checkpointing.py)."""
        return checkpointing.layer_children(self)

    def _sublayers(self) -> list[Layer]:
        found: list[Layer] = []
        seen = {id(self)}

        def visit(value: Any) -> None:  # lists, tuples and dicts in their own order, as Keras tracks them
            if isinstance(value, Layer):
                if id(value) not in seen:
                    seen.add(id(value))
                    found.append(value)
            elif isinstance(value, list | tuple):
                for item in value:
                    visit(item)
            elif isinstance(value, dict):
                for item in value.values():
                    visit(item)

        for value in vars(self).values():
            visit(value)
        return found

    @property
    def weights(self) -> list[tf.Variable]:
        own = [w for w in self._own_weights if w.trainable] + [w for w in self._own_weights if not w.trainable]
        return _unique(own + [w for layer in self._sublayers() for w in layer.weights])

    @property
    def trainable_weights(self) -> list[tf.Variable]:
        if not self.trainable:
            return []
        own = [w for w in self._own_weights if w.trainable]
        return _unique(own + [w for layer in self._sublayers() for w in layer.trainable_weights])

    @property
    def non_trainable_weights(self) -> list[tf.Variable]:
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in trainable]

    @property
    def trainable_variables(self) -> list[tf.Variable]:
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list[tf.Variable]:
        return self.non_trainable_weights

    @property
    def variables(self) -> list[tf.Variable]:
        return self.weights

    @property
    def output(self) -> Any:
        """The KerasTensor(s) this layer returned in the functional graph (`model.get_layer(name).output`)."""
        return self._only_node("output").outputs

    @property
    def input(self) -> Any:
        """The KerasTensor(s) this layer was called on in the functional graph (a functional model: its inputs)."""
        node = self._only_node("input")
        return node.outputs if isinstance(self, InputLayer) else node.inputs

    def _only_node(self, what: str) -> Any:
        nodes = self.__dict__.get("_inbound_nodes", [])
        if not nodes:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no defined {what}.")
        if len(nodes) > 1:
            raise AttributeError(f"Layer {self.name} has multiple inbound nodes, hence the notion of \"layer "
                                 f"{what}\" is ill-defined; build a model on the call whose {what} you need.")
        return nodes[0]

    def add_loss(self, loss: Any) -> None:
        """Adds a scalar loss (an activity regularizer) during `call`; `losses` lists those of the last
        forward pass, which the training step adds to its loss (`loss += sum(model.losses)`)."""
        self.__dict__.setdefault("_losses", []).append(loss)

    @property
    def losses(self) -> list[Any]:
        """The losses this layer and its sublayers added during the last forward pass (`add_loss`, activity
        regularizers), then the penalties of the regularized trainable weights, in Keras 3's order."""
        added = list(self.__dict__.get("_losses", []))
        for layer in self._all_sublayers():
            added += layer.__dict__.get("_losses", [])
        return added + [w.regularizer(w) for w in self.trainable_weights if getattr(w, "regularizer", None)]

    def _all_sublayers(self) -> list[Layer]:
        found = []
        for layer in self._sublayers():
            found += [layer, *layer._all_sublayers()]
        return _unique(found)

    def _clear_losses(self) -> None:
        self.__dict__["_losses"] = []
        for layer in self._sublayers():
            layer._clear_losses()

    def get_weights(self) -> list[np.ndarray]:
        """The values of `weights`, in that order, as numpy arrays (copies)."""
        return [np.array(w.numpy()) for w in self.weights]

    def set_weights(self, weights: list[Any]) -> None:
        """Assigns `weights` (arrays in the order of `get_weights()`) to the layer's weights.

        Raises ValueError, changing no weight, when the count or a shape differs, as Keras 3 does.

        >>> import tapejax as tf
        >>> layer = tf.keras.layers.Dense(2)
        >>> _ = layer(tf.ones([1, 3]))
        >>> layer.set_weights([w * 0 + 1 for w in layer.get_weights()])
        >>> layer(tf.ones([1, 3])).numpy()
        array([[4., 4.]], dtype=float32)
        """
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a weight list of "
                             f"length {len(weights)}, but the layer was expecting {len(mine)} weights.")
        values = [np.asarray(value) for value in weights]
        for variable, value in zip(mine, values):
            if tuple(variable.shape) != value.shape:
                raise ValueError(f"Layer {self.name} weight shape {tuple(variable.shape)} is not compatible "
                                 f"with provided weight shape {value.shape}.")
        for variable, value in zip(mine, values):
            variable.assign(value.astype(variable.dtype.as_numpy_dtype))

    def count_params(self) -> int:
        """The number of scalars in the layer's weights; the layer must be built."""
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the layer isn't built. "
                             "Call it on a batch first, or build it with `layer.build(input_shape)`.")
        return sum(int(np.prod(w.shape)) for w in self.weights)


_ADD_WEIGHT = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer", "constraint",
               "aggregation", "overwrite_with_gradient", "name")
_LEGACY_ADD_WEIGHT = ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "constraint")


def _scoped_build(build: Any) -> Any:
    @functools.wraps(build)
    def scoped_build(self: Layer, *args: Any, **kwargs: Any) -> None:
        with self._own_name_scope():
            build(self, *args, **kwargs)
        self.built = True
    return scoped_build


def _unique(weights: list[tf.Variable]) -> list[tf.Variable]:
    seen: set[int] = set()
    return [w for w in weights if not (id(w) in seen or seen.add(id(w)))]


class KerasTensor:
    """A symbolic tensor of the functional API (what `tf.keras.Input` and layers called on it return): a shape
    with None for unknown dimensions, a dtype, and the layer call that made it.

    >>> import tapejax as tf
    >>> x = tf.keras.Input(shape=(8,), name="features")
    >>> x
    <KerasTensor shape=(None, 8), dtype=float32, sparse=False, ragged=False, name=features>
    >>> tf.keras.layers.Dense(4)(x).shape
    TensorShape([None, 4])
    """

    def __init__(self, shape: Any, dtype: Any = None, name: str | None = None):
        self.shape = tf.TensorShape(shape)
        self.dtype = tf.as_dtype(dtype or tf.float32)
        self.name = name or _unique_name("keras_tensor")
        self._keras_history: tuple[Layer, int, int] | None = None  # (layer, node index, output index)

    @property
    def ndim(self) -> int | None:
        return self.shape.rank

    def __repr__(self) -> str:
        return (f"<KerasTensor shape={tuple(self.shape.as_list())}, dtype={self.dtype.name}, sparse=False, "
                f"ragged=False, name={self.name}>")

    # Arithmetic on KerasTensors adds an operation to the graph, as Keras 3's ops do (`outputs * upper_bound`).
    def __add__(self, other: Any) -> Any:
        return _operation("Add", tf.add)()([self, other])

    def __radd__(self, other: Any) -> Any:
        return _operation("Add", tf.add)()([other, self])

    def __sub__(self, other: Any) -> Any:
        return _operation("Subtract", tf.subtract)()([self, other])

    def __rsub__(self, other: Any) -> Any:
        return _operation("Subtract", tf.subtract)()([other, self])

    def __mul__(self, other: Any) -> Any:
        return _operation("Multiply", tf.multiply)()([self, other])

    def __rmul__(self, other: Any) -> Any:
        return _operation("Multiply", tf.multiply)()([other, self])

    def __truediv__(self, other: Any) -> Any:
        return _operation("TrueDivide", tf.math.truediv)()([self, other])

    def __rtruediv__(self, other: Any) -> Any:
        return _operation("TrueDivide", tf.math.truediv)()([other, self])

    def __pow__(self, other: Any) -> Any:
        return _operation("Power", tf.pow)()([self, other])

    def __neg__(self) -> Any:
        return _operation("Negative", tf.negative)()([self])


class _Operation(Layer):
    """An op applied to KerasTensors (Keras 3's `Operation`): a node of the functional graph without weights,
    shown by `summary()` but not listed in `model.layers`. Its operands are its inputs, as a list; operands that
    are not KerasTensors (`upper_bound` in `outputs * upper_bound`) stay constants of the node."""

    _built_at_init = True
    _function: Any = None

    def call(self, operands: Any) -> Any:
        # Keras 3 converts a Python number to the tensor's dtype (`x * 2` of float32 stays float32).
        dtype = next(o.dtype for o in operands if isinstance(o, tf.Tensor | tf.Variable))
        return type(self)._function(*[o if isinstance(o, tf.Tensor | tf.Variable) else tf.cast(o, dtype)
                                      for o in operands])


@functools.lru_cache(maxsize=1024)  # bounded, as every cache (a forgotten class is made again, alike)
def _operation(name: str, function: Any) -> type[_Operation]:
    """The operation class named `name` (its instances are named in snake case: `multiply`, `multiply_1`)."""
    return type(name, (_Operation,), {"_function": staticmethod(function)})


class _Node:
    """One call of a layer on KerasTensors: its inputs, other arguments and outputs, for the functional API."""

    _order = itertools.count()

    def __init__(self, layer: Layer, index: int, inputs: Any, args: tuple = (), kwargs: dict | None = None):
        self.layer, self.index, self.inputs, self.args, self.kwargs = layer, index, inputs, args, kwargs or {}
        self.outputs: Any = None
        self.order = next(self._order)


# Sizes that unknown dimensions take in the two probes: the batch axis is small, other axes big enough for
# kernels and far enough apart that any stride up to 12 shows a difference.
_PROBE_SIZES = ((1, 12), (2, 24))


def _probe(fn: Any, specs: Any) -> tuple[Any, list[tf.TensorShape], list[Any]]:
    """Shape inference: runs `fn` twice on tensors shaped like the KerasTensors in `specs`, each unknown
    dimension given a different size in each run: a dimension of an output is known (an int) if it came out the
    same both times, else None. The runs are abstract (`symbolic.abstract_run`: `jax.eval_shape`, nothing
    computed or compiled), or, when `fn` needs values, abstract with constants folded, or else on zeros
    (`_PROBE_MODES`).

    Every layer called inside also gets its output shape merged in this way (`layer._output_shape`). Returns
    the output structure's treedef, and the flat output shapes and dtypes.
    """
    runs = None
    for mode in _PROBE_MODES:
        try:
            runs = [_probe_once(fn, specs, sizes, mode) for sizes in _PROBE_SIZES]
            break
        except Exception as e:
            if mode is None or not _symbolic.needs_values(e):
                raise
    (first, first_reports), (second, second_reports) = runs
    for key, (layer, shape) in first_reports.items():
        if key in second_reports:
            layer._output_shape = _merge_shapes(shape, second_reports[key][1])
    value = lambda x: isinstance(x, tf.Tensor | tf.Variable)  # noqa: E731  (Tensors are pytree nodes: keep them whole)
    flat, treedef = jax.tree_util.tree_flatten(first, is_leaf=value)
    shapes = [_merge_shapes(tf.TensorShape(a.shape), tf.TensorShape(b.shape))
              for a, b in zip(flat, jax.tree_util.tree_leaves(second, is_leaf=value))]
    return treedef, shapes, [tf.as_dtype(x.dtype) for x in flat]


# How the probes run, each tried when the one before needed a value: abstract; abstract with constants folded (a
# size from `tf.shape` is a number, as in a tf.function trace: VAE's sampling layer slices a constant with it);
# on zeros, every op computed (and compiled, per op and size).
_PROBE_MODES = ("abstract", "folding", None)


def _probe_once(fn: Any, specs: Any, sizes: tuple[int, int], abstract: str | None) -> tuple[Any, dict]:
    batch, other = sizes
    is_symbol = lambda x: isinstance(x, KerasTensor | tf.Tensor | tf.Variable)

    def dims(spec: KerasTensor) -> list[int]:
        return [(batch if axis == 0 else other) if d is None else d for axis, d in enumerate(spec.shape)]

    reports: dict[int, tuple[Layer, Any]] = {}
    _STATE.probes.append(reports)
    try:
        if abstract:
            arrays = [jax.ShapeDtypeStruct(dims(s), s.dtype.as_numpy_dtype) for s in _leaves(specs) if is_symbol(s)]
            treedef, flat = _symbolic.abstract_run(fn, specs, arrays, fold_constants=abstract == "folding")
            outputs = jax.tree_util.tree_unflatten(treedef, flat)
        else:
            outputs = fn(jax.tree_util.tree_map(lambda s: tf.zeros(dims(s), s.dtype) if is_symbol(s) else s, specs,
                                                is_leaf=is_symbol))
    finally:
        _STATE.probes.pop()
    return outputs, reports


def _merge_shapes(a: Any, b: Any) -> Any:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
        return type(a)(_merge_shapes(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _merge_shapes(a[k], b.get(k)) for k in a}
    if not isinstance(a, tf.TensorShape) or not isinstance(b, tf.TensorShape):
        return None
    if a.rank is None or a.rank != b.rank:
        return tf.TensorShape(None)
    return tf.TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class InputLayer(Layer):
    """The layer behind `tf.keras.Input`: holds the symbolic input tensor (`output`) of a functional model or
    the input shape of a Sequential model (`tf.keras.layers.InputLayer`)."""

    _built_at_init = True

    def __init__(self, shape: Any = None, batch_size: int | None = None, dtype: Any = None,
                 batch_shape: Any = None, name: str | None = None, **kwargs: Any):
        super().__init__(name=name, dtype=dtype)
        if batch_shape is None:
            if shape is None:
                raise ValueError("tf.keras.Input/InputLayer needs `shape` (without the batch axis) or "
                                 "`batch_shape`, e.g. tf.keras.Input(shape=(28, 28, 1)).")
            batch_shape = (batch_size, *((shape,) if isinstance(shape, int) else shape))
        self.batch_shape = tuple(batch_shape)
        self._output_shape = tf.TensorShape(self.batch_shape)
        output = KerasTensor(self.batch_shape, self.dtype, name=name)
        output._keras_history = (self, 0, 0)
        node = _Node(self, 0, None)
        node.outputs = output  # `self.output`
        self._inbound_nodes.append(node)


def Input(shape: Any = None, batch_size: int | None = None, dtype: Any = None, batch_shape: Any = None,
          name: str | None = None, **kwargs: Any) -> KerasTensor:
    """A symbolic input (`tf.keras.Input`): the first element of a `Sequential` or the `inputs` of a functional
    `tf.keras.Model`. `shape` leaves out the batch axis (None unless `batch_size` is given).

    >>> import tapejax as tf
    >>> tf.keras.Input(shape=(28, 28, 1)).shape
    TensorShape([None, 28, 28, 1])
    """
    return InputLayer(shape, batch_size, dtype, batch_shape, name, **kwargs).output


class Dense(Layer):
    """`activation(inputs @ kernel + bias)` (`tf.keras.layers.Dense`)."""

    supports_masking = True
    _casts_integer_inputs = True
    kernel = built_weight("The (input features, units) weight matrix, made by `build`.")

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape: tf.TensorShape) -> None:
        self.kernel = self.add_weight(name="kernel", shape=[input_shape[-1], self.units],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=[self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def call(self, inputs: Any) -> Any:
        outputs = tf.matmul(inputs, self.kernel) if inputs.shape.rank == 2 else tf.einsum(
            "...i,ij->...j", inputs, self.kernel)
        if self.use_bias:
            outputs = outputs + self.bias
        return self._activate(outputs)


class _Normalization(Layer):
    """What batch and layer normalisation share: `gamma` and `beta` over `axis`, and the affine output."""

    def __init__(self, axis: int, epsilon: float, center: bool, scale: bool, **kwargs: Any):
        super().__init__(**kwargs)
        if isinstance(axis, list | tuple) and len(axis) == 1:  # Keras 3's config writes LayerNormalization's as [-1]
            axis = axis[0]
        self.axis, self.epsilon, self.center, self.scale = axis, epsilon, center, scale

    def build(self, input_shape: tf.TensorShape) -> None:
        size = [input_shape[a] for a in (self.axis if isinstance(self.axis, list | tuple) else [self.axis])]
        if self.scale:
            self.gamma = self.add_weight(name="gamma", shape=size, initializer="ones")
        if self.center:
            self.beta = self.add_weight(name="beta", shape=size, initializer="zeros")

    def _normalize(self, inputs: Any, mean: Any, variance: Any, axes: list[int]) -> Any:
        """Keras 3's affine normalisation on TF (`tf.nn.batch_normalization`, one op): `inv = rsqrt(variance +
        epsilon) * gamma`, then `inputs * inv + (beta - mean * inv)`. The statistics, gamma and beta have the
        sizes of `axes` (the normalised axes), reshaped to broadcast against `inputs` unless those are its last."""
        rank = inputs.shape.rank
        gamma = self.gamma if self.scale else None
        beta = self.beta if self.center else None
        if axes != [rank - 1]:
            shape = [inputs.shape[a] if a in axes else 1 for a in range(rank)]
            mean, variance, gamma, beta = (v if v is None or v.shape.rank == rank else tf.reshape(v, shape)
                                           for v in (mean, variance, gamma, beta))
        return tf.nn.batch_normalization(inputs, mean, variance, beta, gamma, self.epsilon)


class BatchNormalization(_Normalization):
    """Normalises over every axis but `axis` (`tf.keras.layers.BatchNormalization`).

    With `training=True`, the batch's statistics (`tf.nn.moments`) are used and the moving statistics
    (non-trainable variables) are updated by assignment: `moving = moving * momentum + batch * (1 - momentum)`.
    Otherwise, and in a frozen layer (`trainable=False`, set on it or on a model containing it), the moving
    statistics are used and left as they are. The output is Keras 3's `tf.nn.batch_normalization`: `x * inv +
    (beta - mean * inv)` with `inv = rsqrt(variance + epsilon) * gamma`, with `axis` any axis (1 for channels
    first). Inside `strategy.run` each replica normalises by its own batch's statistics and keeps
    its own moving statistics (read: replica 0's), as in TF, unless `synchronized=True`: then the statistics
    are those of the global batch (all-reduced over the replicas).
    """

    supports_masking = True
    _casts_integer_inputs = True

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, synchronized: bool = False, **kwargs: Any):
        super().__init__(axis, epsilon, center, scale, **kwargs)
        self.momentum = momentum
        self.synchronized = synchronized

    def build(self, input_shape: tf.TensorShape) -> None:
        super().build(input_shape)
        size = [input_shape[self.axis]]
        self.moving_mean = self.add_weight(name="moving_mean", shape=size, initializer="zeros", trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=size, initializer="ones", trainable=False)

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        rank = inputs.shape.rank
        axis = self.axis % rank
        reduce_axes = [a for a in range(rank) if a != axis]
        if training and self.trainable:  # Keras 3: a frozen layer normalises by its moving statistics
            mean, variance = self._moments(inputs, reduce_axes)
            self.moving_mean.assign(self.moving_mean * self.momentum + mean * (1.0 - self.momentum))
            self.moving_variance.assign(
                self.moving_variance * self.momentum + variance * (1.0 - self.momentum))
        else:
            mean, variance = self.moving_mean, self.moving_variance
        return self._normalize(inputs, mean, variance, [axis])

    def _moments(self, inputs: Any, reduce_axes: list[int]) -> tuple[Any, Any]:
        replica = tf.distribute.get_replica_context() if self.synchronized else None
        if replica is None or replica.num_replicas_in_sync == 1:
            return tf.nn.moments(inputs, reduce_axes)
        # the global batch's moments: sums and counts all-reduced over the replicas
        count = tf.cast(tf.size(inputs) // tf.size(tf.reduce_sum(inputs, axis=reduce_axes)), inputs.dtype)
        total, count = replica.all_reduce("SUM", [tf.reduce_sum(inputs, axis=reduce_axes), count])
        mean = total / count
        squares = replica.all_reduce("SUM", tf.reduce_sum(tf.square(inputs - mean), axis=reduce_axes))
        return mean, squares / count


class Activation(Layer):
    """Applies an activation, given by name or function (`tf.keras.layers.Activation`)."""

    supports_masking = True

    _built_at_init = True

    def __init__(self, activation: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Any) -> Any:
        return self._activate(inputs)


class Concatenate(Layer):
    """Joins a list of inputs along `axis` (`tf.keras.layers.Concatenate`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Concatenate()([tf.ones([2, 1]), tf.zeros([2, 2])]).shape
    TensorShape([2, 3])
    """

    _built_at_init = True

    def __init__(self, axis: int = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs: Any) -> Any:
        if not isinstance(inputs, list | tuple) or len(inputs) < 1:
            raise ValueError("A `Concatenate` layer should be called on a list of at least 1 input. "
                             f"Received: input_shape={_shapes_of(inputs)}")
        return tf.concat(list(inputs), axis=self.axis)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """Keras 3's: the inputs' masks (all-True for an unmasked input, a step's mask repeated over its features)
        joined along `axis`, a step kept where any of its entries is."""
        if mask is None or all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                m = tf.ones_like(x, dtype=tf.bool)
            elif m.shape.rank < x.shape.rank:
                m = tf.logical_or(tf.expand_dims(m, -1), tf.zeros_like(x, dtype=tf.bool))
            masks.append(m)
        return tf.reduce_any(tf.concat(masks, axis=self.axis), axis=-1)


class Flatten(Layer):
    """Flattens every axis but the first (`tf.keras.layers.Flatten`).

    The flattened size is the product of the known sizes, as Keras computes it, so an empty batch flattens too
    (a -1 cannot be inferred from 0 elements).

    >>> import tapejax as tf
    >>> tf.keras.layers.Flatten()(tf.zeros([0, 2, 3])).shape
    TensorShape([0, 6])
    """

    _built_at_init = True

    def __init__(self, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                             f"Received: data_format={data_format}")
        self.data_format = data_format or "channels_last"

    def call(self, inputs: Any) -> Any:
        if self.data_format == "channels_first" and inputs.shape.rank > 2:  # Keras: channels last, then flatten
            inputs = tf.transpose(inputs, [0, *range(2, inputs.shape.rank), 1])
        rest = list(inputs.shape[1:])
        size = -1 if any(d is None for d in rest) else int(np.prod(rest, dtype=np.int64))
        batch = inputs.shape[0]
        if batch is None:  # a step traced for any batch size (Keras's fit): the batch is what is left
            batch, size = (-1, size) if size > 0 else (tf.shape(inputs)[0], size)
        return tf.reshape(inputs, [batch, size])


class Dropout(Layer):
    """Zeroes inputs with probability `rate` when training, scaling the rest by 1 / (1 - rate); deterministic
    under `tf.random.set_seed` (`tf.keras.layers.Dropout`). The mask is a constant on the tape, so a replay
    uses the same mask."""

    supports_masking = True

    _built_at_init = True

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if not training or self.rate == 0.0:
            return tf.identity(inputs)
        shape = self.noise_shape if self.noise_shape is not None else \
            inputs.shape if inputs.shape.is_fully_defined() else tf.shape(inputs)
        keep = tf.cast(tf.random.uniform(shape, seed=self.seed) >= self.rate, inputs.dtype)
        return inputs * keep / (1.0 - self.rate)


class LayerNormalization(_Normalization):
    """Normalises each example over `axis`, an axis or a list of them (`tf.keras.layers.LayerNormalization`), with
    Keras 3's arithmetic: `tf.nn.moments` over `axis`, then BatchNormalization's affine output. Integer inputs
    come out as Keras 3's do: normalised in float, truncated to integers, then cast to the layer's float dtype.
    """

    supports_masking = True

    def __init__(self, axis: int = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 rms_scaling: bool = False, **kwargs: Any):
        # Keras 3 (deprecated there): RMS scaling divides by the root of the variance and only scales
        if rms_scaling:
            warnings.warn("You passed `rms_scaling=True`, which is deprecated. This argument incorrectly scales the "
                          "input by the variance, not the root mean square. To correctly use RMS Normalization, "
                          "please use `keras.layers.RMSNormalization` instead.", stacklevel=2)
        super().__init__(axis, epsilon, center and not rms_scaling, scale or rms_scaling, **kwargs)
        self.rms_scaling = rms_scaling

    def call(self, inputs: Any) -> Any:
        if not inputs.dtype.is_floating:  # Keras 3's op casts its float result back to the inputs' dtype
            outputs = self.call(tf.cast(inputs, self.dtype))
            if inputs.dtype.is_integer:  # as TF's cast: truncated to int32 first, so -1.2 is 255 in uint8
                outputs = tf.cast(outputs, tf.int32)
            return tf.cast(tf.cast(outputs, inputs.dtype), self.dtype)
        rank = inputs.shape.rank
        axes = sorted(a % rank for a in (self.axis if isinstance(self.axis, list | tuple) else [self.axis]))
        if self.rms_scaling:
            variance = tf.math.reduce_variance(inputs, axis=axes, keepdims=True)
            gamma = self.gamma
            if axes != [rank - 1]:
                gamma = tf.reshape(gamma, [inputs.shape[a] if a in axes else 1 for a in range(rank)])
            return inputs * tf.math.rsqrt(variance + self.epsilon) * gamma
        mean, variance = tf.nn.moments(inputs, axes, keepdims=True)
        return self._normalize(inputs, mean, variance, axes)


class Embedding(Layer):
    """A lookup table of `output_dim` vectors for `input_dim` ids (`tf.keras.layers.Embedding`)."""

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = None,
                 embeddings_regularizer: Any = None, embeddings_constraint: Any = None, mask_zero: bool = False,
                 **kwargs: Any):
        kwargs.pop("input_length", None)  # Keras 2's argument, which Keras 3 ignores
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer or initializers.RandomUniform(-0.05, 0.05)
        self.embeddings_regularizer, self.embeddings_constraint = embeddings_regularizer, embeddings_constraint
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero  # as Keras 3 sets it

    def build(self, input_shape: tf.TensorShape) -> None:
        self.embeddings = self.add_weight(name="embeddings", shape=[self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def call(self, inputs: Any) -> Any:
        return tf.gather(self.embeddings, tf.cast(inputs, tf.int32))

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """With `mask_zero`, id 0 is padding: the mask is `inputs != 0`."""
        return tf.not_equal(inputs, 0) if self.mask_zero else None



# The rest of tf.keras.layers lives in one module per family; they build on Layer above, so they come last.
from tapejax.keras.layers_activation import ELU as ELU, LeakyReLU as LeakyReLU, PReLU as PReLU  # noqa: E402
from tapejax.keras.layers_activation import ReLU as ReLU, Softmax as Softmax  # noqa: E402
from tapejax.keras.layers_conv import Conv1D as Conv1D, Conv2D as Conv2D, Conv3D as Conv3D  # noqa: E402
from tapejax.keras.layers_conv import (Conv1DTranspose as Conv1DTranspose,  # noqa: E402
                                       Conv2DTranspose as Conv2DTranspose, Conv3DTranspose as Conv3DTranspose,
                                       Convolution1D as Convolution1D, Convolution2D as Convolution2D,
                                       Convolution2DTranspose as Convolution2DTranspose,
                                       Convolution3D as Convolution3D, Convolution3DTranspose as Convolution3DTranspose,
                                       DepthwiseConv1D as DepthwiseConv1D, DepthwiseConv2D as DepthwiseConv2D,
                                       SeparableConv1D as SeparableConv1D, SeparableConv2D as SeparableConv2D,
                                       SeparableConvolution1D as SeparableConvolution1D,
                                       SeparableConvolution2D as SeparableConvolution2D)
from tapejax.keras.layers_merge import (Add as Add, Average as Average, Dot as Dot, Maximum as Maximum,  # noqa: E402
                                        Minimum as Minimum, Multiply as Multiply, Subtract as Subtract, add as add,
                                        average as average, concatenate as concatenate, dot as dot,
                                        maximum as maximum, minimum as minimum, multiply as multiply,
                                        subtract as subtract)
from tapejax.keras.layers_noise import (ActivityRegularization as ActivityRegularization,  # noqa: E402
                                        GaussianDropout as GaussianDropout, GaussianNoise as GaussianNoise,
                                        Masking as Masking, SpatialDropout1D as SpatialDropout1D,
                                        SpatialDropout2D as SpatialDropout2D, SpatialDropout3D as SpatialDropout3D)
from tapejax.keras.layers_pooling import (AveragePooling1D as AveragePooling1D,  # noqa: E402
                                          AveragePooling2D as AveragePooling2D, AveragePooling3D as AveragePooling3D,
                                          AvgPool1D as AvgPool1D, AvgPool2D as AvgPool2D, AvgPool3D as AvgPool3D,
                                          GlobalAveragePooling1D as GlobalAveragePooling1D,
                                          GlobalAveragePooling2D as GlobalAveragePooling2D,
                                          GlobalAveragePooling3D as GlobalAveragePooling3D,
                                          GlobalAvgPool1D as GlobalAvgPool1D, GlobalAvgPool2D as GlobalAvgPool2D,
                                          GlobalAvgPool3D as GlobalAvgPool3D,
                                          GlobalMaxPool1D as GlobalMaxPool1D, GlobalMaxPool2D as GlobalMaxPool2D,
                                          GlobalMaxPool3D as GlobalMaxPool3D,
                                          GlobalMaxPooling1D as GlobalMaxPooling1D,
                                          GlobalMaxPooling2D as GlobalMaxPooling2D,
                                          GlobalMaxPooling3D as GlobalMaxPooling3D, MaxPool1D as MaxPool1D,
                                          MaxPool2D as MaxPool2D, MaxPool3D as MaxPool3D,
                                          MaxPooling1D as MaxPooling1D, MaxPooling2D as MaxPooling2D,
                                          MaxPooling3D as MaxPooling3D)
from tapejax.keras.layers_reshape import (Cropping1D as Cropping1D, Cropping2D as Cropping2D,  # noqa: E402
                                          Cropping3D as Cropping3D, Lambda as Lambda, Permute as Permute,
                                          RepeatVector as RepeatVector, Reshape as Reshape,
                                          UpSampling1D as UpSampling1D, UpSampling2D as UpSampling2D,
                                          UpSampling3D as UpSampling3D, ZeroPadding1D as ZeroPadding1D,
                                          ZeroPadding2D as ZeroPadding2D, ZeroPadding3D as ZeroPadding3D)
from tapejax.keras.layers_rnn import (GRU as GRU, LSTM as LSTM, RNN as RNN, GRUCell as GRUCell,  # noqa: E402
                                      LSTMCell as LSTMCell, SimpleRNN as SimpleRNN, SimpleRNNCell as SimpleRNNCell,
                                      StackedRNNCells as StackedRNNCells)
from tapejax.keras.layers_attention import AdditiveAttention as AdditiveAttention  # noqa: E402
from tapejax.keras.layers_attention import Attention as Attention  # noqa: E402
from tapejax.keras.layers_attention import MultiHeadAttention as MultiHeadAttention  # noqa: E402
from tapejax.keras.layers_preprocessing import (CenterCrop as CenterCrop,  # noqa: E402
                                                Normalization as Normalization, RandomContrast as RandomContrast,
                                                RandomFlip as RandomFlip, RandomRotation as RandomRotation,
                                                RandomTranslation as RandomTranslation, RandomZoom as RandomZoom,
                                                Rescaling as Rescaling, Resizing as Resizing)
from tapejax.keras.layers_wrappers import Bidirectional as Bidirectional  # noqa: E402
from tapejax.keras.layers_wrappers import TimeDistributed as TimeDistributed  # noqa: E402
from tapejax.keras.layers_group_normalization import GroupNormalization as GroupNormalization  # noqa: E402
from tapejax.keras.layers_lookup import IntegerLookup as IntegerLookup  # noqa: E402
from tapejax.keras.layers_lookup import StringLookup as StringLookup  # noqa: E402
from tapejax.keras.layers_text import TextVectorization as TextVectorization  # noqa: E402
from tapejax.keras.layers_weightless import Identity as Identity  # noqa: E402
from tapejax.keras.layers_weightless import UnitNormalization as UnitNormalization  # noqa: E402
from tapejax.keras.layers_einsum import EinsumDense as EinsumDense  # noqa: E402
from tapejax.keras.layers_noise import AlphaDropout as AlphaDropout  # noqa: E402
from tapejax.keras.layers_categorical import CategoryEncoding as CategoryEncoding  # noqa: E402
from tapejax.keras.layers_categorical import Discretization as Discretization  # noqa: E402
from tapejax.keras.layers_categorical import Hashing as Hashing  # noqa: E402

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.layers")
