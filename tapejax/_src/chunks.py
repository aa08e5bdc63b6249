"""A jacobian's rows in chunks: its memory is bounded by the result and one chunk's intermediates (DESIGN 12).

A jacobian maps a VJP (or a JVP) over a basis. Vectorised at once, every intermediate of the derivative exists
once per basis row; the largest may be as large as a captured constant (the VJP of `A * x` has an `A`-sized term
per row). So the rows are computed `chunk` at a time: TF's `parallel_iterations` (how many rows its pfor or
while_loop computes at once), or, when none is given and the vectorised form would exceed `BUDGET`, the most rows
whose working set fits in it. An out-of-memory error that still happens is TF's `ResourceExhaustedError`, with the
advice to pass a smaller `parallel_iterations`, never a raw JAX error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import caches, deferred, errors, transforms
from .problem import Problem


class Budget:
    """The memory one vectorised jacobian may use, in bytes, before its rows are chunked (a knob for tests and
    for users of very large or very small devices, not API)."""

    bytes = 1 << 30


BUDGET = Budget()


# abstract value -> its size in bytes: an aval is interned by JAX and an attribute, where shape and dtype are
# properties (a jacobian's estimate reads every input of its slice, on every call)
_BYTES = caches.Memo("bytes of an abstract value (chunks.py)", 4096)


def _nbytes(value: Any) -> int:
    if value is None:
        return 0
    a = deferred.aval(value)
    n = _BYTES.get(a)
    if n is None:
        n = _BYTES[a] = math.prod(value.shape) * np.dtype(value.dtype).itemsize
    return n


def row_bytes(entries: Sequence[Any], target: Any, leaves: Sequence[Any]) -> int:  # Any: array-likes
    """An upper estimate of one basis row's working set: the largest step's inputs (captured constants included:
    a VJP may make a term of their size per row) or the target, plus the row of the result (one per source)."""
    largest = max((sum(map(_nbytes, e.in_vals)) for e in entries), default=0)
    return max(largest, _nbytes(target)) + sum(map(_nbytes, leaves))


def chunk_size(rows: int, per_row: int, parallel_iterations: int | None) -> int | None:
    """How many rows to compute at once: None for all of them (vectorised), else the chunk."""
    if parallel_iterations is not None:
        chunk = int(parallel_iterations)
    elif rows * per_row <= BUDGET.bytes:
        return None
    else:
        chunk = max(1, BUDGET.bytes // max(per_row, 1))
    return None if chunk >= rows else chunk


def sweep_rows(problem: Problem, seeds: Callable[[int, int], list[Any]], rows: int, chunk: int | None) -> tuple:
    """The eager sweep (problem.sweep, batched) over the basis rows `seeds(start, count)`, `chunk` at a time (the
    last chunk padded with zero rows, so that every chunk has one shape and the per-op VJPs compile once)."""
    if chunk is None:
        return problem.sweep(seeds(0, rows), batched=True)
    parts, unreached = [], None
    for start in range(0, rows, chunk):
        problem.unreached = []
        parts.append(problem.sweep(seeds(start, chunk), batched=True))
        # a source is cut off by a custom gradient's None only if it is in every chunk
        unreached = set(problem.unreached) if unreached is None else unreached & set(problem.unreached)
    problem.unreached = sorted(unreached)
    return tuple(jnp.concatenate([p[k] for p in parts])[:rows] for k in range(len(parts[0])))


def jacobian_sweep(problem: Problem, target: Any, chunk: int | None) -> tuple:  # target: array or Pending
    """`GradientTape.jacobian` by the eager sweep: one row per element of the target."""
    out = target
    rows = sweep_rows(problem, lambda start, n: [transforms.basis(out.shape, out.dtype, start, n)], out.size, chunk)
    return tuple(r.reshape(tuple(out.shape) + r.shape[1:]) for r in rows)


def batch_jacobian_sweep(problem: Problem, target: Any, chunk: int | None) -> tuple:  # as jacobian_sweep
    """`GradientTape.batch_jacobian` by the eager sweep: one row per non-batch element of the target."""
    out = target
    m = math.prod(out.shape[1:])
    (rows,) = sweep_rows(problem, lambda start, n: [transforms.batch_basis(out.shape, out.dtype, start, n)], m,
                         chunk)
    return (transforms.batch_rows(rows, tuple(out.shape)),)


def _out_of_memory(e: Exception) -> bool:
    text = str(e)
    return isinstance(e, jax.errors.JaxRuntimeError) and (
        "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower())


# Above this estimate a jacobian waits for its result, to see an allocation failure; below, it keeps JAX's
# asynchronous dispatch (a small jacobian in a loop overlaps Python with the device).
_WAIT_BYTES = 1 << 26


def guard(method: str, rows: int, per_row: int, chunk: int | None, run: Callable[[], tuple]) -> tuple:
    """`run()`, with an out-of-memory error raised as TF's ResourceExhaustedError and the advice to chunk. JAX
    reports an allocation failure when a result is read, so a large jacobian's results are computed here."""
    try:
        outs = run()
        if rows * per_row > _WAIT_BYTES:
            values = [o._value for o in outs]
            if not any(isinstance(v, jax.core.Tracer) for v in values):  # in tf.function: the step's own call
                jax.block_until_ready(values)
        return outs
    except (jax.errors.JaxRuntimeError, errors.ResourceExhaustedError) as e:  # raw, or already TF's (from_jax)
        if not isinstance(e, errors.ResourceExhaustedError) and not _out_of_memory(e):
            raise
        at_once = f"all {rows} rows at once" if chunk is None else f"{chunk} of its {rows} rows at a time"
        if (chunk or rows) > 1:
            advice = (f"Pass a smaller `parallel_iterations` to compute fewer rows at once, e.g. "
                      f"tape.{method}(..., parallel_iterations={max(1, (chunk or rows) // 4)}).")
        else:
            advice = "A single row does not fit: the computation is too large for this device's memory."
        raise errors.ResourceExhaustedError(None, None, (
            f"OOM: GradientTape.{method} ran out of memory computing {at_once} (at most about "
            f"{per_row / 2**20:,.1f} MiB per row). {advice} ({e})")) from e
