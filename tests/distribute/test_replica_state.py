"""State per replica inside `strategy.run` on 4 replicas (replica_state.py, in a fresh process): BatchNormalization
normalises each replica by its own batch (its moving statistics: replica 0's), or by the global batch with
`synchronized=True`; a Generator gives each replica its own numbers. Checked against numpy here, and against TF's
MirroredStrategy in tests/compat/test_distribute_replica_state_vs_tf.py."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from tests.distribute.conftest import run_json

SCRIPT = pathlib.Path(__file__).with_name("replica_state.py")
X = np.arange(16, dtype=np.float32).reshape(8, 2) ** 1.5


@pytest.fixture(scope="module")
def found():
    return run_json(SCRIPT, devices=4)


def _normalized(x):
    return (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_batchnorm_statistics_are_per_replica(found, mode):
    bn = found[f"bn_sync_False_{mode}"]
    expected = [_normalized(X[2 * i:2 * i + 2]) for i in range(4)]
    np.testing.assert_allclose(bn["outputs"], expected, atol=1e-4)
    np.testing.assert_allclose(bn["moving_mean"], 0.5 * X[:2].mean(0) * 0.5 + 0.5 * X[:2].mean(0), rtol=1e-3)


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_synchronized_batchnorm_uses_the_global_batch(found, mode):
    bn = found[f"bn_sync_True_{mode}"]
    expected = _normalized(X).reshape(4, 2, 2)
    np.testing.assert_allclose(bn["outputs"], expected, atol=1e-4)
    np.testing.assert_allclose(bn["moving_mean"], 0.75 * X.mean(0), rtol=1e-3)  # two steps of momentum 0.5


@pytest.mark.parametrize("key", ["generator_inside_eager", "generator_inside_function", "generator_outside_eager",
                                 "generator_outside_function"])
def test_a_generator_gives_each_replica_its_own_numbers(found, key):
    assert found[key] == {"distinct_replicas": True, "new_draws": True, "shapes": [3, 3, 3, 3]}
