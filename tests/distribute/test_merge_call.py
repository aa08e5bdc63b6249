"""`ReplicaContext.merge_call` on 4 virtual CPU replicas (tests/distribute/merge_call.py), against values derived by
hand: replica r passes r + 1, so the replicas' values are 1, 2, 3, 4 (the same snippets are compared with TF's
own MirroredStrategy in tests/compat/test_merge_call_vs_tf.py)."""

from __future__ import annotations

import pathlib

import pytest

from tests.distribute.conftest import run_json

SCRIPT = pathlib.Path(__file__).with_name("merge_call.py")


@pytest.fixture(scope="module")
def out():
    return run_json(SCRIPT, "--lib", "tapejax", devices=4)


def test_reductions_in_merge_fn_are_one_value_for_all_replicas(out):
    assert out["reduce_sum"]["value"] == [10.0]  # a tensor merge_fn computed: `run` returns it, not PerReplica
    assert out["reduce_mean"]["value"] == [2.5]
    assert out["reduce_axis"]["value"] == [2 * (0 + 1 + 2 + 3)]  # ones([2]) * r summed over axis 0 and replicas
    assert out["kwargs"]["value"] == [30.0]
    assert out["in_function"]["value"] == [10.0]
    assert out["local_results"]["value"] == [10.0]
    assert out["gather"]["value"] == [[0.0, 0.0, 1.0, 10.0, 2.0, 20.0, 3.0, 30.0]]


def test_mirrored_and_per_replica_results_reach_each_replica(out):
    assert out["reduce_to"]["value"] == [10.0] * 4  # reduce_to's result is mirrored: one per replica
    assert out["batch_reduce_to"]["value"] == [[2.5] * 4, [2.5] * 4]
    assert out["returns_per_replica"]["value"] == [1.0, 2.0, 3.0, 4.0]  # each replica gets its own back
    assert out["returns_mixed"]["value"] == [[1.0, 2.0, 3.0, 4.0], [10.0]]


def test_merge_fn_runs_cross_replica_and_can_update_variables(out):
    assert out["contexts"]["value"] == [[True], [True], [True]]
    assert out["update_variable"]["value"] == 10.0  # assign_add of the sum, once (the copies stay equal)
    assert out["default_context"]["value"] == 6.0
    assert out["one_device"]["value"] == 5.0


def test_errors(out):
    assert out["per_replica_arithmetic"]["error"][0] == "TypeError"  # a PerReplica has no arithmetic, as in TF
    assert out["reduce_to_plain_sum"]["error"][0] == "ValueError"
