"""tf.distribute tests run their programs in fresh processes: JAX's CPU device count
(`--xla_force_host_platform_device_count=8`) is read once when JAX starts, and the rest of the suite must keep
its one device."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

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


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def worker_configs(n: int = 2) -> list[dict]:
    """The TF_CONFIG of each of `n` workers on 127.0.0.1 (free ports)."""
    workers = [f"127.0.0.1:{p}" for p in free_ports(n)]
    return [{"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}} for i in range(n)]


def process_env(tf_config: dict, devices: int = 1) -> dict:
    return dict(os.environ, TF_CONFIG=json.dumps(tf_config) if tf_config else "",
                XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
                PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


def run_at_once(commands: list[tuple[list[str], dict, int]], timeout: float = 120) -> list[dict]:
    """Starts every (argv, TF_CONFIG, CPU devices) command at once (the workers of one job meet each other) and
    returns each one's last stdout line as JSON; every wait is bounded and every process killed in a `finally`."""
    procs = []
    try:
        for argv, config, devices in commands:
            procs.append(subprocess.Popen([sys.executable, *argv], env=process_env(config, devices), cwd=ROOT,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        deadline = time.monotonic() + timeout
        outs = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert p.returncode == 0, stderr[-4000:]
            outs.append(json.loads(stdout.strip().splitlines()[-1]))
        return outs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)
