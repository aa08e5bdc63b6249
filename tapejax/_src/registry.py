"""The op table: an op is a row — its TF name, a pure JAX implementation and its static parameters.

`op()` is the only place a row becomes a public callable. Its derivative is JAX's: no row carries gradient code
(DESIGN invariant 1). The callable has the implementation's signature plus TF's `name=None`, which is dropped.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from . import contracts, dispatch, static_values
from .zero_cotangent import masks_zero_cotangent
from .tensor import OPERATORS, TensorShape, _Operators


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class OpDef:
    """One row of the op table.

    Attributes:
      name: the TF path, e.g. "math.sin".
      impl: a pure function of the tensor arguments (jax arrays) and the static keyword parameters.
      static: names of the hashable parameters (axis, keepdims, shape...); everything else is a tensor argument.
      differentiable: False for ops TF declares non-differentiable (argmax, floor, comparisons): they are not
        recorded, so gradients through them are None.
      has_gradient: False for ops TF has no gradient for (RandomShuffle): a gradient that must flow through
        them raises LookupError, as in TF.
      op_type: TF's op type name for error messages ("AddV2", "Mul"); derived from `name` by default.
      same_dtype: True if all tensor arguments share one dtype (TF's attr "T"), or the positions that do.
      jit: run the op eagerly through one cached `jax.jit` executable per static params (one dispatch instead of
        one per primitive of a composite impl); False for ops whose output shape depends on values.
      check: an optional validation of the converted inputs, run before the op and before the dtype check (TF's
        value errors, which a jitted impl cannot raise); it raises TF's exception types itself. A check marked with
        `abstract_check` reads only shapes and dtypes, so deferred inputs reach it undeferred (deferred.py); any
        other check gets computed values.
      forward: the implementation forward mode differentiates, when it must differ from `impl` (a custom
        gradient: `impl` is a jax.custom_vjp, and TF's forward mode ignores the custom gradient).
      backward: an eager reverse rule `(inputs, output cotangents, batched) -> input cotangents` (None where
        there is no gradient), which the eager sweep (sweep.py) calls instead of JAX's VJP of `impl`: a custom
        gradient's grad_fn then runs on concrete values, as in TF, and may return None. A program with such a
        step takes the sweep every time it runs eagerly (executables.Lowered.run); traced, `impl` is used.
      no_gradient: with has_gradient=False, the LookupError's message when it must say more than TF's
        "no entry" (an unbounded tf.while_loop: how to make it differentiable).
      host: numpy's exact implementation of an op that only moves elements (concat, stack, tile, squeeze,
        expand_dims), same arguments as `impl`: a call whose shapes are new runs it instead of compiling
        (one_off.py), without a trace. It needs no checks of its own: where numpy refuses the inputs, the
        executable runs and raises TF's error.
      no_gradient_args: positions of the tensor arguments TF's registered gradient returns None for (zeta's `x`):
        `op()` stops JAX's derivative of `impl` there, and lowering does not count an input at such a position as
        a dependency, so a source connected only through it gets None, as in TF.
    """

    name: str
    impl: Callable[..., Any]
    static: tuple[str, ...] = ()
    differentiable: bool = True
    has_gradient: bool = True
    op_type: str = ""
    same_dtype: bool | tuple[int, ...] = True
    jit: bool = True
    check: Callable[..., None] | None = None
    forward: Callable[..., Any] | None = None
    backward: Callable[..., Any] | None = None
    doc: str = ""
    no_gradient: str = ""
    no_gradient_args: tuple[int, ...] = ()
    zero_cotangent: bool = False
    host: Callable[..., Any] | None = None

    def __repr__(self) -> str:
        return f"OpDef({self.name!r})"

    @property
    def check_abstract(self) -> bool:
        return getattr(self.check, "abstract", False)


def abstract_check(check: Callable[..., None]) -> Callable[..., None]:
    """Marks an op's `check` as reading only its inputs' `shape`, `dtype` and `ndim`, never their values: inputs
    whose values are deferred then reach it as they are and stay deferred (a check that reads values forces the
    whole forward pass before it to run op by op). A check that reads values only in some cases calls
    `deferred.resolve` on those."""
    check.abstract = True  # type: ignore[attr-defined]
    return check


REGISTRY: dict[str, OpDef] = {}


def lookup(name: str) -> OpDef:
    """The row registered under a TF name, e.g. `lookup("math.sin")`."""
    return REGISTRY[name]


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.rsplit(".", 1)[-1].split("_"))


def hashable(value: Any, op: str = "", arg: str = "") -> Any:
    """A static parameter (argument `arg` of op `op`) in hashable form: lists become tuples, tensors and numpy
    values Python values. A tensor must have a value while the op is built (static_values.py)."""
    if isinstance(value, _Operators | TensorShape | np.ndarray | np.generic):
        value = static_values.python_value(value, op, arg)
    if isinstance(value, list | tuple):
        return tuple(hashable(v, op, arg) for v in value)
    return value


def op(
    name: str,
    impl: Callable[..., Any],
    *,
    static: tuple[str, ...] = (),
    differentiable: bool = True,
    has_gradient: bool = True,
    op_type: str = "",
    same_dtype: bool | tuple[int, ...] = True,
    jit: bool = True,
    check: Callable[..., None] | None = None,
    contract: tuple[contracts.Contract, ...] = (),
    signature: str | None = None,
    doc: str = "",
    no_gradient_args: tuple[int, ...] = (),
    zero_cotangent: bool = False,
    host: Callable[..., Any] | None = None,
) -> Callable[..., Any]:
    """Declares an op and returns its public callable.

    Args:
      name: the TF path ("math.sin", "nn.relu", "reshape").
      impl: a pure JAX function. Its parameters are the op's TF parameters: those named in `static` are hashable
        keyword parameters, the others tensor arguments. A `*args` parameter takes a sequence of tensors.
      signature: comma-separated TF parameter names for the tensor arguments when `impl` has no usable
        signature (e.g. `jnp.sin` -> "x").
      contract: the row's argument contracts (contracts.py), compiled into `impl` (shapes and dtypes, checked when
        JAX traces it) and `check` (values).
      static, differentiable, has_gradient, op_type, same_dtype, jit, check, doc, no_gradient_args,
        zero_cotangent, host: see OpDef.

    The rows in tapejax/ops/ read like this (`sin = op("math.sin", jnp.sin, signature="x")`):

    >>> import tapejax as tf
    >>> print(tf.math.sin(0.0))
    tf.Tensor(0.0, shape=(), dtype=float32)
    """
    if signature is not None:
        parameters = [inspect.Parameter(p.strip(), inspect.Parameter.POSITIONAL_OR_KEYWORD)
                      for p in signature.split(",")]
        sig = inspect.Signature(parameters)
    else:
        sig = inspect.signature(impl)
    op_type = op_type or _camel(name)
    if contract:
        impl, check = contracts.compile(op_type, sig, tuple(static), contract, impl, check)
    no_gradient_args = tuple(no_gradient_args)
    if zero_cotangent:
        impl = masks_zero_cotangent(impl)
    if no_gradient_args:
        impl = _stop_gradient_at(impl, frozenset(no_gradient_args))
    if not differentiable:
        # Eagerly such an op is not recorded; traced inside a tf.function (or a captured branch) it is part of a
        # JAX function that JAX differentiates whole, so its outputs must stop JAX's derivative there too.
        impl = _stop_gradient_of_outputs(impl)
    opdef = OpDef(name, impl, tuple(static), differentiable, has_gradient, op_type, same_dtype,
                  jit, check, doc=doc, no_gradient_args=no_gradient_args, zero_cotangent=zero_cotangent,
                  host=host)
    REGISTRY[name] = opdef
    fn = _public_callable(opdef, sig)
    OPERATORS[name] = fn
    return fn


def _stop_gradient_at(impl: Callable[..., Any], positions: frozenset[int]) -> Callable[..., Any]:
    """`impl` with JAX's derivative stopped at the tensor arguments in `positions` (OpDef.no_gradient_args)."""

    @functools.wraps(impl)
    def stopped(*args: Any, **params: Any) -> Any:
        return impl(*[jax.lax.stop_gradient(a) if i in positions and a is not None else a
                      for i, a in enumerate(args)], **params)

    return stopped


