"""The checking mode: every fast path recomputed on the plain path, and compared (DESIGN invariant 11).

tapejax's speed layers are caches of the plain op-by-op computation: the structure memo (structure.py), the
compiled executables of repeated structures (executables.Lowered.run), the values a compiled gradient fills into
deferred tensors (deferred.py), the recorded form of a gradient call (problem.py) and the small caches of
shapes and Python scalars. With `TAPEJAX_CHECK=1` in the environment, or `tapejax.config.experimental_check(True)`,
each of them also computes its answer the plain way and raises `CheckError`, naming the cache, on any difference
beyond float tolerance. It is slow (everything is computed twice) and meant for test suites: CI runs the unit,
property and guide tests once in this mode.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


class CheckError(AssertionError):
    """A cached, compiled or deferred answer differs from the plain path's (checking mode)."""


class _Flag:
    on = os.environ.get("TAPEJAX_CHECK", "").strip().lower() not in ("", "0", "false", "no")


FLAG = _Flag()


def enabled() -> bool:
    return FLAG.on


def experimental_check(enable: bool = True) -> None:
    """Turns the checking mode on or off for the process (`TAPEJAX_CHECK=1` turns it on at import).

    >>> import tapejax as tf
    >>> tf.config.experimental_check(True)
    >>> tf.config.experimental_check(False)
    """
    FLAG.on = bool(enable)


# Tolerances by precision: a fused executable may round differently from op-by-op dispatch in the last bits.
_RTOL = {2: 2e-2, 4: 2e-4, 8: 1e-9}


def _close(fast: Any, plain: Any) -> bool:
    a, b = np.asarray(fast), np.asarray(plain)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in "fcV":
        return bool(np.array_equal(a, b))
    if a.dtype.kind == "V":  # bfloat16
        a, b = a.astype(np.float32), b.astype(np.float32)
        rtol = _RTOL[2]
    else:
        rtol = _RTOL.get(a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1), 1e-5)
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol * 1e-2, equal_nan=True))


def compare(cache: str, fast: Sequence[Any], plain: Sequence[Any], what: str = "") -> None:
    """Raises CheckError unless the arrays `fast` (from `cache`) equal `plain` within float tolerance."""
    fast, plain = list(fast), list(plain)
    if len(fast) != len(plain):
        _fail(cache, what, f"{len(fast)} values against the plain path's {len(plain)}")
    for i, (a, b) in enumerate(zip(fast, plain)):
        if (a is None) != (b is None):
            _fail(cache, what, f"value {i} is {a!r} against the plain path's {b!r}")
        if a is not None and not _close(a, b):
            _fail(cache, what, f"value {i} differs:\n  cached: {np.asarray(a)!r}\n  plain:  {np.asarray(b)!r}")


def same_bits(got: Sequence[Any], expected: Sequence[Any]) -> bool:
    """Whether two lists of arrays hold the same arrays bit for bit: dtype, shape and bytes (a NaN equals itself,
    -0.0 differs from 0.0), for values that are moved, never computed, so must be exact."""
    if len(got) != len(expected):
        return False
    pairs = [(np.asarray(a), np.asarray(b)) for a, b in zip(got, expected)]
    return all(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes() for a, b in pairs)


def require(cache: str, same: bool | Callable[[], bool], what: str) -> None:
    """Raises CheckError naming `cache` unless `same` (a structural comparison) holds."""
    if not (same() if callable(same) else same):
        _fail(cache, what, "the cached structure differs from the one computed afresh")


def _fail(cache: str, what: str, detail: str) -> None:
    raise CheckError(f"tapejax checking mode: the {cache} gave a different answer from the plain path"
                     f"{' for ' + what if what else ''}: {detail}. This is a bug in tapejax: please report it "
                     "with the code that ran before.")
