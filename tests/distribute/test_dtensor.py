"""tf.experimental.dtensor on 8 virtual CPU devices (a 4x2 mesh), in a fresh process: layouts fetched are the ones
set, shards are numpy's slices, pack/unpack round-trip, gradients flow through relayout, and a linear model on
DVariables trained eagerly and in tf.function equals the unsharded run (tests/compat/test_dtensor_vs_tf.py
compares the same snippets with TF's DTensor)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tests.distribute.conftest import run_json

SCRIPT = pathlib.Path(__file__).with_name("dtensor_snippets.py")


@pytest.fixture(scope="module")
def out():
    return run_json(SCRIPT, "--lib", "tapejax", devices=8)


def _shards(x, row_parts, col_parts):
    """Each device's shard of `x` on the 4x2 mesh, devices in row-major mesh order (batch, then model)."""
    rows = np.split(x, row_parts, axis=0)
    places = [(i // 2 if row_parts > 1 else 0, i % 2 if col_parts > 1 else 0) for i in range(8)]
    return [np.split(rows[r], col_parts, axis=1)[c].tolist() for r, c in places]


def test_layouts_fetched_are_the_layouts_set(out):
    assert out["call_with_layout"]["value"][:2] == [["batch", "unsharded"], [8, 2]]
    assert out["copy_to_mesh"]["value"] == ["unsharded", "unsharded"]
    relayout = out["relayout"]["value"]
    assert relayout[0] == ["batch", "unsharded"] and relayout[2] == ["unsharded", "model"]
    assert out["relayout_match"]["value"] == ["batch", "model"]
    assert out["dvariable"]["value"][0] == ["unsharded", "model"]
    assert out["layout_equal"]["value"] == [True, False, True]
    assert out["layout_from_string"]["value"] is True and out["mesh_from_string"]["value"] is True


def test_shards_are_the_slices_of_the_value(out):
    x = np.arange(16.0).reshape(8, 2)
    assert out["relayout"]["value"][1] == _shards(x, 4, 1)
    assert out["relayout"]["value"][3] == _shards(x, 1, 2)
    assert out["dvariable"]["value"][2] == _shards(x, 1, 2)
    assert out["call_with_layout"]["value"][2] == _shards(np.ones((8, 2)), 4, 1)


def test_pack_unpack_round_trip(out):
    assert out["pack_unpack"]["value"] == [["batch", "unsharded"], [8, 2], True]
    assert out["pack_shape"]["value"] == [12, 2]
    assert out["pack_replicated_scalar"]["value"] == 0


def test_errors(out):
    for name in ("mesh_too_big", "mesh_too_small", "layout_bad_dim", "layout_repeated_dim", "layout_not_a_mesh"):
        assert out[name]["error"][0] == "ValueError", name
    assert out["batch_sharded_bad_dim"]["error"][0] == "RuntimeError"
    for name in ("call_with_layout_rank", "call_with_layout_indivisible", "relayout_rank"):
        assert out[name]["error"][0] == "UnknownError", name
    for name in ("pack_wrong_count", "pack_wrong_rank", "unpack_plain", "fetch_plain", "dvariable_plain"):
        assert out[name]["error"][0] == "InvalidArgumentError", name
    assert out["fetch_python"]["value"] is None


def test_gradient_flows_through_relayout(out):
    np.testing.assert_array_equal(out["relayout_gradient"]["value"], 2 * np.arange(16.0).reshape(8, 2))


def test_sharded_training_equals_the_unsharded_run(out):
    plain = out["train_unsharded"]["value"]
    for mode in ("train_eager", "train_function"):
        losses, w, b, w_layout, b_layout = out[mode]["value"]
        np.testing.assert_allclose(losses, plain[0], rtol=1e-5)
        np.testing.assert_allclose(w, plain[1], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b, plain[2], rtol=1e-5, atol=1e-6)
        assert (w_layout, b_layout) == (["unsharded", "model"], ["model"])  # kept through the updates
    assert plain[0][-1] < plain[0][0]
