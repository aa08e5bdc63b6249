"""tf.function's retracing rules: how a call's arguments are bound, checked and keyed.

A call is bound to the Python signature as TF binds it (defaults filled in, so f(x), f(x, 2.0) and f(x,
scale=2.0) are one call when 2.0 is the default), checked against the input_signature if there is one, and split
into a `Template`: its tensors taken out, its Python values kept. The template's key, the Python values (by value,
or by identity when unhashable) and the tensors' shapes and dtypes, is what a trace is reused for; a new key is a
retrace. An input_signature with None dimensions keys every call alike: it is traced once, symbolically.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np

from . import dtypes
from .convert import on_device, to_array
from .string_values import is_text, to_bytes_array
from .tensor import EagerTensor, Tensor, TensorShape, _Operators
from .variable import Variable


class TensorSpec:
    """The shape and dtype a tf.function argument must have (`tf.TensorSpec`); `None` dimensions are free."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape: Any, dtype: Any = dtypes.float32, name: str | None = None):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, value: Any) -> bool:
        """Whether a tensor (or spec) of this dtype and a compatible shape may be passed for this spec."""
        return self.dtype == value.dtype and self.shape.is_compatible_with(value.shape)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name)
                == (other.shape, other.dtype, other.name))

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


def _positional_arity(signature: inspect.Signature | None) -> int | None:
    """The number of parameters if every one is positional without a default (binding changes nothing)."""
    if signature is None:
        return None
    params = signature.parameters.values()
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if all(p.kind in plain and p.default is p.empty for p in params):
        return len(signature.parameters)
    return None


def _is_leaf(x: Any) -> bool:
    return isinstance(x, _Operators)


def _leaf_key(x: Any) -> Any:
    """What a retrace depends on for one argument: a tensor's shape and dtype, a Python value itself."""
    if isinstance(x, Tensor):
        if type(x._value) is np.ndarray:  # a string tensor: a trace-time constant, so keyed by its value
            return ("string", x._value.shape, tuple(x._value.ravel().tolist()))
        return (x._value.shape, x._value.dtype)
    if isinstance(x, Variable):
        return ("variable", x._uid)
    if isinstance(x, np.ndarray | np.generic):
        return (x.shape, x.dtype)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    if type(x).__hash__ is object.__hash__:  # compared by identity (a model, a layer): keyed by a weak reference,
        try:  # so no trace keeps it alive; a dead one never equals a live one (weakref equality), whatever its id
            return ("ref", weakref.ref(x))
        except TypeError:
            pass
    return (type(x), x)


def _cannot_bind(value: Any, spec: TensorSpec, signature: tuple, args: tuple, kwargs: dict) -> TypeError:
    shape = tuple(getattr(value, "shape", ()))
    dtype = dtypes.from_numpy(np.asarray(value).dtype) if not isinstance(value, Tensor) else value.dtype
    got = TensorSpec(TensorShape(shape), dtype, None)
    return TypeError(
        f"Binding inputs to tf.function failed due to `Can not cast {got!r} to {spec!r}`. Received args: {args} "
        f"and kwargs: {kwargs} for signature: ({', '.join(map(repr, signature))}).")


class Template(NamedTuple):
    """The arguments of a call with their tensors taken out; `key` is what a trace is reused for: the Python
    arguments' values and the tensors' shapes and dtypes."""

    treedef: Any
    statics: tuple  # per leaf: _TENSOR, or a Static Python value
    n_tensors: int
    key: tuple

    def rebuild(self, tensor_vals: tuple) -> tuple[tuple, dict]:
        tensors = iter(tensor_vals)
        leaves = [EagerTensor(next(tensors)) if s is _TENSOR else s.value for s in self.statics]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


class _TensorSlot:
    """Marks where a tensor argument goes in a Template (hashable, equal only to itself)."""

    def __repr__(self) -> str:
        return "<tensor>"


_TENSOR = _TensorSlot()


class Static:
    """A Python argument held in a template: compared by `_leaf_key` (value, or identity when unhashable); an
    object compared by identity is held weakly, so a trace does not keep a deleted model alive."""

    __slots__ = ("_value", "key")

    def __init__(self, value: Any):
        self.key = _leaf_key(value)
        self._value = None if self.key[0] == "ref" else value

    @property
    def value(self) -> Any:
        return self.key[1]() if self.key[0] == "ref" else self._value

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Static) and self.key == other.key


