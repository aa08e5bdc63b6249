"""Timing in one process: warm-up, repetitions, medians, and ratios between implementations of a workload."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable


def time_interleaved(impls: dict[str, tuple[Callable[[], object], Callable[[object], object]]], budget_s: float,
                     repeats: int, warmup: int = 3) -> dict[str, float]:
    """Per implementation, the median over `repeats` of the mean time per call, in us; each sample runs as
    many calls as fit in about `budget_s` seconds (measured on a first call), so fast and slow implementations
    (a jitted JAX step, TensorFlow's eager jacobian) are both timed with useful precision.

    The implementations take turns within each repetition, so a change in machine load affects them alike and
    their ratios stay meaningful on a shared machine. `block` waits for the last result (JAX dispatches
    asynchronously), so device time is included. The garbage collector is paused while timing.
    """
    calls: dict[str, int] = {}
    for label, (fn, block) in impls.items():
        for _ in range(warmup):
            block(fn())
        start = time.perf_counter()
        block(fn())
        calls[label] = max(1, min(1000, int(budget_s / max(time.perf_counter() - start, 1e-7))))
    samples: dict[str, list[float]] = {label: [] for label in impls}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for label, (fn, block) in impls.items():
                # TensorFlow's worker threads spin for a while after its ops; on 2 cores they would steal time
                # from whichever implementation runs next. A short pause lets them park.
                time.sleep(0.02)
                start = time.perf_counter()
                for _ in range(calls[label]):
                    out = fn()
                block(out)
                samples[label].append((time.perf_counter() - start) / calls[label] * 1e6)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {label: statistics.median(values) for label, values in samples.items()}


def block_jax(x: object) -> object:
    import jax

    return jax.block_until_ready(getattr(x, "value", x))


def block_numpy(x: object) -> object:
    return x.numpy() if hasattr(x, "numpy") else x
