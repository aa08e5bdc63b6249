"""Random programs whose jacobian tape.jacobian computes in forward mode: small sources, a larger target.

A `ForwardProgram` starts from a source `k` (a Variable), grows it with a matmul by a constant (either side) and
applies a chain of steps, some of which read a second source (a bias). The steps mix those with a structured rule in
structured_jacobian.py (matmul, reshape, transpose, casts) with those that fall back to the vmap (relu, tanh, exp,
broadcasting mul and add, reduce_sum, concat, gather, slicing). Each step is written twice, for the TF API and for
jax.numpy, so that `jax.jacfwd` of the jnp side is the oracle.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

Shape = tuple[int, ...]
MAX_SIZE = 60


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    accepts: Callable[[Shape], bool]
    params: Callable[[Any, Shape, str], dict[str, Any]]  # (draw, shape, dtype) -> params
    tf_call: Callable[..., Any]  # (tf, h, sources, **params)
    jnp_call: Callable[..., Any]  # (h, sources, **params)
    structured: bool = False  # a structured rule applies when it meets the seed: exact


def _const(draw: Any, shape: Shape, dtype: str) -> np.ndarray:
    # quarter-integers: products and sums of a few of them are exact in float32, so exactness can be asserted
    ints = draw(st.lists(st.integers(-6, 6), min_size=math.prod(shape), max_size=math.prod(shape)))
    return (np.array(ints, dtype=dtype) / 4).reshape(shape)


def _any(shape: Shape) -> bool:
    return True


def _none(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {}


def _left(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {"c": _const(draw, (draw(st.integers(2, 6)), shape[0]), dtype)}


def _right(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {"c": _const(draw, (shape[1], draw(st.integers(2, 6))), dtype)}


def _transposed_left(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {"c": _const(draw, (shape[0], draw(st.integers(2, 6))), dtype)}


def _broadcast_const(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    kind = draw(st.sampled_from(["same", "last", "scalar"]))
    target = shape if kind == "same" else shape[-1:] if kind == "last" else ()
    return {"c": _const(draw, target, dtype)}


def _reshape(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    n = math.prod(shape)
    options = [(n,)] + [(d, n // d) for d in range(1, n + 1) if n % d == 0]
    return {"shape": list(draw(st.sampled_from(options)))}


def _perm(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {"perm": list(draw(st.permutations(range(len(shape)))))}


def _axis(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {"axis": draw(st.integers(0, len(shape) - 1)), "keepdims": draw(st.booleans())}


def _concat(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {"c": _const(draw, shape, dtype), "axis": draw(st.integers(0, len(shape) - 1))}


def _gather(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    axis = draw(st.integers(0, len(shape) - 1))
    indices = draw(st.lists(st.integers(0, shape[axis] - 1), min_size=1, max_size=4))
    return {"indices": np.array(indices, np.int32), "axis": axis}


def _index(draw: Any, shape: Shape, dtype: str) -> dict[str, Any]:
    return {"index": (draw(st.sampled_from([slice(None, None, -1), slice(1, None), slice(None, None, 2)])),)}


def _rank(n: int) -> Callable[[Shape], bool]:
    return lambda shape: len(shape) == n


def _rank_at_least(n: int) -> Callable[[Shape], bool]:
    return lambda shape: len(shape) >= n


def _other(dtype: Any) -> Any:
    return "float64" if str(dtype) == "float32" else "float32"


OPS = [
    Op("c @ h", _rank(2), _left, lambda tf, h, s, c: tf.constant(c) @ h, lambda h, s, c: c @ h, True),
    Op("h @ c", _rank(2), _right, lambda tf, h, s, c: h @ tf.constant(c), lambda h, s, c: h @ c, True),
    Op("matmul(h, c, transpose_a)", _rank(2), _transposed_left,
       lambda tf, h, s, c: tf.matmul(h, tf.constant(c), transpose_a=True), lambda h, s, c: h.T @ c, True),
    Op("c @ h in the other precision", _rank(2), _left,
       lambda tf, h, s, c: tf.cast(tf.constant(c.astype(_other(c.dtype))) @ tf.cast(h, _other(h.dtype.name)), h.dtype),
       lambda h, s, c: (c.astype(_other(c.dtype)) @ h.astype(_other(h.dtype))).astype(h.dtype), True),
    Op("reshape", _any, _reshape, lambda tf, h, s, shape: tf.reshape(h, shape),
       lambda h, s, shape: jnp.reshape(h, shape), True),
    Op("transpose", _rank_at_least(2), _perm, lambda tf, h, s, perm: tf.transpose(h, perm),
       lambda h, s, perm: jnp.transpose(h, perm), True),
    Op("cast round trip", _any, _none,
       lambda tf, h, s: tf.cast(tf.cast(h, _other(h.dtype.name)), h.dtype),
       lambda h, s: h.astype(_other(h.dtype)).astype(h.dtype), True),
    Op("relu", _any, _none, lambda tf, h, s: tf.nn.relu(h), lambda h, s: jax.nn.relu(h)),
    Op("tanh", _any, _none, lambda tf, h, s: tf.tanh(h), lambda h, s: jnp.tanh(h)),
    Op("exp(-h*h)", _any, _none, lambda tf, h, s: tf.exp(-h * h), lambda h, s: jnp.exp(-h * h)),
    Op("h * c", _rank_at_least(1), _broadcast_const, lambda tf, h, s, c: h * tf.constant(c), lambda h, s, c: h * c),
    Op("h + c", _rank_at_least(1), _broadcast_const, lambda tf, h, s, c: h + tf.constant(c), lambda h, s, c: h + c),
    Op("h * k", _any, _none, lambda tf, h, s: h * tf.reduce_sum(s[0]), lambda h, s: h * jnp.sum(s[0])),
    Op("h + bias", _rank_at_least(1), _none, lambda tf, h, s: h + s[1], lambda h, s: h + s[1]),
    Op("reduce_sum", _rank_at_least(2), _axis, lambda tf, h, s, axis, keepdims: tf.reduce_sum(h, axis, keepdims),
       lambda h, s, axis, keepdims: jnp.sum(h, axis, keepdims=keepdims)),
    Op("concat", _rank_at_least(1), _concat, lambda tf, h, s, c, axis: tf.concat([h, tf.constant(c)], axis),
       lambda h, s, c, axis: jnp.concatenate([h, c], axis)),
    Op("gather", _rank_at_least(1), _gather, lambda tf, h, s, indices, axis: tf.gather(h, indices, axis=axis),
       lambda h, s, indices, axis: jnp.take(h, indices, axis=axis)),
    Op("h[...]", _rank_at_least(1), _index, lambda tf, h, s, index: h[index], lambda h, s, index: h[index]),
]
GROW = OPS[:4]  # the step that makes the target larger than the source: a matmul
PREFIX = OPS[4:7]  # steps on the source before it: the seed stays symbolic through them
BIAS = OPS[13]


@dataclasses.dataclass(frozen=True, eq=False)
class ForwardProgram:
    """`h = k; h = step(h) for each step; target = h`, with sources k and (if a step reads it) bias."""

    dtype: str
    sources: tuple[np.ndarray, ...]
    steps: tuple[tuple[Op, dict[str, Any]], ...]

    @property
    def exact(self) -> bool:
        """Whether every step is structured: the jacobian is then a product of ones, zeros and constants."""
        return all(op.structured for op, _ in self.steps) and sum(op in GROW for op, _ in self.steps) <= 1

    def run_tf(self, tf: Any, sources: Any) -> Any:
        h = sources[0]
        for op, params in self.steps:
            h = op.tf_call(tf, h, sources, **params)
        return h

    def run_jnp(self, *sources: Any) -> Any:
        h = sources[0]
        for op, params in self.steps:
            h = op.jnp_call(h, sources, **params)
        return h

    def __repr__(self) -> str:
        steps = "; ".join(f"{op.name}({', '.join(f'{k}={v!r}' for k, v in p.items())})" for op, p in self.steps)
        return f"ForwardProgram({self.dtype}, sources={[s.shape for s in self.sources]}: {steps})"


@st.composite
def forward_programs(draw: Any, max_steps: int = 6) -> ForwardProgram:
    dtype = draw(st.sampled_from(["float32", "float32", "float64"]))
    k_shape = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    sources = [draw(_values(k_shape, dtype))]
    shape: Shape = k_shape
    steps = []
    prefix = draw(st.lists(st.sampled_from(PREFIX), max_size=2))
    chosen = [*prefix, draw(st.sampled_from(GROW))]
    chosen += draw(st.lists(st.sampled_from([*OPS, BIAS, BIAS]), max_size=max_steps - len(chosen)))
    for op in chosen:
        if not op.accepts(shape):
            continue
        params = op.params(draw, shape, dtype)
        if op.name == "h + bias":
            if len(sources) == 1:
                sources.append(draw(_values(draw(st.sampled_from([shape[-1:], ()])), dtype)))
            elif not _broadcasts_to(sources[1].shape, shape):
                continue
        specs = [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in sources]
        with jax.enable_x64(True):
            out = jax.eval_shape(lambda h, *s: op.jnp_call(h, s, **params),
                                 jax.ShapeDtypeStruct(shape, dtype), *specs)
        if math.prod(out.shape) > MAX_SIZE or 0 in out.shape:
            continue
        steps.append((op, params))
        shape = tuple(out.shape)
    return ForwardProgram(dtype, tuple(sources), tuple(steps))


def _broadcasts_to(shape: Shape, target: Shape) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _values(shape: Shape, dtype: str) -> st.SearchStrategy[np.ndarray]:
    n = math.prod(shape)
    return st.lists(st.integers(-6, 6), min_size=n, max_size=n).map(
        lambda ints: (np.array(ints, dtype=dtype) / 4).reshape(shape))
