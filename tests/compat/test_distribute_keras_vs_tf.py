"""Keras `fit`/`evaluate`/`predict` under TF's own MirroredStrategy on 8 logical CPUs against tapejax's on 8 virtual
CPU devices (tests/distribute/keras_fit.py under each library, in fresh processes): the same history, results,
predictions and weights."""

from __future__ import annotations

import pathlib

import pytest

from tests.distribute.conftest import run_json
from tests.distribute.test_keras_fit import assert_same_training

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SCRIPT = pathlib.Path(__file__).parents[1] / "distribute" / "keras_fit.py"


def test_fit_under_mirrored_strategy_matches_tensorflow():
    theirs = run_json(SCRIPT, "--lib", "tensorflow", "--replicas", "8")["8"]
    ours = run_json(SCRIPT, "--lib", "tapejax", "--replicas", "8")["8"]
    assert_same_training(ours, theirs, rtol=1e-4, atol=1e-4)  # two libraries' float32 kernels, 6 Adam steps
