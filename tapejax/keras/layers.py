"""tf.keras.layers: the layers custom GradientTape loops use, built only on tapejax's public API.

Layers are tf.Modules that build their weights on first call, inside a name scope of their unique name, so a
weight's name is its Keras 3 `path` plus TF's `:0`: `dense/kernel:0` for a layer built on its own,
`my_model/dense_1/bias:0` for one built inside a model's first call. Layers take symbolic `tf.keras.Input` tensors
too (the functional API); their output shapes come from running them on zeros (see `_probe`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import re
import threading
from collections import defaultdict
from typing import Any

import jax
import numpy as np

import tapejax as tf
from tapejax.keras import activations, checkpointing, initializers

class _Names(threading.local):
    """How many objects of each base name this thread has named: Keras 3 keeps these counts per thread (its
    global state is a `threading.local`), so `Dense()` is `dense` in every new thread."""

    def __init__(self):
        self.counts: defaultdict[str, int] = defaultdict(int)


_NAMES = _Names()


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
_TRAINING_INDEX: dict[type, int | None] = {}


def _training_index(layer: Layer) -> int | None:
    """Where the layer's `call` takes `training`: its index among the positional arguments after `inputs`, -1 if
    only by keyword, None if it does not take it."""
    cls = type(layer)
    if cls not in _TRAINING_INDEX:
        index = None  # published once found: another thread must never read a half-made answer
        for i, parameter in enumerate(inspect.signature(layer.call).parameters.values()):
            if parameter.name == "training":
                positional = parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
                index = i - 1 if positional else -1
        _TRAINING_INDEX[cls] = index
    return _TRAINING_INDEX[cls]


def _takes_training(layer: Layer) -> bool:
    return _training_index(layer) is not None


def _leaves(structure: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(structure, is_leaf=lambda x: isinstance(x, KerasTensor | tf.TensorShape))


def _shapes_of(structure: Any) -> Any:
    """The TensorShape of a tensor, or the same structure of TensorShapes for a list/tuple/dict of tensors."""
    if hasattr(structure, "shape"):
        return tf.TensorShape(structure.shape)
    if isinstance(structure, list | tuple):
        return type(structure)(_shapes_of(s) for s in structure)
    if isinstance(structure, dict):
        return {k: _shapes_of(v) for k, v in structure.items()}
    return None


class Layer(tf.Module):
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
    >>> [w.name for w in layer.weights], layer.count_params()
    (['head/kernel:0', 'head/bias:0'], 15)
    """

    # Keras builds the stateless layers that have no `build` (Dropout, Activation, pooling) in `__init__`;
    # it shows in summary(): such a layer is never "(unbuilt)", and a subclassed model shows no output shape
    # for it, since its calls build nothing.
    _built_at_init = False

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name=name or _unique_name(_snake_case(type(self).__name__)))
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
        if "_own_weights" not in self.__dict__ and not name.startswith("_"):
            raise RuntimeError(f"{type(self).__name__} has no attribute {name!r}: it looks like its __init__ does "
                               "not call super().__init__(); call it first, before assigning layers or weights.")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def build(self, input_shape: tf.TensorShape) -> None:
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if any(isinstance(leaf, KerasTensor) for leaf in _leaves(inputs)):
            return self._call_symbolically(inputs, args, kwargs)
        inputs = jax.tree_util.tree_map(self._convert_input, inputs)
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
        building = not self.built
        if not _STATE.training:  # the outermost call: losses added by an earlier forward pass are dropped
            self._clear_losses()
        _STATE.training.append(training)
        try:
            if building:  # the first call runs in the layer's name scope: the weights its sublayers make too
                with self._own_name_scope():
                    self._build_for_call(inputs)
                    self.built = True
                    outputs = self.call(inputs, *args, **kwargs)
            else:
                outputs = self.call(inputs, *args, **kwargs)
        finally:
            _STATE.training.pop()
        if building:
            self._output_shape = _shapes_of(outputs)
        if _STATE.probes:
            _STATE.probes[-1].setdefault(id(self), (self, _shapes_of(outputs)))
        return outputs

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
        # float32 layer computes in float32).
        if isinstance(value, np.ndarray):
            floating = np.issubdtype(value.dtype, np.floating)
            return tf.convert_to_tensor(value.astype(self.dtype.as_numpy_dtype) if floating else value)
        if isinstance(value, tf.Tensor) and value.dtype.is_floating and value.dtype != self.dtype:
            return tf.cast(value, self.dtype)
        return value

    def _build_for_call(self, inputs: Any) -> None:
        self.build(_shapes_of(inputs))

    def _call_symbolically(self, inputs: Any, args: tuple, kwargs: dict) -> Any:
        """A call on KerasTensors (the functional API): builds the layer and returns KerasTensors."""
        treedef, shapes, dtypes = _probe(lambda concrete: self(concrete, *args, **kwargs), inputs)
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

    def add_weight(self, name: str, shape: Any = (), dtype: Any = None, initializer: Any = "glorot_uniform",
                   trainable: bool = True, **kwargs: Any) -> tf.Variable:
        """Creates a weight of this layer, named `layer_name/name:0` when called from `build`."""
        init = initializers.get(initializer)
        with tf.init_scope():  # built on a first tf.function call too: the initial value is computed concretely
            variable = tf.Variable(init(shape, dtype or self.dtype), name=name, trainable=trainable)
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
        """The losses that this layer and its sublayers added during the last forward pass."""
        return list(self.__dict__.get("_losses", [])) + [x for layer in self._sublayers() for x in layer.losses]

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


