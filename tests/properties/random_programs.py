"""Random straight-line programs, written twice: with the TensorFlow API and with jax.numpy.

A `Program` is plain data (inputs, steps, target), so hypothesis can draw it, shrink it and print it.
Each step applies one row of `OPS`; a row pairs a TF-API call with its jax.numpy equivalent. The
property tests run the TF-API side under a `GradientTape` (on tapejax or on real TensorFlow) and
differentiate the jnp side with JAX, which is the oracle.

Adding a row to `OPS` adds coverage to every property: a row says how to call the op through the TF
API, how to compute the same thing with jnp, which argument shapes it accepts and how to draw its
static parameters. Every row is smooth (no relu, abs, max) and numerically tame on inputs in
[-1.5, 1.5] (exp sees a bounded argument, log and sqrt a positive one, denominators stay >= 1), so
the TF and JAX derivatives agree to float rounding.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

Shape = tuple[int, ...]
Draw = Callable[[st.SearchStrategy[Any]], Any]

MAX_SIZE = 24  # elements in any value of a program
MAX_RANK = 3
MAX_STEPS = 12

CONSTANT = "constant"  # tf.constant(value)
VARIABLE = "variable"  # tf.Variable(value): a trainable variable, watched automatically
FROZEN = "frozen"  # tf.Variable(value, trainable=False): never watched automatically
KINDS = (CONSTANT, VARIABLE, FROZEN)


# ---------------------------------------------------------------------------------------------------
# Op table
# ---------------------------------------------------------------------------------------------------


def _any_shapes(*shapes: Shape) -> bool:
    return True


def _no_params(draw: Draw, *shapes: Shape) -> dict[str, Any]:
    return {}


@dataclasses.dataclass(frozen=True)
class Row:
    """One op: a TF-API call and the jnp computation it must equal.

    Attributes:
      name: how the step is printed in a failing example.
      arity: number of tensor arguments.
      tf_call: `(tf, *args, **params) -> Tensor`, where `tf` is the module under test.
      jnp_call: `(*args, **params) -> jax.Array`.
      accepts: `(*shapes) -> bool`, whether the argument shapes are valid for this op.
      params: `(draw, *shapes) -> dict`, draws the static parameters (axis, perm, ...).
    """

    name: str
    arity: int
    tf_call: Callable[..., Any]
    jnp_call: Callable[..., Any]
    accepts: Callable[..., bool] = _any_shapes
    params: Callable[..., dict[str, Any]] = _no_params


def _size(shape: Shape) -> int:
    return math.prod(shape)


def _broadcastable(a: Shape, b: Shape) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _same_shape(a: Shape, b: Shape) -> bool:
    return a == b


def _rank_at_least(n: int) -> Callable[..., bool]:
    return lambda shape: len(shape) >= n


def _small(shape: Shape) -> bool:
    """Inputs of ops that grow their argument (tile, stack, broadcast_to, expand_dims)."""
    return _size(shape) <= 8 and len(shape) <= 2


def _unary(name: str, tf_call: Callable[..., Any], jnp_call: Callable[..., Any]) -> Row:
    return Row(name, 1, tf_call, jnp_call)


def _binary(name: str, tf_call: Callable[..., Any], jnp_call: Callable[..., Any]) -> Row:
    return Row(name, 2, tf_call, jnp_call, accepts=_broadcastable)


def _jnp_axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def _reduction_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    rank = len(shape)
    if rank == 0:
        axis = None
    else:
        axis = draw(
            st.one_of(
                st.none(),
                st.integers(-rank, rank - 1),
                st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True),
            )
        )
    return {"axis": axis, "keepdims": draw(st.booleans())}


def _axis_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    return {"axis": draw(st.integers(-len(shape), len(shape) - 1))}


def _new_axis_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    return {"axis": draw(st.integers(-len(shape) - 1, len(shape)))}


def _pow_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    return {"k": draw(st.sampled_from([2, 3]))}


@functools.lru_cache(maxsize=None)
def _factorizations(size: int) -> tuple[Shape, ...]:
    """All shapes of rank <= MAX_RANK with `size` elements."""
    found: list[Shape] = [()] if size == 1 else []
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    for rank in range(1, MAX_RANK + 1):
        for dims in itertools.product(divisors, repeat=rank):
            if math.prod(dims) == size:
                found.append(dims)
    return tuple(found)


def _reshape_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    new = list(draw(st.sampled_from(_factorizations(_size(shape)))))
    if new and draw(st.booleans()):
        new[draw(st.integers(0, len(new) - 1))] = -1  # let reshape infer one dimension
    return {"shape": new}


def _transpose_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    perm = draw(st.one_of(st.none(), st.permutations(range(len(shape)))))
    return {"perm": perm}


def _squeezable(shape: Shape) -> bool:
    return 1 in shape


def _squeeze_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    ones = [i for i, n in enumerate(shape) if n == 1]
    axis = draw(st.one_of(st.none(), st.sampled_from(ones + [i - len(shape) for i in ones])))
    return {"axis": axis}


def _concat_axes(a: Shape, b: Shape) -> list[int]:
    if len(a) != len(b) or not a or _size(a) + _size(b) > MAX_SIZE:
        return []
    return [i for i in range(len(a)) if a[:i] + a[i + 1 :] == b[:i] + b[i + 1 :]]


def _concat_params(draw: Draw, a: Shape, b: Shape) -> dict[str, Any]:
    axis = draw(st.sampled_from(_concat_axes(a, b)))
    if draw(st.booleans()):
        axis -= len(a)
    return {"axis": axis}


def _stackable(a: Shape, b: Shape) -> bool:
    return a == b and _small(a)


def _tile_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    return {"multiples": draw(st.lists(st.integers(1, 2), min_size=len(shape), max_size=len(shape)))}


def _broadcast_to_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    grown = [draw(st.integers(1, 3)) if n == 1 else n for n in shape]
    lead = draw(st.lists(st.integers(2, 3), max_size=1))
    return {"shape": lead + grown}  # programs() skips the step if this is larger than MAX_SIZE


def _matmul_options(a: Shape, b: Shape) -> list[tuple[bool, bool]]:
    if len(a) != 2 or len(b) != 2:
        return []
    return [
        (ta, tb)
        for ta, tb in itertools.product([False, True], repeat=2)
        if (a[0] if ta else a[1]) == (b[1] if tb else b[0])
    ]


def _matmul_params(draw: Draw, a: Shape, b: Shape) -> dict[str, Any]:
    ta, tb = draw(st.sampled_from(_matmul_options(a, b)))
    return {"transpose_a": ta, "transpose_b": tb}


def _jnp_matmul(a: Any, b: Any, transpose_a: bool, transpose_b: bool) -> Any:
    return jnp.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


def _index_params(draw: Draw, shape: Shape) -> dict[str, Any]:
    """A basic `x[...]` index: ints (also negative), slices with steps 1, 2, -1, newaxis, Ellipsis."""
    index: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["all", "int", "slice"]))
        if kind == "all":
            index.append(slice(None))
        elif kind == "int":
            index.append(draw(st.integers(-n, n - 1)))
        else:
            step = draw(st.sampled_from([1, 2, -1]))
            start = draw(st.one_of(st.none(), st.integers(-n, n - 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n, n)))
            part = slice(start, stop, step)
            index.append(part if len(range(n)[part]) else slice(None, None, step))
    rank = len(np.empty(shape)[tuple(index)].shape)
    if rank < MAX_RANK and draw(st.booleans()):
        index.insert(draw(st.integers(0, len(index))), None)  # tf.newaxis
    if index and index[0] == slice(None) and draw(st.booleans()):
        index[0] = Ellipsis
    return {"index": tuple(index)}


def _where_params(draw: Draw, a: Shape, b: Shape) -> dict[str, Any]:
    shape = np.broadcast_shapes(a, b)
    flags = draw(st.lists(st.booleans(), min_size=_size(shape), max_size=_size(shape)))
    return {"condition": np.array(flags, dtype=bool).reshape(shape)}


def _matvec_accepts(a: Shape, b: Shape) -> bool:
    return len(a) == 2 and len(b) == 1 and a[1] == b[0]


# One row per op. `a`, `b` are the tensor arguments; python-number operands exercise TF's
# conversion of a Python scalar to the dtype of the tensor it meets.
OPS: list[Row] = [
    # elementwise, two arguments (broadcasting)
    _binary("add", lambda tf, a, b: tf.add(a, b), jnp.add),
    _binary("math.add", lambda tf, a, b: tf.math.add(a, b), jnp.add),
    _binary("a + b", lambda tf, a, b: a + b, jnp.add),
    _binary("subtract", lambda tf, a, b: tf.subtract(a, b), jnp.subtract),
    _binary("a - b", lambda tf, a, b: a - b, jnp.subtract),
    _binary("multiply", lambda tf, a, b: tf.multiply(a, b), jnp.multiply),
    _binary("math.multiply", lambda tf, a, b: tf.math.multiply(a, b), jnp.multiply),
    _binary("a * b", lambda tf, a, b: a * b, jnp.multiply),
    _binary(
        "divide(a, 1 + b*b)",
        lambda tf, a, b: tf.divide(a, 1.0 + tf.square(b)),
        lambda a, b: a / (1.0 + b * b),
    ),
    _binary(
        "a / (2 + cos b)",
        lambda tf, a, b: a / (2.0 + tf.math.cos(b)),
        lambda a, b: a / (2.0 + jnp.cos(b)),
    ),
    _binary(
        "math.squared_difference",
        lambda tf, a, b: tf.math.squared_difference(a, b),
        lambda a, b: (a - b) ** 2,
    ),
    Row(
        "where(const, a, b)",
        2,
        lambda tf, a, b, condition: tf.where(condition, a, b),
        lambda a, b, condition: jnp.where(condition, a, b),
        accepts=_broadcastable,
        params=_where_params,
    ),
    Row("add_n", 2, lambda tf, a, b: tf.add_n([a, b]), jnp.add, accepts=_same_shape),
    # elementwise, one argument
    _unary("math.sin", lambda tf, a: tf.math.sin(a), jnp.sin),
    _unary("sin", lambda tf, a: tf.sin(a), jnp.sin),
    _unary("math.cos", lambda tf, a: tf.math.cos(a), jnp.cos),
    _unary("tanh", lambda tf, a: tf.tanh(a), jnp.tanh),
    _unary("math.tanh", lambda tf, a: tf.math.tanh(a), jnp.tanh),
    _unary("math.atan", lambda tf, a: tf.math.atan(a), jnp.arctan),
    _unary("math.erf", lambda tf, a: tf.math.erf(a), jsp.erf),
    _unary("exp(tanh a)", lambda tf, a: tf.exp(tf.tanh(a)), lambda a: jnp.exp(jnp.tanh(a))),
    _unary("math.exp(-a*a)", lambda tf, a: tf.math.exp(-a * a), lambda a: jnp.exp(-a * a)),
    _unary(
        "math.log(1 + square a)",
        lambda tf, a: tf.math.log(1.0 + tf.math.square(a)),
        lambda a: jnp.log(1.0 + a * a),
    ),
    _unary("math.log1p(a*a)", lambda tf, a: tf.math.log1p(a * a), lambda a: jnp.log1p(a * a)),
    _unary("sqrt(1 + a*a)", lambda tf, a: tf.sqrt(1.0 + a * a), lambda a: jnp.sqrt(1.0 + a * a)),
    _unary(
        "math.rsqrt(a*a + 1)",
        lambda tf, a: tf.math.rsqrt(a * a + 1.0),
        lambda a: 1.0 / jnp.sqrt(a * a + 1.0),
    ),
    _unary("square", lambda tf, a: tf.square(a), jnp.square),
    _unary("sigmoid", lambda tf, a: tf.sigmoid(a), jax.nn.sigmoid),
    _unary("nn.sigmoid", lambda tf, a: tf.nn.sigmoid(a), jax.nn.sigmoid),
    _unary("math.sigmoid", lambda tf, a: tf.math.sigmoid(a), jax.nn.sigmoid),
    _unary("nn.softplus", lambda tf, a: tf.nn.softplus(a), jax.nn.softplus),
    _unary("math.softplus", lambda tf, a: tf.math.softplus(a), jax.nn.softplus),
    _unary("negative", lambda tf, a: tf.negative(a), jnp.negative),
    _unary("-a", lambda tf, a: -a, jnp.negative),
    _unary("identity", lambda tf, a: tf.identity(a), lambda a: a),
    _unary("2.5 * a", lambda tf, a: 2.5 * a, lambda a: 2.5 * a),
    _unary("a * 0.5 - 1", lambda tf, a: a * 0.5 - 1.0, lambda a: a * 0.5 - 1.0),
    _unary("1 - a / 2", lambda tf, a: 1.0 - a / 2.0, lambda a: 1.0 - a / 2.0),
    Row("pow(a, k)", 1, lambda tf, a, k: tf.pow(a, k), lambda a, k: a**k, params=_pow_params),
    Row("math.pow(a, k)", 1, lambda tf, a, k: tf.math.pow(a, k), lambda a, k: a**k, params=_pow_params),
    Row("a ** k", 1, lambda tf, a, k: a**k, lambda a, k: a**k, params=_pow_params),
    _unary(
        "pow(1 + a*a, 1.5)",
        lambda tf, a: tf.pow(1.0 + a * a, 1.5),
        lambda a: jnp.power(1.0 + a * a, 1.5),
    ),
    # reductions
    Row(
        "reduce_sum",
        1,
        lambda tf, a, axis, keepdims: tf.reduce_sum(a, axis=axis, keepdims=keepdims),
        lambda a, axis, keepdims: jnp.sum(a, axis=_jnp_axis(axis), keepdims=keepdims),
        params=_reduction_params,
    ),
    Row(
        "math.reduce_sum",
        1,
        lambda tf, a, axis, keepdims: tf.math.reduce_sum(a, axis, keepdims),
        lambda a, axis, keepdims: jnp.sum(a, axis=_jnp_axis(axis), keepdims=keepdims),
        params=_reduction_params,
    ),
    Row(
        "reduce_mean",
        1,
        lambda tf, a, axis, keepdims: tf.reduce_mean(a, axis=axis, keepdims=keepdims),
        lambda a, axis, keepdims: jnp.mean(a, axis=_jnp_axis(axis), keepdims=keepdims),
        params=_reduction_params,
    ),
    Row(
        "math.reduce_logsumexp",
        1,
        lambda tf, a, axis, keepdims: tf.math.reduce_logsumexp(a, axis=axis, keepdims=keepdims),
        lambda a, axis, keepdims: jsp.logsumexp(a, axis=_jnp_axis(axis), keepdims=keepdims),
        params=_reduction_params,
    ),
    Row(
        "nn.softmax",
        1,
        lambda tf, a, axis: tf.nn.softmax(a, axis=axis),
        lambda a, axis: jax.nn.softmax(a, axis=axis),
        accepts=_rank_at_least(1),
        params=_axis_params,
    ),
    # shapes
    Row(
        "reshape",
        1,
        lambda tf, a, shape: tf.reshape(a, shape),
        lambda a, shape: jnp.reshape(a, shape),
        params=_reshape_params,
    ),
    Row(
        "transpose",
        1,
        lambda tf, a, perm: tf.transpose(a, perm=perm),
        lambda a, perm: jnp.transpose(a, perm),
        accepts=_rank_at_least(2),
        params=_transpose_params,
    ),
    Row(
        "expand_dims",
        1,
        lambda tf, a, axis: tf.expand_dims(a, axis),
        lambda a, axis: jnp.expand_dims(a, axis),
        accepts=_small,
        params=_new_axis_params,
    ),
    Row(
        "squeeze",
        1,
        lambda tf, a, axis: tf.squeeze(a, axis=axis),
        lambda a, axis: jnp.squeeze(a, axis=axis),
        accepts=_squeezable,
        params=_squeeze_params,
    ),
    Row(
        "x[...]",
        1,
        lambda tf, a, index: a[index],
        lambda a, index: a[index],
        accepts=_rank_at_least(1),
        params=_index_params,
    ),
    Row(
        "tile",
        1,
        lambda tf, a, multiples: tf.tile(a, multiples),
        lambda a, multiples: jnp.tile(a, multiples),
        accepts=lambda shape: _small(shape) and len(shape) >= 1,
        params=_tile_params,
    ),
    Row(
        "broadcast_to",
        1,
        lambda tf, a, shape: tf.broadcast_to(a, shape),
        lambda a, shape: jnp.broadcast_to(a, shape),
        accepts=_small,
        params=_broadcast_to_params,
    ),
    Row(
        "concat",
        2,
        lambda tf, a, b, axis: tf.concat([a, b], axis),
        lambda a, b, axis: jnp.concatenate([a, b], axis),
        accepts=lambda a, b: bool(_concat_axes(a, b)),
        params=_concat_params,
    ),
    Row(
        "stack",
        2,
        lambda tf, a, b, axis: tf.stack([a, b], axis=axis),
        lambda a, b, axis: jnp.stack([a, b], axis),
        accepts=_stackable,
        params=lambda draw, a, b: _new_axis_params(draw, a),
    ),
    # linear algebra
    Row(
        "matmul",
        2,
        lambda tf, a, b, transpose_a, transpose_b: tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b),
        _jnp_matmul,
        accepts=lambda a, b: bool(_matmul_options(a, b)),
        params=_matmul_params,
    ),
    Row(
        "a @ b",
        2,
        lambda tf, a, b: a @ b,
        jnp.matmul,
        accepts=lambda a, b: (False, False) in _matmul_options(a, b),
    ),
    Row("linalg.matvec", 2, lambda tf, a, b: tf.linalg.matvec(a, b), jnp.matmul, accepts=_matvec_accepts),
]
assert len({row.name for row in OPS}) == len(OPS), "row names identify rows in caches and reports"


# ---------------------------------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Input:
    """A leaf of a program: its value, how it is made, and whether `tape.watch` is called on it."""

    value: np.ndarray
    kind: str
    watch: bool


@dataclasses.dataclass(frozen=True, eq=False)
class Step:
    """`nodes.append(row(*[nodes[i] for i in args], **params))`."""

    row: Row
    args: tuple[int, ...]
    params: dict[str, Any]


@dataclasses.dataclass(frozen=True, eq=False)
class Extras:
    """What some properties need besides the program, drawn with it (see `programs`).

    Attributes:
      u, v: output gradients (cotangents) of the target's shape and dtype.
      a, b: scalars for the linear combination `a * u + b * v`.
      sources: a nest of lists, tuples and dicts over the input indices.
      second_target: a node index (a step's output) to use as a second target.
    """

    u: np.ndarray
    v: np.ndarray
    a: float
    b: float
    sources: Any
    second_target: int


@dataclasses.dataclass(frozen=True, eq=False)
class Program:
    """A straight-line program over `inputs`; its nodes are the inputs followed by one per step.

    The target is the last node, or `reduce_sum` of it when `reduce` is set (a scalar target).
    """

    dtype: str
    inputs: tuple[Input, ...]
    steps: tuple[Step, ...]
    shapes: tuple[Shape, ...]  # of every node, inputs first
    reduce: bool
    watch_accessed_variables: bool = True
    extras: Extras | None = None

    @property
    def target_shape(self) -> Shape:
        return () if self.reduce else self.shapes[-1]

    @property
    def rtol(self) -> float:
        return RTOL[self.dtype]

    def watched(self, i: int) -> bool:
        """Whether the tape tracks input `i`: watched explicitly, or a trainable variable read."""
        inp = self.inputs[i]
        return inp.watch or (inp.kind == VARIABLE and self.watch_accessed_variables)

    def connected(self, node: int = -1) -> frozenset[int]:
        """Indices of the inputs that a node (the target by default) depends on, through the steps."""
        reach = {node % len(self.shapes)}
        for k in reversed(range(len(self.steps))):
            if len(self.inputs) + k in reach:
                reach.update(self.steps[k].args)
        return frozenset(i for i in range(len(self.inputs)) if i in reach)

    def leaves(self, tf: Any) -> list[Any]:
        """The inputs as the module under test makes them: tf.constant or tf.Variable."""
        made = []
        for inp in self.inputs:
            if inp.kind == CONSTANT:
                made.append(tf.constant(inp.value))
            else:
                made.append(tf.Variable(inp.value, trainable=inp.kind == VARIABLE))
        return made

    def tf_nodes(self, tf: Any, leaves: Sequence[Any]) -> list[Any]:
        """Runs the program through the TF API of `tf`; returns every node, inputs first."""
        nodes = list(leaves)
        for step in self.steps:
            nodes.append(step.row.tf_call(tf, *[nodes[i] for i in step.args], **step.params))
        return nodes

    def jnp_nodes(self, *leaves: Any) -> list[Any]:
        """The same program in jax.numpy; returns every node, inputs first."""
        nodes = list(leaves)
        for step in self.steps:
            nodes.append(step.row.jnp_call(*[nodes[i] for i in step.args], **step.params))
        return nodes

    def run_tf(self, tf: Any, leaves: Sequence[Any]) -> Any:
        """The target, computed with the TF API of `tf`."""
        last = self.tf_nodes(tf, leaves)[-1]
        return tf.reduce_sum(last) if self.reduce else last

    def run_jnp(self, *leaves: Any) -> Any:
        """The target, computed with jax.numpy: a pure function of the input values."""
        last = self.jnp_nodes(*leaves)[-1]
        return jnp.sum(last) if self.reduce else last

    def oracle_key(self) -> Any:
        """Everything the oracle's answer depends on (not how inputs are made or watched)."""
        return (
            self.dtype,
            self.reduce,
            tuple((inp.value.shape, inp.value.tobytes()) for inp in self.inputs),
            tuple((step.row.name, step.args, repr(step.params)) for step in self.steps),
        )

    @contextlib.contextmanager
    def oracle_mode(self) -> Iterator[None]:
        """JAX computes float64 only with x64 enabled: scope it to the oracle's call."""
        with jax.enable_x64(True) if self.dtype == "float64" else contextlib.nullcontext():
            yield

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # Hypothesis prints a falsifying example with this (IPython's protocol), not field by field.
        printer.text(repr(self))

    def __repr__(self) -> str:
        lines = [f"Program({self.dtype}, watch_accessed_variables={self.watch_accessed_variables}):"]
        for i, inp in enumerate(self.inputs):
            watch = "  tape.watch" if inp.watch else ""
            value = np.array2string(inp.value, separator=", ")
            lines.append(f"  v{i} = {inp.kind}({value}){watch}")
        for k, step in enumerate(self.steps):
            args = ", ".join(f"v{i}" for i in step.args)
            params = "".join(f", {key}={_show(val)}" for key, val in step.params.items())
            lines.append(f"  v{len(self.inputs) + k} = {step.row.name}({args}{params})")
        last = f"v{len(self.shapes) - 1}"
        lines.append(f"  target = {'reduce_sum(' + last + ')' if self.reduce else last}")
        if self.extras is not None:
            e = self.extras
            lines.append(f"  output_gradients: u={_show(e.u)}, v={_show(e.v)}, a={e.a!r}, b={e.b!r}")
            lines.append(f"  sources nest: {e.sources!r}; second target: v{e.second_target}")
        return "\n".join(lines)


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=", ")
    return repr(value)