def _stop_gradient_of_outputs(impl: Callable[..., Any]) -> Callable[..., Any]:
    """`impl` with JAX's derivative stopped at its outputs (a row with differentiable=False)."""

    @functools.wraps(impl)
    def stopped(*args: Any, **params: Any) -> Any:
        return jax.tree_util.tree_map(jax.lax.stop_gradient, impl(*args, **params))

    return stopped


def _public_callable(opdef: OpDef, sig: inspect.Signature) -> Callable[..., Any]:
    params = list(sig.parameters.values())
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    tensor_names = [p.name for p in params if p.name not in opdef.static and p.kind is not p.VAR_POSITIONAL
                    and p.kind is not p.KEYWORD_ONLY]
    # Static params are always passed in `opdef.static` order: the dict's items are then a canonical key.
    defaults = {p.name: hashable(p.default) for p in params if p.default is not p.empty}
    static_defaults = {n: defaults[n] for n in opdef.static if n in defaults}
    default_key = tuple(static_defaults.items())
    n_tensors = len(tensor_names)
    all_defaulted = len(static_defaults) == len(opdef.static)
    apply = dispatch.apply
    shown = [p.replace(kind=p.POSITIONAL_OR_KEYWORD) if p.kind is p.VAR_POSITIONAL else p for p in params]
    public_sig = sig.replace(parameters=[*shown, inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY,
                                                                    default=None)])
    bind = public_sig.bind

    if variadic:
        # `fn(values, **static)`: the sequence of tensors is the first parameter, as in tf.stack / tf.concat.
        first = params[0].name

        def fn(*args, **kwargs):
            kwargs.pop("name", None)
            values = kwargs.pop(first) if first in kwargs else args[0]
            rest = args[1:]
            static = dict(static_defaults)
            for p, v in zip((p for p in params[1:] if p.name in opdef.static), rest):
                static[p.name] = hashable(v, opdef.op_type, p.name)
            static.update((k, hashable(v, opdef.op_type, k)) for k, v in kwargs.items())
            return apply(opdef, tuple(values), {n: static[n] for n in opdef.static})

    else:

        def fn(*args, **kwargs):
            if not kwargs and len(args) == n_tensors and all_defaulted:
                return apply(opdef, args, static_defaults, default_key)  # the hot path: tensors by position
            bound = bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            tensors = tuple(arguments[n] for n in tensor_names)
            static = {n: hashable(arguments[n], opdef.op_type, n) for n in opdef.static}
            return apply(opdef, tensors, static)

    fn.__name__ = opdef.name.rsplit(".", 1)[-1]
    fn.__qualname__ = fn.__name__
    fn.__doc__ = opdef.doc or f"Same semantics as tf.{opdef.name}; computed with JAX."
    fn.__signature__ = public_sig  # type: ignore[attr-defined]
    fn.opdef = opdef  # type: ignore[attr-defined]
    return fn
