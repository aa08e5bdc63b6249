"""Argument contracts: what an op row declares about its arguments, checked before the op computes anything.

A row lists its contracts, `op("math.cumsum", _cumsum, static=..., contract=(Axis("x", message=SCAN),))`, and
`compile` turns them into the row's checks, raising TF's exception types with TF's messages:

- **Abstract** contracts read only shapes, dtypes and static parameters (axes in range, dtype classes, split
  sizes, multiples, paddings). They run when JAX traces the row's implementation for a new input signature, as
  TF's shape inference runs when an op is built: once per (shapes, dtypes, params), then free on every later
  call, and deferred inputs stay deferred (deferred.py infers shapes by the same trace).
- **Value** contracts read values (indices in range, integer divisors not zero). They are the row's `check`,
  run before each call, and compute only the argument they read. Traced values (inside `tf.function` or a JAX
  transformation) cannot be read, so a value contract checks concrete values only; README's "Errors" section
  says what the ops do with traced values instead.

A failed contract raises TF's eager error, InvalidArgumentError, naming the op; while a `tf.function` traces,
the error TF's graph construction raises instead: ValueError for shapes, TypeError for dtypes. A contract whose
TF check is Python code before the op (`tf.stack`'s axis, `tf.where`'s condition) names its exception class.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from . import deferred, errors
from .context import CONTEXT
from .convert import tf_type_string

FLOAT = ("bfloat16", "float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
INTEGER = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
NUMBER = (*FLOAT, *INTEGER, *COMPLEX)
REAL = (*FLOAT, *INTEGER)

# Axis messages: TF's kernels word the same rule differently; {axis}, {rank}, {low} and {high} are filled in.
REDUCE = "Invalid reduction dimension ({axis} for input with {rank} dimension(s)"
SCAN = "ScanOp: Expected scan axis in the range [{low}, {high}), but got {axis}"
DIMENSION = "Expected dimension in the range [{low}, {high}), but got {axis}"
CONCAT = "ConcatOp : Expected concatenating dimensions in the range [{low}, {high}), but got {axis}"
PYTHON_AXIS = "Argument `axis` = {axis} not in range [{low}, {high})"


def fail(op_type: str, message: str, kind: str | type[Exception] = "shape") -> None:
    """Raises TF's error for a failed contract: `kind` "shape", "dtype" or "value", or an exception class (TF
    checks in Python, whatever the mode)."""
    if isinstance(kind, type) and issubclass(kind, errors.OpError):
        raise kind(None, None, f"{message} [Op:{op_type}] name: ")
    if isinstance(kind, type):
        error = kind(message)
    elif kind != "value" and CONTEXT.trace is not None:  # tf.function: TF's graph construction raises these
        error = (TypeError if kind == "dtype" else ValueError)(f"{message} for '{{node {op_type}}}'")
    else:
        raise errors.invalid_argument(op_type, message)
    error.tf_error = True  # TF's own type already: dispatch passes it on unwrapped (errors.from_jax)
    raise error


def check_traced(op_type: str, ok: Any, message: str) -> None:
    """A value contract on traced values: while a tf.function traces its own body, a checkify check that the
    step raises as InvalidArgumentError when it runs, before any variable is written (as tf.case's checks);
    inside a traced branch or loop body, or a JAX transformation of the user's, nothing (README "Errors")."""
    trace = CONTEXT.trace
    if trace is not None and not trace.captures:
        checkify.check(ok, f"{message} [Op:{op_type}]")


def _static(shape: Sequence[Any]) -> bool:
    return all(type(d) is int for d in shape)  # symbolic dimensions (an input_signature's None) are not checked


class Contract:
    """One rule about an op's arguments. `check(op_type, args)` reads `args`, the tensor arguments (arrays,
    Pendings or tracers; a tuple for a `*values` parameter) and static parameters by TF name, and raises TF's
    error through `fail`."""

    abstract = True

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        raise NotImplementedError

    def for_row(self, tensor_names: Sequence[str]) -> Contract:
        """This contract for a row whose tensor arguments are `tensor_names`."""
        return self


class Axis(Contract):
    """`args[param]` (an int, a sequence of them, or None) is an axis of `of`: in [-rank, rank), or
    [-rank - 1, rank] for an axis the op inserts (`new=True`). Repeated axes are errors where `unique`."""

    def __init__(self, of: str, param: str = "axis", *, new: bool = False, message: str = DIMENSION,
                 error: str | type[Exception] = "shape", unique: bool = False):
        self.of, self.param, self.new, self.message, self.error, self.unique = of, param, new, message, error, unique

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        axes = args[self.param]
        if axes is None:
            return
        of = args[self.of]
        rank = (of[0].ndim if of else 0) if isinstance(of, tuple) else of.ndim
        rank += self.new
        seen = set()
        for i, axis in enumerate((axes,) if isinstance(axes, int) else axes):
            if not isinstance(axis, int) or not -rank <= axis < rank:
                fail(op_type, self.message.format(axis=axis, rank=rank - self.new, low=-rank, high=rank,
                                                  index=i, last=rank - 1), self.error)
            if self.unique and axis % rank in seen:
                fail(op_type, f"axis {axis % rank} specified more than once.", self.error)
            seen.add(axis % rank)


class Dtype(Contract):
    """The dtype of each argument in `names` (default: every tensor argument) is one of `allowed` (dtype names): TF has no kernel for others (an
    int32 `log` raises rather than promoting). `conversion=True`: TF converts the argument to the one allowed
    dtype in Python first (`tf.where`'s condition), raising ValueError."""

    def __init__(self, *names: str, allowed: Sequence[str] = FLOAT + COMPLEX, attr: str = "T",
                 conversion: bool = False):
        self.names, self.order, self.allowed = names, tuple(allowed), frozenset(allowed)
        self.attr, self.conversion = attr, conversion
        self.listed = ", ".join(tf_type_string(np.dtype(jax.numpy.dtype(a))) for a in allowed)

    def for_row(self, tensor_names: Sequence[str]) -> Contract:
        return self if self.names else Dtype(*tensor_names, allowed=self.order, attr=self.attr,
                                             conversion=self.conversion)

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        for i, name in enumerate(self.names):
            value = args[name]
            for v in value if isinstance(value, tuple) else (value,):
                if v is None or np.dtype(v.dtype).name in self.allowed:
                    continue
                got = tf_type_string(v.dtype)
                if self.conversion:
                    fail(op_type, f"Tensor conversion requested dtype {self.listed} for Tensor with dtype "
                                  f"{np.dtype(v.dtype).name}", ValueError)
                if len(self.allowed) == 1:
                    fail(op_type, f"cannot compute {op_type} as input #{i}(zero-based) was expected to be a "
                                  f"{self.listed} tensor but is a {got} tensor", "dtype")
                fail(op_type, f"Value for attr '{self.attr}' of {got} is not in the list of allowed values: "
                              f"{self.listed}", "dtype")


class PerDimension(Contract):
    """`args[param]` has one entry per dimension of `of`, each >= 0 (tile's multiples)."""

    def __init__(self, of: str, param: str):
        self.of, self.param = of, param

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        entries, rank = args[self.param], args[self.of].ndim
        entries = (entries,) if isinstance(entries, int) else entries
        if len(entries) != rank:
            fail(op_type, f"Expected {self.param} argument to be a vector of length {rank} but got length "
                          f"{len(entries)}")
        for i, m in enumerate(entries):
            if m < 0:
                fail(op_type, f"Expected {self.param}[{i}] >= 0, but got {m}")


class Paddings(Contract):
    """`args[param]` is a (rank, 2) matrix of non-negative paddings; REFLECT pads less than each dimension,
    SYMMETRIC no more than it (TF's Pad and MirrorPad)."""

    def __init__(self, of: str, param: str = "paddings", mode: str = "mode"):
        self.of, self.param, self.mode = of, param, mode

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        paddings, shape = args[self.param], args[self.of].shape
        rows = np.asarray(paddings, dtype=np.int64).reshape(-1) if np.ndim(paddings) != 2 else np.asarray(paddings)
        if rows.ndim != 2 or rows.shape[1] != 2:
            fail(op_type, f"paddings must be a matrix with 2 columns: {list(np.shape(paddings))}")
        if rows.shape[0] != len(shape):
            fail(op_type, f"The first dimension of paddings must be the rank of inputs{list(rows.shape)} "
                          f"{list(shape)}")
        if (rows < 0).any():
            fail(op_type, f"Paddings must be non-negative: {' '.join(map(str, rows[rows.min(1) < 0][0]))}")
        mode = str(args.get(self.mode, "CONSTANT")).upper()
        if mode in ("REFLECT", "SYMMETRIC") and _static(shape):
            for (before, after), dim in zip(rows.tolist(), shape):
                if (before >= dim or after >= dim) if mode == "REFLECT" else (before > dim or after > dim):
                    word = "less than" if mode == "REFLECT" else "no greater than"
                    fail(op_type, f"paddings must be {word} the dimension size: {before}, {after} not {word} "
                                  f"{dim}".replace("not no greater than", "greater than"))


class SplitSizes(Contract):
    """`args[param]` splits `of` along `args[axis]`: a count that divides the dimension, or sizes (at most one
    -1) that add up to it."""

    def __init__(self, of: str, param: str = "num_or_size_splits", axis: str = "axis"):
        self.of, self.param, self.axis = of, param, axis

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        value, axis, splits = args[self.of], args[self.axis], args[self.param]
        Axis(self.of, self.axis, message="-input rank(-{rank}) <= split_dim < input rank ({rank}), but got "
                                         "{axis}").check(op_type, args)
        dim = value.shape[axis]
        if type(dim) is not int:
            return
        if isinstance(splits, int):
            if splits < 1:
                fail(op_type, f"Value for attr 'num_split' of {splits} must be at least minimum 1")
            if dim % splits:
                fail(op_type, f"Number of ways to split should evenly divide the split dimension, but got "
                              f"split_dim {axis} (size = {dim}) and num_split {splits}")
            return
        sizes = list(splits)
        if sizes.count(-1) > 1:
            fail(op_type, "There can only be one -1 in the input.")
        known = sum(s for s in sizes if s != -1)
        if any(s < -1 for s in sizes) or (known != dim if -1 not in sizes else known > dim):
            fail(op_type, "Determined shape must either match input shape along split_dim exactly if fully "
                          "specified, or be less than the size of the input along split_dim if not fully "
                          f"specified.  Got: {known}")


class Indices(Contract):
    """The values of `args[indices]` index dimension `axis` of `of` (after `batch_dims` batch dimensions): in
    [0, size), as TF's CPU kernels check. A value contract: it reads the indices (only them) when concrete."""

    abstract = False

    def __init__(self, of: str, indices: str = "indices", axis: str | int = 0, batch_dims: str | int = 0):
        self.of, self.indices, self.axis, self.batch_dims = of, indices, axis, batch_dims

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        index = args[self.indices]
        if not hasattr(index, "dtype"):
            return
        batch_dims = args[self.batch_dims] if isinstance(self.batch_dims, str) else self.batch_dims
        axis = args[self.axis] if isinstance(self.axis, str) else self.axis
        axis = batch_dims if axis is None else axis
        shape = args[self.of].shape
        if not -len(shape) <= axis < len(shape) or np.dtype(index.dtype).kind not in "iu":
            return  # the abstract contracts (or the op's shape inference) report these
        size = shape[axis]
        if isinstance(index, jax.core.Tracer):
            return check_traced(op_type, jnp.all((index >= 0) & (index < size)), f"indices are not in [0, {size})")
        index = np.asarray(deferred.resolve(index))
        bad = (index < 0) | (index >= size)
        if bad.any():
            where = np.argwhere(bad)[0]
            fail(op_type, f"indices[{','.join(map(str, where))}] = {index[tuple(where)]} is not in [0, {size})",
                 "value")


class NonzeroDivisor(Contract):
    """An integer `args[name]` has no zero (TF's integer division and modulo raise; XLA returns garbage). A
    value contract for integer dtypes only: float divisors stay deferred."""

    abstract = False

    def __init__(self, name: str = "y", error: type[Exception] | str = "value"):
        self.name, self.error = name, error

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        divisor = args[self.name]
        if np.dtype(divisor.dtype).kind not in "iu":
            return
        if isinstance(divisor, jax.core.Tracer):
            check_traced(op_type, jnp.all(divisor != 0), "Integer division by zero")
        elif not np.all(np.asarray(deferred.resolve(divisor))):
            fail(op_type, "Integer division by zero", self.error)


class Rule(Contract):
    """A one-off rule on shapes, dtypes or static parameters: `test(args)` is true when the arguments are fine;
    else the error says `message`, or `message(args)` when it is callable."""

    def __init__(self, test: Callable[[dict[str, Any]], bool], message: str | Callable[[dict[str, Any]], str],
                 kind: str | type[Exception] = "shape"):
        self.test, self.message, self.kind = test, message, kind

    def check(self, op_type: str, args: dict[str, Any]) -> None:
        if not self.test(args):
            fail(op_type, self.message(args) if callable(self.message) else self.message, self.kind)


def compile(op_type: str, sig: inspect.Signature, static: tuple[str, ...], contracts: Sequence[Contract],
            impl: Callable[..., Any], check: Callable[..., None] | None) -> tuple[Callable[..., Any], Any]:
    """A row's `(impl, check)` with its contracts compiled in: the abstract ones run first inside `impl` (when
    JAX traces it), the value ones before `check`, which keeps its `abstract` mark."""
    params = [p for p in sig.parameters.values() if p.kind is not p.KEYWORD_ONLY or p.name in static]
    tensor_names = [p.name for p in params if p.name not in static]
    variadic = params[0].name if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL else None
    contracts = [c.for_row([variadic] if variadic else tensor_names) for c in contracts]
    abstract = tuple(c for c in contracts if c.abstract)
    values = tuple(c for c in contracts if not c.abstract)
    defaults = {p.name: p.default for p in params if p.default is not p.empty}

    def bind(tensors: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        args = {**defaults, **kwargs}
        if variadic:
            args[variadic] = tensors
        else:
            args.update(zip(tensor_names, tensors))
        return args

    if abstract:
        unchecked = impl

        @functools.wraps(unchecked)
        def impl(*tensors: Any, **kwargs: Any) -> Any:
            args = bind(tensors, kwargs)
            for contract in abstract:
                contract.check(op_type, args)
            return unchecked(*tensors, **kwargs)

    if values:
        inner = check

        def check(*tensors: Any, **kwargs: Any) -> None:
            args = bind(tensors, kwargs)
            for contract in values:
                contract.check(op_type, args)
            if inner is not None:
                inner(*tensors, **kwargs)

        check.abstract = inner is None or getattr(inner, "abstract", False)  # type: ignore[attr-defined]
    return impl, check
