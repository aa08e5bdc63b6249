"""Forward-mode jacobian columns seeded with a symbolic identity instead of a dense basis (docs/design.md, section 4).

`jax.vmap(column)(basis)` feeds the n one-hot columns of the source's basis through the JVP. A linear op that meets
the seed then does n times its work over mostly zeros: `x @ kernel`'s JVP w.r.t. `kernel` contracts `x` with every
basis matrix (n * |output| * K flops), though the column for kernel element (a, b) is just `x[:, a]` placed in
column b. So the JVP's jaxpr is interpreted here once, each value being one of:

- a plain array: it does not depend on the seed (the primal computation), evaluated once, as vmap would;
- `Identity`: the seed itself, or a reshape, transpose or cast of it, kept symbolic;
- `Dense`: an array with a leading axis of the n columns.

An op with a `Dense` input runs under `jax.vmap`, exactly as the whole column function did before. An op that meets
the `Identity` has a structured rule where one is exact and cheap (`dot_general`: a broadcast product of the other
operand with eye factors, costing its output's size); any other op first makes the identity dense (the basis
itself) and is vmapped. Nested `jit`s are inlined, so that a seed passes into them and their primal parts stay
unbatched. Everything is traced into the caller's jit, like the vmap it replaces.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from jax.extend import core as jax_core
from jax.interpreters import partial_eval as pe

# Which rule evaluated each op that met a seed, by primitive name ("vmap:<name>" for the fallback): tests read it
# to prove that the structured rules are taken (tests/unit/test_structured_jacobian.py).
HITS: collections.Counter = collections.Counter()


@dataclass(frozen=True)
class Identity:
    """The seed, symbolically: column m is `transpose(reshape(e_m, basis), perm).astype(dtype)`, e_m the m-th
    standard basis vector of a space of n = prod(basis) elements (value axis i is basis axis perm[i])."""

    basis: tuple[int, ...]
    perm: tuple[int, ...]
    dtype: Any

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.basis[p] for p in self.perm)

    def dense(self) -> Dense:
        n = math.prod(self.basis)
        eye = jnp.eye(n, dtype=self.dtype).reshape((n, *self.basis))
        return Dense(jnp.transpose(eye, (0, *(1 + p for p in self.perm))))


@dataclass(frozen=True)
class Dense:
    """A value's n columns: shape (n,) + the value's shape."""

    columns: Any


def _is_seeded(v: Any) -> bool:
    return isinstance(v, (Identity, Dense))


# ---- structured rules: (inputs, params, output avals) -> outputs, or None where the rule does not apply ----------

def _convert(ins: Sequence[Any], params: dict, outs: Sequence[Any]) -> list[Any] | None:
    (seed,) = ins
    if not isinstance(seed, Identity) or not jnp.issubdtype(params["new_dtype"], jnp.inexact):
        return None
    return [Identity(seed.basis, seed.perm, params["new_dtype"])]


def _reshape(ins: Sequence[Any], params: dict, outs: Sequence[Any]) -> list[Any] | None:
    seed = ins[0]
    # a reshape keeps row-major order, so only an untransposed identity stays one
    if (len(ins) != 1 or not isinstance(seed, Identity) or params.get("dimensions") is not None
            or seed.perm != tuple(sorted(seed.perm))):
        return None
    shape = tuple(outs[0].shape)
    return [Identity(shape, tuple(range(len(shape))), seed.dtype)]


def _transpose(ins: Sequence[Any], params: dict, outs: Sequence[Any]) -> list[Any] | None:
    (seed,) = ins
    if not isinstance(seed, Identity):
        return None
    return [Identity(seed.basis, tuple(seed.perm[p] for p in params["permutation"]), seed.dtype)]


def _dot_general(ins: Sequence[Any], params: dict, outs: Sequence[Any]) -> list[Any] | None:
    """dot(c, E) or dot(E, c) for a plain `c` and the identity E: out[mu][batch, lhs free, rhs free] picks, for each
    column mu, c at E's nonzero, times deltas that tie E's batch and free axes to mu. Built as a product of
    broadcast factors over the axes (basis..., output...): the output's size in work, and exact (no sums)."""
    lhs, rhs = ins
    if isinstance(lhs, Identity) and not _is_seeded(rhs):
        seed, c, seed_side = lhs, rhs, 0
    elif isinstance(rhs, Identity) and not _is_seeded(lhs):
        seed, c, seed_side = rhs, lhs, 1
    else:
        return None
    (contract, batch) = params["dimension_numbers"]
    c_contract, s_contract = contract[1 - seed_side], contract[seed_side]
    c_batch, s_batch = batch[1 - seed_side], batch[seed_side]
    c_free = [a for a in range(jnp.ndim(c)) if a not in c_contract and a not in c_batch]
    s_free = [a for a in range(len(seed.perm)) if a not in s_contract and a not in s_batch]
    out = outs[0]
    r0 = len(seed.basis)
    # where the output's free axes of each side start, after the batch axes: lhs free, then rhs free
    lhs_free = len(s_free) if seed_side == 0 else len(c_free)
    c_free_at = r0 + len(batch[0]) + (lhs_free if seed_side == 0 else 0)
    s_free_at = r0 + len(batch[0]) + (lhs_free if seed_side == 1 else 0)
    full = (*seed.basis, *out.shape)
    # c's axes: its batch and contracted axes sit on the basis axes of their seed partners, its free axes on theirs
    where = {a: seed.perm[s] for a, s in zip(c_batch, s_batch)}
    where.update({a: seed.perm[s] for a, s in zip(c_contract, s_contract)})
    where.update({a: c_free_at + j for j, a in enumerate(c_free)})
    product = _place(jnp.asarray(c).astype(out.dtype), where, len(full))
    # deltas: each batch and free axis of the seed equals its basis axis (batch axes: the output's batch position)
    ties = [(seed.perm[s], r0 + k) for k, s in enumerate(s_batch)]
    ties += [(seed.perm[s], s_free_at + j) for j, s in enumerate(s_free)]
    for basis_axis, out_axis in ties:
        eye = jnp.eye(full[basis_axis], dtype=out.dtype)
        product = product * _place(eye, {0: basis_axis, 1: out_axis}, len(full))
    columns = jnp.broadcast_to(product, full).reshape((math.prod(seed.basis), *out.shape))
    return [Dense(columns)]


