"""Background compilation (background.py, executables.Lowered._background): a repeated structure runs op by op
while its executable compiles on a worker thread, then runs the executable; the values are those of the op-by-op
path and of a synchronous compile (DESIGN invariant 11). The decisions are read from counters, never from wall
time: `tf.debugging.wait_for_compiles()` makes the switch deterministic."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import background, checking, executables

W0 = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def on(monkeypatch):
    """Background compilation on (tests/conftest.py turns it off for the rest of the suite, which counts compiles
    run by run)."""
    tf.debugging.wait_for_compiles()
    executables.CACHE.clear()
    monkeypatch.setattr(background.FLAG, "on", True)
    # the run after the one that queued the compile switches to the executable (waiting for it): short tests
    monkeypatch.setattr(executables.POLICY, "runs_while_compiling", 1)
    yield
    tf.debugging.wait_for_compiles()
    executables.CACHE.clear()


def _chain(lib, h, n_ops):
    tanh = jnp.tanh if lib is jnp else tf.tanh
    for i in range(n_ops):
        h = tanh(h) if i % 2 == 0 else h * 1.5
    return jnp.sum(h) if lib is jnp else tf.reduce_sum(h)


def _gradient_step(w, n_ops=10):
    with tf.GradientTape() as tape:
        loss = _chain(tf, w, n_ops)
    return loss.numpy(), tape.gradient(loss, w).numpy()


def _training_loop(steps, wait_after=None):
    rng = np.random.default_rng(0)
    ws = [tf.Variable(rng.normal(size=(6, 6)).astype(np.float32) * 0.5) for _ in range(3)]
    x = tf.constant(rng.normal(size=(4, 6)).astype(np.float32))
    losses = []
    for i in range(steps):
        with tf.GradientTape() as tape:
            h = x
            for w in ws:
                h = tf.tanh(tf.matmul(h, w)) + 0.1 * h
            loss = tf.reduce_mean(h * h)
        grads = tape.gradient(loss, ws)
        for w, g in zip(ws, grads):
            w.assign_sub(0.1 * g)
        losses.append(loss.numpy())
        if i == wait_after:
            tf.debugging.wait_for_compiles()
    return np.array(losses), [w.numpy() for w in ws]


def test_values_are_the_same_with_background_compilation_on_and_off(on, monkeypatch):
    # On: the second step runs op by op while the step compiles (waited for), the rest run the executable.
    losses_on, ws_on = _training_loop(8, wait_after=1)
    assert executables.CACHE.stats["compiled"] == 1 and executables.CACHE.stats["eager: compiling"] == 1
    assert background.STATS["compiles"] == 1
    executables.CACHE.clear()
    monkeypatch.setattr(background.FLAG, "on", False)
    losses_off, ws_off = _training_loop(8)
    assert executables.CACHE.stats == {"eager: history": 1, "compiled": 1}
    assert background.STATS["compiles"] == 0
    # A fused executable may round differently from op-by-op dispatch in the last bits (checking.py's tolerance).
    np.testing.assert_allclose(losses_on, losses_off, rtol=1e-5)
    for a, b in zip(ws_on, ws_off):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_the_knob_decides_when_the_executable_is_used(on, monkeypatch):
    w = tf.Variable(W0)
    expected = jax.value_and_grad(lambda h: _chain(jnp, h, 10))(jnp.asarray(W0))
    for _ in range(2):
        _gradient_step(w)
    (lowered,) = executables.CACHE._items.values()
    (kind,) = list(lowered._compiled)
    assert not lowered.is_compiled(kind)  # submitted on the second run, which ran op by op
    assert tf.debugging.wait_for_compiles(timeout=300)
    loss, grad = _gradient_step(w)
    assert lowered.is_compiled(kind)
    np.testing.assert_allclose(loss, expected[0], rtol=1e-5)
    np.testing.assert_allclose(grad, expected[1], rtol=1e-5)
    assert executables.CACHE.stats == {"eager: history": 1, "eager: compiling": 1, "compiled": 1}

    executables.CACHE.clear()
    tf.config.experimental_background_compile(False)  # off: the second run compiles at once and runs it
    try:
        for _ in range(2):
            _gradient_step(w)
    finally:
        tf.config.experimental_background_compile(True)
    (lowered,) = executables.CACHE._items.values()
    assert lowered.is_compiled(kind)
    assert executables.CACHE.stats == {"eager: history": 1, "compiled": 1}


def test_the_environment_variable_turns_it_off():
    code = "from tapejax._src import background; print(background.enabled())"
    env = {**os.environ, "PYTHONPATH": ROOT}
    for value, expected in (("0", "False"), ("1", "True"), (None, "True")):
        env.pop("TAPEJAX_BACKGROUND_COMPILE", None)
        if value is not None:
            env["TAPEJAX_BACKGROUND_COMPILE"] = value
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert out.stdout.strip() == expected, out.stderr


def test_a_compile_error_falls_back_to_the_op_by_op_path_for_good(on, monkeypatch):
    submit = background.submit

    def broken(compile_fn):
        def fail():
            raise RuntimeError("XLA could not compile this")

        return submit(fail)

    monkeypatch.setattr(background, "submit", broken)
    w = tf.Variable(W0)
    loss, grad = jax.value_and_grad(lambda h: _chain(jnp, h, 10))(jnp.asarray(W0))
    for run in range(6):
        got_loss, got_grad = _gradient_step(w)  # never raised
        np.testing.assert_allclose(got_loss, loss, rtol=1e-5)
        np.testing.assert_allclose(got_grad, grad, rtol=1e-5)
        if run == 1:
            tf.debugging.wait_for_compiles()
    stats = executables.CACHE.stats
    assert stats["compiled"] == 1 and stats["eager: compile error"] == 4
    assert tf.debugging.compile_stats()["tape"]["background"]["errors"] == 1
    (lowered,) = executables.CACHE._items.values()
    assert not any(lowered.is_compiled(kind) for kind in lowered._compiled)


def test_compile_stats_count_background_compiles_and_their_seconds(on):
    w = tf.Variable(W0)
    for run in range(3):
        _gradient_step(w)
        if run == 1:
            tf.debugging.wait_for_compiles()
    tape = tf.debugging.compile_stats()["tape"]
    assert tape["compiled"] == 1 and tape["eager_runs"] == {"history": 1, "compiling": 1}
    assert tape["background"]["compiles"] == 1 and tape["background"]["compile_s"] > 0
    assert tape["background"]["errors"] == 0
    tf.debugging.clear_caches()
    assert tf.debugging.compile_stats()["tape"]["background"] == {"compiles": 0, "compile_s": 0, "errors": 0}


def test_a_structure_that_changes_on_every_call_never_compiles(on):
    w = tf.Variable(W0)
    for n_ops in range(1, 8):
        _gradient_step(w, n_ops)
    tf.debugging.wait_for_compiles()
    assert executables.CACHE.stats == {"eager: history": 7}
    assert background.STATS["compiles"] == 0


def test_threads_sharing_a_structure_submit_it_once(on):
    expected = jax.value_and_grad(lambda h: _chain(jnp, h, 10))(jnp.asarray(W0))
    errors = []

    def worker():
        try:
            w = tf.Variable(W0)
            for _ in range(20):
                loss, grad = _gradient_step(w)
                np.testing.assert_allclose(loss, expected[0], rtol=1e-5)
                np.testing.assert_allclose(grad, expected[1], rtol=1e-5)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    tf.debugging.wait_for_compiles()
    assert background.STATS["compiles"] == 1 and executables.CACHE.stats["compiled"] == 1
    assert len(executables.CACHE) == 1


def test_the_checking_mode_checks_an_executable_compiled_in_the_background(on, monkeypatch):
    monkeypatch.setattr(checking.FLAG, "on", True)
    w = tf.Variable(W0)
    for run in range(4):
        _gradient_step(w)
        if run == 1:
            tf.debugging.wait_for_compiles()
    (lowered,) = executables.CACHE._items.values()
    (kind,) = [k for k in lowered._compiled if lowered.is_compiled(k)]
    for wanted, (fn, spans) in list(lowered._compiled[kind].items()):  # a wrong executable is caught
        lowered._compiled[kind][wanted] = (lambda *xs, fn=fn: [o * 2 for o in fn(*xs)], spans)
    with pytest.raises(checking.CheckError, match="executable cache"):
        _gradient_step(w)


_EXIT_WHILE_COMPILING = """
import time
import numpy as np
import tapejax as tf
w = tf.Variable(np.linspace(-1, 1, 8, dtype=np.float32))
for _ in range(2):  # the second run queues a 1,500-step compile
    with tf.GradientTape() as tape:
        h = w
        for i in range(1500):
            h = tf.tanh(h) if i % 2 == 0 else h * 1.5
        loss = tf.reduce_sum(h)
    tape.gradient(loss, w)