class Binder:
    """How one tf.function binds a call's arguments and keys its traces: its Python signature and
    input_signature, and the caches of the hot path."""

    def __init__(self, python_function: Callable, input_signature: tuple | None):
        self.input_signature = input_signature
        try:
            self.signature: inspect.Signature | None = inspect.signature(python_function)
        except (TypeError, ValueError):  # a callable without a Python signature: calls are keyed as given
            self.signature = None
        # The hot path of a call: a call that binds positionally as given skips Signature.bind, and one whose
        # arguments are all tensors reuses the structure the first such call flattened (`bind`).
        self.positional = _positional_arity(self.signature)
        self.tensor_calls: dict[int, tuple[Any, tuple]] = {}  # number of tensor arguments -> (treedef, statics)
        self.symbolic = self.input_signature is not None and any(
            not s.shape.is_fully_defined() for s in flat_specs(self.input_signature))

    def canonical(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The arguments bound to the Python signature, defaults filled in, as TF binds them before keying a
        call: f(x, scale=2.0), f(x, 2.0) and, when 2.0 is the default, f(x) are one call and one trace."""
        if self.signature is None or (not kwargs and len(args) == self.positional):
            return args, kwargs
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"Binding inputs to tf.function failed due to `{e}`. Received args: {args} and kwargs: "
                            f"{kwargs} for signature: {self.signature}.") from None
        if self.input_signature is None:  # with one, the specs say what is passed; the rest keep their defaults
            bound.apply_defaults()
        return bound.args, bound.kwargs

    def count_key(self, template: Template) -> Any:
        """What one counted trace stands for: a call key, or the whole input_signature (TF traces it once, even
        when a step needing concrete sizes is traced here once per size)."""
        return "input_signature" if self.input_signature is not None else template.key

    def bind(self, args: tuple, kwargs: dict) -> tuple[Template, list[Tensor]]:
        if self.input_signature is not None:
            args = self._check_signature(args, kwargs)
        # Tensors only, by position: the structure is the one the first such call with as many tensors flattened.
        tensors_only = self.input_signature is None and not kwargs and all(
            type(a) is EagerTensor and type(a._value) is not np.ndarray for a in args)
        known = self.tensor_calls.get(len(args)) if tensors_only else None
        if known is not None:
            treedef, statics_t = known
            tensors = list(args)
        else:
            treedef, statics_t, tensors = self._flatten(args, kwargs)
            if tensors_only:
                self.tensor_calls[len(args)] = (treedef, statics_t)
        # a signature with None dimensions is traced once, symbolically (ConcreteFunction.trace)
        specs = None if self.symbolic else tuple([(t._value.shape, t._value.dtype) for t in tensors])
        return Template(treedef, statics_t, len(tensors), (treedef, statics_t, specs)), tensors

    @staticmethod
    def _flatten(args: tuple, kwargs: dict) -> tuple[Any, tuple, list[Tensor]]:
        """The call's structure, what each leaf is (a tensor or a static value), and its tensors."""
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
        statics: list[Any] = []
        tensors: list[Tensor] = []
        for leaf in leaves:
            if isinstance(leaf, Tensor) and type(leaf._value) is not np.ndarray:
                tensors.append(leaf)
                statics.append(_TENSOR)
            elif isinstance(leaf, Tensor) or (isinstance(leaf, np.ndarray) and is_text(leaf)):
                # strings live on the host (string_values.py): a string argument is traced as a constant, one
                # trace per value, like a Python argument
                statics.append(Static(leaf if isinstance(leaf, Tensor) else EagerTensor(to_bytes_array(leaf))))
            elif isinstance(leaf, np.ndarray | np.generic):  # TF converts numpy arguments to tensors
                tensors.append(EagerTensor(on_device(leaf)))
                statics.append(_TENSOR)
            else:
                statics.append(Static(leaf))
        return treedef, tuple(statics), tensors

    def _check_signature(self, args: tuple, kwargs: dict) -> tuple:
        signature = self.input_signature
        flat_specs, treedef = jax.tree_util.tree_flatten(signature, is_leaf=lambda s: isinstance(s, TensorSpec))
        try:  # each spec takes one argument, which may be a nested Python list (converted to one tensor)
            if kwargs:
                raise ValueError
            flat_args = treedef.flatten_up_to(tuple(args))
        except (ValueError, TypeError):
            raise TypeError(f"tf.function takes {len(flat_specs)} argument(s) by its input_signature "
                            f"{signature}; got args {args} and kwargs {kwargs}.") from None
        bound = []
        for value, spec in zip(flat_args, flat_specs):
            tensor = value if isinstance(value, Tensor) else None
            if tensor is None:
                try:
                    tensor = EagerTensor(jax.numpy.asarray(to_array(value, dtype=spec.dtype)))
                except (TypeError, ValueError):
                    raise _cannot_bind(value, spec, signature, args, kwargs) from None
            if tensor.dtype != spec.dtype or not spec.shape.is_compatible_with(tensor.shape):
                raise _cannot_bind(tensor, spec, signature, args, kwargs)
            bound.append(tensor)
        return jax.tree_util.tree_unflatten(treedef, bound)


def flat_specs(signature: tuple) -> list[TensorSpec]:
    return jax.tree_util.tree_leaves(signature, is_leaf=lambda s: isinstance(s, TensorSpec))


def symbolic_specs(specs: list[TensorSpec], batch: bool = False) -> tuple:
    """JAX argument specs for an input_signature, each None dimension its own symbol (independent, as in TF);
    with `batch`, every unknown leading dimension is one symbol, `b`: the batch of a dataset's elements, which
    its components share."""
    names = iter(f"d{i}" for i in range(10_000))
    dims = [", ".join(str(d) if d is not None else "b" if batch and i == 0 else next(names)
                      for i, d in enumerate(s.shape)) for s in specs]
    scope = jax.export.SymbolicScope()
    return tuple(jax.ShapeDtypeStruct(jax.export.symbolic_shape(f"({d})" if d else "()", scope=scope),
                                      s.dtype._np) for d, s in zip(dims, specs))
