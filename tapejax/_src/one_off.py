"""Op calls whose shapes keep changing: a one-off shape of a data-movement op runs without an XLA compile.

Each op runs eagerly as one `jax.jit` executable per (op, static params) (dispatch.py), and XLA compiles it again
for every new input signature: about 20 ms on a CPU, where the op itself takes microseconds. A program that
grows a tensor (`x = tf.concat([x, row], 0)` in a loop) meets a new shape on every call, so it compiled on every
call (600 concats: 34 s, TF 0.3 s). The rule is the one the executable cache applies to structures (DESIGN
invariant 5): compile what repeats, never a one-off.

So the jitted function counts its own traces (a trace happens only for a new signature: the count costs nothing
on the hot path, where JAX's C++ dispatch never calls back into Python). Once an (op, params) has been traced for
`CHURN` signatures, dispatch.py calls it through `Churning`, which keys calls by their input signatures: a
signature seen before runs the jitted executable (compiling it now: it repeats), a new one is traced to its jaxpr
(`jax.make_jaxpr`, no compile) and the jaxpr is evaluated on the host, when every equation in it only moves
elements (`_RULES`: concatenate, reshape, slice, transpose, pad...), which numpy does exactly: the values are
bit-identical to the executable's. A jaxpr with any other primitive (arithmetic, whose rounding XLA's fusion may
change) runs the executable as before. Only arrays on a CPU device are moved: there the host is the device;
numpy inputs (a Python row converted, a string op's ids) too, when the default device is a CPU.

An op whose row carries numpy's exact implementation of itself (OpDef.host: concat, stack, tile, squeeze,
expand_dims) is called through `Churning` from the first call, and a new signature runs that implementation
directly, with no trace; it compiles a signature only after HOST_REPEATS host runs of it (below).

Bounded: the signatures seen are a `caches.Memo`; the rules are a fixed table. In checking mode every host
evaluation is compared, bit for bit, with the executable's result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jax._src import config as jax_config  # constant folding's switch (host_values)

from jax._src.array import ArrayImpl
from jax.extend.core import Literal
from jax.interpreters import partial_eval as pe

from . import caches, checking

CHURN = 8  # signatures traced for one (op, params) before its new signatures count as one-offs
# Host runs of one signature before it compiles, for an op with numpy's implementation (OpDef.host): such a run
# costs ~30 us more than the executable's and a compile ~10 ms, so compiling after 64 (ski rental) costs at most
# twice the best choice made knowing the future, and a tensor grown in a loop, whose sizes repeat only when a
# second loop passes them again, is never compiled. The others compile on a signature's second call: their host
# run traces a jaxpr (~1 ms).
HOST_REPEATS = 64

_ARRAY = ArrayImpl  # the concrete jax.Array type, named without starting a backend at import (jax.distributed)
_SEEN = caches.Memo("signatures of churning ops (one_off.py)", 4096)  # (op key, input avals) -> host runs


def counted(fn: Callable[..., Any], on_churn: Callable[[], None]) -> Callable[..., Any]:
    """`fn`, counting the signatures JAX traces it for; `on_churn()` is called at the CHURN-th."""
    traces = [0]

    def traced(*args: Any) -> Any:  # runs only while JAX traces: never on a cached call
        traces[0] += 1
        if traces[0] == CHURN:
            on_churn()
        return fn(*args)

    traced.__name__ = traced.__qualname__ = getattr(getattr(fn, "func", fn), "__name__", "op")
    return traced


class Churning:
    """Calls an op whose signatures keep changing: the executable for a repeated signature, the host for a new
    one whose jaxpr only moves elements."""

    __slots__ = ("key", "fn", "jitted", "table", "host_ok", "__weakref__")

    def __init__(self, key: Any, fn: Callable[..., Any], jitted: Callable[..., Any], table: caches.Memo):
        self.key = key
        self.fn = fn  # the op's function with its params bound (not jitted)
        self.jitted = jitted
        self.table = table  # the table of op executables, where this stands for `jitted`
        self.host_ok = True  # False once a jaxpr of this op needed a primitive outside _RULES

    def __call__(self, *vals: Any) -> Any:
        if not self.host_ok:
            return self.jitted(*vals)
        for v in vals:
            if type(v) is not _ARRAY and type(v) is not np.ndarray:  # tracers (inside a trace), None: the executable
                return self.jitted(*vals)
        # (a numpy input: a Python list converted, a string op's ids; as the executable, it is not weakly typed)
        seen = (self.key, *[v.aval if type(v) is _ARRAY else (v.shape, v.dtype) for v in vals])
        runs = _SEEN.get(seen, 0)
        if runs >= (HOST_REPEATS if self.key[0].host is not None else 1):  # it repeats: compile it
            return self.jitted(*vals)
        _SEEN[seen] = runs + 1
        out = self._on_host(vals)
        return self.jitted(*vals) if out is None else out

    def _on_host(self, vals: tuple) -> Any:
        devices = set()
        committed = False
        for v in vals:
            if type(v) is _ARRAY:
                devices |= v.devices()
                committed = committed or v.committed
        if not devices and jax.default_backend() == "cpu":  # numpy inputs only: the executable runs on the default
            devices = {jax.devices()[0]}
        if len(devices) != 1 or next(iter(devices)).platform != "cpu":
            return None
        if self.key[0].host is not None:
            host = self._direct(vals)
            if host is None:
                return None  # numpy refused these inputs: the executable raises TF's error
        else:
            host = host_values(self.fn, *vals)
        if host is None:  # arithmetic: the executable, with no wrapper in the way from now on
            self.host_ok = False
            with self.table.lock:
                if self.table.get(self.key) is self:
                    self.table[self.key] = self.jitted
            return None
        outs, treedef = jax.tree_util.tree_flatten(host)
        device = next(iter(devices)) if committed else None
        outs = [jax.device_put(o if o.flags.c_contiguous else np.array(o, order="C"), device) for o in outs]
        if any(isinstance(o, jax.core.Tracer) for o in outs):
            return None  # inside an outer JAX trace (jax.eval_shape of a Keras call): the op is part of its program
        if checking.FLAG.on:
            expected = jax.tree_util.tree_leaves(self.jitted(*vals))
            checking.require("one-off op on the host (one_off.py)", checking.same_bits(outs, expected),
                             f"{self.key[0].op_type}: host values differ from the executable's")
        return jax.tree_util.tree_unflatten(treedef, outs)

    def _direct(self, vals: tuple) -> Any:
        """The op's own numpy implementation (OpDef.host), without a trace; None where numpy refuses."""
        opdef, params = self.key
        try:
            return np.asarray(opdef.host(*[np.asarray(v) for v in vals], **dict(params)))
        except (ValueError, TypeError, IndexError):
            return None


