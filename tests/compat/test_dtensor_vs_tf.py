"""tf.experimental.dtensor against TF's own DTensor on 8 logical CPU devices: the snippets of
tests/distribute/dtensor_snippets.py (mesh and layout strings, constructors, relayout, pack/unpack, the layouts
sharding propagation gives, TF's errors, a sharded linear model trained eagerly and in tf.function) give the same
values and exception types in both libraries, each in a fresh process."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tests.distribute.conftest import run_json

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SCRIPT = pathlib.Path(__file__).parents[1] / "distribute" / "dtensor_snippets.py"


# TF's eager DTensor refuses this gradient (its reduce_sum gradient makes a plain ones tensor and mixing plain and
# DTensors raises UnimplementedError); tapejax computes it (tests/distribute/test_dtensor.py checks the value).
TF_REFUSES = {"relayout_gradient"}


@pytest.fixture(scope="module")
def outcomes():
    return run_json(SCRIPT, "--lib", "tensorflow", devices=8), run_json(SCRIPT, "--lib", "tapejax", devices=8)


def test_every_snippet_matches_tensorflow(outcomes):
    theirs, ours = outcomes
    assert set(theirs) == set(ours)
    for name in theirs:
        if name in TF_REFUSES:
            assert theirs[name]["error"][0] == "UnimplementedError" and "value" in ours[name], name
        elif "error" in theirs[name]:
            assert "error" in ours[name] and ours[name]["error"][0] == theirs[name]["error"][0], name
        elif name.startswith("train_"):  # float32 sums in another order: equal to rounding
            for a, b in zip(ours[name]["value"], theirs[name]["value"]):
                if isinstance(a[0], str):
                    assert a == b, name
                else:
                    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            assert ours[name] == theirs[name], name
