"""A partial last batch split unevenly over the replicas (TF gives each ceil(B / replicas) consecutive examples, the
last ones fewer or none) under TF's own MirroredStrategy on 8 logical CPUs against tapejax's on 8 virtual CPU devices
(tests/distribute's scripts under each library, in fresh processes): each replica's result of a step, and the
weights after it, after a tf.function loop whose every epoch ends on such a batch, and after Keras's `fit`."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tests.distribute.conftest import run_json
from tests.distribute.test_keras_fit import assert_same_training

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

HERE = pathlib.Path(__file__).parents[1] / "distribute"


def _both(script: str, *args: str) -> tuple[dict, dict]:
    theirs = run_json(HERE / script, "--lib", "tensorflow", "--replicas", "8", *args)["8"]
    ours = run_json(HERE / script, "--lib", "tapejax", "--replicas", "8", *args)["8"]
    return ours, theirs


def _same_weights(ours: dict, theirs: dict, rtol: float, atol: float) -> None:
    for a, b in zip(ours["weights"], theirs["weights"], strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_one_uneven_step_per_replica_as_tensorflow(mode):
    # 13 examples over 8 replicas: 2, 2, 2, 2, 2, 2, 1, 0; the tutorial's compute_average_loss without a global
    # batch size divides by each replica's batch size times the replicas (0 examples: div_no_nan's 0, plus the
    # replica's share of the regularization). `--dense`: TF's Conv2D fails on an empty batch.
    ours, theirs = _both("tutorial_loop.py", "--mode", mode, "--dense", "--samples", "13", "--batch", "16",
                         "--epochs", "0", "--local-step")
    assert len(ours["local"]) == len(theirs["local"]) == 8
    np.testing.assert_allclose(ours["local"], theirs["local"], rtol=1e-5)
    _same_weights(ours, theirs, rtol=1e-5, atol=1e-6)
    assert ours["iterations"] == theirs["iterations"] == 1


def test_tutorial_loop_with_partial_batches_as_tensorflow():
    # 37 examples in batches of 8, two epochs: each ends on 5 examples split 1, 1, 1, 1, 1, 0, 0, 0
    ours, theirs = _both("tutorial_loop.py", "--mode", "function", "--dense", "--samples", "37", "--batch", "8")
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-4)
    _same_weights(ours, theirs, rtol=1e-4, atol=1e-5)
    assert ours["accuracy"] == pytest.approx(theirs["accuracy"], rel=1e-6)


def test_keras_fit_with_a_partial_last_batch_as_tensorflow():
    ours, theirs = _both("keras_fit.py", "--samples", "37", "--batch", "8", "--before")
    assert_same_training(ours, theirs, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours["evaluate_before"], theirs["evaluate_before"], rtol=1e-4)
    np.testing.assert_allclose(ours["predict_before"], theirs["predict_before"], rtol=1e-4, atol=1e-4)
