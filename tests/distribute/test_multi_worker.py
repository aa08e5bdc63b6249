"""MultiWorkerMirroredStrategy across 2 processes on 127.0.0.1: a custom training loop and Keras `fit` give one
process's losses and weights; each worker fed its half of every global batch; reduce and gather cross the
processes; only the chief writes the checkpoint, which restores; a partial last batch split unevenly over the
workers' replicas trains as one process too. Also TF_CONFIG's errors and a worker whose chief never comes. Every
process is started with a bounded wait and killed in a `finally`."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tests.distribute.conftest import ROOT, process_env, run_at_once, run_json, worker_configs

SCRIPT = pathlib.Path(__file__).with_name("multi_worker.py")
CONFIG_SCRIPT = pathlib.Path(__file__).with_name("multi_worker_config.py")


def _run_workers(tmp_path: pathlib.Path, timeout: float = 180) -> tuple[list[dict], dict]:
    """The two workers and, at the same time, the one-process runs of the same global batches (2 CPU devices
    there, for a MirroredStrategy of the workers' 2 replicas)."""
    commands = [([str(SCRIPT), "worker", str(tmp_path)], config, 1) for config in worker_configs(2)]
    outs = run_at_once(commands + [([str(SCRIPT), "single", str(tmp_path / "single")], {}, 2)], timeout)
    return outs[:2], outs[2]


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


@pytest.mark.parametrize("loop", ["eager", "function", "dff"])
def test_a_partial_batch_split_unevenly_over_the_workers_trains_as_one_process(runs, loop):
    # 13 examples in global batches of 8, two epochs: each ends on 5 examples split 3, 2 over the workers' 2
    # replicas (eager and tf.function steps over experimental_distribute_dataset); "dff":
    # distribute_datasets_from_function, batches 4, 4 then 1, 0 (worker 1's pipeline ran out). With the global
    # batch size given to compute_average_loss, the workers give one device's losses and weights, and those of
    # one process's MirroredStrategy of 2 replicas.
    (chief, worker), single, _ = runs
    for out in (chief, worker):
        for reference in (single["uneven"][loop], single["uneven_one_device"][loop]):
            got = out["uneven"][loop]
            assert got["iterations"] == reference["iterations"] == 4
            np.testing.assert_allclose(got["losses"], reference["losses"], rtol=1e-5)
            for a, b in zip(got["weights"], reference["weights"], strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert single["uneven"][loop]["losses"][0] != single["uneven"][loop]["losses"][-1]  # it trained


def test_each_worker_sees_its_replicas_of_a_partial_batch(runs):
    (chief, worker), single, _ = runs
    from tests.distribute.multi_worker import data

    first = data()[0][:13, 0]
    for loop in ("eager", "function"):
        # the last batch (examples 8..12): worker 0's replica gets 3, worker 1's 2; gather gives all 5 on both
        assert np.allclose(chief["uneven"][loop]["local_x"][1], [first[8:11]])
        assert np.allclose(worker["uneven"][loop]["local_x"][1], [first[11:13]])
        for out in (chief, worker):
            assert np.allclose(out["uneven"][loop]["gathered_x"][1], first[8:13])
        local = [chief["uneven"][loop]["local_losses"][1][0], worker["uneven"][loop]["local_losses"][1][0]]
        np.testing.assert_allclose(local, np.ravel(single["uneven"][loop]["local_losses"][1]), rtol=1e-5)
    # worker 1's pipeline ran out: its replica's batch is empty and its loss 0
    assert np.allclose(chief["uneven"]["dff"]["local_x"][1], [[first[8]]])
    assert worker["uneven"]["dff"]["local_x"][1] == [[]] and worker["uneven"]["dff"]["local_losses"][1] == [0.0]


def test_keras_fit_with_a_partial_batch_on_two_workers_equals_one_process(runs):
    # Keras's scaling (each replica's mean loss / replicas) makes the uneven batch's update TF's, not one
    # device's: the reference is one process's MirroredStrategy of 2 replicas
    (chief, worker), single, _ = runs
    for out in (chief, worker):
        np.testing.assert_allclose(out["uneven"]["fit_loss"], single["uneven"]["fit_loss"], rtol=1e-5)
        for got, want in zip(out["uneven"]["fit_weights"], single["uneven"]["fit_weights"], strict=True):
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
    config = worker_configs(2)[1]  # nobody listens on the chief's port
    done = subprocess.run([sys.executable, "-c", UNREACHABLE], env=process_env(config), cwd=ROOT, capture_output=True,
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
