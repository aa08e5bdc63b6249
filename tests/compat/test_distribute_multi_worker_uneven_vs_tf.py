"""A partial batch split unevenly under MultiWorkerMirroredStrategy against TF's own, each on 2 worker processes on
127.0.0.1 (tests/distribute/multi_worker_uneven.py under each library): every worker's local results of each
step, the cross-replica reduce and gather, and `distribute_datasets_from_function` when one worker's pipeline runs
out first (TF gives its replica an empty batch)."""

from __future__ import annotations

import pathlib

import pytest

from tests.distribute.conftest import run_at_once, worker_configs

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SCRIPT = pathlib.Path(__file__).parents[1] / "distribute" / "multi_worker_uneven.py"


def _workers(lib: str) -> list[dict]:
    return run_at_once([([str(SCRIPT), "--lib", lib], config, 1) for config in worker_configs(2)], timeout=180)


def test_uneven_batches_on_two_workers_as_tensorflow():
    theirs, ours = _workers("tensorflow"), _workers("tapejax")
    assert theirs[1]["split"][1] == [[11.0, 12.0]]  # TF's split of the last 5: 3 on worker 0, 2 on worker 1
    assert theirs[1]["from_function"][1] == [[]]
    assert ours == theirs
