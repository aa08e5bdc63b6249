"""Every cache of the engine is bounded, and forgetting is always correct (DESIGN invariants 11 and 12)."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
import tapejax.data.traced  # noqa: F401  (tf.data is imported on first use: its memos join caches.ALL then)
from tapejax._src import caches, checking, errors, executables, lowering
from tapejax.keras import layers as keras_layers, models as keras_models


def _fill(cache, n):
    if isinstance(cache, executables.Cache):
        empty = lowering.Program((), 0, 0, ())
        for i in range(n):
            cache.get(empty, (("fill", i),))
    else:
        for i in range(n):
            cache[("fill", i)] = i


@pytest.mark.parametrize("cache", caches.ALL, ids=lambda c: c.name)
def test_each_cache_stays_within_its_bound(cache):
    _fill(cache, cache.maxsize + 10)
    assert len(cache) <= cache.maxsize
    cache.clear()


def test_the_engine_caches_are_all_listed():
    names = " ".join(c.name for c in caches.ALL)
    for module in ("convert.py", "deferred.py", "dispatch.py", "structure.py", "sweep.py", "executables.py",
                   "one_off.py", "static_values.py", "chunks.py", "autograph.py", "data/traced.py",
                   "keras/optimizers.py", "from_jax.py"):
        assert module in names


def test_the_failures_of_host_callbacks_are_bounded():
    for i in range(errors._MAX_HOST_FAILURES + 10):
        errors.host_failure(ValueError(str(i)))
    assert len(errors.HOST_FAILURES) <= errors._MAX_HOST_FAILURES
    assert str(errors.HOST_FAILURES[max(errors.HOST_FAILURES)]) == str(errors._MAX_HOST_FAILURES + 9)
    errors.HOST_FAILURES.clear()


@pytest.mark.parametrize("cached", [keras_layers._operation, keras_models._functional_subclass],
                         ids=lambda f: f.__name__)
def test_the_keras_class_caches_are_bounded(cached):
    maxsize = cached.cache_info().maxsize
    assert maxsize is not None
    for i in range(maxsize + 10):
        if cached is keras_models._functional_subclass:
            cached(type(f"Model{i}", (keras_models.Model,), {}))
        else:
            cached(f"operation{i}", abs)
    assert cached.cache_info().currsize <= maxsize


def _step(w):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.tanh(w * 1.5) ** 2)
    return loss.numpy(), tape.gradient(loss, w).numpy()


def test_clearing_every_cache_between_steps_changes_no_answer():
    w = tf.Variable([0.3, -1.2, 2.0])
    runs = [_step(w) for _ in range(3)]  # a first-seen structure, then compiled ones
    tf.debugging.clear_caches()
    again = _step(w)
    for loss, grad in runs:
        np.testing.assert_allclose(loss, again[0], rtol=1e-6)
        np.testing.assert_allclose(grad, again[1], rtol=1e-6)


def test_a_memo_empties_its_companions_with_it():
    companion = {"a": 1}
    memo = caches.Memo("test memo", 2, companions=(companion,))
    try:
        memo[1] = memo[2] = 0
        memo[3] = 0
        assert dict(memo) == {3: 0} and companion == {}
        memo[3] = 1  # replacing a key does not empty the table
        assert dict(memo) == {3: 1}
    finally:
        caches.ALL.remove(memo)


def test_checking_mode_names_the_cache_that_differs():
    with pytest.raises(checking.CheckError, match="executable cache"):
        checking.compare("executable cache (executables.py)", [np.float32(1.0)], [np.float32(1.5)], "a test")
    checking.compare("executable cache (executables.py)", [np.float32(1.0)], [np.float32(1.0 + 1e-7)])
    with pytest.raises(checking.CheckError, match="structure memo"):
        checking.require("structure memo", False, "a test")