@functools.cache
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
    """Shape inference by running `fn` twice on zeros shaped like the KerasTensors in `specs`, each unknown
    dimension given a different size in each run: a dimension of an output is known (an int) if it came out the
    same both times, else None.

    Every layer called inside also gets its output shape merged in this way (`layer._output_shape`). Returns
    the output structure's treedef, and the flat output shapes and dtypes.
    """
    runs = []
    for batch, other in _PROBE_SIZES:
        def zeros(spec: Any) -> Any:
            if not isinstance(spec, KerasTensor):
                return spec
            dims = [(batch if axis == 0 else other) if d is None else d for axis, d in enumerate(spec.shape)]
            return tf.zeros(dims, spec.dtype)
        reports: dict[int, tuple[Layer, Any]] = {}
        _STATE.probes.append(reports)
        try:
            outputs = fn(jax.tree_util.tree_map(zeros, specs, is_leaf=lambda x: isinstance(x, KerasTensor)))
        finally:
            _STATE.probes.pop()
        runs.append((outputs, reports))
    (first, first_reports), (second, second_reports) = runs
    for key, (layer, shape) in first_reports.items():
        if key in second_reports:
            layer._output_shape = _merge_shapes(shape, second_reports[key][1])
    flat, treedef = jax.tree_util.tree_flatten(first)
    shapes = [_merge_shapes(a.shape, b.shape) for a, b in zip(flat, jax.tree_util.tree_leaves(second))]
    return treedef, shapes, [x.dtype for x in flat]


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

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", **kwargs: Any):
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape: tf.TensorShape) -> None:
        self.kernel = self.add_weight("kernel", [input_shape[-1], self.units], initializer=self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer)

    def call(self, inputs: Any) -> Any:
        outputs = tf.matmul(inputs, self.kernel) if inputs.shape.rank == 2 else tf.einsum(
            "...i,ij->...j", inputs, self.kernel)
        if self.use_bias:
            outputs = outputs + self.bias
        return self.activation(outputs)


class _Normalization(Layer):
    """What batch and layer normalisation share: `gamma` and `beta` over `axis`, and the affine output."""

    def __init__(self, axis: int, epsilon: float, center: bool, scale: bool, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis, self.epsilon, self.center, self.scale = axis, epsilon, center, scale

    def build(self, input_shape: tf.TensorShape) -> None:
        size = [input_shape[self.axis]]
        if self.scale:
            self.gamma = self.add_weight("gamma", size, initializer="ones")
        if self.center:
            self.beta = self.add_weight("beta", size, initializer="zeros")

    def _normalize(self, inputs: Any, mean: Any, variance: Any) -> Any:
        outputs = (inputs - mean) * tf.math.rsqrt(variance + self.epsilon)
        if self.scale:
            outputs = outputs * self.gamma
        if self.center:
            outputs = outputs + self.beta
        return outputs


class BatchNormalization(_Normalization):
    """Normalises over every axis but `axis` (`tf.keras.layers.BatchNormalization`).

    With `training=True`, the batch's statistics are used and the moving statistics (non-trainable variables)
    are updated by assignment: `moving = moving * momentum + batch * (1 - momentum)`. Otherwise the moving
    statistics are used.
    """

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, **kwargs: Any):
        super().__init__(axis, epsilon, center, scale, **kwargs)
        self.momentum = momentum

    def build(self, input_shape: tf.TensorShape) -> None:
        super().build(input_shape)
        size = [input_shape[self.axis]]
        self.moving_mean = self.add_weight("moving_mean", size, initializer="zeros", trainable=False)
        self.moving_variance = self.add_weight("moving_variance", size, initializer="ones", trainable=False)

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        rank = inputs.shape.rank
        reduce_axes = [a for a in range(rank) if a != self.axis % rank]
        if training:
            mean = tf.reduce_mean(inputs, axis=reduce_axes)
            variance = tf.reduce_mean(tf.square(inputs - mean), axis=reduce_axes)
            self.moving_mean.assign(self.moving_mean * self.momentum + mean * (1.0 - self.momentum))
            self.moving_variance.assign(
                self.moving_variance * self.momentum + variance * (1.0 - self.momentum))
        else:
            mean, variance = self.moving_mean, self.moving_variance
        return self._normalize(inputs, mean, variance)


