"""The opt-in persistent compilation cache: JAX's own, on disk, so that a second run of a program starts warm.

JAX keeps compiled executables in a directory when `jax_compilation_cache_dir` is set, but by default only those
that took over a second to compile: most of tapejax's (a training step's gradient, each op's VJP in the eager
sweep) take less, so `experimental_compilation_cache` also lowers JAX's thresholds to keep every executable.
It changes JAX's global configuration, so it is never turned on by importing tapejax, only by this call or by
`TAPEJAX_COMPILATION_CACHE_DIR` in the environment.
"""

from __future__ import annotations

import os

import jax


def experimental_compilation_cache(directory: str | os.PathLike | None, min_compile_time_secs: float = 0.0) -> None:
    """Keeps compiled executables in `directory` across processes (JAX's persistent compilation cache; a tapejax
    extension). `None` turns it off.

    A second run of the same program on the same machine and JAX version then loads its executables instead of
    compiling them: the compiles of `tf.function`s and of repeated tape structures alike. Executables that took
    less than `min_compile_time_secs` to compile are not kept (0: all of them, JAX's default being 1 s).

    `TAPEJAX_COMPILATION_CACHE_DIR=/path` in the environment does the same when tapejax is imported.

    >>> import tempfile, tapejax as tf
    >>> tf.config.experimental_compilation_cache(tempfile.mkdtemp())
    >>> tf.config.experimental_compilation_cache(None)
    """
    if directory is None:
        jax.config.update("jax_compilation_cache_dir", None)
        return
    jax.config.update("jax_compilation_cache_dir", os.fspath(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_time_secs))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def configure_from_environment() -> None:
    directory = os.environ.get("TAPEJAX_COMPILATION_CACHE_DIR", "").strip()
    if directory:
        experimental_compilation_cache(directory)


configure_from_environment()  # opt-in only: nothing changes unless the variable is set
