"""The options XLA compiles tapejax's large programs with: XLA's defaults, except that on a CPU a convolution is
XLA's own kernel rather than a call into the YNNPACK library.

JAX 0.10's XLA:CPU hands dots, convolutions and reductions to YNNPACK by default (the flag
`xla_cpu_experimental_ynn_fusion_type`). For convolutions that is a loss on the 2-core CI machine (an AVX-512 Xeon),
largest for the kernel's gradient, which a training step always computes. `jax.jit` of one convolution, its input
gradient and its kernel gradient, milliseconds a run, YNNPACK against XLA's own kernel:

| input, kernel | forward | input gradient | kernel gradient |
|---|---:|---:|---:|
| 64x30x30x32, 3x3 to 64 channels | 43.6 / 8.6 | 12.5 / 10.2 | 89.6 / 15.2 |
| 16x56x56x64, 3x3 to 64 | 28.8 / 17.5 | 28.9 / 16.2 | 113.6 / 27.3 |
| 16x56x56x64, 1x1 to 128 | 29.2 / 11.1 | 12.9 / 4.6 | 48.3 / 11.7 |
| 256x14x14x64, 3x3 to 64 | 30.5 / 15.8 | 29.0 / 15.6 | 110.6 / 27.1 |
| 1x224x224x3, 3x3 stride 2 to 64 | 0.6 / 2.4 | 1.4 / 1.5 | 2.3 / 4.3 |

YNNPACK wins only some convolutions of one to three input channels, which cost little either way; over twelve
shapes it took 2.4 times as long. So tapejax compiles with that flag's default list less convolutions: the
simple_audio tutorial's CNN training step (as one `jax.jit`) 196 -> 95 ms, TF's 31 ms; the program 6.7 -> 5.5 s
end to end (tests/programs/).

They apply to the programs tiers.py compiles (tf.function traces of `tiers.MIN_EQUATIONS` or more: training and
evaluation steps, Keras's included), whose XLA compiles are explicit. Not to eager ops and eager gradients: their
executables are `jax.jit` functions that also run nested inside traces, where JAX refuses compiler options; and a
small tf.function keeps the eager ops' bits (tiers.py). The options are decided once, for the default backend: only
on a CPU, only when the user's `XLA_FLAGS` do not choose YNNPACK's list themselves, and only when this XLA takes
the option (a trial compile of an empty program, about 15 ms): a JAX without it compiles with its defaults. A
user's own `jax.jit` is not affected. Values agree with YNNPACK's within float rounding, as any two kernels' do.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import jax

_OPTION = "xla_cpu_experimental_ynn_fusion_type"
# XLA's default list (dots and convolutions each on their own, and reductions) less convolutions.
_CPU = {_OPTION: "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_REDUCE"}


@functools.cache
def cpu() -> bool:
    """Whether JAX's default backend is a CPU (XLA:CPU's options apply; decided once, as the backend is)."""
    return jax.default_backend() == "cpu"


@functools.cache
def options() -> dict[str, str]:
    """The compiler options of tiers.py's programs (see the module docstring); {} for XLA's defaults."""
    if _OPTION in os.environ.get("XLA_FLAGS", "") or not cpu():
        return {}
    try:
        jax.jit(lambda: 0, compiler_options=_CPU).lower().compile()
    except Exception:  # noqa: BLE001 (an XLA without the option, or without one of its values: its defaults)
        return {}
    return dict(_CPU)


def compile(lowered: Any, extra: dict[str, Any] | None = None) -> Any:
    """`lowered.compile()` with `options()` and `extra` (which win)."""
    merged = {**options(), **(extra or {})}
    return lowered.compile(merged or None)
