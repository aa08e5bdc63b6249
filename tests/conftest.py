"""Shared test settings: hypothesis profiles (dev is fast; ci runs more examples, still inside CI's budget)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Background compilation (tapejax/_src/background.py) is off for the suite: its tests count compiles run by run
# and expect a repeated structure's second run to compile. tests/unit/test_background_compile.py and
# tests/properties/test_background_compile_properties.py turn it on, and compare it with this.
from tapejax._src import background, executables  # noqa: E402

background.FLAG.on = False

# For the same reason a structure is not compiled on its first run for its new VJPs (executables.Policy.compiles_less):
# whether it is depends on which ops earlier tests swept, so counts would depend on test order.
# tests/unit/test_compile_policy.py turns it on; tests/programs run with it, in processes of their own.
executables.POLICY.min_new_ops = 1 << 62

# JAX's devices are fixed when its backend starts, which `import tapejax` no longer does (jax.distributed must be
# able to come first). Start it here, on the default devices: collecting doctests imports tests/distribute's
# scripts, which set XLA_FLAGS (8 virtual CPUs) for the processes they run in, and the suite's own process must
# not take their device count.
import jax  # noqa: E402

jax.devices()

# Most of the suite's time is XLA compiling small programs, and each worker process compiles the same ones again, as
# does CI's second (checking-mode) run: JAX's persistent compilation cache
# (tapejax.config.experimental_compilation_cache) shares them on disk, measured at 57% less time for a warm rerun of
# test_custom_gradient.py + test_jacobians.py. JAX keys each executable on its program, compile options and JAX/XLA
# versions, so a cached executable is the one a compile would give. TAPEJAX_COMPILATION_CACHE_DIR chooses another
# directory, or "" none.
import shutil  # noqa: E402
import tempfile  # noqa: E402

from jax._src import lru_cache  # noqa: E402

from tapejax._src import compilation_cache  # noqa: E402

_CACHE = os.environ.get("TAPEJAX_COMPILATION_CACHE_DIR",
                        os.path.join(tempfile.gettempdir(), "tapejax-tests-compilation-cache"))
_CACHE_BOUND = 2 << 30


def _size(entry: os.DirEntry) -> int:
    try:
        return entry.stat().st_size if entry.is_file() else 0
    except FileNotFoundError:  # another run's worker renamed its partial file meanwhile
        return 0


def _write_atomically(self, key: str, value: bytes) -> None:
    """JAX's LRUCache.put without eviction writes an entry in place, so another worker could read it half-written
    (and warn): write it whole under another name, then rename it (atomic on POSIX)."""
    path = self.path / f"{key}{lru_cache._CACHE_SUFFIX}"
    if not path.exists():
        partial = self.path / f"{key}.{os.getpid()}.partial"
        partial.write_bytes(value)
        os.replace(partial, path)


if _CACHE.strip() and hasattr(lru_cache, "_CACHE_SUFFIX") and hasattr(lru_cache.LRUCache, "put"):
    # Bounded: the first process of a run (pytest's, before its workers start) empties a directory past 2 GiB. JAX's
    # own bound (jax_compilation_cache_max_size) reads every entry's access time on every write, under a lock.
    if "PYTEST_XDIST_WORKER" not in os.environ and os.path.isdir(_CACHE) and sum(
            _size(entry) for entry in os.scandir(_CACHE)) > _CACHE_BOUND:
        shutil.rmtree(_CACHE, ignore_errors=True)
    lru_cache.LRUCache.put = _write_atomically
    compilation_cache.experimental_compilation_cache(_CACHE)
