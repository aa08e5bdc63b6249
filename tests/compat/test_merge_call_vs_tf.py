"""`merge_call` against TF's own MirroredStrategy on 4 logical CPU devices: reductions, reduce_to,
batch_reduce_to, gather, per-replica and mixed results, contexts, kwargs, tf.function, a variable update and the
default context (tests/distribute/merge_call.py) give the same values and exception types."""

from __future__ import annotations

import pathlib

import pytest

from tests.distribute.conftest import run_json

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SCRIPT = pathlib.Path(__file__).parents[1] / "distribute" / "merge_call.py"


def test_every_merge_call_snippet_matches_tensorflow():
    theirs = run_json(SCRIPT, "--lib", "tensorflow", devices=4)
    ours = run_json(SCRIPT, "--lib", "tapejax", devices=4)
    assert set(theirs) == set(ours)
    for name in theirs:
        if "error" in theirs[name]:
            assert "error" in ours[name] and ours[name]["error"][0] == theirs[name]["error"][0], name
        else:
            assert ours[name]["value"] == theirs[name]["value"], name
