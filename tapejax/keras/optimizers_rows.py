"""Keras's update rules on an IndexedSlices gradient: row by row where Keras computes row by row.

Keras's optimizers compute on an IndexedSlices (the gradient of an Embedding) with ops that keep it sparse: an
elementwise function of it (its square, absolute value, sign) applies to each gathered row, repeats included,
and a product or quotient with a dense tensor multiplies each row by that tensor's row. Any other op (a sum with a
moment, a maximum) first makes it dense, adding up the rows of each index. So Adam's second moment adds the squares
of the rows of a repeated index, not the square of their sum: the step differs from a dense gradient's wherever an
index repeats in a batch.

tapejax's rules are JAX functions of a dense gradient (optax's, and the formulas in optimizers_more.py).
`evaluate` runs such a function's jaxpr with the gradient given as rows, applying each equation as Keras's op on
an IndexedSlices would: the rule's maths stays optax's, and a dense gradient takes the plain path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
from jax.extend import core as jax_core


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Rows:
    """A gradient as rows: `values[i]` is a slice at row `indices[i]` of a tensor with `size` rows (a pytree whose
    size is static, so that it enters a compiled update as two arrays)."""

    values: Any
    indices: Any
    size: int = dataclasses.field(metadata={"static": True})

    def _replace(self, values: Any) -> Rows:
        return Rows(values, self.indices, self.size)

    def dense(self) -> Any:
        return jax.ops.segment_sum(self.values, self.indices, num_segments=self.size)


# Keras's elementwise_unary ops (f(0) = 0: the rows stay rows), as the primitives JAX writes them with.
_ROWWISE = {"neg", "sign", "abs", "square", "sqrt", "integer_pow", "floor", "ceil", "round", "sin", "tan", "tanh",
            "sinh", "asin", "asinh", "atan", "atanh", "expm1", "log1p", "real", "imag", "conj", "copy", "copy_p",
            "convert_element_type"}
_CALLS = {"jit", "pjit"}  # a nested jaxpr (a jnp function): evaluated equation by equation too


def evaluate(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    """`fn(*args)`, where an arg that is `Rows` takes the place of a dense gradient (see the module docstring);
    the outputs are dense."""
    rows = {i: a for i, a in enumerate(args) if isinstance(a, Rows)}
    abstract = [jax.ShapeDtypeStruct((a.size, *a.values.shape[1:]), a.values.dtype) if i in rows else a
                for i, a in enumerate(args)]
    flat, tree = jax.tree_util.tree_flatten(abstract)
    closed, out_shape = jax.make_jaxpr(lambda *leaves: fn(*jax.tree_util.tree_unflatten(tree, leaves)),
                                       return_shape=True)(*flat)
    leaves = jax.tree_util.tree_leaves(args, is_leaf=lambda a: isinstance(a, Rows))
    outs = _run(closed.jaxpr, closed.consts, leaves)
    outs = [o.dense() if isinstance(o, Rows) else o for o in outs]
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(out_shape), outs)


def _run(jaxpr: Any, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    env: dict[Any, Any] = {}
    read = lambda v: v.val if isinstance(v, jax_core.Literal) else env[v]  # noqa: E731
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        if any(isinstance(x, Rows) for x in ins):
            outs = _on_rows(eqn, ins)
        else:
            outs = _bind(eqn, ins)
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _on_rows(eqn: Any, ins: list[Any]) -> list[Any]:
    """One equation with a rows input, as Keras's op on an IndexedSlices computes it."""
    name = eqn.primitive.name
    if name in _CALLS:
        inner = eqn.params["jaxpr"]
        return _run(inner.jaxpr, inner.consts, ins)
    row = next(x for x in ins if isinstance(x, Rows))
    if name in _ROWWISE and len(ins) == 1:
        return [row._replace(values=eqn.primitive.bind(row.values, **eqn.params))]
    if name in ("mul", "div") and len(ins) == 2 and (name == "mul" or ins[0] is row):
        other = ins[1] if ins[0] is row else ins[0]
        if isinstance(other, Rows):  # the same rows twice (g * g): row by row; other rows: dense
            if other.indices is not row.indices:
                return _on_dense(eqn, ins)
            other_rows = other.values
        else:
            # a value without the row axis (a scalar, a size-1 axis) broadcasts against the rows as it is
            whole = jnp.ndim(other) == jnp.ndim(row.values) and jnp.shape(other)[0] == row.size != 1
            other_rows = jnp.take(other, row.indices, axis=0) if whole else other
        pair = (row.values, other_rows) if ins[0] is row else (other_rows, row.values)
        return [row._replace(values=eqn.primitive.bind(*pair, **eqn.params))]
    return _on_dense(eqn, ins)


def _on_dense(eqn: Any, ins: list[Any]) -> list[Any]:
    return _bind(eqn, [x.dense() if isinstance(x, Rows) else x for x in ins])


def _bind(eqn: Any, ins: list[Any]) -> list[Any]:
    outs = eqn.primitive.bind(*ins, **eqn.primitive.get_bind_params(eqn.params))  # as jax.core.eval_jaxpr does
    return outs if eqn.primitive.multiple_results else [outs]
