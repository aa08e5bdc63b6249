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
