"""Importing tapejax compiles no XLA executable (each costs tens of milliseconds before a program's first line:
benchmarks/programs.py measures import as part of a program's time). A count, not a timing."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
COUNT_COMPILES = """
from jax._src import compiler
compiled = []
original = compiler.compile_or_get_cached
def counting(*args, **kwargs):
    compiled.append(1)
    return original(*args, **kwargs)
compiler.compile_or_get_cached = counting
import jax.numpy as jnp
jnp.zeros((3,)).block_until_ready()  # the counter sees a compile: the test can fail
seen = len(compiled)
import tapejax
print(seen, len(compiled) - seen)
"""


def test_importing_tapejax_compiles_nothing():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", COUNT_COMPILES], capture_output=True, text=True, env=env,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    probe, at_import = map(int, done.stdout.split())
    assert probe >= 1
    assert at_import == 0


def test_importing_tapejax_starts_no_backend():
    # jax.distributed.initialize (MultiWorkerMirroredStrategy) must come before JAX's backend starts
    probe = ("import jax._src.xla_bridge as xb\nimport tapejax, tapejax.keras\n"
             "print(xb.backends_are_initialized())")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "False"
