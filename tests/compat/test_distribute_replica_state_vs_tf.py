"""BatchNormalization per replica and synchronized, and Generator streams per replica, inside `strategy.run`:
tapejax against TF's MirroredStrategy on 4 logical CPUs (tests/distribute/replica_state.py under each library)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tests.distribute.conftest import run_json

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SCRIPT = pathlib.Path(__file__).parents[1] / "distribute" / "replica_state.py"


def test_replica_state_matches_tensorflow():
    theirs = run_json(SCRIPT, "--lib", "tensorflow", devices=4)
    ours = run_json(SCRIPT, "--lib", "tapejax", devices=4)
    assert set(ours) == set(theirs)
    for name, value in theirs.items():
        if name.startswith("bn_"):
            for field in value:
                np.testing.assert_allclose(ours[name][field], value[field], rtol=1e-3, atol=1e-3, err_msg=name)
        else:
            assert ours[name] == value, name
