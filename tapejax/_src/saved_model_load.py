"""tf.saved_model.load: the object graph saved by tapejax (saved_model.py) rebuilt, its variables restored, and
its functions callable for the signatures they were traced for.

A loaded function is one op on the tapes (its StableHLO carries its VJP), reads the restored variables as inputs
and writes back the ones it assigns, so gradients, optimizer steps and tf.function calls work on it as on the
original. A call that matches none of the saved traces raises TF's ValueError listing them.
"""

from __future__ import annotations

import json
import os
from typing import Any

import jax
import numpy as np

from . import dtypes
from .checkpoint_bundle import BundleReader
from .convert import to_array
from .dispatch import apply
from .registry import OpDef
from .saved_model import FORMAT, MANIFEST
from .tensor import EagerTensor, Tensor, TensorShape
from .variable import Variable


class LoadOptions:
    """Options for `tf.saved_model.load` (`tf.saved_model.LoadOptions`): accepted and ignored."""

    def __init__(self, **kwargs: Any):
        self.__dict__.update(kwargs)


class _UserObject:
    """A loaded object: its saved attributes (variables, sub-objects, containers) and tf.functions."""

    def __init__(self) -> None:
        self.signatures: dict[str, Any] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = vars(self).get("__call__")  # a saved `__call__` tf.function is an attribute of the instance
        if call is None:
            raise TypeError("'_UserObject' object is not callable")
        return call(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tapejax saved_model._UserObject with {sorted(k for k in vars(self) if k != 'signatures')}>"


def decode(encoded: Any, leaf: Any) -> Any:
    if isinstance(encoded, dict) and len(encoded) == 1:
        (kind, value), = encoded.items()
        if kind == "tuple":
            return tuple(decode(x, leaf) for x in value)
        if kind == "list":
            return [decode(x, leaf) for x in value]
        if kind == "dict":
            return {k: decode(v, leaf) for k, v in value}
    return leaf(encoded)


class _Input:
    """A tensor slot of a saved trace: its shape (None where free) and dtype."""

    def __init__(self, shape: list, dtype: str):
        self.shape, self.dtype = TensorShape(shape), dtypes.as_dtype(dtype)

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name})"


def _is_leaf(x: Any) -> bool:
    return isinstance(x, Tensor | Variable | _Input)


class _Concrete:
    def __init__(self, export_dir: str, entry: dict, variables: dict[str, Variable]):
        with open(os.path.join(export_dir, entry["file"]), "rb") as f:
            self.exported = jax.export.deserialize(bytearray(f.read()))
        self.inputs = decode(entry["inputs"], lambda e: _Input(*e["tensor"]) if "tensor" in e else e["python"])
        self.outputs = entry["outputs"]
        self.variables = [variables[key] for key in entry["variables"]]
        self.assigned = entry["assigned"]
        self.calls = 0
        n_args = sum(isinstance(x, _Input) for x in jax.tree_util.tree_leaves(self.inputs, is_leaf=_is_leaf))
        n_vars = len(self.variables)

        def impl(*flat: Any) -> tuple:
            args, var_vals, calls = flat[:n_args], flat[n_args:n_args + n_vars], flat[-1]
            outs, new_vals, _ = self.exported.call(tuple(args), tuple(var_vals), calls)
            return (*outs, *new_vals)

        self.opdef = OpDef(f"saved_model.{os.path.basename(entry['file'])}", impl, op_type="PartitionedCall",
                           same_dtype=False, jit=False)

    def bind(self, args: tuple) -> list | None:
        """The tensors of a call, if it matches this trace's structure, Python values, shapes and dtypes."""
        try:
            slots, treedef = jax.tree_util.tree_flatten(self.inputs, is_leaf=_is_leaf)
            given = treedef.flatten_up_to(args)
        except (ValueError, TypeError):
            return None
        tensors = []
        for slot, value in zip(slots, given):
            if isinstance(slot, _Input):
                if isinstance(value, Variable):
                    value = value.read_value()
                try:
                    array = value if isinstance(value, Tensor) else EagerTensor(jax.numpy.asarray(
                        to_array(value, dtype=slot.dtype)))
                except (TypeError, ValueError):
                    return None
                if array.dtype != slot.dtype or not slot.shape.is_compatible_with(array.shape):
                    return None
                tensors.append(array)
            elif isinstance(value, Tensor | Variable) or value != slot:
                return None
        return tensors

    def __call__(self, tensors: list) -> Any:
        self.calls += 1
        calls = EagerTensor(jax.numpy.asarray(self.calls, np.uint32))
        flat = apply(self.opdef, (*tensors, *self.variables, calls), {})
        flat = flat if isinstance(flat, tuple) else (flat,)
        n_out = len(flat) - len(self.assigned)
        for i, value in zip(self.assigned, flat[n_out:]):
            if i is not None:
                self.variables[i].assign(value)
        return decode(self.outputs, lambda e: flat[e["output"]] if "output" in e else e["python"])


