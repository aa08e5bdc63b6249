"""Timing in one process: warm-up, repetitions, medians, and ratios between implementations of a workload."""

from __future__ import annotations

import dataclasses
import gc
import statistics
import time
from collections.abc import Callable


@dataclasses.dataclass
class Measurement:
    workload: str
    implementation: str
    median_us: float
    runs: int


def time_per_call(fn: Callable[[], object], block: Callable[[object], object], calls: int, repeats: int,
                  warmup: int = 3) -> float:
    """Median over `repeats` of the mean time per call of `fn` over `calls` calls, in microseconds.

    `block` waits for the last result (JAX dispatches asynchronously), so device time is included.
    """
    for _ in range(warmup):
        block(fn())
    samples = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                out = fn()
            block(out)
            samples.append((time.perf_counter() - start) / calls * 1e6)
    finally:
        if gc_was_enabled:
            gc.enable()
    return statistics.median(samples)


def block_jax(x: object) -> object:
    import jax

    return jax.block_until_ready(getattr(x, "value", x))


def block_numpy(x: object) -> object:
    return x.numpy() if hasattr(x, "numpy") else x
