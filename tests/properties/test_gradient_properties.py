"""Property tests: what a GradientTape computes for a random program equals what JAX computes for it.

Each random straight-line program (see random_programs.py) is run twice: through the TF API of the module
under test, under a `GradientTape`, and in jax.numpy, differentiated with `jax.vjp` (the gradient)
and forward-over-reverse `jax.jvp(jax.grad(f))` (the Hessian, as `jax.hessian` computes it).
JAX is the oracle for the numbers; the tape semantics (None for unwatched or unconnected sources,
zeros with `UnconnectedGradients.ZERO`, summing over non-scalar targets, structured sources) are
TensorFlow's. The module under test is a parameter: `tapejax`, and real TensorFlow, which keeps the
tests themselves honest (TF must pass every property too).

JAX stays the right oracle after tapejax took TF's kernel conventions at the edges (a zero upstream gradient
gives zero through sqrt/rsqrt/reciprocal; TF's gradients of pow in y, abs, reduce_max... at NaN, inf, 0 and
bases <= 0; tests/compat/test_edge_values_vs_tf.py): random_programs.py draws no edge point (its rows are smooth and
tame on [-1.5, 1.5]: log and sqrt see positive arguments, denominators stay >= 1, no NaN or inf is drawn), and
away from the edges those conventions are JAX's own derivatives (a masked zero cotangent times a finite
derivative is the same 0).

Speed: compiling JAX's eager primitives for new shapes is what costs (tens of ms each). All tests
that draw from `P.programs()` share one seed per session, and every example is drawn whole by the
strategy, so they see the same programs and the oracle's primitives compile once per run.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import random_programs as P
import pytest
from hypothesis import Phase, assume, given, note, seed, settings

# Features tapejax does not have yet -> the issue that tracks each. A test that needs one is a strict
# xfail on tapejax, so it turns red (XPASS) the day the feature works: then delete its line here.
TAPEJAX_XFAIL: dict[str, str] = {}

MODULE_NAMES = ("tapejax", "tensorflow")

# One seed per session, shared by every test (see the module docstring); a fresh one each run, so
# runs still explore. Hypothesis prints the falsifying program; the seed is in its notes, and
# TAPEJAX_TEST_SEED=<seed> replays the whole run.
SEED = int(os.environ.get("TAPEJAX_TEST_SEED") or random.SystemRandom().randrange(2**32))


def modules(*features: str) -> list[Any]:
    """The `tf` parameters of a test that needs `features`, with tapejax's known gaps as xfail."""
    params = []
    for name in MODULE_NAMES:
        reasons = [TAPEJAX_XFAIL[f] for f in features if name == "tapejax" and f in TAPEJAX_XFAIL]
        marks = [pytest.mark.xfail(strict=True, reason="; ".join(reasons))] if reasons else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.fixture(scope="module", params=modules())
def tf(request: pytest.FixtureRequest) -> Any:
    """The module under test, imported as `tf` (skipped where it is not installed)."""
    module = pytest.importorskip(request.param)
    if getattr(module, "__file__", None) is None:  # a bare directory imports as a namespace package
        pytest.skip(f"{request.param} has no __init__.py yet")
    return module


# Hypothesis's explain phase re-runs a failing example with parts of it redrawn: here every redraw
# is a new program for the oracle to compile, a minute per failure, for a report the printed
# program already gives. The profile (tests/conftest.py) decides everything else.
NO_EXPLAIN = [phase for phase in Phase if phase is not Phase.explain]


