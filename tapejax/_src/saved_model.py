"""tf.saved_model.save: TF's directory layout, with the variables in TF's checkpoint format and the functions as
StableHLO.

TF's SavedModel stores its functions as TF graphs in `saved_model.pb`, which only TF's runtime can make or run.
tapejax writes what it can make honestly: `variables/variables.*` is a real TF checkpoint of the object (the
same keys TF writes, read by `tf.train.load_checkpoint`, restorable into TF code with `tf.train.Checkpoint`),
and each traced concrete function of the object's tf.functions is serialised with `jax.export` (StableHLO,
with its first-order VJP) under `tapejax/`, beside `tapejax/saved_model.json`: the object graph, each function's
argument and result structures, and the signatures. No `saved_model.pb` is written, so TF's loader reports a
missing SavedModel rather than misreading one. saved_model_load.py reads it back.
"""

from __future__ import annotations

import json
import os
from typing import Any

import jax
import numpy as np

from . import checkpoint_graph as graph_lib
from .checkpoint import Checkpoint
from .function import Function
from .module import Module
from .signature import _TENSOR, TensorSpec
from .variable import Variable

FORMAT = "tapejax SavedModel 1"
MANIFEST = os.path.join("tapejax", "saved_model.json")
_JSON_ATOMS = (str, int, float, bool, type(None))


class SaveOptions:
    """Options for `tf.saved_model.save` (`tf.saved_model.SaveOptions`): accepted; none changes what is saved."""

    def __init__(self, namespace_whitelist: Any = None, save_debug_info: bool = False, function_aliases: Any = None,
                 experimental_io_device: Any = None, experimental_variable_policy: Any = None, **kwargs: Any):
        self.namespace_whitelist = namespace_whitelist
        self.save_debug_info = save_debug_info
        self.function_aliases = function_aliases
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy


class _Unsaveable(Exception):
    """A structure or Python argument the manifest cannot hold (the concrete function is skipped)."""


def encode(nest: Any, leaf: Any) -> Any:
    """A nest of tuples, lists, dicts and leaves as JSON; `leaf(x)` encodes a leaf or raises _Unsaveable."""
    if isinstance(nest, tuple) and not hasattr(nest, "_fields"):
        return {"tuple": [encode(x, leaf) for x in nest]}
    if isinstance(nest, list):
        return {"list": [encode(x, leaf) for x in nest]}
    if isinstance(nest, dict):
        if not all(isinstance(k, str | int) for k in nest):
            raise _Unsaveable("dict keys")
        return {"dict": [[k, encode(v, leaf)] for k, v in nest.items()]}
    return leaf(nest)


class _Output:
    """Marks the place of the i-th tensor output in a result's structure."""

    def __init__(self, index: int):
        self.index = index


def _python_leaf(value: Any) -> dict:
    if isinstance(value, _JSON_ATOMS):
        return {"python": value}
    raise _Unsaveable(repr(value))


def _functions_of(obj: Any) -> list[tuple[str, Function]]:
    """The tf.functions an object holds: its own attributes and its class's decorated methods, bound."""
    found = {}
    for klass in reversed(type(obj).__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Function):
                found[name] = getattr(obj, name)
    for name, value in (vars(obj).items() if hasattr(obj, "__dict__") else ()):
        if isinstance(value, Function):
            found[name] = value
    return sorted(found.items())


def _concretes(function: Function) -> list[tuple[Any, Any]]:
    """(call key, concrete function) for each live trace, tracing the input_signature first if there is one."""
    if function.input_signature is not None:
        function.get_concrete_function()
    seen, result = set(), []
    for key, concrete in list(function._concrete.items()):
        if id(concrete) not in seen and concrete.live_variables() is not None and concrete._out is not None:
            seen.add(id(concrete))
            result.append((key, concrete))
    return result