from tapejax._src import background
print("compiling" if not background.wait_for_compiles(timeout=0) else "done", flush=True)
"""


def test_the_process_exits_cleanly_while_a_compile_runs():
    env = {**os.environ, "PYTHONPATH": ROOT, "TAPEJAX_BACKGROUND_COMPILE": "1"}
    env.pop("TAPEJAX_CHECK", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_EXIT_WHILE_COMPILING)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() in ("compiling", "done")


_CACHE_RUN = """
import jax
import numpy as np
import tapejax as tf
hits = []
jax.monitoring.register_event_listener(lambda name, **kw: hits.append(name) if name.endswith("cache_hits") else None)
tf.config.experimental_background_compile(False)
w = tf.Variable(np.linspace(-1, 1, 8, dtype=np.float32))
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.tanh(w * 1.5) * w)
    g = tape.gradient(loss, w)
print(len(hits), float(tf.reduce_sum(g)))
"""


def test_the_persistent_compilation_cache_warms_a_second_process(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT, "TAPEJAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TAPEJAX_CHECK", None)
    runs = [subprocess.run([sys.executable, "-c", _CACHE_RUN], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    (first_hits, first_value), (second_hits, second_value) = [r.stdout.split() for r in runs]
    assert int(first_hits) == 0 and int(second_hits) > 0
    assert first_value == second_value
    assert os.listdir(tmp_path / "cache")


@pytest.mark.parametrize("delay", [0.0, 0.5])
def test_the_switch_to_the_executable_is_on_a_fixed_run_however_long_the_compile_takes(on, monkeypatch, delay):
    # An executable may round differently from op-by-op dispatch, so the run that switches must not follow the
    # clock: the same program gives the same values on every run of it, on a quiet or a loaded machine.
    import time

    monkeypatch.setattr(executables.POLICY, "runs_while_compiling", 3)
    submit = background.submit

    def slow(compile_fn):
        def later():
            time.sleep(delay)
            return compile_fn()

        return submit(later)

    monkeypatch.setattr(background, "submit", slow)
    w = tf.Variable(W0)
    compiled_after = []
    for _ in range(7):
        _gradient_step(w)
        (lowered,) = executables.CACHE._items.values()
        compiled_after.append(any(lowered.is_compiled(kind) for kind in lowered._compiled))
    # run 1: history; runs 2-4 op by op while compiling; run 5 waits if need be and runs the executable
    assert compiled_after == [False, False, False, False, True, True, True]
    assert executables.CACHE.stats == {"eager: history": 1, "eager: compiling": 3, "compiled": 1}


def _fit_losses(x, y, batches=None):
    """A small Keras model fitted for two epochs on data whose last batch is partial (6 samples, batches of 4)."""
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    rng = np.random.default_rng(3)
    for weight in model.weights:
        weight.assign(rng.normal(size=weight.shape).astype(np.float32) * 0.5)
    model.compile(optimizer="adam", loss="mse")
    data = (x, y) if batches is None else (tf.data.Dataset.from_tensor_slices((x, y)).batch(batches),)
    history = model.fit(*data, batch_size=None if batches is not None else 4, epochs=2, verbose=0)
    return history.history["loss"], model.train_function


@pytest.mark.parametrize("source", ["dataset", "arrays"])
def test_fit_compiles_its_partial_last_batch_in_the_background_with_the_same_values(on, source):
    """Keras's fit looks at its next batch before each step of the first epoch (a prefetching tf.data iterator
    holds it already): a new size, the partial last batch, queues its compile while the first step compiles."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(6, 3)).astype(np.float32), rng.normal(size=(6, 1)).astype(np.float32)
    submitted = []
    original = background.submit

    def counting(compile_fn):
        submitted.append(compile_fn)
        return original(compile_fn)

    background.submit = counting
    try:
        losses, train_function = _fit_losses(x, y, 4 if source == "dataset" else None)
    finally:
        background.submit = original
    assert len(submitted) == 1  # the size-2 step, queued while the size-4 step compiled
    (concrete,) = {id(c): c for c in train_function.compiled._concrete.values()}.values()
    assert sorted(concrete._by_size.keys()) == [((2, 3), (2, 1)), ((4, 3), (4, 1))]
    background.FLAG.on = False
    try:
        plain, _ = _fit_losses(x, y, 4 if source == "dataset" else None)
    finally:
        background.FLAG.on = True
    assert losses == plain  # bit for bit: the same lowered program, compiled on another thread


def test_fit_never_reads_ahead_of_a_generator():
    """A generator's next batch belongs to whoever reads it next (the next epoch, with steps_per_epoch), so fit's
    look-ahead leaves generators alone: each batch is read just before its step, as before."""
    events = []

    def batches():
        while True:
            events.append("read")
            yield np.ones((4, 3), np.float32), np.ones((4, 1), np.float32)

    class Steps(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            events.append("step")

    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(batches(), steps_per_epoch=3, epochs=2, verbose=0, callbacks=[Steps()])
    assert events == ["read", "step"] * 6
