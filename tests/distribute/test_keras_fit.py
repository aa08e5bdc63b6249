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


def test_a_partial_last_batch_evaluates_and_predicts_as_one_device():
    # 37 examples in batches of 8: the last 5 are split 1, 1, 1, 1, 1, 0, 0, 0 over the replicas
    results = run_json(SCRIPT, "--replicas", "1", "8", "--samples", "37", "--batch", "8", "--before")
    one, eight = results["1"], results["8"]
    np.testing.assert_allclose(eight["evaluate_before"], one["evaluate_before"], rtol=1e-5)
    assert len(eight["predict_before"]) == len(eight["predict"]) == 37  # every row, in order
    np.testing.assert_allclose(eight["predict_before"], one["predict_before"], rtol=1e-5, atol=1e-6)
    # fit: the first epoch's loss and accuracy are one device's (the partial batch is its last step, measured
    # before its update)
    for name in ("loss", "accuracy"):
        np.testing.assert_allclose(eight["history"][name][0], one["history"][name][0], rtol=1e-5)
    # the partial batch's update is TF's, not one device's: Keras under TF's strategy divides each replica's mean
    # loss by the replicas, so a replica of 1 example weighs as much as one of 4 (checked against TF in
    # tests/compat/test_distribute_uneven_vs_tf.py)
    assert not all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(eight["weights"], one["weights"]))
