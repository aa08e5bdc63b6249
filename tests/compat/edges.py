"""The edge-value sweep of the op table: every differentiable row at NaN, +-Inf, 0, -0 and a denormal.

Each row's inputs come from tests/ops/op_specs.py (the same inputs as test_ops_vs_tf.py); a *variant* pokes an
edge value into the first element of some of its real float arguments and leaves the rest as sampled, so the
row still sees a valid input everywhere else (a matrix stays well conditioned, a segment id stays in range).
The variants of a row: each edge in every float argument at once; and for rows with several float arguments,
each edge in one argument alone and every ordered pair of distinct edges in the first two.

For each variant, the row runs in tapejax and in TF through their public APIs, and the tape gradient of
`sum(out * w)` is taken twice: with random weights `w`, and with `w` zero at the first element of every output
(the upstream cotangent where the edge is: `tf.where(x > 0, tf.sqrt(x), 0.)` is that case). A difference is
a value, a gradient, or an exception raised by one side only.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import tapejax

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
import op_specs as S  # noqa: E402

# name -> value: the denormal is a float32 denormal (a float64 argument gets a float64 one: 1e-40 is normal there)
EDGES: dict[str, Any] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "0": 0.0, "-0": -0.0, "denormal": "denormal"}
_DENORMAL = {np.dtype(np.float32): np.float32(1e-40), np.dtype(np.float64): 1e-310}


def _edge_value(name: str, dtype: np.dtype) -> Any:
    value = EDGES[name]
    return _DENORMAL.get(np.dtype(dtype), np.float32(1e-40)) if isinstance(value, str) else value


# (row, edge) -> why the variants with that edge are not run
NOT_RUN: dict[tuple[str, str], str] = {
    (row, edge): "TF 2.21's Eigen BDCSVD never returns on an infinite input (the process hangs)"
    for row in ("linalg.svd", "linalg.eigh", "linalg.eigvalsh", "linalg.pinv", "linalg.lstsq")
    for edge in ("inf", "-inf")
}


def real_float_positions(args: tuple[np.ndarray, ...]) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f" and np.asarray(a).size)


def poke(args: tuple[np.ndarray, ...], edges: dict[int, str]) -> tuple[np.ndarray, ...]:
    """`args` with edge `edges[i]` in the first element of argument i."""
    out = list(args)
    for i, name in edges.items():
        a = np.array(args[i], copy=True)
        a.reshape(-1)[0] = _edge_value(name, a.dtype)
        out[i] = a
    return tuple(out)


def variants(name: str, args: tuple[np.ndarray, ...]) -> Iterator[tuple[str, dict[int, str]]]:
    """(variant id, {argument position: edge name}) for one row's sampled arguments (NOT_RUN left out)."""
    for vid, edges in _variants(args):
        if not any((name, e) in NOT_RUN for e in edges.values()):
            yield vid, edges


def _variants(args: tuple[np.ndarray, ...]) -> Iterator[tuple[str, dict[int, str]]]:
    pos = real_float_positions(args)
    if not pos:
        return
    for e in EDGES:
        yield e, {i: e for i in pos}
    if len(pos) < 2:
        return
    for i in pos:
        for e in EDGES:
            yield f"{e}@{i}", {i: e}
    for e1, e2 in itertools.permutations(EDGES, 2):
        yield f"{e1},{e2}", {pos[0]: e1, pos[1]: e2}


def weights(outputs: tuple[np.ndarray, ...], case_id: str, zero_first: bool) -> tuple[np.ndarray, ...]:
    """Random weights per output (as op_specs.weights_for), with a zero first element if `zero_first`."""
    ws = S.weights_for(outputs, case_id)
    if zero_first:
        ws = tuple(np.array(w, copy=True) for w in ws)
        for w in ws:
            if w.size:
                w.reshape(-1)[0] = 0
    return ws


def run(m: Any, call: Callable[[Any, list[Any]], Any], args: tuple[np.ndarray, ...], case_id: str) -> dict:
    """The row's value and its tape gradients (random and zero-first weights) in module `m`: name -> numpy
    arrays, or the exception raised."""
    result: dict[str, Any] = {}
    try:
        result["value"] = tuple(_numpy(o) for o in S.as_outputs(call(m, [m.constant(a) for a in args])))
    except Exception as e:  # noqa: BLE001 (which side raises is what is compared)
        result["value"] = e
        return result
    pos = S.grad_positions(args)
    if not pos:
        return result
    for zero in (False, True):
        key = "gradient[zero upstream]" if zero else "gradient"
        try:
            sources = [m.constant(args[i]) for i in pos]
            with m.GradientTape() as tape:
                for s in sources:
                    tape.watch(s)
                it = iter(sources)
                tensors = [next(it) if S.is_float(a) else m.constant(a) for a in args]
                outputs = S.as_outputs(call(m, tensors))
                ws = weights(tuple(np.asarray(o) for o in result["value"]), case_id, zero)
                target = S.loss(m, outputs, ws)
            result[key] = tuple(_numpy(g) for g in tape.gradient(target, sources))
        except Exception as e:  # noqa: BLE001
            result[key] = e
    return result


def _numpy(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, tapejax.IndexedSlices):  # the gradient of a gather, made dense by its own library
        x = tapejax.convert_to_tensor(x)
    elif type(x).__name__ == "IndexedSlices":
        import tensorflow as tf_real  # noqa: PLC0415 (TF's IndexedSlices: TF is installed)

        x = tf_real.convert_to_tensor(x)
    return np.asarray(x.numpy())


def difference(got: dict, want: dict, rtol: float, atol: float) -> str | None:
    """What differs between tapejax's results `got` and TF's `want`, or None. NaN matches NaN, an infinity its
    own sign; the sign of a zero is not compared (TF's kernels and XLA's differ there on no documented rule)."""
    for key, w in want.items():
        g = got.get(key)
        if isinstance(w, Exception) or isinstance(g, Exception):
            if isinstance(w, Exception) != isinstance(g, Exception):
                return f"{key}: TF {_show(w)}, tapejax {_show(g)}"
            continue
        if len(g) != len(w):
            return f"{key}: {len(g)} results, TF {len(w)}"
        for k, (a, b) in enumerate(zip(g, w)):
            if (a is None) != (b is None):
                return f"{key}[{k}]: TF {b!r}, tapejax {a!r}"
            if a is None:
                continue
            if a.shape != b.shape or a.dtype != b.dtype:
                return f"{key}[{k}]: {a.dtype}{a.shape}, TF {b.dtype}{b.shape}"
            if b.dtype.kind in "fc":
                tol = (1e-12, 1e-12) if b.dtype in (np.float64, np.complex128) else (1e-5, 1e-6)
                ok = np.isclose(a, b, rtol=max(rtol, tol[0]), atol=max(atol, tol[1]), equal_nan=True)
                if not ok.all():
                    i = np.argwhere(~ok)[0]
                    return f"{key}[{k}] at {tuple(i)}: tapejax {a[tuple(i)]}, TF {b[tuple(i)]}"
            elif not np.array_equal(a, b):
                return f"{key}[{k}]: tapejax {a}, TF {b}"
    return None


def _show(x: Any) -> str:
    return f"raises {type(x).__name__}" if isinstance(x, Exception) else "gives a value"

