"""When the executable cache compiles (executables.Policy): never over the size bound, and a large structure only once
its op-by-op runs have paid for the compile (DESIGN invariants 5 and 12). The decisions are read from the cache's
counters, never from wall time; the answers are checked against JAX whichever way they were computed."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import checking, executables

W0 = np.linspace(-1.0, 1.0, 8, dtype=np.float32)


def _chain(lib, h, n_ops):
    tanh = jnp.tanh if lib is jnp else tf.tanh
    for i in range(n_ops):
        h = tanh(h) if i % 2 == 0 else h * 1.5
    return jnp.sum(h) if lib is jnp else tf.reduce_sum(h)


def _gradient_step(w, n_ops):
    with tf.GradientTape() as tape:
        loss = _chain(tf, w, n_ops)
    return loss.numpy(), tape.gradient(loss, w).numpy()


@pytest.fixture
def policy(monkeypatch):
    executables.CACHE.clear()
    yield executables.POLICY
    executables.CACHE.clear()


def _expected(n_ops):
    return jax.value_and_grad(lambda h: _chain(jnp, h, n_ops))(jnp.asarray(W0))


def test_a_program_over_the_size_bound_is_never_compiled(policy):
    # The default bound, on a program just over it: every run takes the op-by-op sweep, none compiles.
    n_ops = policy.max_steps + 1
    w = tf.Variable(W0)
    loss, grad = _expected(n_ops)
    for run in range(3):
        got_loss, got_grad = _gradient_step(w, n_ops)
        np.testing.assert_allclose(got_loss, loss, rtol=1e-5)
        np.testing.assert_allclose(got_grad, grad, rtol=1e-4, atol=1e-6)
        assert executables.CACHE.stats == {"eager: size": run + 1}


def test_a_small_structure_compiles_when_it_repeats(policy):
    w = tf.Variable(W0)
    assert policy.min_runs(11) == 2  # a 10-op chain and its sum: a small training step
    _gradient_step(w, 10)
    assert executables.CACHE.stats == {"eager: history": 1}
    for _ in range(3):
        _gradient_step(w, 10)
    assert executables.CACHE.stats == {"eager: history": 1, "compiled": 1}


def test_a_larger_structure_compiles_on_the_run_that_pays_for_it(policy, monkeypatch):
    # 16 steps at 62.5 ms each: a 1 s compile, 0.25 s of it granted; each op-by-op run costs 16 * 15.625 ms =
    # 0.25 s more than a compiled one: three such runs pay the remaining 0.75 s, and the fourth run compiles.
    monkeypatch.setattr(policy, "compile_s_per_step", 0.0625)
    monkeypatch.setattr(policy, "free_compile_s", 0.25)
    monkeypatch.setattr(policy, "saved_s_per_step", 0.015625)
    n_ops = 15  # with the sum: 16 steps
    assert policy.min_runs(16) == 1 + 3
    w = tf.Variable(W0)
    loss, grad = _expected(n_ops)
    for run in range(1, 6):
        got_loss, got_grad = _gradient_step(w, n_ops)
        np.testing.assert_allclose(got_loss, loss, rtol=1e-5)
        np.testing.assert_allclose(got_grad, grad, rtol=1e-5)
        eager = min(run, 3)
        assert executables.CACHE.stats == ({"eager: history": eager, "compiled": 1} if run > 3
                                           else {"eager: history": eager})


def test_the_history_bound_grows_with_size_until_the_size_bound():
    policy = executables.Policy()
    runs = [policy.min_runs(n) for n in (1, 10, 100, 300, 1000, policy.max_steps)]
    assert runs == sorted(runs) and runs[0] == 2 and runs[-1] > 2
    for n in (300, 1000, policy.max_steps):  # the op-by-op runs before the compile have paid for its cost
        paid = (policy.min_runs(n) - 1) * n * policy.saved_s_per_step
        assert paid >= n * policy.compile_s_per_step - policy.free_compile_s
    assert policy.decide(policy.max_steps + 1, 10**9, True) == "size"


def test_without_an_op_by_op_path_a_program_over_the_size_bound_runs_uncompiled(policy, monkeypatch):
    # Forward mode and hessians have no eager sweep: below the bound they compile at once, above it they run the
    # un-jitted transformation (what the checking mode compares with).
    x0 = np.array([0.3, -0.7], np.float32)

    def hessian():
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.tanh(x) * tf.sin(x))
        return tape.hessian(y, x).numpy()

    expected = jax.hessian(lambda v: jnp.sum(jnp.tanh(v) * jnp.sin(v)))(jnp.asarray(x0))
    np.testing.assert_allclose(hessian(), expected, rtol=1e-5)
    assert executables.CACHE.stats == {"compiled": 1}
    executables.CACHE.clear()
    monkeypatch.setattr(policy, "max_steps", 2)
    np.testing.assert_allclose(hessian(), expected, rtol=1e-5)
    np.testing.assert_allclose(hessian(), expected, rtol=1e-5)
    assert executables.CACHE.stats == {"eager: size": 2}


def test_the_checking_mode_still_checks_what_the_policy_compiles(policy, monkeypatch):
    w = tf.Variable(W0)
    monkeypatch.setattr(checking.FLAG, "on", True)
    for _ in range(3):
        _gradient_step(w, 10)  # checked against the plain path: no CheckError
    assert executables.CACHE.stats["compiled"] == 1
    (lowered,) = executables.CACHE._items.values()
    (kind,) = [k for k in lowered._compiled if lowered.is_compiled(k)]
    def wrong(fn):
        def run(*xs):
            outs = list(fn(*xs))
            outs[0] = outs[0] * 2  # the gradient (the transformation's outputs come first)
            return outs

        return run

    for wanted, (fn, spans) in list(lowered._compiled[kind].items()):  # a wrong executable is caught
        lowered._compiled[kind][wanted] = (wrong(fn), spans)
    with pytest.raises(checking.CheckError, match="executable cache"):
        _gradient_step(w, 10)


def test_a_variable_assigned_python_numbers_shares_one_executable(policy):
    # A learning rate assigned from Python floats: its value is an argument of the executable, not a literal baked
    # into the program, so every value runs the same executable (before: one structure and compile per value).
    w = tf.Variable(W0)
    lr = tf.Variable(0.1)
    for scale in (1.5, 1.5, 2.5, 2.5, 3.5, 3.5):
        lr.assign(scale)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(w) * lr)
        grad = tape.gradient(loss, w).numpy()
        np.testing.assert_allclose(grad, scale * (1 - np.tanh(W0) ** 2), rtol=1e-5)
    assert len(executables.CACHE) == 1
    assert executables.CACHE.stats == {"eager: history": 1, "compiled": 1}
    assert float(lr.numpy()) == 3.5 and lr.dtype == tf.float32


def test_a_variable_incremented_by_python_numbers_shares_one_executable(policy, monkeypatch):
    # assign_add's sum is a new array: the interned literal of the increment is neither copied (one dispatch per
    # optimizer step, for `iterations.assign_add(1)`) nor baked into the program as the variable's value.
    from tapejax._src import variable

    w = tf.Variable(W0)
    step = tf.Variable(0.0)
    owned = []
    monkeypatch.setattr(variable, "_own", lambda array: owned.append(array) or array)
    for k in range(1, 5):
        step.assign_add(1.0)
        step.assign_sub(0.5)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(w) * step)
        np.testing.assert_allclose(tape.gradient(loss, w).numpy(), 0.5 * k * (1 - np.tanh(W0) ** 2), rtol=1e-5)
    assert owned == []
    assert len(executables.CACHE) == 1
    assert float(step.numpy()) == 2.0 and step.dtype == tf.float32


# -- a first run whose ops are new: one compile instead of one per op (Policy.compiles_less) ------------------------


def _model(lib, ws, x):
    """A small model with nine kinds of ops, written once for tapejax and for JAX."""
    sigmoid = jax.nn.sigmoid if lib is jnp else tf.sigmoid
    mean = jnp.mean if lib is jnp else tf.reduce_mean
    total = jnp.sum if lib is jnp else tf.reduce_sum
    h = lib.tanh(lib.matmul(x, ws[0]) + ws[1])
    h = sigmoid(lib.matmul(h, ws[2])) * 2.0
    return mean(lib.square(h - 0.5)) + total(lib.exp(-h))


_RNG = np.random.default_rng(0)
_WS = [_RNG.normal(size=(5, 4)).astype(np.float32), _RNG.normal(size=(4,)).astype(np.float32),
       _RNG.normal(size=(4, 3)).astype(np.float32)]
_X = _RNG.normal(size=(6, 5)).astype(np.float32)


def _model_step(ws):
    with tf.GradientTape() as tape:
        loss = _model(tf, ws, tf.constant(_X))
    return loss.numpy(), [g.numpy() for g in tape.gradient(loss, ws)]


def _check_model_step(ws):
    loss, grads = _model_step(ws)
    expected_loss, expected = jax.value_and_grad(lambda w: _model(jnp, w, jnp.asarray(_X)))([jnp.asarray(w) for w in _WS])
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-5)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.fixture
def first_runs(policy, monkeypatch):
    """The rule on (tests/conftest.py turns it off for the suite), every per-op VJP forgotten."""
    monkeypatch.setattr(policy, "min_new_ops", executables.Policy.min_new_ops)
    tf.debugging.clear_caches()
    yield policy
    tf.debugging.clear_caches()


@pytest.mark.parametrize("background_on", [False, True])
def test_a_first_run_whose_vjps_are_all_new_compiles_at_once(first_runs, monkeypatch, background_on):
    from tapejax._src import background, sweep

    monkeypatch.setattr(background.FLAG, "on", background_on)  # a first run's compile is not deferred
    monkeypatch.setattr(checking.FLAG, "on", False)  # the checking mode sweeps to compare (tested below)
    ws = [tf.Variable(w) for w in _WS]
    _check_model_step(ws)
    assert executables.CACHE.stats == {"compiled": 1}
    assert background.STATS["compiles"] == 0
    (lowered,) = executables.CACHE._items.values()
    assert sweep.new_ops(lowered.program, ("vjp",)) >= first_runs.min_new_ops  # no sweep ran: all still new
    _check_model_step(ws)
    assert executables.CACHE.stats == {"compiled": 1}  # the second run reuses it


def test_a_first_run_whose_vjps_were_made_runs_op_by_op(first_runs):
    from tapejax._src import sweep

    ws = [tf.Variable(w) for w in _WS]
    first_runs.min_new_ops = 1 << 62
    _check_model_step(ws)  # the op-by-op sweep makes every VJP
    assert executables.CACHE.stats == {"eager: history": 1}
    (lowered,) = executables.CACHE._items.values()
    assert sweep.new_ops(lowered.program, ("vjp",)) == 0
    first_runs.min_new_ops = executables.Policy.min_new_ops
    executables.CACHE.clear()  # the structure is new again; its ops are not
    _check_model_step(ws)
    assert executables.CACHE.stats == {"eager: history": 1}


def test_a_first_run_compiled_at_once_is_checked_against_the_plain_path(first_runs, monkeypatch):
    monkeypatch.setattr(checking.FLAG, "on", True)
    ws = [tf.Variable(w) for w in _WS]
    _check_model_step(ws)  # compared with the op-by-op sweep: no CheckError
    assert executables.CACHE.stats == {"compiled": 1}


def test_a_growing_structure_of_known_ops_never_compiles_with_the_rule_on(first_runs):
    w = tf.Variable(W0)
    for n_ops in range(1, 30):  # a new structure on every call: three kinds of ops, fewer than min_new_ops
        _gradient_step(w, n_ops)
    assert "compiled" not in executables.CACHE.stats


def test_compiles_less_weighs_the_program_against_its_new_vjps():
    policy = executables.Policy()
    assert policy.compiles_less(25, 15)  # deep_q_network_breakout's first step: 75 ms against 375 ms
    assert not policy.compiles_less(25, policy.min_new_ops - 1)  # too few to tell
    assert not policy.compiles_less(1000, 20)  # 3 s of compile against 0.5 s of VJPs
    assert policy.decide(25, 1, True, lambda: 15) is None
    assert policy.decide(25, 1, True, lambda: 0) == "history"
    assert policy.decide(1000, 2, True, lambda: 10**6) == "history"  # only a first run is decided this way
