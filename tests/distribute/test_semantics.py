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


def test_run_on_a_partial_batch_split_unevenly(out):
    # 5 examples over 4 replicas: 2, 2, 1, 0, each replica's fn on its own slice (TF gives the same, compared in
    # tests/compat/test_distribute_vs_tf.py)
    assert out["run_uneven"]["value"] == [[0.0, 2.0], [5.0, 7.0], [10.0], []]
    assert out["all_reduce_uneven"]["value"] == [16.0] * 4  # 10 + the replica ids
    assert out["all_gather_uneven"]["value"] == [np.arange(5.0).tolist()] * 4
    assert out["merge_call_uneven"]["value"] == [10.0, 11.0, 12.0, 13.0]
    # TF's compute_average_loss: the replica's sum / (its batch size * replicas), 0 for no examples
    assert out["average_loss_uneven"]["value"] == [1 / 8, 5 / 8, 4 / 4, 0.0]
    v = np.array([1.0, -2.0])
    losses = []
    for _ in range(3):  # SGD(0.5) on the replicas' summed gradients of those losses
        scale = sum(np.sum(x) / (len(x) * 4) for x in ([0.0, 1.0], [2.0, 3.0], [4.0]))
        losses.append(float(np.sum(v * v) * scale))
        v = v - 0.5 * 2 * v * scale
    for mode in ("eager", "function"):
        assert out[f"train_uneven_{mode}"]["value"] == [losses, v.tolist(), 2.0, 3], mode