def _place(x: Any, where: dict[int, int], rank: int) -> Any:
    """`x` with its axis a moved to axis where[a] of a rank-`rank` array, size 1 on every other axis."""
    order = sorted(where, key=where.__getitem__)
    moved = jnp.transpose(x, order) if order != list(range(len(order))) else x
    shape = [1] * rank
    for a in order:
        shape[where[a]] = x.shape[a]
    return moved.reshape(shape)


RULES: dict[str, Callable[..., list[Any] | None]] = {
    "convert_element_type": _convert,
    "reshape": _reshape,
    "transpose": _transpose,
    "dot_general": _dot_general,
}
_INLINED = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr"}


# ---- the interpreter ---------------------------------------------------------------------------------------------

def _bind(eqn: Any, values: Sequence[Any]) -> list[Any]:
    outs = eqn.primitive.bind(*values, **eqn.primitive.get_bind_params(eqn.params))
    return list(outs) if eqn.primitive.multiple_results else [outs]


def _vmapped(eqn: Any, values: Sequence[Any]) -> list[Any]:
    """The op on columns: vmapped over its seeded inputs (made dense), its plain inputs shared."""
    dense = [v.dense() if isinstance(v, Identity) else v for v in values]
    axes = [0 if isinstance(v, Dense) else None for v in dense]
    args = [v.columns if isinstance(v, Dense) else v for v in dense]
    return [Dense(o) for o in jax.vmap(lambda *xs: _bind(eqn, xs), in_axes=axes)(*args)]


def _evaluate(closed: Any, args: Sequence[Any]) -> list[Any]:
    # JAX's dead-code elimination first: the JVP's jaxpr keeps primal values it never reads
    jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars), instantiate=True)
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, [a for a, u in zip(args, used) if u]))

    def read(v: Any) -> Any:
        return v.val if isinstance(v, jax_core.Literal) else env[v]

    for eqn in jaxpr.eqns:
        values = [read(v) for v in eqn.invars]
        name = eqn.primitive.name
        if not any(map(_is_seeded, values)):
            outs = _bind(eqn, values)
        elif name in _INLINED:
            outs = _evaluate(eqn.params[_INLINED[name]], values)
        else:
            rule = RULES.get(name)
            outs = rule(values, eqn.params, [v.aval for v in eqn.outvars]) if rule is not None else None
            HITS[name if outs is not None else f"vmap:{name}"] += 1
            if outs is None:
                outs = _vmapped(eqn, values)
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def columns(column: Callable[..., Any], shape: tuple[int, ...], dtype: Any, args: Sequence[Any]) -> Any:
    """`jax.vmap(lambda t: column(t, *args))(basis(shape, dtype))`: the n JVP columns, shape (n,) + output shape,
    from one evaluation of `column`'s jaxpr seeded with the symbolic identity."""
    seed = jax.ShapeDtypeStruct(shape, dtype)
    closed = jax.make_jaxpr(column)(seed, *args)
    n = math.prod(shape)
    (out,) = _evaluate(closed, [Identity(tuple(shape), tuple(range(len(shape))), dtype), *args])
    if isinstance(out, Identity):
        out = out.dense()
    if isinstance(out, Dense):
        return out.columns
    aval = closed.out_avals[0]
    return jnp.broadcast_to(out, (n, *aval.shape)).astype(aval.dtype)  # no path from the seed: zero columns
