"""tf.distribute against TF's own MirroredStrategy on 4 logical CPU devices: the snippets of
tests/distribute/semantics.py (dataset splitting with partial batches, run, reduce with and without axis,
gather, replica contexts, collectives, the loss scaling helpers, a training step eagerly and in tf.function,
TF's errors) give the same values and exception types in both libraries, each in a fresh process."""

from __future__ import annotations

import pathlib

import pytest

from tests.distribute.conftest import run_json

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SCRIPT = pathlib.Path(__file__).parents[1] / "distribute" / "semantics.py"


@pytest.fixture(scope="module")
def outcomes():
    return run_json(SCRIPT, "--lib", "tensorflow", devices=4), run_json(SCRIPT, "--lib", "tapejax", devices=4)


def test_every_snippet_matches_tensorflow(outcomes):
    theirs, ours = outcomes
    assert set(theirs) == set(ours)
    for name in theirs:
        if "error" in theirs[name]:
            # the same exception type, or a more specific one (documented: a variable created outside the scope)
            assert "error" in ours[name] and theirs[name]["error"][0] in ours[name]["error"], name
        else:
            assert ours[name] == theirs[name], name
