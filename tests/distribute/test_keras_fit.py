"""Keras `fit`/`evaluate`/`predict` under `strategy.scope()`: on 8 replicas the loss history, metrics, evaluate's
results, predictions and weights of one device (rtol 1e-5); each run in a fresh process (keras_fit.py)."""

from __future__ import annotations

import pathlib

import numpy as np

from tests.distribute.conftest import run_json

SCRIPT = pathlib.Path(__file__).with_name("keras_fit.py")


def assert_same_training(a: dict, b: dict, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    assert a["history"].keys() == b["history"].keys() == {"loss", "accuracy"}
    for name in a["history"]:
        np.testing.assert_allclose(a["history"][name], b["history"][name], rtol=rtol)
    np.testing.assert_allclose(a["evaluate"], b["evaluate"], rtol=rtol)
    np.testing.assert_allclose(a["predict"], b["predict"], rtol=rtol, atol=atol)
    for x, y in zip(a["weights"], b["weights"], strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def test_fit_on_eight_replicas_equals_one_device():
    results = run_json(SCRIPT, "--replicas", "1", "8")
    one, eight = results["1"], results["8"]
    assert_same_training(eight, one)
    assert one["history"]["loss"][0] != one["history"]["loss"][-1]  # it trained
    assert len(one["predict"]) == 64