RTOL = {"float32": 1e-4, "float64": 1e-10}


_OUT_SHAPES: dict[Any, Shape] = {}


def _out_shape(row: Row, dtype: str, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    # Tests that share a seed draw the same programs, so most shapes are asked for again: remember
    # them (repr is exact for these small params: ints, slices, lists, bool arrays of <= 24).
    key = (row.name, dtype, tuple(shapes), repr(params))
    if key not in _OUT_SHAPES:
        specs = [jax.ShapeDtypeStruct(s, np.dtype(dtype)) for s in shapes]
        with jax.enable_x64(True):
            out = jax.eval_shape(lambda *xs: row.jnp_call(*xs, **params), *specs)
        _OUT_SHAPES[key] = tuple(out.shape)
    return _OUT_SHAPES[key]


def _arg_candidates(row: Row, shapes: Sequence[Shape]) -> list[tuple[int, ...]]:
    # Newest nodes first: hypothesis shrinks towards the first candidate, i.e. towards a chain.
    newest_first = range(len(shapes) - 1, -1, -1)
    return [
        args for args in itertools.product(newest_first, repeat=row.arity) if row.accepts(*[shapes[i] for i in args])
    ]


def shapes_strategy() -> st.SearchStrategy[Shape]:
    """Scalars, vectors and matrices with dims 1..3 (so broadcasting and matmul shapes meet often)."""
    dim = st.integers(1, 3)
    return st.one_of(st.just(()), st.tuples(dim), st.tuples(dim, dim))


def vector_shapes() -> st.SearchStrategy[Shape]:
    return st.tuples(st.integers(1, 3))


def dtypes() -> st.SearchStrategy[str]:
    """Mostly float32, one draw in four float64 (TF does not mix them, so one dtype per program)."""
    return st.integers(0, 3).map(lambda i: "float64" if i == 3 else "float32")


def values(dtype: str, shape: Shape) -> st.SearchStrategy[np.ndarray]:
    width = 32 if dtype == "float32" else 64
    elements = st.floats(-1.5, 1.5, width=width, allow_subnormal=False)
    return hnp.arrays(np.dtype(dtype), shape, elements=elements)


@st.composite
def programs(
    draw: Draw,
    *,
    min_inputs: int = 1,
    max_inputs: int = 4,
    input_shapes: st.SearchStrategy[Shape] | None = None,
    kinds: Sequence[str] = KINDS,
    dtype: st.SearchStrategy[str] | None = None,
    reduce: st.SearchStrategy[bool] | None = None,
    max_steps: int = MAX_STEPS,
    vary_watch_accessed_variables: bool = True,
    with_extras: bool = True,
) -> Program:
    """Draws a random straight-line program (a DAG of 1..max_steps rows of `OPS`).

    Everything a property needs is drawn here, extras included, so tests that share a strategy and
    a seed see the same sequence of programs: JAX then compiles each oracle primitive once per run
    instead of once per test.
    """
    program_dtype = draw(dtype if dtype is not None else dtypes())
    shape_strategy = input_shapes if input_shapes is not None else shapes_strategy()
    n_inputs = draw(st.integers(min_inputs, max_inputs))
    inputs = []
    for _ in range(n_inputs):
        shape = draw(shape_strategy)
        inputs.append(
            Input(
                value=draw(values(program_dtype, shape)),
                kind=draw(st.sampled_from(list(kinds))),
                watch=draw(st.booleans()),
            )
        )
    shapes: list[Shape] = [inp.value.shape for inp in inputs]
    steps: list[Step] = []
    n_steps = draw(st.integers(1, max_steps))
    for _ in range(3 * n_steps):  # rows whose shapes are not available are skipped
        if len(steps) == n_steps:
            break
        row = draw(st.sampled_from(OPS))
        candidates = _arg_candidates(row, shapes)
        if not candidates:
            continue
        args = draw(st.sampled_from(candidates))
        arg_shapes = [shapes[i] for i in args]
        params = row.params(draw, *arg_shapes)
        shape = _out_shape(row, program_dtype, arg_shapes, params)
        if _size(shape) > MAX_SIZE or len(shape) > MAX_RANK:
            continue
        steps.append(Step(row, args, params))
        shapes.append(shape)
    assume(steps)
    reduced = draw(reduce if reduce is not None else st.booleans())
    extras = None
    if with_extras:
        target_shape = () if reduced else shapes[-1]
        scalars = st.floats(-2, 2, width=32, allow_subnormal=False)
        extras = Extras(
            u=draw(values(program_dtype, target_shape)),
            v=draw(values(program_dtype, target_shape)),
            a=draw(scalars),
            b=draw(scalars),
            sources=draw_nest(draw, range(n_inputs)),
            second_target=draw(st.integers(n_inputs, len(shapes) - 1)),
        )
    return Program(
        dtype=program_dtype,
        inputs=tuple(inputs),
        steps=tuple(steps),
        shapes=tuple(shapes),
        reduce=reduced,
        watch_accessed_variables=draw(st.booleans()) if vary_watch_accessed_variables else True,
        extras=extras,
    )


def scalar_programs_of_one_vector() -> st.SearchStrategy[Program]:
    """`y = f(x)` with one vector input and a scalar target: what a Hessian needs."""
    return programs(
        min_inputs=1,
        max_inputs=1,
        input_shapes=vector_shapes(),
        kinds=(CONSTANT, VARIABLE),
        reduce=st.just(True),
        max_steps=8,
        vary_watch_accessed_variables=False,
        with_extras=False,
    )


# ---------------------------------------------------------------------------------------------------
# Oracle helpers
# ---------------------------------------------------------------------------------------------------


_ORACLE_CACHE: dict[Any, Any] = {}


def _memoized(key: Any, compute: Callable[[], Any]) -> Any:
    """Tests that share a seed see the same programs: the oracle answers each once per session."""
    if key not in _ORACLE_CACHE:
        if len(_ORACLE_CACHE) >= 4096:
            _ORACLE_CACHE.clear()
        _ORACLE_CACHE[key] = compute()
    return _ORACLE_CACHE[key]


def jax_vjp(program: Program, cotangent: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """The target and its vector-Jacobian product for every input, computed eagerly by JAX.

    With no cotangent it is ones of the target's shape: TensorFlow sums a non-scalar target, and for
    a scalar target this is exactly `jax.grad`.
    """

    def compute() -> tuple[np.ndarray, list[np.ndarray]]:
        with program.oracle_mode():
            primals = [jnp.asarray(inp.value) for inp in program.inputs]
            target, pullback = jax.vjp(program.run_jnp, *primals)
            ct = jnp.ones_like(target) if cotangent is None else jnp.asarray(cotangent, target.dtype)
            return np.asarray(target), [np.asarray(g) for g in pullback(ct)]

    ct_key = None if cotangent is None else (cotangent.shape, cotangent.tobytes())
    return _memoized(("vjp", program.oracle_key(), ct_key), compute)


def jax_vjp_two_targets(program: Program, node: int) -> list[np.ndarray]:
    """The vjp of the pair (target, nodes[node]) with ones for both: what TF gives for a target list."""

    def both(*xs: Any) -> tuple[Any, Any]:
        return program.run_jnp(*xs), program.jnp_nodes(*xs)[node]

    def compute() -> list[np.ndarray]:
        with program.oracle_mode():
            primals = [jnp.asarray(inp.value) for inp in program.inputs]
            outs, pullback = jax.vjp(both, *primals)
            return [np.asarray(g) for g in pullback(tuple(jnp.ones_like(o) for o in outs))]

    return _memoized(("two targets", program.oracle_key(), node), compute)


def jax_gradient_and_hessian(program: Program) -> tuple[np.ndarray, np.ndarray]:
    """`jax.grad` and `jax.hessian` of a program of one vector input with a scalar target.

    The Hessian is computed as jax.hessian does it, forward-over-reverse (`jacfwd(grad(f))`), but
    one basis vector at a time instead of under vmap: batched shapes would make JAX compile every
    primitive a second time, which costs more here than the whole test. The gradient is the primal
    output of the same jvp.
    """
    grad_f = jax.grad(program.run_jnp)

    def compute() -> tuple[np.ndarray, np.ndarray]:
        with program.oracle_mode():
            x = jnp.asarray(program.inputs[0].value)
            eye = np.eye(x.shape[0], dtype=x.dtype)
            pairs = [jax.jvp(grad_f, (x,), (jnp.asarray(e),)) for e in eye]
            return np.asarray(pairs[0][0]), np.stack([np.asarray(row) for _, row in pairs])

    return _memoized(("hessian", program.oracle_key()), compute)


def tame(*arrays: np.ndarray | None, bound: float = 1e4) -> bool:
    """True when every value is finite and moderate, so float32 results are comparable."""
    return all(a is None or (np.all(np.isfinite(a)) and np.all(np.abs(a) <= bound)) for a in arrays)


def assert_close(actual: Any, expected: np.ndarray, rtol: float, what: str = "", scale: float | None = None) -> None:
    """allclose with an absolute floor of rtol * scale, for entries that are sums which cancel.

    `scale` defaults to the largest expected magnitude (at least 1).
    """
    if scale is None:
        scale = float(np.max(np.abs(expected), initial=0.0))
    scale = max(1.0, scale)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


def iter_leaves(nest: Any) -> Iterator[Any]:
    if isinstance(nest, dict):
        for key in sorted(nest):
            yield from iter_leaves(nest[key])
    elif isinstance(nest, (list, tuple)):
        for item in nest:
            yield from iter_leaves(item)
    else:
        yield nest


def draw_nest(draw: Draw, items: Sequence[Any], depth: int = 0) -> Any:
    """Draws a random nest of lists, tuples and dicts (nested up to 3 deep) holding `items` in order.

    A plain function taking `draw` rather than a recursive st.composite: building a composite
    strategy per call costs hypothesis milliseconds, and this runs for every example.
    """
    items = list(items)
    if len(items) == 1 and (depth >= 3 or draw(st.booleans())):
        return items[0]
    container = draw(st.sampled_from(["list", "tuple", "dict"]))
    if depth >= 3:
        parts = items  # deep enough: a flat container of the leaves
    else:
        n_parts = draw(st.integers(1, min(3, len(items))))
        cuts = (
            sorted(draw(st.sets(st.integers(1, len(items) - 1), min_size=n_parts - 1, max_size=n_parts - 1)))
            if len(items) > 1
            else []
        )
        bounds = [0, *cuts, len(items)]
        parts = [draw_nest(draw, items[lo:hi], depth + 1) for lo, hi in zip(bounds, bounds[1:])]
    if container == "list":
        return parts
    if container == "tuple":
        return tuple(parts)
    return {f"k{i}": part for i, part in enumerate(parts)}


def map_nest(fn: Callable[[Any], Any], nest: Any) -> Any:
    if isinstance(nest, dict):
        return {key: map_nest(fn, value) for key, value in nest.items()}
    if isinstance(nest, list):
        return [map_nest(fn, item) for item in nest]
    if isinstance(nest, tuple):
        return tuple(map_nest(fn, item) for item in nest)
    return fn(nest)


def record(tf: Any, program: Program, leaves: list[Any], *, persistent: bool = False) -> tuple[Any, Any]:
    """Runs `program` under a fresh tape, watching the inputs it asks for; returns (tape, target)."""
    with tf.GradientTape(persistent=persistent, watch_accessed_variables=program.watch_accessed_variables) as tape:
        for leaf, inp in zip(leaves, program.inputs):
            if inp.watch:
                tape.watch(leaf)
        target = program.run_tf(tf, leaves)
    return tape, target