class _Writer:
    def __init__(self, root: Any, export_dir: str):
        self.export_dir = export_dir
        self.order = list(graph_lib.walk(root))
        self.ids = {id(obj): i for i, (obj, _, _) in enumerate(self.order)}
        self.keys = {id(obj): f"{path}/{graph_lib.VALUE_SUFFIX}" for obj, path, _ in self.order
                     if isinstance(obj, Variable)}
        self.exports: list[dict] = []

    def nodes(self) -> list[dict]:
        nodes = []
        for obj, _, edges in self.order:
            node: dict[str, Any] = {"children": [[name, self.ids[id(child)]] for name, child in edges]}
            if isinstance(obj, Variable):
                node["variable"] = {"key": self.keys[id(obj)], "name": obj.name, "trainable": obj.trainable,
                                    "dtype": obj.dtype.name, "shape": list(obj.shape)}
            elif isinstance(obj, list | tuple | dict):
                node["kind"] = type(obj).__name__ if isinstance(obj, dict | tuple) else "list"
            else:
                node["functions"] = {name: self.function(f) for name, f in _functions_of(obj)
                                     if not isinstance(obj, graph_lib.Saveable)}
            nodes.append(node)
        return nodes

    def function(self, function: Function) -> dict:
        concretes = []
        for key, concrete in _concretes(function):
            try:
                concretes.append(self.concrete(key, concrete))
            except _Unsaveable:
                continue  # a Python argument or result JSON cannot hold: TF would pickle nothing either
        return {"name": function.__name__, "parameters": _parameters(function), "concretes": concretes}

    def concrete(self, key: Any, concrete: Any) -> int:
        treedef, statics, specs = key
        variables = concrete.live_variables()
        missing = [v for v in variables if id(v) not in self.keys]
        if missing:
            raise AssertionError(
                f"Tried to export a function which references an 'untracked' resource. TensorFlow objects (e.g. "
                f"tf.Variable) captured by functions must be 'tracked' by assigning them to an attribute of a "
                f"tracked object or assigned to an attribute of the main object directly. Untracked: "
                f"{missing[0].name}")
        if concrete.symbolic:
            exported = concrete._exported
            tensor_avals = exported.in_avals[:concrete.n_tensors]
        else:
            tensor_avals = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
            var_avals = tuple(jax.ShapeDtypeStruct(v.shape, v.dtype._np) for v in variables)
            exported = jax.export.export(concrete._replayed())(tuple(tensor_avals), var_avals,
                                                                jax.ShapeDtypeStruct((), np.uint32))
        slots = iter(tensor_avals)

        def arg_leaf(static: Any) -> dict:
            if static is _TENSOR:
                aval = next(slots)
                return {"tensor": [[d if isinstance(d, int) else None for d in aval.shape], str(np.dtype(aval.dtype))]}
            return _python_leaf(static.value)

        inputs = encode(jax.tree_util.tree_unflatten(treedef, list(statics)), arg_leaf)
        out_treedef, is_tensor, python = concrete._out
        python_iter, counter = iter(python), iter(range(len(is_tensor)))
        outputs = encode(jax.tree_util.tree_unflatten(
            out_treedef, [_Output(next(counter)) if t else next(python_iter) for t in is_tensor]),
            lambda leaf: {"output": leaf.index} if isinstance(leaf, _Output) else _python_leaf(leaf))
        index = len(self.exports)
        path = os.path.join("tapejax", f"function_{index}.stablehlo")
        with open(os.path.join(self.export_dir, path), "wb") as f:
            f.write(exported.serialize(vjp_order=1))
        self.exports.append({"file": path, "inputs": inputs, "outputs": outputs,
                             "variables": [self.keys[id(v)] for v in variables], "assigned": concrete.assigned})
        return index


def _parameters(function: Function) -> list[list] | None:
    """[name, default] per parameter of the Python function ({"python": value}, or None without a default): a
    loaded function binds a call as the original did before keying it (signature.Binder.canonical)."""
    signature = function._binder.signature
    if signature is None:
        return None
    result = []
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None
        default = None
        if p.default is not p.empty:
            try:
                default = _python_leaf(p.default)
            except _Unsaveable:
                default = None
        result.append([name, default])
    return result


