"""tf.distribute's semantics on 4 virtual CPU replicas, checked against numpy (the same snippets are compared
with TF's own strategy in tests/compat/test_distribute_vs_tf.py)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tests.distribute.conftest import run_json

SCRIPT = pathlib.Path(__file__).with_name("semantics.py")


@pytest.fixture(scope="module")
def out():
    return run_json(SCRIPT, "--lib", "tapejax", devices=4)


def _tf_split(batch, n=4):
    """TF's rebatching: ceil(B / n) consecutive examples per replica, the last replicas fewer or none."""
    per = -(-len(batch) // n)
    return [batch[i * per:(i + 1) * per] for i in range(n)]


def test_datasets_split_as_tf_splits_them(out):
    data = [float(i) for i in range(10)]
    assert out["split_even"]["value"] == [_tf_split(data[:8])]
    assert out["split_partial"]["value"] == [_tf_split(data[:8]), _tf_split(data[8:10])]
    assert out["split_5_of_8"]["value"] == [_tf_split(data[:5])]
    assert out["split_not_divisible"]["value"] == [_tf_split(data[:6])]
    assert out["from_function"]["value"] == [_tf_split(data[:8])]


def test_run_and_reduce(out):
    x = np.arange(8.0).reshape(4, 2)
    assert out["replica_ids"]["value"] == [0, 1, 2, 3]
    assert out["run_times_two"]["value"] == (x * 2 + np.arange(4)[:, None]).tolist()
    assert out["reduce_sum_none"]["value"] == (2 * x).sum(0).tolist()
    assert out["reduce_mean_none"]["value"] == x.mean(0).tolist()
    assert out["reduce_sum_axis0"]["value"] == x.sum()
    assert out["reduce_mean_axis0"]["value"] == x.mean()
    assert out["reduce_mean_uneven"]["value"] == np.mean(np.arange(5.0))  # weighted by element count
    assert out["reduce_sum_uneven"]["value"] == np.sum(np.arange(5.0))
    assert out["gather_uneven"]["value"] == np.arange(5.0).tolist()
    assert out["gather"]["value"] == (np.arange(8.0) + 1).tolist()
    for name in ("reduce_bad_axis", "reduce_bad_op", "reduce_plain_sum", "per_replica_batch"):
        assert out[name]["error"][0] == "ValueError", name


def test_replica_context(out):
    assert out["all_reduce_sum"]["value"] == [6.0] * 4
    assert out["all_reduce_mean"]["value"] == [1.5] * 4
    assert out["all_gather"]["value"] == [np.repeat(np.arange(4.0), 2).tolist()] * 4
    assert out["contexts"]["value"] == [False, False, True, [True, True, True, True]]
    assert out["default_strategy"]["value"] == [1, 3.0]
    assert out["mixed_scopes"]["error"][0] == "RuntimeError"


def test_loss_scaling(out):
    assert out["average_loss"]["value"] == [3.0 / 8] * 4  # the global batch: 2 per replica times 4
    assert out["average_loss_weighted"]["value"] == [pytest.approx(7.0 / 10)] * 4
    assert out["regularization_loss"]["value"] == [2.0] * 4
    assert out["average_loss_cross_replica"]["error"][0] == "RuntimeError"


def test_training_step_sums_the_replicas_gradients(out):
    # loss_r = sum(v*v) * x_r / 8 per example; the replicas' gradients sum to 2 v mean(x) = 7 v
    v = np.array([1.0, -2.0])
    losses = []
    for _ in range(3):
        losses.append(float((v * v).sum() * 28 / 8))
        v = v - 0.5 * 7 * v
    for mode in ("train_eager", "train_function"):
        got_losses, got_v, metric, iterations = out[mode]["value"]
        np.testing.assert_allclose(got_losses, losses, rtol=1e-6)
        np.testing.assert_allclose(got_v, v, rtol=1e-6)
        assert metric == 3.5 and iterations == 3  # the Mean metric's replicas' counts summed


def test_optimizer_refuses_a_variable_made_outside_the_scope(out):
    assert out["optimizer_variable_outside_scope"]["error"][:2] == ["VariableOutsideScopeError", "AssertionError"]
