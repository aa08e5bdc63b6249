"""Tiered compilation: a tf.function trace first runs an executable that XLA compiles quickly, and XLA's optimised
one from a fixed call on, compiled in the background meanwhile.

On a CPU, XLA's fusion emitters (its default) spend 35-50% more time compiling a training step than its older loop
emitters (a U-Net step: 4.9 s against 3.2 s to compile, 45 against 40 ms a run), whose kernels run about as fast
for most programs and a few times slower for some (transposes, layer norms; a fitted Keras CNN about 6%:
docs/design.md, "Tiered compilation"). `QUICK` is the loop emitters at LLVM's -O1, another 15% off the compile
for no measurable cost in the step (dots and convolutions are library calls either way). Most steps of a short
program are called a handful of times (the real programs of tests/programs/: 5 to 16), a training loop's thousands
of times: so each trace's first executable is compiled quickly; on its `OPTIMISE_AT`-th call the optimised compile
of the same lowered program is queued on the background worker (background.py), and from its `SWITCH_AT`-th call on
the trace runs the optimised executable (waiting for it then if need be; compiled on the caller's thread with
background compilation off).

Counts, not the clock: the two executables may round differently in the last bits (a transcendental's kernel), and a
switch that followed the clock would make a program's values differ from run to run. Both are compiles of one
lowered program, so their values agree within float rounding; the checking mode compares them at the switch.
Only on a CPU backend (the option is XLA:CPU's) and for programs of `MIN_EQUATIONS` or more; elsewhere a trace
compiles once with XLA's defaults, and with `TAPEJAX_TIERED_COMPILE=0` once with the optimised tier's options. Both
tiers compile with `xla_options` (XLA's own convolution kernels, not YNNPACK's: a CNN's step twice as fast).
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading
from typing import Any

import jax

from . import background, checking, xla_options

QUICK = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 1}
# Programs of fewer equations compile once with XLA's defaults: they compile in well under a second anyway, and so
# a tf.function of a few ops keeps the bits of the same ops run eagerly (each op's executable is XLA's default
# code; the quick emitters may vectorise a reduction differently, a last-bit difference).
MIN_EQUATIONS = 100
OPTIMISE_AT = 100  # the call that queues the optimised compile
SWITCH_AT = 200  # the first call that runs the optimised executable


class _Flag:
    on = os.environ.get("TAPEJAX_TIERED_COMPILE", "").strip().lower() not in ("0", "false", "no", "off")


FLAG = _Flag()
_LOCK = threading.Lock()  # the two rare transitions of any Tiered (a call's count needs none)


def compile(lowered: Any, equations: int) -> Any:
    """`lowered`'s executable: a `Tiered` one for a program of `equations` (its jaxpr's, nested ones included) on a
    CPU (a callable like JAX's `Compiled`), else JAX's own. A program of `MIN_EQUATIONS` or more on a CPU compiles
    with `xla_options` (both tiers); a smaller one with XLA's defaults, as each eager op does."""
    if not (equations >= MIN_EQUATIONS and xla_options.cpu()):
        return lowered.compile()
    if not FLAG.on:
        return xla_options.compile(lowered)
    try:
        quick = xla_options.compile(lowered, QUICK)
    except Exception as e:  # noqa: BLE001 (an XLA without these emitters: its defaults, for good)
        if "No such compile option" in str(e):
            FLAG.on = False
        return xla_options.compile(lowered)  # a program the quick emitters refuse; a real error is raised by this one
    return Tiered(lowered, quick)


class Tiered:
    """A quickly compiled executable that makes way for the optimised compile of the same lowered program."""

    __slots__ = ("_lowered", "_executable", "_calls", "_future")

    def __init__(self, lowered: Any, quick: Any):
        self._lowered = lowered  # until the switch
        self._executable = quick
        self._calls = 0
        self._future: concurrent.futures.Future | None = None

    @property
    def optimised(self) -> bool:
        return self._lowered is None

    def __call__(self, *args: Any) -> Any:
        if self._lowered is not None:
            self._calls += 1
            if self._calls >= OPTIMISE_AT:
                self._advance(args)
        return self._executable(*args)

    def _advance(self, args: tuple) -> None:
        with _LOCK:
            lowered = self._lowered
            if lowered is None:  # another thread switched
                return
            if self._calls == OPTIMISE_AT and background.enabled():
                # None with a full queue: compiled at the switch
                self._future = background.submit(functools.partial(xla_options.compile, lowered))
            if self._calls < SWITCH_AT:
                return
            optimised = self._optimised(lowered)
            self._lowered = self._future = None
            if optimised is None:  # its compile failed: the quick executable from now on
                return
            if checking.FLAG.on:
                checking.compare("optimised executable of a tf.function trace (tiers.py)",
                                 jax.tree_util.tree_leaves(optimised(*args)),
                                 jax.tree_util.tree_leaves(self._executable(*args)), "the same call")
            self._executable = optimised

    def _optimised(self, lowered: Any) -> Any:
        """The optimised executable (waiting for the worker's compile, or compiling here), or None if it failed."""
        try:
            return xla_options.compile(lowered) if self._future is None else self._future.result()
        except Exception:  # noqa: BLE001 (a cancelled or failed compile: the optimised one is only a speed-up)
            return None
