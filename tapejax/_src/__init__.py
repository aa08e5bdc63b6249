"""tapejax internals. See docs/design.md for a walkthrough."""

from __future__ import annotations

import os
import sys
import warnings

# Whether JAX was in use before tapejax: read before tapejax imports it.
_JAX_ALREADY_IMPORTED = "jax" in sys.modules

from tapejax._src import host_memory  # noqa: E402

host_memory.keep_freed_memory()  # before JAX's CPU client starts its threads

import jax  # noqa: E402

from tapejax._src.errors import X64_MESSAGE, X64ModeWarning  # noqa: E402


def _enable_x64() -> None:
    """Turns on JAX's x64 mode, process-wide, warning when that changes a JAX the user already chose or used.

    TF's float64 and int64 must compute in 64 bits. JAX's narrower option, `jax_explicit_x64_dtypes="allow"`
    with x64 off (JAX >= 0.8), keeps explicitly 64-bit arrays but its own internals then mix in 32-bit
    constants: on JAX 0.10.2 `jnp.argmax` of a float64 array, `jnp.max` of an int64 one and
    `jax.random.normal(..., float64)` raise, and `jnp.nan_to_num` (inf -> float32 max -> inf),
    `jax.random.randint(..., int64)` past 2**31, `jax.random.poisson(..., int64)` and `jax.scipy.special.spence`
    (float32 precision) give wrong answers silently. A `jax.enable_x64(True)` scope around tapejax's own work does
    not reach into a `jax.jit` traced with x64 off (a `to_jax` function under the user's jit). Both facts are
    checked by tests/unit/test_x64_mode.py, so the choice is revisited when JAX changes.
    """
    if jax.config.jax_enable_x64:
        return  # already the user's choice (or a second import): nothing changes
    user_chose_or_used_jax = _JAX_ALREADY_IMPORTED or "JAX_ENABLE_X64" in os.environ
    jax.config.update("jax_enable_x64", True)
    if user_chose_or_used_jax:
        warnings.warn(X64_MESSAGE, X64ModeWarning, stacklevel=_first_frame_outside_tapejax())


def _first_frame_outside_tapejax() -> int:
    """The `stacklevel` of the user's `import tapejax` line, for a warning raised by the caller of this function.

    `warnings.warn` does not count the import machinery's frames, so neither does this."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(2), 2
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(package) and not ("importlib" in name and "_bootstrap" in name):
            return level
        if name.startswith(package):
            level += 1
        frame = frame.f_back
    return level


_enable_x64()
