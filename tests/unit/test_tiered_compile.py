"""Tiered compilation (tiers.py): a tf.function trace first runs an executable compiled with XLA:CPU's quick
emitters, and XLA's optimised compile of the same lowered program from call `SWITCH_AT` on (queued on the
background worker at call `OPTIMISE_AT`). The switch is on a fixed call, so the values do not depend on when a
compile finished; both executables give the trace's values to float tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from jax._src import stages

import tapejax as tf
from tapejax._src import background, checking, tiers, xla_options


@pytest.fixture
def short(monkeypatch):
    """The optimised compile queued on call 2 and used from call 4: short tests."""
    tf.debugging.wait_for_compiles()
    monkeypatch.setattr(tiers.FLAG, "on", True)
    monkeypatch.setattr(tiers, "OPTIMISE_AT", 2)
    monkeypatch.setattr(tiers, "SWITCH_AT", 4)
    monkeypatch.setattr(tiers, "MIN_EQUATIONS", 0)  # the test steps are small
    yield
    tf.debugging.wait_for_compiles()


def _quick() -> dict:
    """The options of a quick-tier compile: the quick emitters over xla_options' choice."""
    return {**xla_options.options(), **tiers.QUICK}


def _optimised() -> dict:
    """The options of an optimised-tier compile: xla_options' choice ({} where XLA's defaults stand)."""
    return dict(xla_options.options())


@pytest.fixture
def options(monkeypatch):
    """The compiler options of every XLA compile of a lowered program (JAX's `Lowered.compile`), in order."""
    xla_options.options()  # decided (its trial compile made) before recording
    seen = []
    original = stages.Lowered.compile

    def compile(self, compiler_options=None, **kwargs):
        seen.append(dict(compiler_options or {}))
        return original(self, compiler_options, **kwargs)

    monkeypatch.setattr(stages.Lowered, "compile", compile)
    return seen


def _step_function():
    """A training step: a dense layer's loss and an SGD update of its variables, with erf and tanh (whose kernels the
    two emitters may round differently)."""
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.normal(size=(6, 4)).astype(np.float32))
    b = tf.Variable(np.zeros(4, np.float32))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            h = tf.math.erf(tf.matmul(x, w) + b)
            loss = tf.reduce_mean(tf.tanh(h) ** 2)
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss, tf.transpose(h)

    xs = [rng.normal(size=(5, 6)).astype(np.float32) for _ in range(7)]
    return step, (w, b), xs


def _run(n_calls=7):
    step, variables, xs = _step_function()
    outs = [[np.asarray(v) for v in step(tf.constant(x))] for x in xs[:n_calls]]
    return outs + [[v.numpy() for v in variables]], step


def test_the_first_executable_is_quick_and_the_switch_is_on_a_fixed_call(short, options, monkeypatch):
    monkeypatch.setattr(background.FLAG, "on", False)
    step, _, xs = _step_function()
    step(tf.constant(xs[0]))
    concrete = next(iter(step._concrete.values()))
    executable = concrete._compiled
    assert isinstance(executable, tiers.Tiered) and not executable.optimised
    assert options == [_quick()]  # one compile, with the quick emitters
    for k in range(1, 3):
        step(tf.constant(xs[k]))
    assert not executable.optimised and options == [_quick()]  # call 3: still quick, nothing compiled
    step(tf.constant(xs[3]))  # call 4 (SWITCH_AT): compiled here (background compilation off), and used
    assert executable.optimised and executable._lowered is None  # the lowered program is let go
    assert options == [_quick(), _optimised()]
    step(tf.constant(xs[4]))
    assert options == [_quick(), _optimised()]  # nothing compiled again
    assert step.experimental_get_tracing_count() == 1


def test_values_do_not_depend_on_the_background_worker_and_match_one_optimised_compile(short, monkeypatch):
    monkeypatch.setattr(background.FLAG, "on", True)
    on, _ = _run()
    again, _ = _run()
    monkeypatch.setattr(background.FLAG, "on", False)
    synchronous, _ = _run()
    monkeypatch.setattr(tiers.FLAG, "on", False)
    optimised_only, step = _run()
    assert not isinstance(next(iter(step._concrete.values()))._compiled, tiers.Tiered)
    for k, (a, b, c, d) in enumerate(zip(on, again, synchronous, optimised_only)):
        for x, y, z, u in zip(a, b, c, d):
            np.testing.assert_array_equal(x, y, err_msg=f"call {k + 1}: two runs with the worker differ")
            np.testing.assert_array_equal(x, z, err_msg=f"call {k + 1}: the worker against a synchronous compile")
            np.testing.assert_allclose(x, u, rtol=1e-5, atol=1e-6, err_msg=f"call {k + 1}: against XLA's defaults")


