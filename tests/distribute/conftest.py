"""tf.distribute tests run their programs in fresh processes: JAX's CPU device count
(`--xla_force_host_platform_device_count=8`) is read once when JAX starts, and the rest of the suite must keep
its one device."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parents[2]


def run_script(path: pathlib.Path | str, *args: str, devices: int = 8, timeout: int = 600) -> str:
    """Runs a Python file with `devices` virtual CPU devices and this checkout's tapejax; returns its stdout."""
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def run_json(path: pathlib.Path | str, *args: str, **kwargs) -> dict:
    return json.loads(run_script(path, *args, **kwargs).strip().splitlines()[-1])
