"""MultiWorkerMirroredStrategy's reading of TF_CONFIG against TF's: single-worker configurations give the same
replicas and chief flag, bad ones the same exception types (tests/distribute/multi_worker_config.py)."""

from __future__ import annotations

import pathlib

import pytest

from tests.distribute.conftest import run_json

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SCRIPT = pathlib.Path(__file__).parents[1] / "distribute" / "multi_worker_config.py"


def test_tf_config_outcomes_match_tensorflow():
    theirs = run_json(SCRIPT, "--lib", "tensorflow", devices=1)
    ours = run_json(SCRIPT, "--lib", "tapejax", devices=1)
    assert set(theirs) == set(ours)
    for name in theirs:
        if "error" in theirs[name]:
            assert "error" in ours[name] and ours[name]["error"][0] == theirs[name]["error"][0], name
        else:
            assert ours[name]["value"] == theirs[name]["value"], name