def host_values(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` computed by numpy, with no XLA compile, if every equation of its jaxpr only moves elements
    (`_RULES`: the values are the executable's, bit for bit); else None. Arrays come back as numpy arrays. Only
    for arrays on one CPU device (there the host is the device): a sharded array keeps its executable."""
    for a in args:
        if isinstance(a, jax.core.Tracer) or (isinstance(a, jax.Array) and (
                len(a.devices()) != 1 or next(iter(a.devices())).platform != "cpu")):
            return None
    with jax_config.eager_constant_folding(False):  # the whole jaxpr, even where a caller folds constants
        closed, shapes = jax.make_jaxpr(fn, return_shape=True)(*args)
    # Dead code first: an equation whose result nobody uses (optax's init computes one) computes nothing.
    jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars), instantiate=True)
    if not _movable(jaxpr):
        return None
    outs = _eval(jaxpr, closed.consts, [np.asarray(a) for a, u in zip(args, used) if u])
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shapes), outs)


def _pad(x: np.ndarray, value: np.ndarray, padding_config: Any) -> np.ndarray:
    return np.pad(x, [(lo, hi) for lo, hi, _ in padding_config], constant_values=value)


def _broadcast(x: np.ndarray, shape: Any, broadcast_dimensions: Any, **_: Any) -> np.ndarray:
    expanded = np.reshape(x, [x.shape[broadcast_dimensions.index(d)] if d in broadcast_dimensions else 1
                              for d in range(len(shape))])
    return np.broadcast_to(expanded, shape)


def _exact_cast(x: np.ndarray, new_dtype: Any, **_: Any) -> np.ndarray:
    return x.astype(new_dtype)


# Primitives that only move, copy or select elements, and numpy's exact equivalent of each.
_RULES: dict[str, Callable[..., np.ndarray]] = {
    "concatenate": lambda *xs, dimension: np.concatenate(xs, dimension),
    "reshape": lambda x, new_sizes, **_: np.reshape(x, new_sizes),
    "squeeze": lambda x, dimensions: np.squeeze(x, tuple(dimensions)),
    "expand_dims": lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
    "broadcast_in_dim": _broadcast,
    "transpose": lambda x, permutation: np.transpose(x, permutation),
    "slice": lambda x, start_indices, limit_indices, strides: x[tuple(
        slice(s, e, st) for s, e, st in zip(start_indices, limit_indices, strides or (1,) * x.ndim))],
    "rev": lambda x, dimensions: np.flip(x, tuple(dimensions)),
    "tile": lambda x, reps: np.tile(x, reps),
    "pad": _pad,
    "select_n": lambda which, *cases: np.where(which, cases[1], cases[0]),
    "copy": lambda x: np.array(x),
    "copy_p": lambda x: np.array(x),
    "convert_element_type": _exact_cast,
}


def _movable(jaxpr: Any) -> bool:
    """Whether every equation of `jaxpr` (nested jits included) is one numpy does exactly."""
    for eqn in jaxpr.eqns:
        name, params = eqn.primitive.name, eqn.params
        if name in ("jit", "pjit"):
            if not _movable(params["jaxpr"].jaxpr):
                return False
        elif name not in _RULES:
            return False
        elif name == "reshape" and params.get("dimensions") is not None:
            return False
        elif name == "pad" and any(lo < 0 or hi < 0 or interior for lo, hi, interior in params["padding_config"]):
            return False
        elif name == "select_n" and (len(eqn.invars) != 3 or eqn.invars[0].aval.dtype != np.bool_):
            return False
        elif name == "convert_element_type" and not _exact(eqn.invars[0].aval.dtype, params["new_dtype"]):
            return False
    return True


def _exact(source: Any, target: Any) -> bool:
    """Whether numpy's cast from `source` to `target` is exact (a same-dtype cast, a widening one, or an
    integer to a float: round to nearest, as XLA)."""
    source, target = np.dtype(source), np.dtype(target)
    try:
        return source == target or np.can_cast(source, target, "safe") or (
            source.kind in "biu" and target.kind == "f" and target.itemsize >= 4)
    except TypeError:  # a dtype numpy cannot compare casts of (ml_dtypes' float8 kinds): not exact, say
        return False


def _eval(jaxpr: Any, consts: list, args: list) -> list:
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return np.asarray(v.val, dtype=v.aval.dtype) if isinstance(v, Literal) else env[v]

    for var, value in zip(jaxpr.constvars, consts):
        env[var] = np.asarray(value)
    for var, value in zip(jaxpr.invars, args):
        env[var] = value
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        if eqn.primitive.name in ("jit", "pjit"):
            inner = eqn.params["jaxpr"]
            outs = _eval(inner.jaxpr, inner.consts, ins)
        else:
            params = {k: v for k, v in eqn.params.items() if k != "sharding"}
            outs = [_RULES[eqn.primitive.name](*ins, **params)]
        for var, value in zip(eqn.outvars, outs):
            env[var] = np.asarray(value, dtype=var.aval.dtype)
    return [read(v) for v in jaxpr.outvars]