def _keras_serving(obj: Any) -> Function | None:
    """Keras 3's default signature of a built functional/Sequential model: its call on its inputs, `inputs`."""
    try:  # duck-typed (_src does not import keras): a functional model's `inputs`, a Sequential's Input
        inputs = obj.inputs
    except AttributeError:
        inputs = [getattr(obj, "_input_spec", None)]
    if not isinstance(inputs, list) or len(inputs) != 1 or inputs[0] is None or not callable(obj):
        return None
    spec = TensorSpec(inputs[0].shape, inputs[0].dtype, name="inputs")
    return Function(lambda inputs: obj(inputs), input_signature=[spec])


def _signatures(root: Any, signatures: Any, writer: _Writer) -> dict:
    if signatures is None:
        with_signature = [f for _, f in _functions_of(root) if f.input_signature is not None]
        default = with_signature[0] if len(with_signature) == 1 else _keras_serving(root)
        signatures = {} if default is None else {"serving_default": default}
    elif not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    result = {}
    for name, function in signatures.items():
        if not isinstance(function, Function) or function.input_signature is None:
            raise ValueError(f"Expected a TensorFlow function with an input_signature for the signature {name!r} "
                             f"of tf.saved_model.save, got {function!r}. Decorate it with "
                             "@tf.function(input_signature=[tf.TensorSpec(...)]).")
        key, concrete = _concretes(function)[0]
        specs = function.input_signature
        names = [name for name, _ in _parameters(function) or []]
        input_names = [s.name or (names[i] if i < len(names) else f"input_{i}") for i, s in enumerate(specs)]
        result[name] = {"export": writer.concrete(key, concrete), "input_names": input_names}
    return result


def save(obj: Any, export_dir: str, signatures: Any = None, options: SaveOptions | None = None) -> None:
    """Saves `obj` (a tf.Module or Keras model) to `export_dir` (`tf.saved_model.save`): its variables as a TF
    checkpoint (`export_dir/variables/variables`), its traced tf.functions as StableHLO, and `signatures`
    (a tf.function with an input_signature, or a dict of them; by default the object's one tf.function with an
    input_signature, or a Keras model's call, as 'serving_default'). `tf.saved_model.load` reads it back.

    >>> import tapejax as tf, tempfile
    >>> class Scale(tf.Module):
    ...     def __init__(self):
    ...         self.w = tf.Variable(2.0)
    ...     @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    ...     def __call__(self, x):
    ...         return x * self.w
    >>> path = tempfile.mkdtemp()
    >>> tf.saved_model.save(Scale(), path)
    >>> tf.saved_model.load(path)(tf.constant([1.0, 2.0])).numpy().tolist()
    [2.0, 4.0]

    Differences from TensorFlow: no `saved_model.pb` (TF's graph format) is written, so TensorFlow's
    `tf.saved_model.load` cannot load the directory; TF reads its variables with `tf.train.Checkpoint` or
    `tf.train.load_checkpoint(export_dir + "/variables/variables")`. Concrete functions with Python arguments or
    results other than numbers, strings, None and nests of them are not saved.
    """
    if not (isinstance(obj, Module) or graph_lib.holds_state(obj) or hasattr(type(obj), "_checkpoint_children")):
        raise ValueError(f"Expected an object of type `Trackable`, such as `tf.Module` or a subclass of the "
                         f"`Trackable` class, for export. Got {obj} with type {type(obj)}.")
    export_dir = os.fspath(export_dir)
    os.makedirs(os.path.join(export_dir, "tapejax"), exist_ok=True)
    os.makedirs(os.path.join(export_dir, "assets"), exist_ok=True)
    Checkpoint(root=obj).write(os.path.join(export_dir, "variables", "variables"))
    writer = _Writer(obj, export_dir)
    nodes = writer.nodes()
    signature_table = _signatures(obj, signatures, writer)
    manifest = {"format": FORMAT, "nodes": nodes, "exports": writer.exports, "signatures": signature_table}
    with open(os.path.join(export_dir, MANIFEST), "w", encoding="utf-8") as f:
        json.dump(manifest, f)