def test_the_optimised_compile_runs_on_the_worker(short, monkeypatch):
    monkeypatch.setattr(background.FLAG, "on", True)
    before = background.STATS["compiles"]
    step, _, xs = _step_function()
    for x in xs[:2]:  # call 2 (OPTIMISE_AT) queues it
        step(tf.constant(x))
    assert tf.debugging.wait_for_compiles(timeout=120)
    assert background.STATS["compiles"] == before + 1
    executable = next(iter(step._concrete.values()))._compiled
    assert not executable.optimised
    step(tf.constant(xs[2]))
    step(tf.constant(xs[3]))
    assert executable.optimised and background.STATS["compiles"] == before + 1


def test_a_step_with_none_dimensions_is_tiered_per_size(short, options, monkeypatch):
    monkeypatch.setattr(background.FLAG, "on", False)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        return tf.reduce_sum(tf.sin(x) * 2.0, axis=1)

    for n in (2, 2, 5, 2, 2):
        x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
        np.testing.assert_allclose(f(tf.constant(x)).numpy(), (np.sin(x) * 2.0).sum(1), rtol=1e-5)
    # size 2: quick on its first call, optimised on its fourth; size 5: quick once
    assert options.count(_quick()) == 2 and options.count(_optimised()) == 1


class _Lowered:
    """A stand-in for JAX's Lowered: executables that tag their answers, and compiles that may fail."""

    def __init__(self, quick_error=None, optimised_error=None, optimised_answer="optimised"):
        self.compiles = []
        self.quick_error, self.optimised_error, self.optimised_answer = quick_error, optimised_error, optimised_answer

    def compile(self, options=None):
        self.compiles.append(options)
        quick = options is not None and options.items() >= tiers.QUICK.items()
        if quick and self.quick_error:
            raise self.quick_error
        if not quick and self.optimised_error:
            raise self.optimised_error
        answer = "quick" if quick else self.optimised_answer
        return lambda x: (answer, x)


def test_a_failed_optimised_compile_keeps_the_quick_executable(short, monkeypatch):
    for on in (True, False):
        monkeypatch.setattr(background.FLAG, "on", on)
        lowered = _Lowered(optimised_error=RuntimeError("XLA failed"))
        executable = tiers.compile(lowered, 1000)
        assert [executable(k)[0] for k in range(6)] == ["quick"] * 6
        assert executable.optimised and lowered.compiles == [_quick(), _optimised() or None]


def test_an_xla_without_the_quick_emitters_compiles_with_its_defaults(short, monkeypatch):
    lowered = _Lowered(quick_error=ValueError("INVALID_ARGUMENT: No such compile option: 'xla_cpu_use_fusion_e'"))
    executable = tiers.compile(lowered, 1000)
    assert executable(1) == ("optimised", 1) and lowered.compiles == [_quick(), _optimised() or None]
    assert not tiers.FLAG.on  # not tried again
    lowered = _Lowered()
    assert tiers.compile(lowered, 1000)(2) == ("optimised", 2) and lowered.compiles == [_optimised() or None]


def test_a_program_the_quick_emitters_refuse_compiles_with_the_defaults(short):
    lowered = _Lowered(quick_error=RuntimeError("UNIMPLEMENTED: something"))
    assert tiers.compile(lowered, 1000)(3) == ("optimised", 3) and tiers.FLAG.on


def test_checking_mode_compares_the_two_executables_at_the_switch(short, monkeypatch):
    monkeypatch.setattr(background.FLAG, "on", False)
    monkeypatch.setattr(checking.FLAG, "on", True)
    executable = tiers.compile(_Lowered(optimised_answer="quick"), 1000)  # agrees: no error
    assert [executable(np.float32(k))[1] for k in range(5)] == [0, 1, 2, 3, 4]
    executable = tiers.compile(_Lowered(), 1000)
    for k in range(3):
        executable(np.float32(k))
    with pytest.raises(checking.CheckError, match="tiers.py"):
        executable(np.float32(3))


def test_a_small_function_compiles_once_with_xla_defaults_and_gives_the_eager_bits(options, monkeypatch):
    monkeypatch.setattr(tiers.FLAG, "on", True)
    x = tf.constant(np.random.default_rng(3).normal(size=(7, 5)).astype(np.float32))
    moments = tf.function(lambda x: tf.nn.moments(x, [0]))
    got = moments(x)
    assert options == [{}]  # one compile, XLA's defaults: fewer than MIN_EQUATIONS
    assert not isinstance(next(iter(moments._concrete.values()))._compiled, tiers.Tiered)
    for g, e in zip(got, tf.nn.moments(x, [0])):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
    assert tiers.compile(_Lowered(), tiers.MIN_EQUATIONS - 1)(1) == ("optimised", 1)
    assert tiers.compile(_Lowered(), tiers.MIN_EQUATIONS)(1) == ("quick", 1)
