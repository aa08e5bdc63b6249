"""The key test of tf.distribute: TF's custom-training-with-strategy loop on 8 replicas gives one device's weights
and losses (rtol 1e-5), eagerly and with a tf.function step."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tests.distribute.conftest import run_json

SCRIPT = pathlib.Path(__file__).with_name("tutorial_loop.py")


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_eight_replicas_train_as_one_device(mode):
    results = run_json(SCRIPT, "--mode", mode, "--replicas", "1", "8")
    one, eight = results["1"], results["8"]
    assert len(one["losses"]) == 8 and one["iterations"] == eight["iterations"] == 8
    np.testing.assert_allclose(eight["losses"], one["losses"], rtol=1e-5)
    for a, b in zip(eight["weights"], one["weights"]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    assert eight["accuracy"] == pytest.approx(one["accuracy"], rel=1e-6)
    assert one["losses"][0] != one["losses"][-1]  # it trained


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("samples, batch", [(37, 8), (141, 32)])
def test_a_partial_last_batch_split_unevenly_trains_as_one_device(mode, samples, batch):
    # each epoch ends on a partial batch split as TF splits it: 5 examples over 8 replicas are 1, 1, 1, 1, 1, 0, 0,
    # 0 (fewer examples than replicas); 13 are 2, 2, 2, 2, 2, 2, 1, 0. With the global batch size given to
    # compute_average_loss, the replicas' summed gradients are one device's (TF's default divides by the replica's
    # batch size times the replicas, which differs from one device there: tests/compat/test_distribute_uneven_vs_tf.py)
    results = run_json(SCRIPT, "--mode", mode, "--replicas", "1", "8", "--samples", str(samples), "--batch",
                       str(batch), "--loss-batch", "global")
    one, eight = results["1"], results["8"]
    steps = 2 * -(-samples // batch)
    assert len(one["losses"]) == steps and one["iterations"] == eight["iterations"] == steps
    np.testing.assert_allclose(eight["losses"], one["losses"], rtol=1e-5)
    for a, b in zip(eight["weights"], one["weights"], strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    assert eight["accuracy"] == pytest.approx(one["accuracy"], rel=1e-6)