class Activation(Layer):
    """Applies an activation, given by name or function (`tf.keras.layers.Activation`)."""

    _built_at_init = True

    def __init__(self, activation: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)


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


class Flatten(Layer):
    """Flattens every axis but the first (`tf.keras.layers.Flatten`)."""

    def call(self, inputs: Any) -> Any:
        return tf.reshape(inputs, [inputs.shape[0], -1])


class Dropout(Layer):
    """Zeroes inputs with probability `rate` when training, scaling the rest by 1 / (1 - rate); deterministic
    under `tf.random.set_seed` (`tf.keras.layers.Dropout`). The mask is a constant on the tape, so a replay
    uses the same mask."""

    _built_at_init = True

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if not training or self.rate == 0.0:
            return tf.identity(inputs)
        shape = self.noise_shape if self.noise_shape is not None else inputs.shape
        keep = tf.cast(tf.random.uniform(shape, seed=self.seed) >= self.rate, inputs.dtype)
        return inputs * keep / (1.0 - self.rate)


class LayerNormalization(_Normalization):
    """Normalises each example over `axis` (`tf.keras.layers.LayerNormalization`)."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 **kwargs: Any):
        super().__init__(axis, epsilon, center, scale, **kwargs)

    def call(self, inputs: Any) -> Any:
        mean = tf.reduce_mean(inputs, axis=self.axis, keepdims=True)
        variance = tf.reduce_mean(tf.square(inputs - mean), axis=self.axis, keepdims=True)
        return self._normalize(inputs, mean, variance)


class Embedding(Layer):
    """A lookup table of `output_dim` vectors for `input_dim` ids (`tf.keras.layers.Embedding`)."""

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer or initializers.RandomUniform(-0.05, 0.05)

    def build(self, input_shape: tf.TensorShape) -> None:
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer)

    def call(self, inputs: Any) -> Any:
        return tf.gather(self.embeddings, tf.cast(inputs, tf.int32))


def _pair(value: Any, what: str) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, int | np.integer) else tuple(value)
    if len(pair) != 2:
        raise ValueError(f"The `{what}` argument must be an int or a tuple of 2 ints; received {value!r}.")
    return int(pair[0]), int(pair[1])


def _padding(padding: str) -> str:
    if str(padding).lower() not in ("valid", "same"):
        raise ValueError(f"`padding` must be 'valid' or 'same'; received {padding!r}.")
    return str(padding).lower()


def _data_format(data_format: str | None) -> str:
    data_format = data_format or "channels_last"  # keras.config.image_data_format()'s default
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"`data_format` must be 'channels_last' or 'channels_first'; received {data_format!r}.")
    return data_format


def _to_channels_last(inputs: Any, data_format: str) -> Any:
    # tf.nn's 2-D ops take NHWC here; channels_first inputs are transposed around them, as Keras's TF backend does.
    return inputs if data_format == "channels_last" else tf.transpose(inputs, [0, 2, 3, 1])


def _from_channels_last(outputs: Any, data_format: str) -> Any:
    return outputs if data_format == "channels_last" else tf.transpose(outputs, [0, 3, 1, 2])


class Conv2D(Layer):
    """A 2-D convolution, `activation(conv2d(inputs, kernel) + bias)`, on `tf.nn.conv2d` (`tf.keras.layers.Conv2D`).

    The kernel has shape `kernel_size + (input_channels // groups, filters)`; `padding` is "valid" or "same".

    >>> import tapejax as tf
    >>> layer = tf.keras.layers.Conv2D(4, 3, strides=2, padding="same")
    >>> layer(tf.ones([1, 9, 9, 2])).shape, layer.kernel.shape
    (TensorShape([1, 5, 5, 4]), TensorShape([3, 3, 2, 4]))
    """

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = (1, 1), groups: int = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.filters, self.groups = int(filters), int(groups)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides, self.dilation_rate = _pair(strides, "strides"), _pair(dilation_rate, "dilation_rate")
        self.padding, self.data_format = _padding(padding), _data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        if self.filters % self.groups:
            raise ValueError(f"`filters` ({self.filters}) must be divisible by `groups` ({self.groups}).")

    def build(self, input_shape: tf.TensorShape) -> None:
        channels = input_shape[-1 if self.data_format == "channels_last" else 1]
        if channels is None or channels % self.groups:
            raise ValueError(f"Conv2D needs a known number of input channels divisible by groups={self.groups}; "
                             f"the input shape is {input_shape}.")
        self.kernel = self.add_weight("kernel", [*self.kernel_size, channels // self.groups, self.filters],
                                      initializer=self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer)

    def call(self, inputs: Any) -> Any:
        x = _to_channels_last(inputs, self.data_format)
        options = dict(strides=[1, *self.strides, 1], padding=self.padding.upper(),
                       dilations=[1, *self.dilation_rate, 1])
        if self.groups == 1:
            outputs = tf.nn.conv2d(x, self.kernel, **options)
        else:  # each group of input channels meets its own slice of the filters
            outputs = tf.concat([tf.nn.conv2d(part, kernel, **options) for part, kernel in zip(
                tf.split(x, self.groups, axis=-1), tf.split(self.kernel, self.groups, axis=-1))], axis=-1)
        if self.use_bias:
            outputs = tf.nn.bias_add(outputs, self.bias)
        return self.activation(_from_channels_last(outputs, self.data_format))


class _Pooling2D(Layer):
    """What max and average pooling share: a window of `pool_size`, moved by `strides` (default: `pool_size`)."""

    _built_at_init = True

    def __init__(self, pool_size: Any, strides: Any, padding: str, data_format: str | None, **kwargs: Any):
        super().__init__(**kwargs)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding, self.data_format = _padding(padding), _data_format(data_format)

    def _pool(self, op: Any, inputs: Any) -> Any:
        outputs = op(_to_channels_last(inputs, self.data_format), ksize=[1, *self.pool_size, 1],
                     strides=[1, *self.strides, 1], padding=self.padding.upper())
        return _from_channels_last(outputs, self.data_format)


class MaxPooling2D(_Pooling2D):
    """The maximum over each window, on `tf.nn.max_pool2d` (`tf.keras.layers.MaxPooling2D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.MaxPooling2D()(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 2, 2, 3])
    """

    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)

    def call(self, inputs: Any) -> Any:
        return self._pool(tf.nn.max_pool2d, inputs)


class AveragePooling2D(_Pooling2D):
    """The mean over each window, on `tf.nn.avg_pool2d` (`tf.keras.layers.AveragePooling2D`); with "same"
    padding, a window at the border averages only the inputs it covers. `pool_size` is required, as in Keras 3.

    >>> import tapejax as tf
    >>> tf.keras.layers.AveragePooling2D(2, padding="same")(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 3, 3, 3])
    """

    def __init__(self, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: str | None = None,
                 **kwargs: Any):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)

    def call(self, inputs: Any) -> Any:
        return self._pool(tf.nn.avg_pool2d, inputs)


class GlobalAveragePooling2D(Layer):
    """The mean over the spatial axes (`tf.keras.layers.GlobalAveragePooling2D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.GlobalAveragePooling2D()(tf.ones([2, 5, 5, 3])).shape
    TensorShape([2, 3])
    """

    _built_at_init = True

    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format, self.keepdims = _data_format(data_format), keepdims

    def call(self, inputs: Any) -> Any:
        axes = [1, 2] if self.data_format == "channels_last" else [2, 3]
        return tf.reduce_mean(inputs, axis=axes, keepdims=self.keepdims)
