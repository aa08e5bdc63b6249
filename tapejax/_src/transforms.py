"""The JAX transformations a tape call lowers to, as builders over a replay function.

Each `*_builder(...)` returns `build(replay) -> fn(leaves, consts, extras) -> tuple of arrays`, where `replay` is
the pure function of the sliced trace (lowering.replay_fn). A source is a group of leaves (a variable read
several times); its derivative is the sum over its leaves. TF's complex convention is the conjugate of JAX's:
TF's VJP is conj(vjp(conj(ct))).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from . import structured_jacobian

Groups = tuple[tuple[int, ...], ...]
Build = Callable[[Callable], Callable]


def _sum(values: Any) -> Any:
    it = iter(values)
    total = next(it)
    for v in it:
        total = total + v
    return total


def basis(shape: tuple[int, ...], dtype: Any, start: int = 0, count: int | None = None) -> jax.Array:
    """Rows `start` to `start + count` of the standard basis of a tensor space, stacked: shape (count,) + shape
    (rows past the last are zeros: a last chunk padded to the chunk's size)."""
    n = math.prod(shape)
    count = n if count is None else count
    return jnp.eye(count, n, k=start, dtype=dtype).reshape((count, *shape))


def batch_basis(shape: tuple[int, ...], dtype: Any, start: int = 0, count: int | None = None) -> jax.Array:
    """Cotangents for a batch jacobian: element j of the non-batch target shape, for every batch row at once:
    shape (count, batch) + shape[1:], for j from `start` (count: all m non-batch elements)."""
    unit = basis(shape[1:], dtype, start, count)
    return jnp.broadcast_to(unit[:, None], (unit.shape[0], *shape))


def _unit(i: Any, shape: tuple[int, ...], dtype: Any) -> jax.Array:
    """Basis vector `i` (traced), so that a chunked map never holds the whole basis."""
    return (jnp.arange(math.prod(shape)) == i).astype(dtype).reshape(shape)


def batch_rows(rows: jax.Array, target_shape: tuple[int, ...]) -> jax.Array:
    """(m, batch) + source.shape[1:] -> (batch,) + target.shape[1:] + source.shape[1:]."""
    rows = jnp.moveaxis(rows, 1, 0)
    return rows.reshape((target_shape[0], *target_shape[1:], *rows.shape[2:]))


def _map(fn: Callable, shape: tuple[int, ...], dtype: Any, chunk: int | None) -> Any:
    """`vmap(fn)` over the standard basis of `shape`, or in chunks of `chunk` rows when memory must be bounded
    (TF's parallel_iterations: chunks.py). Chunked, the map runs over row indices and makes each basis vector
    inside, so that memory is the result and one chunk's intermediates, never the whole basis."""
    if chunk is None:
        return jax.vmap(fn)(basis(shape, dtype))
    return jax.lax.map(lambda i: fn(_unit(i, shape, dtype)), jnp.arange(math.prod(shape)), batch_size=chunk)


def _tangents(leaves: Sequence[Any], groups: Groups, per_group: Sequence[Any]) -> list[Any]:
    """Leaf tangents: each leaf of group i gets per_group[i]; leaves of no group get zeros."""
    tangents = [jnp.zeros_like(x) for x in leaves]
    for g, t in zip(groups, per_group):
        for i in g:
            tangents[i] = t.astype(leaves[i].dtype) if t is not None else tangents[i]
    return tangents


def vjp_builder(groups: Groups, given: tuple[bool, ...]) -> Build:
    """Gradient: `jax.vjp`, with cotangents `extras` for the targets where `given`, ones elsewhere (TF's default:
    the gradient of the sum). The ones are made inside, so no array of ones crosses to the device."""

    def build(replay: Callable) -> Callable:
        def fn(leaves: Sequence[Any], consts: Sequence[Any], cts: Sequence[Any]) -> tuple[Any, ...]:
            outs, pullback = jax.vjp(lambda *xs: replay(xs, consts), *leaves)
            supplied = iter(cts)
            seeds = [jnp.conj(next(supplied)) if g else jnp.ones_like(o) for g, o in zip(given, outs)]
            leaf_cts = pullback(seeds)
            return tuple(jnp.conj(_sum(leaf_cts[i] for i in g)) for g in groups)

        return fn

    return build


def jacobian_rev_builder(groups: Groups, chunk: int | None) -> Build:
    """Jacobian by reverse mode: one `jax.vmap` over the VJP of the target's standard basis."""

    def build(replay: Callable) -> Callable:
        def fn(leaves: Sequence[Any], consts: Sequence[Any], extras: Sequence[Any]) -> tuple[Any, ...]:
            (out,), pullback = jax.vjp(lambda *xs: replay(xs, consts), *leaves)
            rows = _map(lambda ct: pullback([ct]), out.shape, out.dtype, chunk)
            return tuple(jnp.conj(_sum(rows[i] for i in g)).reshape(out.shape + leaves[g[0]].shape)
                         for g in groups)

        return fn

    return build


def jacobian_fwd_builder(groups: Groups, chunk: int | None) -> Build:
    """Jacobian by forward mode: the JVP of each source's standard basis (cheaper when the sources are smaller
    than the target), seeded with a symbolic identity (structured_jacobian.py), or chunked by `_map`."""

    def build(replay: Callable) -> Callable:
        def fn(leaves: Sequence[Any], consts: Sequence[Any], extras: Sequence[Any]) -> tuple[Any, ...]:
            results = []
            for k, g in enumerate(groups):
                shape, dtype = leaves[g[0]].shape, leaves[g[0]].dtype

                def column(t, *xs, k=k):  # the leaves and constants are arguments: the seeded jaxpr's inputs
                    ls, cs = xs[:len(leaves)], xs[len(leaves):]
                    per_group = [t if j == k else None for j in range(len(groups))]
                    return jax.jvp(lambda *ys: replay(ys, cs)[0], ls, tuple(_tangents(ls, groups, per_group)))[1]

                # (n,) + target shape; chunked, each chunk maps the dense basis (structured_jacobian.py needs all)
                if chunk is None:
                    columns = structured_jacobian.columns(column, shape, dtype, (*leaves, *consts))
                else:
                    columns = _map(lambda t: column(t, *leaves, *consts), shape, dtype, chunk)
                target_shape = columns.shape[1:]
                results.append(jnp.moveaxis(columns, 0, -1).reshape(target_shape + shape))
            return tuple(results)

        return fn

    return build


def batch_jacobian_builder(groups: Groups, chunk: int | None) -> Build:
    """Batch jacobian as TF computes it: for each non-batch element j of the target, the VJP of target[:, j]
    (summed over the batch) with respect to the source; result (batch,) + target.shape[1:] + source.shape[1:]."""

    def build(replay: Callable) -> Callable:
        def fn(leaves: Sequence[Any], consts: Sequence[Any], extras: Sequence[Any]) -> tuple[Any, ...]:
            (out,), pullback = jax.vjp(lambda *xs: replay(xs, consts), *leaves)
            def row(unit: Any) -> Any:  # an element of the non-batch shape, for every batch row
                return pullback([jnp.broadcast_to(unit, out.shape)])

            rows = _map(row, out.shape[1:], out.dtype, chunk)
            return tuple(batch_rows(jnp.conj(_sum(rows[i] for i in g)), out.shape) for g in groups)

        return fn

    return build


def jvp_builder(groups: Groups) -> Build:
    """Forward mode (ForwardAccumulator.jvp): `jax.jvp` with one tangent per source in `extras`."""

    def build(replay: Callable) -> Callable:
        def fn(leaves: Sequence[Any], consts: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, ...]:
            _, out_tangents = jax.jvp(lambda *xs: replay(xs, consts), tuple(leaves),
                                      tuple(_tangents(leaves, groups, tangents)))
            return tuple(out_tangents)

        return fn

    return build


def _gradients(replay: Callable, consts: Sequence[Any], groups: Groups) -> Callable:
    """The gradient of a scalar replay as a function of the leaves: one array per group."""

    def grads(*xs: Any) -> tuple[Any, ...]:
        (out,), pullback = jax.vjp(lambda *ys: replay(ys, consts), *xs)
        leaf_cts = pullback([jnp.ones_like(out)])
        return tuple(jnp.conj(_sum(leaf_cts[i] for i in g)) for g in groups)

    return grads


def _hessian_times(grads: Callable, groups: Groups, forward_over_reverse: bool) -> Callable:
    """`(leaves, t) -> H t` per group, for per-group tangents `t` (None: zero), H the Hessian of the scalar whose
    per-group gradient is `grads`. Forward-over-reverse (`jax.jvp` of the gradient), or, through custom gradients
    (JAX cannot push tangents through a custom_vjp), reverse-over-reverse: H t = grad_x <grad f(x), t>, since a
    Hessian is symmetric."""

    def hvp(leaves: Sequence[Any], per_group: Sequence[Any]) -> tuple[Any, ...]:
        if forward_over_reverse:
            return jax.jvp(grads, tuple(leaves), tuple(_tangents(leaves, groups, per_group)))[1]

        def inner(*xs: Any) -> Any:
            return _sum(jnp.sum(g * jnp.conj(t)) for g, t in zip(grads(*xs), per_group) if t is not None)

        leaf_grads = jax.grad(inner, argnums=tuple(range(len(leaves))))(*leaves)
        return tuple(_sum(leaf_grads[i] for i in g) for g in groups)

    return hvp


def hessian_builder(groups: Groups, forward_over_reverse: bool = True) -> Build:
    """Hessian of a scalar target: blocks H[i][j] of shape source_i.shape + source_j.shape, flattened row-major
    over (i, j): one `jax.vmap` of the Hessian-vector product over each source's basis."""

    def build(replay: Callable) -> Callable:
        def fn(leaves: Sequence[Any], consts: Sequence[Any], extras: Sequence[Any]) -> tuple[Any, ...]:
            hvp = _hessian_times(_gradients(replay, consts, groups), groups, forward_over_reverse)
            columns = []
            for k, g in enumerate(groups):
                def column(t, k=k):
                    return hvp(leaves, [t if j == k else None for j in range(len(groups))])

                columns.append(jax.vmap(column)(basis(leaves[g[0]].shape, leaves[g[0]].dtype)))
            blocks = []
            for i, gi in enumerate(groups):
                for k, gk in enumerate(groups):
                    col = columns[k][i]  # (n_k,) + S_i
                    blocks.append(jnp.moveaxis(col, 0, -1).reshape(leaves[gi[0]].shape + leaves[gk[0]].shape))
            return tuple(blocks)

        return fn

    return build


def hvp_builder(groups: Groups, forward_over_reverse: bool = True) -> Build:
    """Hessian-vector product of a scalar target, one vector per source in `extras`."""

    def build(replay: Callable) -> Callable:
        def fn(leaves: Sequence[Any], consts: Sequence[Any], vectors: Sequence[Any]) -> tuple[Any, ...]:
            return _hessian_times(_gradients(replay, consts, groups), groups, forward_over_reverse)(leaves, vectors)

        return fn

    return build