class LoadedFunction:
    """A saved tf.function: callable for the argument signatures it was traced for before saving."""

    def __init__(self, name: str, parameters: list[list] | None, concretes: list[_Concrete]):
        self.__name__, self._parameters, self._concretes = name, parameters, concretes

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        """The call's arguments by position with defaults filled in, as the original bound them."""
        if self._parameters is None:
            return args
        names = [name for name, _ in self._parameters]
        if len(args) > len(names) or any(k not in names for k in kwargs):
            raise TypeError(f"{self.__name__}() takes the parameters {names}; got {len(args)} positional "
                            f"arguments and {sorted(kwargs)}.")
        named = dict(zip(names, args), **kwargs)
        bound = []
        for name, default in self._parameters:
            if name in named:
                bound.append(named[name])
            elif default is not None:
                bound.append(default["python"])
            else:
                break  # an input_signature's function: its specs say what is passed
        return tuple(bound)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._bind(args, kwargs)
        for concrete in self._concretes:
            tensors = concrete.bind((args, {}))
            if tensors is not None:
                return concrete(tensors)
        options = "\n".join(f"Option {i + 1}: {c.inputs[0]!r}" for i, c in enumerate(self._concretes))
        raise ValueError(f"Could not find matching concrete function to call loaded from the SavedModel. Got:\n"
                         f"  Positional arguments ({len(args)} total): {args!r}\n  Keyword arguments: {kwargs}\n\n"
                         f" Expected these arguments to match one of the following {len(self._concretes)} option(s):"
                         f"\n\n{options}")

    def __repr__(self) -> str:
        return f"<tapejax saved_model.LoadedFunction {self.__name__}>"


class SignatureFunction:
    """A saved signature: called with keyword arguments by input name; returns a dict of output tensors."""

    def __init__(self, concrete: _Concrete, input_names: list[str]):
        self._concrete, self.input_names = concrete, input_names

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        values = [*args, *[kwargs[n] for n in self.input_names[len(args):] if n in kwargs]]
        if len(values) != len(self.input_names):
            raise TypeError(f"signature_wrapper takes the keyword arguments {self.input_names}; got {args!r} and "
                            f"{sorted(kwargs)}.")
        tensors = self._concrete.bind((tuple(values), {}))
        if tensors is None:
            raise TypeError(f"Binding inputs to the signature failed: expected {self._concrete.inputs[0]!r}, got "
                            f"{values!r}.")
        result = self._concrete(tensors)
        if isinstance(result, dict):
            return result
        leaves = result if isinstance(result, list | tuple) else [result]
        return {f"output_{i}": t for i, t in enumerate(leaves)}


def _not_ours(export_dir: str) -> NotImplementedError:
    return NotImplementedError(
        f"{export_dir} is a SavedModel written by TensorFlow: its functions are TF graphs (saved_model.pb), which "
        "tapejax cannot run. Build the model in Python with tapejax and restore its variables from the "
        "SavedModel's checkpoint: tf.train.Checkpoint(model).restore(os.path.join(export_dir, 'variables', "
        "'variables')).expect_partial(); tf.train.load_checkpoint on the same path lists them.")


def load(export_dir: str, tags: Any = None, options: LoadOptions | None = None) -> Any:
    """Loads a SavedModel written by `tf.saved_model.save` on tapejax (`tf.saved_model.load`): an object with the
    saved attributes, the variables restored, the tf.functions callable for their traced signatures, and
    `signatures` (e.g. `signatures['serving_default']`).

    Raises:
      NotImplementedError: the directory was written by TensorFlow (restore its variables instead).
      OSError: no SavedModel at `export_dir`.
    """
    export_dir = os.fspath(export_dir)
    manifest_path = os.path.join(export_dir, MANIFEST)
    if not os.path.exists(manifest_path):
        if os.path.exists(os.path.join(export_dir, "saved_model.pb")):
            raise _not_ours(export_dir)
        raise OSError(f"SavedModel file does not exist at: {export_dir}{os.sep}{{saved_model.pbtxt|saved_model.pb}}")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{manifest_path} is not a {FORMAT} manifest (format {manifest.get('format')!r}).")
    reader = BundleReader(os.path.join(export_dir, "variables", "variables"))
    nodes = manifest["nodes"]
    objects: list[Any] = []
    variables: dict[str, Variable] = {}
    for node in nodes:
        if "variable" in node:
            info = node["variable"]
            value = reader.read(info["key"])
            variable = Variable(value, trainable=info["trainable"], name=info["name"].split(":")[0],
                                dtype=info["dtype"])
            variables[info["key"]] = variable
            objects.append(variable)
        else:
            kind = node.get("kind")  # a saved tuple comes back as a list, as TF's ListWrapper
            objects.append({} if kind == "dict" else [] if kind in ("list", "tuple") else _UserObject())
    for obj, node in zip(objects, nodes):  # the edges, now that every node exists
        for name, child in node["children"]:
            if isinstance(obj, dict):
                obj[name] = objects[child]
            elif isinstance(obj, list):
                obj.append(objects[child])
            elif isinstance(obj, _UserObject):
                setattr(obj, name, objects[child])
    concretes = [_Concrete(export_dir, entry, variables) for entry in manifest["exports"]]
    for obj, node in zip(objects, nodes):
        for attribute, function in node.get("functions", {}).items():
            loaded = LoadedFunction(function["name"], function["parameters"],
                                    [concretes[i] for i in function["concretes"]])
            setattr(obj, attribute, loaded)
    root = objects[0]
    if isinstance(root, _UserObject):
        root.signatures = {name: SignatureFunction(concretes[s["export"]], s["input_names"])
                           for name, s in manifest["signatures"].items()}
    return root
