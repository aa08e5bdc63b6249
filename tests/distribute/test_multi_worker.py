"""MultiWorkerMirroredStrategy across 2 processes on 127.0.0.1: a custom training loop and Keras `fit` give one
process's losses and weights; each worker fed its half of every global batch; reduce and gather cross the
processes; only the chief writes the checkpoint, which restores. Also TF_CONFIG's errors and a worker whose chief
never comes. Every process is started with a bounded wait and killed in a `finally`."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.distribute.conftest import ROOT, run_json

SCRIPT = pathlib.Path(__file__).with_name("multi_worker.py")
CONFIG_SCRIPT = pathlib.Path(__file__).with_name("multi_worker_config.py")


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _env(tf_config: dict) -> dict:
    return dict(os.environ, TF_CONFIG=json.dumps(tf_config) if tf_config else "", XLA_FLAGS="--xla_force_host_platform_device_count=1",
                PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


def _run_workers(tmp_path: pathlib.Path, timeout: float = 120) -> tuple[list[dict], dict]:
    """The two workers and, at the same time, the one-process run of the same global batches."""
    workers = [f"127.0.0.1:{p}" for p in _free_ports(2)]
    commands = [(["worker", str(tmp_path)], {"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}})
                for i in range(2)] + [(["single", str(tmp_path / "single")], {})]
    procs = []
    try:
        for args, config in commands:
            procs.append(subprocess.Popen([sys.executable, str(SCRIPT), *args], env=_env(config), cwd=ROOT,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        deadline = time.monotonic() + timeout
        outs = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert p.returncode == 0, stderr[-4000:]
            outs.append(json.loads(stdout.strip().splitlines()[-1]))
        return outs[:2], outs[2]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("multi_worker")
    workers, single = _run_workers(tmp)
    return workers, single, tmp


def test_two_workers_train_as_one_process(runs):
    (chief, worker), single, _ = runs
    for out in (chief, worker):
        np.testing.assert_allclose(out["losses"], single["losses"], rtol=1e-5)
        for got, want in zip(out["weights"], single["weights"], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert out["iterations"] == single["iterations"] == 4
        assert out["replicas"] == 2


def test_keras_fit_on_two_workers_equals_one_process(runs):
    (chief, worker), single, _ = runs
    for out in (chief, worker):
        np.testing.assert_allclose(out["fit_loss"], single["fit_loss"], rtol=1e-5)
        for got, want in zip(out["fit_weights"], single["fit_weights"], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_each_worker_feeds_its_half_of_every_global_batch(runs):
    (chief, worker), _, _ = runs
    from tests.distribute.multi_worker import data

    x, _ = data()
    batches = x[:, 0].reshape(4, 8)  # 4 global batches of 8; TF's DATA sharding: worker i gets rows 4i..4i+3
    assert np.allclose(np.array(chief["local_x"])[:, 0], batches[:, :4])
    assert np.allclose(np.array(worker["local_x"])[:, 0], batches[:, 4:])


def test_reduce_and_gather_cross_the_workers(runs):
    for out in runs[0]:
        assert out["reduce_ids"] == 3.0  # (0 + 1) + (1 + 1)
        assert out["gather_ids"] == [0.0, 1.0]


def test_only_the_chief_checkpoints(runs):
    (chief, worker), single, tmp = runs
    assert chief["should_checkpoint"] is True and worker["should_checkpoint"] is False
    assert chief["saved"] == str(tmp / "ckpt-1")
    assert worker["saved"] == str(tmp / "workertemp_1" / "ckpt-1")  # TF's tutorial: a temporary copy
    assert chief["restored"] is True and worker["restored"] is True  # restore into the mirrored variables
    import tapejax as tf

    reader = tf.train.CheckpointReader(chief["saved"])
    kernels = sorted((name for name in reader.get_variable_to_shape_map() if name.endswith(
        "kernel/.ATTRIBUTES/VARIABLE_VALUE") and "optimizer" not in name and "OPTIMIZER" not in name))
    np.testing.assert_allclose(reader.get_tensor(kernels[0]), single["weights"][0], rtol=1e-5, atol=1e-6)


UNREACHABLE = """
import time, tapejax as tf
start = time.monotonic()
try:
    tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(timeout_seconds=2))
except tf.errors.UnavailableError as e:
    print(type(e).__name__, time.monotonic() - start, "TF_CONFIG" in str(e))
"""


def test_a_worker_that_cannot_reach_the_chief_gets_unavailable_error_in_bounded_time():
    workers = [f"127.0.0.1:{p}" for p in _free_ports(2)]  # nobody listens on the chief's port
    config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": 1}}
    done = subprocess.run([sys.executable, "-c", UNREACHABLE], env=_env(config), cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    name, seconds, names_the_fix = done.stdout.split()
    assert name == "UnavailableError" and 2 <= float(seconds) < 30 and names_the_fix == "True"


def test_tf_config_parsing_and_errors():
    out = run_json(CONFIG_SCRIPT, "--lib", "tapejax", devices=1)
    assert out["no_cluster"]["value"] == out["empty"]["value"] == [1, True]
    assert out["bad_json"]["error"][:2] == ["JSONDecodeError", "ValueError"]
    for name in ("task_not_in_cluster", "index_too_big", "two_chiefs", "no_task", "no_task_type",
                 "unknown_task_type"):
        assert out[name]["error"][0] == "ValueError", name
    assert out["tpu_strategy_without_tpu"]["error"][0] == "ValueError"  # TF: "Please provide a TPU Name..."
    assert out["tpu_resolver_without_tpu"]["error"][0] == "ValueError"
    assert out["resolver"]["value"] == ["worker", 1, {"chief": ["127.0.0.1:5"],
                                                      "worker": ["127.0.0.1:1", "127.0.0.1:2"]}, "127.0.0.1:2"]


STARTED = """
import os, json, tapejax as tf
tf.constant(1.0) + 1.0  # JAX's backend is running
os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]},
                                      "task": {"type": "worker", "index": 0}})
try:
    tf.distribute.MultiWorkerMirroredStrategy()
except RuntimeError as e:
    print("RuntimeError", "program startup" in str(e))
"""


def test_a_strategy_made_after_the_backend_started_raises_tf_runtime_error():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", STARTED], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["RuntimeError", "True"]