def property_test(strategy: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """`@given(program=strategy)` with the session's shared seed and no explain phase."""

    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        return settings(phases=NO_EXPLAIN)(seed(SEED)(given(program=strategy)(test)))

    return decorate


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------


def oracle(program: P.Program, cotangent: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """JAX's target and vjps; every test calls it first with the same filter, so that all tests
    discard the same examples (those whose values are too large to compare in float32)."""
    note(f"session seed: {SEED}")
    target, vjps = P.jax_vjp(program)
    assume(P.tame(target, *vjps))
    if cotangent is not None:
        target, vjps = P.jax_vjp(program, cotangent)
    return target, vjps


def expected_gradients(program: P.Program, vjps: list[np.ndarray], *, zero: bool = False) -> list[Any]:
    """TF's answer per input: the vjp if the tape watched it and the target depends on it, else None
    (or zeros of its shape with `unconnected_gradients=ZERO`)."""
    connected = program.connected()
    out: list[Any] = []
    for i, inp in enumerate(program.inputs):
        if program.watched(i) and i in connected:
            out.append(vjps[i])
        else:
            out.append(np.zeros_like(inp.value) if zero else None)
    return out


def watch_inputs(tape: Any, program: P.Program, leaves: list[Any]) -> None:
    """`tape.watch` on the inputs the program marks watched."""
    for leaf, inp in zip(leaves, program.inputs):
        if inp.watch:
            tape.watch(leaf)


def check_gradient(got: Any, expected: np.ndarray | None, program: P.Program, what: str) -> None:
    if expected is None:
        assert got is None, f"{what}: expected None (unwatched or unconnected), got {got!r}"
        return
    assert got is not None, f"{what}: expected a gradient, got None"
    value = got.numpy()
    assert value.dtype == expected.dtype, f"{what}: dtype {value.dtype}, expected {expected.dtype}"
    assert value.shape == expected.shape, f"{what}: shape {value.shape}, expected {expected.shape}"
    P.assert_close(value, expected, program.rtol, what)


# ---------------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------------


@property_test(P.programs())
def test_forward_value_matches_jnp(tf: Any, program: P.Program) -> None:
    """The op table itself: every TF-API row computes what its jnp twin computes."""
    target, _ = oracle(program)
    got = program.run_tf(tf, program.leaves(tf)).numpy()
    assert got.dtype == target.dtype
    assert got.shape == target.shape
    P.assert_close(got, target, program.rtol, "forward value")


@property_test(P.programs())
def test_gradient_matches_jax_vjp(tf: Any, program: P.Program) -> None:
    """tape.gradient(y, sources) == jax.vjp(f)(ones) (jax.grad for a scalar y) for watched sources
    the target depends on; None for the others, including a watched source the target never used."""
    _, vjps = oracle(program)
    leaves = program.leaves(tf)
    with tf.GradientTape(watch_accessed_variables=program.watch_accessed_variables) as tape:
        watch_inputs(tape, program, leaves)
        spare = tf.constant(np.ones((2,), program.dtype))  # watched, never used
        tape.watch(spare)
        target = program.run_tf(tf, leaves)
    got = tape.gradient(target, [*leaves, spare])
    assert isinstance(got, list) and len(got) == len(leaves) + 1
    for i, (g, e) in enumerate(zip(got, expected_gradients(program, vjps))):
        check_gradient(g, e, program, f"d target / d v{i}")
    assert got[-1] is None, "a watched source the target does not use has gradient None"


@property_test(P.programs())
def test_a_repeated_structure_differentiates_its_own_values(tf: Any, program: P.Program) -> None:
    """The second step of a training loop: the same program on new values reuses the first one's slice (by
    structure) and compiles it; its gradient is JAX's at the new values, not a cached answer."""
    again = dataclasses.replace(program, inputs=tuple(dataclasses.replace(inp, value=(inp.value * 0.75).astype(
        inp.value.dtype)) for inp in program.inputs))
    oracle(program)
    _, vjps = oracle(again)
    for run in (program, again):
        leaves = run.leaves(tf)
        with tf.GradientTape(watch_accessed_variables=run.watch_accessed_variables) as tape:
            watch_inputs(tape, run, leaves)
            target = run.run_tf(tf, leaves)
        got = tape.gradient(target, leaves)
    for i, (g, e) in enumerate(zip(got, expected_gradients(again, vjps))):
        check_gradient(g, e, again, f"second run: d target / d v{i}")


@property_test(P.programs())
def test_unconnected_gradients_zero(tf: Any, program: P.Program) -> None:
    """With UnconnectedGradients.ZERO every None becomes zeros of the source's shape and dtype."""
    _, vjps = oracle(program)
    leaves = program.leaves(tf)
    spare_variable = tf.Variable(np.ones((3, 1), program.dtype))  # trainable, never read
    tape, target = P.record(tf, program, leaves)
    got = tape.gradient(target, [*leaves, spare_variable], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    expected = [*expected_gradients(program, vjps, zero=True), np.zeros((3, 1), program.dtype)]
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        check_gradient(g, e, program, f"d target / d source {i}")


@property_test(P.programs())
def test_gradient_is_linear_in_output_gradients(tf: Any, program: P.Program) -> None:
    """g(a*u + b*v) == a*g(u) + b*g(v), and g(u) == jax.vjp(f)(u)."""
    assert program.extras is not None
    u, v, a, b = program.extras.u, program.extras.v, program.extras.a, program.extras.b
    w = (a * u.astype(np.float64) + b * v.astype(np.float64)).astype(program.dtype)
    _, vjps_u = oracle(program, u)
    leaves = program.leaves(tf)

    def gradient_with(cotangent: np.ndarray) -> list[Any]:
        tape, target = P.record(tf, program, leaves)
        return tape.gradient(target, leaves, output_gradients=tf.constant(cotangent))

    g_u, g_v, g_w = gradient_with(u), gradient_with(v), gradient_with(w)
    for i, (gu, e) in enumerate(zip(g_u, expected_gradients(program, vjps_u))):
        check_gradient(gu, e, program, f"d target / d v{i} with output_gradients=u")
    for i, (gu, gv, gw) in enumerate(zip(g_u, g_v, g_w)):
        if gu is None:
            assert gv is None and gw is None, f"v{i}: None for u but not for v or a*u+b*v"
            continue
        au, bv = a * gu.numpy().astype(np.float64), b * gv.numpy().astype(np.float64)
        scale = max(np.max(np.abs(au), initial=0.0), np.max(np.abs(bv), initial=0.0))
        P.assert_close(gw.numpy(), au + bv, program.rtol, f"v{i}: g(a*u+b*v)", scale=scale)


@property_test(P.programs())
def test_persistent_tape_answers_twice(tf: Any, program: P.Program) -> None:
    """A persistent tape gives the same gradients again (sources in another order the second time)."""
    _, vjps = oracle(program)
    leaves = program.leaves(tf)
    tape, target = P.record(tf, program, leaves, persistent=True)
    first = tape.gradient(target, leaves)
    second = tape.gradient(target, leaves[::-1])[::-1]
    expected = expected_gradients(program, vjps)
    for i, (g1, g2, e) in enumerate(zip(first, second, expected)):
        check_gradient(g1, e, program, f"first call, v{i}")
        check_gradient(g2, e, program, f"second call, v{i}")
        if e is not None:
            # Same trace, same answer; the second call may run a compiled replay, so not bit-exact.
            P.assert_close(g2.numpy(), g1.numpy(), program.rtol, f"v{i}: second vs first")


@property_test(P.programs())
def test_non_persistent_tape_refuses_second_gradient(tf: Any, program: P.Program) -> None:
    """A second `gradient` call on a non-persistent tape raises RuntimeError."""
    oracle(program)  # not needed for the check: keeps this test on the shared sequence of programs
    leaves = program.leaves(tf)
    tape, target = P.record(tf, program, leaves)
    tape.gradient(target, leaves)
    with pytest.raises(RuntimeError):
        tape.gradient(target, leaves)


@property_test(P.programs())
def test_target_list_gradients_sum(tf: Any, program: P.Program) -> None:
    """tape.gradient([y, z], x) sums the gradients of y and of an intermediate node z."""
    oracle(program)
    assert program.extras is not None
    k = program.extras.second_target
    vjps = P.jax_vjp_two_targets(program, k)
    assume(P.tame(*vjps))
    leaves = program.leaves(tf)
    with tf.GradientTape(watch_accessed_variables=program.watch_accessed_variables) as tape:
        watch_inputs(tape, program, leaves)
        nodes = program.tf_nodes(tf, leaves)
        target = tf.reduce_sum(nodes[-1]) if program.reduce else nodes[-1]
    got = tape.gradient([target, nodes[k]], leaves)
    reach = program.connected() | program.connected(k)
    for i, (g, vjp) in enumerate(zip(got, vjps)):
        e = vjp if program.watched(i) and i in reach else None
        check_gradient(g, e, program, f"d [target, v{k}] / d v{i}")


@property_test(P.programs())
def test_structured_sources_keep_their_structure(tf: Any, program: P.Program) -> None:
    """Sources given as a nest of lists, tuples and dicts come back as the same nest of gradients."""
    _, vjps = oracle(program)
    assert program.extras is not None
    index_nest = program.extras.sources
    leaves = program.leaves(tf)
    tape, target = P.record(tf, program, leaves)
    got = tape.gradient(target, P.map_nest(lambda i: leaves[i], index_nest))
    expected = expected_gradients(program, vjps)
    _assert_same_nest(got, index_nest, lambda g, i: check_gradient(g, expected[i], program, f"v{i}"))


def _assert_same_nest(got: Any, index_nest: Any, check_leaf: Callable[[Any, int], None]) -> None:
    if isinstance(index_nest, (list, tuple, dict)):
        assert type(got) is type(index_nest), f"expected a {type(index_nest).__name__}, got {got!r}"
        assert len(got) == len(index_nest)
        if isinstance(index_nest, dict):
            assert set(got) == set(index_nest)
            for key in index_nest:
                _assert_same_nest(got[key], index_nest[key], check_leaf)
        else:
            for g, i in zip(got, index_nest):
                _assert_same_nest(g, i, check_leaf)
    else:
        check_leaf(got, index_nest)


# ---------------------------------------------------------------------------------------------------
# nested tapes: Hessians of y = f(x), x a vector
# ---------------------------------------------------------------------------------------------------


def hessian_oracle(program: P.Program) -> tuple[np.ndarray, np.ndarray]:
    note(f"session seed: {SEED}")
    grad, hessian = P.jax_gradient_and_hessian(program)
    assume(P.tame(grad, hessian))
    return grad, hessian


def nested_tapes(tf: Any, program: P.Program) -> tuple[Any, Any, Any, list[Any]]:
    """Records y = f(x) on an inner tape, and the inner gradient and its components on a persistent
    outer tape. Returns (outer tape, x, inner gradient, its components)."""
    (x,) = program.leaves(tf)
    (n,) = program.shapes[0]
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = program.run_tf(tf, [x])
        g = inner.gradient(y, x)
        components = [g[i] for i in range(n)]
    return outer, x, g, components


@property_test(P.scalar_programs_of_one_vector())
def test_hessian_from_nested_gradients(tf: Any, program: P.Program) -> None:
    """The gradient of each component of the inner gradient, taken on the outer tape, is a row of
    jax.hessian (only nested `gradient` calls, no `jacobian`)."""
    grad, hessian = hessian_oracle(program)
    outer, x, g, components = nested_tapes(tf, program)
    check_gradient(g, grad, program, "inner gradient")
    zero = tf.UnconnectedGradients.ZERO  # an inner gradient that is constant in x has no path to x
    for i, component in enumerate(components):
        row = outer.gradient(component, x, unconnected_gradients=zero)
        check_gradient(row, hessian[i], program, f"Hessian row {i}")


@pytest.mark.parametrize("tf", modules("jacobian"), indirect=True)
@property_test(P.scalar_programs_of_one_vector())
def test_hessian_from_jacobian_of_gradient(tf: Any, program: P.Program) -> None:
    """outer.jacobian(inner.gradient(y, x), x) == jax.hessian(f)(x)."""
    grad, hessian = hessian_oracle(program)
    outer, x, g, _ = nested_tapes(tf, program)
    check_gradient(g, grad, program, "inner gradient")
    # TF's default pfor path builds a graph per call (about 5x slower here); tapejax is called plainly.
    knobs = {"experimental_use_pfor": False} if tf.__name__ == "tensorflow" else {}
    got = outer.jacobian(g, x, unconnected_gradients=tf.UnconnectedGradients.ZERO, **knobs)
    check_gradient(got, hessian, program, "jacobian of the gradient")
