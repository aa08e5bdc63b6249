"""Registry-driven op tests: every row of tapejax's op table, checked against numpy and JAX.

Each row of `tapejax._src.registry.REGISTRY` has an entry in `op_specs.SPEC` (sample inputs and a numpy reference),
so adding a row without a spec fails `test_every_row_has_a_spec`, and adding a spec adds all of these tests:

- forward: the public callable (`OPERATORS[name]`, TF's argument names) == the reference, with TF's dtype;
- gradient: `tape.gradient` of `reduce_sum(op(x) * w)` == JAX's gradient of the same with the row's `impl`;
  rows TF declares non-differentiable give None; rows without a TF gradient raise TF's LookupError; arguments
  TF's gradient returns None for (`OpDef.no_gradient_args`) give None, and JAX's derivative stops there;
- `jax.test_util.check_grads(impl, order=2)` on float64 inputs; nested tapes == JAX's second derivative for the
  elementwise unary rows;
- dtypes: float64 stays float64; float32 mixed with float64 raises InvalidArgumentError (TypeError for `/`,
  ValueError where TF's Python wrapper converts one argument to the other's dtype, no error where it casts:
  `Spec.mixed`, checked against TF by the compat test);
- broadcasting of the elementwise binary rows: shapes (3, 1) and (4,).

Then a few of TF's tie and kink conventions, derived by hand, run on tapejax and on TensorFlow.

A case that fails because tapejax is wrong is listed in `XFAIL` (strict): it turns red the day the row is fixed.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import op_specs as S
import pytest
from jax.test_util import check_grads

import tapejax as tf
from tapejax._src.registry import REGISTRY
from tapejax._src.tensor import OPERATORS

# (test, case id) -> what tapejax gets wrong. Strict xfails: delete the line when the row is fixed.
XFAIL: dict[tuple[str, str], str] = {}


# -- parametrisation ----------------------------------------------------------------------------------------


def _all_cases() -> list[tuple[str, str, S.Spec | None]]:
    """(case id, row name, spec) for every registry row (spec None if missing) and every extra case."""
    cases: list[tuple[str, str, S.Spec | None]] = [(name, name, S.SPEC.get(name)) for name in REGISTRY]
    cases += [case for case in S.EXTRA_CASES if case[1] in REGISTRY]
    return cases


def cases(test: str, keep=lambda opdef, spec, args: True, *, main_only: bool = False) -> list[Any]:
    """The parameters of `test`: the cases that `keep(opdef, spec, args)` selects (rows without spec: all)."""
    params = []
    for case_id, name, spec in _all_cases():
        if main_only and case_id != name:
            continue
        if spec is not None and not keep(REGISTRY[name], spec, S.sample(case_id, spec)):
            continue
        reason = XFAIL.get((test, case_id))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(case_id, name, spec, id=case_id, marks=marks))
    return params


def need(name: str, spec: S.Spec | None) -> S.Spec:
    if spec is None:
        pytest.fail(f"registry row {name!r} has no entry in tests/ops/op_specs.py SPEC")
    return spec


def _has_float_arg(opdef, spec, args) -> bool:
    return bool(S.grad_positions(args))


def _float_outputs(spec: S.Spec, args: tuple[np.ndarray, ...]) -> bool:
    return any(np.asarray(o).dtype.kind in "fc" for o in S.as_outputs(spec.ref(*args, **spec.kwargs)))


def _differentiated(opdef, spec, args) -> bool:
    return opdef.differentiable and opdef.has_gradient and _has_float_arg(opdef, spec, args)


def _jax_differentiated(opdef, spec, args) -> bool:
    """JAX differentiates the row's impl with respect to some float argument (not all in `no_gradient_args`)."""
    return _differentiated(opdef, spec, args) and not set(S.grad_positions(args)) <= set(opdef.no_gradient_args)


def _has_stopped_float_arg(opdef, spec, args) -> bool:
    return opdef.differentiable and not set(opdef.no_gradient_args).isdisjoint(S.grad_positions(args))


# -- calling a row ------------------------------------------------------------------------------------------


def call_public(name: str, spec: S.Spec, tensors: list[Any]) -> Any:
    """The row's public callable with TF's argument names (the tensors as one sequence for variadic rows)."""
    fn = OPERATORS[name]
    return fn(list(tensors), **spec.kwargs) if spec.variadic else fn(*tensors, **spec.kwargs)


def call_impl(name: str, spec: S.Spec, arrays: tuple[Any, ...]) -> Any:
    kwargs = dict(spec.kwargs if spec.impl_kwargs is None else spec.impl_kwargs)
    return REGISTRY[name].impl(*arrays, **kwargs)


def differentiated_positions(name: str, args: tuple[np.ndarray, ...]) -> list[int]:
    """The float arguments that TF's gradient of the row reaches: all but the row's `no_gradient_args`."""
    return [i for i in S.grad_positions(args) if i not in REGISTRY[name].no_gradient_args]


def split_stopped(name: str, args: tuple[np.ndarray, ...], grads: list[Any]) -> tuple[list[Any], list[Any]]:
    """Gradients for the float arguments of `args`, split into (differentiated, no_gradient_args) positions."""
    stopped = REGISTRY[name].no_gradient_args
    pairs = list(zip(S.grad_positions(args), grads))
    return [g for i, g in pairs if i not in stopped], [g for i, g in pairs if i in stopped]


def impl_of_floats(name: str, spec: S.Spec, args: tuple[np.ndarray, ...]):
    """impl as a function of the differentiated float arguments only (the others, the float arguments TF has no
    gradient for, and the static kwargs fixed)."""
    positions = differentiated_positions(name, args)

    def fn(*floats: Any) -> Any:
        full = list(args)
        for i, v in zip(positions, floats):
            full[i] = v
        return call_impl(name, spec, tuple(full))

    return fn, [args[i] for i in positions]


def jax_gradient(name: str, spec: S.Spec, args: tuple[np.ndarray, ...], case_id: str) -> list[Any] | None:
    """JAX's gradient of sum(impl(args) * w) w.r.t. the differentiated float args (`differentiated_positions`), in
    TF's convention; None if no float output.

    It is evaluated in float64 at the same point, with the same weights (float32 values are exact in float64), so
    a float32 tape gradient must agree to float32 rounding. float64 also lets JAX reuse the executables that
    test_check_grads_order_2 compiled for the same impl: compiling, not computing, is what these tests spend
    their time on.

    TF's gradient for a complex input is the conjugate of JAX's (TF returns conj(vjp(conj(ct)))); conj is a no-op
    for real values.
    """
    fn32, floats32 = impl_of_floats(name, spec, args)
    outputs = S.as_outputs(jax.eval_shape(fn32, *floats32))  # shapes and dtypes only: nothing is compiled
    if not any(S.is_float(o) for o in outputs):
        return None
    weights = S.to_float64(S.weights_for(tuple(np.zeros(o.shape, o.dtype) for o in outputs), case_id))
    fn, floats = impl_of_floats(name, spec, S.to_float64(args))

    def loss(*xs: Any) -> Any:
        total = None
        for o, w in zip(S.as_outputs(fn(*xs)), weights):
            if S.is_float(o):
                total = jnp.sum(o * w) if total is None else total + jnp.sum(o * w)
        return total

    def oracle(*xs: Any) -> list[Any]:
        value, pullback = jax.vjp(loss, *xs)
        return [jnp.conj(ct) for ct in pullback(jnp.ones_like(value))]

    with quick_compiles():
        return maybe_jit(oracle, fn, floats)(*floats)


@contextlib.contextmanager
def quick_compiles():
    """XLA with most optimisations off, for JAX's side of these tests (check_grads, the oracles).

    Their programs are tiny and run once: compiling is all their cost, and without the optimisation passes it
    is about 20% cheaper (measured over this table). tapejax's own ops are never run inside this block.
    """
    flag = "jax_disable_most_optimizations"
    previous = jax.config.read(flag)
    jax.config.update(flag, True)
    try:
        yield
    finally:
        jax.config.update(flag, previous)


def maybe_jit(run: Any, impl: Any, floats: list[Any]) -> Any:
    """`run`, jitted if `impl` is composite (more than 8 equations, counting nested ones).

    Compiling dominates these tests. Eagerly, each primitive (and each of its derivatives) compiles on its own,
    and is cached for the next test; jitted, the whole function compiles once. Measured over this table with
    check_grads: eager is cheaper for impls of a few primitives, jit for composite ones (softplus,
    clip_by_norm, logsumexp: 1.5-2.5x).
    """
    return jax.jit(run) if _equation_count(jax.make_jaxpr(impl)(*floats).jaxpr) > 8 else run


def _equation_count(jaxpr: Any) -> int:
    """The number of equations of a jaxpr, counting those inside nested jaxprs (jit, custom_jvp, ...)."""
    count = 0
    for eqn in jaxpr.eqns:
        count += 1
        for param in eqn.params.values():
            inner = getattr(param, "jaxpr", param)
            if hasattr(inner, "eqns"):
                count += _equation_count(inner)
    return count


def tolerances(dtype: np.dtype, spec: S.Spec) -> dict[str, float]:
    if np.dtype(dtype) in (np.float64, np.complex128) and not spec.float32_inside:
        return {"rtol": 1e-10, "atol": 1e-12}
    return {"rtol": spec.rtol, "atol": spec.atol}


def assert_matches(got: Any, expected: Any, spec: S.Spec) -> None:
    """Value, shape and dtype of a result (a tensor or a tuple of them) against numpy's."""
    got_outs, expected_outs = S.as_outputs(got), S.as_outputs(expected)
    assert len(got_outs) == len(expected_outs), f"{len(got_outs)} outputs, expected {len(expected_outs)}"
    for g, e in zip(got_outs, expected_outs):
        e = np.asarray(e)
        assert isinstance(g, tf.Tensor), f"expected a tf.Tensor, got {type(g).__name__}"
        assert g.dtype.name == e.dtype.name, f"dtype {g.dtype.name}, TF gives {e.dtype.name}"
        assert tuple(g.shape) == e.shape, f"shape {tuple(g.shape)}, expected {e.shape}"
        value = np.asarray(g.numpy())
        if spec.permutation:
            assert sorted(map(tuple, value.tolist())) == sorted(map(tuple, e.tolist())), "not a permutation of rows"
        elif e.dtype.kind in "fc":
            np.testing.assert_allclose(value, e, equal_nan=True, **tolerances(e.dtype, spec))
        else:
            np.testing.assert_array_equal(value, e)


def assert_tape_gradients(name: str, spec: S.Spec, args: tuple[np.ndarray, ...], got: list[Any],
                          case_id: str) -> None:
    """Tape gradients for the float `args`: JAX's where TF has a gradient; None at the row's `no_gradient_args`,
    which TF's gradient returns None for (each argument is its own source here, connected only through the op)."""
    got, stopped = split_stopped(name, args, got)
    assert stopped == [None] * len(stopped), "a float argument TF has no gradient for got one"
    expected = jax_gradient(name, spec, args, case_id)
    floats = [args[i] for i in differentiated_positions(name, args)]
    if expected is None:  # only integer/bool outputs (e.g. a cast to int32): TF gives None
        assert got == [None] * len(floats)
    else:
        assert_gradients(got, expected, floats, spec)


def assert_gradients(got: list[Any], expected: list[Any], dtype_of: list[np.ndarray], spec: S.Spec) -> None:
    """Tape gradients (float32) against JAX's float64 ones: equal to float32 rounding, with the source's dtype. A
    gather's gradient is an IndexedSlices (as in TF): its dense sum is compared."""
    assert len(got) == len(expected)
    for g, e, a in zip(got, expected, dtype_of):
        assert g is not None, "tape.gradient gave None where JAX gives a gradient"
        g = tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
        e = np.asarray(e)
        assert g.dtype.name == a.dtype.name, f"gradient dtype {g.dtype.name}, source is {a.dtype.name}"
        assert tuple(g.shape) == a.shape, f"gradient shape {tuple(g.shape)}, source shape {a.shape}"
        np.testing.assert_allclose(np.asarray(g.numpy()), e, rtol=max(2e-5, spec.rtol), atol=max(1e-6, spec.atol))


# -- coverage -----------------------------------------------------------------------------------------------


def test_every_row_has_a_spec():
    missing = sorted(set(REGISTRY) - set(S.SPEC))
    stale = sorted(set(S.SPEC) - set(REGISTRY))
    stale_extra = sorted(row for _, row, _ in S.EXTRA_CASES if row not in REGISTRY)
    assert not missing, f"registry rows without an entry in tests/ops/op_specs.py SPEC: {missing}"
    assert not stale, f"SPEC entries for rows that are not in the registry: {stale}"
    assert not stale_extra, f"EXTRA_CASES for rows that are not in the registry: {stale_extra}"


def test_every_differentiable_row_is_differentiated():
    """A differentiable row whose spec has no float input would escape every gradient test."""
    escaped = [name for name, opdef in REGISTRY.items()
               if opdef.differentiable and name in S.SPEC and not S.grad_positions(S.sample(name, S.SPEC[name]))]
    assert not escaped, f"differentiable rows whose SPEC has no float argument: {escaped}"


def test_case_ids_are_unique():
    ids = [case_id for case_id, _, _ in _all_cases()]
    assert len(ids) == len(set(ids))


# -- forward ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case_id, name, spec", cases("forward"))
def test_forward_matches_reference(case_id, name, spec):
    spec = need(name, spec)
    args = S.sample(case_id, spec)
    got = call_public(name, spec, [tf.constant(a) for a in args])
    assert_matches(got, spec.ref(*args, **spec.kwargs), spec)


# -- gradients ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case_id, name, spec",
                         cases("check_grads", lambda o, s, a: _jax_differentiated(o, s, a) and _float_outputs(s, a),
                               main_only=True))
def test_check_grads_order_2(case_id, name, spec):
    """JAX's numerical check of the row's impl, to second order (float64: accurate finite differences); to first
    order for the rows whose second derivatives are TF's, not the true ones (`Spec.grad_order`)."""
    spec = need(name, spec)
    args = S.sample(case_id, spec) if spec.float32_inside else S.to_float64(S.sample(case_id, spec))
    fn, floats = impl_of_floats(name, spec, args)
    with quick_compiles():
        if spec.float32_inside:  # float32 finite differences: a step well above float32 rounding
            check_grads(maybe_jit(fn, fn, floats), tuple(floats), order=1, modes=["rev"], eps=1e-2)
        else:
            check_grads(maybe_jit(fn, fn, floats), tuple(floats), order=spec.grad_order, modes=["rev"])


@pytest.mark.parametrize("case_id, name, spec", cases("gradient", _differentiated))
def test_tape_gradient_matches_jax(case_id, name, spec):
    spec = need(name, spec)
    args = S.sample(case_id, spec)
    _, got = S.tape_gradient(tf, lambda ts: call_public(name, spec, ts), args, case_id)
    assert_tape_gradients(name, spec, args, got, case_id)


@pytest.mark.parametrize("case_id, name, spec", cases("stopped", _has_stopped_float_arg, main_only=True))
def test_jax_derivative_stops_at_no_gradient_args(case_id, name, spec):
    """The row's impl gives JAX no derivative through the arguments TF has none for (`OpDef.no_gradient_args`), so
    a source that also reaches the op through such an argument gets nothing from it, as in TF."""
    spec = need(name, spec)
    args = S.to_float64(S.sample(case_id, spec))
    positions = [i for i in S.grad_positions(args) if i in REGISTRY[name].no_gradient_args]

    def loss(*stopped: Any) -> Any:
        full = list(args)
        for i, v in zip(positions, stopped):
            full[i] = v
        return sum(jnp.sum(o) for o in S.as_outputs(call_impl(name, spec, tuple(full))) if S.is_float(o))

    for ct in jax.grad(loss, argnums=tuple(range(len(positions))))(*[args[i] for i in positions]):
        np.testing.assert_array_equal(ct, np.zeros_like(ct))


@pytest.mark.parametrize("case_id, name, spec",
                         cases("no_gradient", lambda opdef, spec, args: not opdef.differentiable))
def test_non_differentiable_row_gives_none(case_id, name, spec):
    """TF declares these ops non-differentiable: the gradient through them is None, not zeros."""
    spec = need(name, spec)
    assert not REGISTRY[name].differentiable
    args = S.sample(case_id, spec)
    _, got = S.tape_gradient(tf, lambda ts: call_public(name, spec, ts), args, case_id, through_cast=True)
    assert got == [None] * len(args)


@pytest.mark.parametrize("case_id, name, spec",
                         cases("lookup_error", lambda opdef, spec, args: not opdef.has_gradient))
def test_row_without_gradient_raises_lookup_error(case_id, name, spec):
    spec = need(name, spec)
    opdef = REGISTRY[name]
    args = S.sample(case_id, spec)
    message = f"gradient registry has no entry for: {opdef.op_type}"
    with pytest.raises(LookupError, match=re.escape(message)):
        S.tape_gradient(tf, lambda ts: call_public(name, spec, ts), args, case_id)


@pytest.mark.parametrize("case_id, name, spec",
                         cases("second_derivative", lambda o, s, a: s.kind == "unary" and _jax_differentiated(o, s, a),
                               main_only=True))
def test_nested_tapes_match_jax_second_derivative(case_id, name, spec):
    """For an elementwise f, the outer gradient of the inner gradient is f'' elementwise."""
    spec = need(name, spec)
    (x,) = S.sample(case_id, spec)
    xt = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(xt)
        with tf.GradientTape() as inner:
            inner.watch(xt)
            y = call_public(name, spec, [xt])
        dy = inner.gradient(y, xt)
    d2y = outer.gradient(dy, xt)

    def f(v):
        return call_impl(name, spec, (v,))

    def first(v):  # f acts on each element alone, so the gradient of sum(f) is f' elementwise
        return jax.grad(lambda u: jnp.sum(f(u)))(v)

    second = jax.grad(lambda v: jnp.sum(first(v)))  # f'' elementwise, by the same argument
    x64 = S.to_float64((x,))[0]  # float64 reuses what check_grads compiled; see jax_gradient
    with quick_compiles():
        expected = maybe_jit(second, f, [x64])(x64)
    assert d2y is not None, "nested tapes gave None for the second derivative"
    np.testing.assert_allclose(d2y.numpy(), expected, rtol=2e-5, atol=1e-6)


# -- dtypes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case_id, name, spec", cases("float64", _has_float_arg))
def test_float64_inputs_keep_float64(case_id, name, spec):
    spec = need(name, spec)
    args = S.to_float64(S.sample(case_id, spec))
    got = call_public(name, spec, [tf.constant(a) for a in args])
    want = S.as_outputs(spec.ref(*args, **spec.kwargs))
    for out, ref in zip(S.as_outputs(got), want):
        if np.asarray(ref).dtype == np.float32:
            continue  # TF's float32 result whatever the input (tf.image.resize, psnr, ...): the reference says so
        assert out.dtype.name not in ("float32", "complex64"), f"float64 input gave {out.dtype.name}"
    assert_matches(got, spec.ref(*args, **spec.kwargs), spec)


@pytest.mark.parametrize("case_id, name, spec",
                         cases("float64_precision", lambda o, s, a: _has_float_arg(o, s, a) and not s.float32_inside))
def test_float64_inputs_compute_in_float64(case_id, name, spec):
    """Each float argument is scaled by 1 + 2**-30, under half a float32 ulp: float32 cannot hold the inputs, so a
    row that rounds to float32 anywhere inside (a 32-bit constant, accumulator or conversion) is off by about
    1e-9 relative, ten times the float64 tolerance, where `test_float64_inputs_keep_float64`'s float32-exact
    inputs can hide it."""
    spec = need(name, spec)
    args = tuple(a * (1 + 2**-30) if a.dtype.kind in "fc" else a for a in S.to_float64(S.sample(case_id, spec)))
    assert_matches(call_public(name, spec, [tf.constant(a) for a in args]), spec.ref(*args, **spec.kwargs), spec)


# Rows whose cases take integers (or integral floats) and whose TF kernels include int64.
INT64_CASES = ("math.add", "math.subtract", "math.multiply", "math.maximum", "math.minimum", "math.abs",
               "math.negative", "math.floordiv[int32]", "math.floormod[int32]", "math.reduce_sum", "math.reduce_max",
               "math.reduce_min", "math.cumsum", "math.cumsum[int32]", "math.argmax", "math.argmin")


@pytest.mark.parametrize("case_id, name, spec", [c for c in cases("int64") if c.values[0] in INT64_CASES])
def test_int64_inputs_compute_in_int64(case_id, name, spec):
    """int64 values int32 cannot hold (2**40 + 1 added to the first argument) keep int64 and numpy's exact answer."""
    spec = need(name, spec)
    args = [np.rint(a).astype(np.int64) for a in S.sample(case_id, spec)]
    args[0] = args[0] + (2**40 + 1)
    assert_matches(call_public(name, spec, [tf.constant(a) for a in args]), spec.ref(*args, **spec.kwargs), spec)


@pytest.mark.parametrize("case_id, name, spec",
                         cases("mixed", lambda o, s, a: len(S.grad_positions(a)) >= 2, main_only=True))
def test_float32_mixed_with_float64(case_id, name, spec):
    """TF never promotes: float64 meeting float32 is InvalidArgumentError (TypeError for `/`), unless the op
    converts one argument itself (clip_by_norm's clip_norm); `Spec.mixed` records which, as TF does it."""
    spec = need(name, spec)
    args = list(S.sample(case_id, spec))
    first = S.grad_positions(tuple(args))[0]
    args[first] = S.to_float64((args[first],))[0]
    tensors = [tf.constant(a) for a in args]
    if not spec.mixed:
        call_public(name, spec, tensors)
        return
    expected = {"InvalidArgumentError": tf.errors.InvalidArgumentError, "TypeError": TypeError,
                "ValueError": ValueError}[spec.mixed]
    with pytest.raises(expected):
        call_public(name, spec, tensors)


# -- broadcasting -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case_id, name, spec",
                         cases("broadcast", lambda o, s, a: s.kind == "binary", main_only=True))
def test_binary_elementwise_broadcasts(case_id, name, spec):
    spec = need(name, spec)
    rng = S.rng_for("broadcast:" + case_id)
    x, y = spec.samplers[0](rng, (3, 1)), spec.samplers[1](rng, (4,))
    got = call_public(name, spec, [tf.constant(x), tf.constant(y)])
    assert tuple(got.shape) == (3, 4)
    assert_matches(got, spec.ref(x, y, **spec.kwargs), spec)
    opdef = REGISTRY[name]
    if opdef.differentiable and S.is_float(x) and S.is_float(y):
        # the gradient of each operand is summed over the axes it was broadcast along
        _, grads = S.tape_gradient(tf, lambda ts: call_public(name, spec, ts), (x, y), case_id)
        assert_tape_gradients(name, spec, (x, y), grads, case_id)


# -- TF's conventions at ties and kinks (hand-derived), on tapejax and on TensorFlow --------------------------


@pytest.fixture(params=["tapejax", pytest.param("tensorflow", marks=pytest.mark.compat)])
def engine(request: pytest.FixtureRequest) -> Any:
    """The module under test: tapejax, and real TensorFlow (which keeps these hand derivations honest)."""
    return pytest.importorskip(request.param)


def _grads(engine: Any, fn, *values: Any) -> list[np.ndarray | None]:
    xs = [engine.constant(v) for v in values]
    with engine.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = fn(*xs)
    return [None if g is None else np.asarray(engine.convert_to_tensor(g)) for g in tape.gradient(y, xs)]


def test_maximum_minimum_tie_sends_gradient_to_x(engine):
    # TF's MaximumGrad masks with x >= y (MinimumGrad with x <= y): at x == y the whole gradient goes to x.
    # maximum(x, y) at x = y = 2: dx = 1, dy = 0; same for minimum.
    assert [g.tolist() for g in _grads(engine, engine.maximum, 2.0, 2.0)] == [1.0, 0.0]
    assert [g.tolist() for g in _grads(engine, engine.minimum, 2.0, 2.0)] == [1.0, 0.0]


def test_reduce_max_splits_ties_evenly(engine):
    # TF's MaxGrad: g * (x == max) / count(x == max). For x = [1, 3, 3]: max = 3 twice -> [0, 1/2, 1/2].
    (g,) = _grads(engine, engine.reduce_max, [1.0, 3.0, 3.0])
    assert g.tolist() == [0.0, 0.5, 0.5]


def test_abs_and_relu_have_gradient_zero_at_zero(engine):
    # d|x|/dx = sign(x), and sign(0) = 0; ReluGrad passes the gradient where x > 0 only, so 0 at 0.
    # At x = [-1, 0, 2]: abs' = [-1, 0, 1], relu' = [0, 0, 1].
    (g,) = _grads(engine, engine.abs, [-1.0, 0.0, 2.0])
    assert g.tolist() == [-1.0, 0.0, 1.0]
    (g,) = _grads(engine, engine.nn.relu, [-1.0, 0.0, 2.0])
    assert g.tolist() == [0.0, 0.0, 1.0]


def test_relu6_gradient_is_zero_at_both_kinks(engine):
    # Relu6Grad passes the gradient where 0 < x < 6: at x = [0, 3, 6]: [0, 1, 0].
    (g,) = _grads(engine, engine.nn.relu6, [0.0, 3.0, 6.0])
    assert g.tolist() == [0.0, 1.0, 0.0]


def test_clip_by_value_gradient_is_one_at_the_bounds(engine):
    # clip_by_value(t, lo, hi) = maximum(minimum(t, hi), lo); at t == hi the minimum's tie sends the gradient to
    # t, at t == lo the maximum's tie sends it to minimum(t, hi) = t: dt = 1 at both bounds, 0 outside.
    # t = [-1, 0, 0.5, 1, 2] with bounds [0, 1]: dt = [0, 1, 1, 1, 0].
    (g,) = _grads(engine, lambda t: engine.clip_by_value(t, 0.0, 1.0), [-1.0, 0.0, 0.5, 1.0, 2.0])
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


def test_softplus_derivative_is_sigmoid(engine):
    # softplus'(x) = e^x / (1 + e^x) = sigmoid(x); sigmoid(10) = 1 / (1 + e^-10) = 0.99995460213...,
    # which rounds to the float32 0.9999546.
    (g,) = _grads(engine, engine.nn.softplus, 10.0)
    assert g == np.float32(1 / (1 + math.exp(-10)))
    assert f"{g:.7f}" == "0.9999546"


def test_moments_second_derivative_sees_the_mean_as_constant(engine):
    # TF's moments computes variance = mean((x - stop_gradient(mean(x)))**2). Its gradient is the true one,
    # d var / dx_i = 2 (x_i - mean) / N, but differentiating that again treats the mean as a constant:
    # d/dx_j sum_i 2 (x_i - mean) / N = 2 / N (the true value is 0). x = [1, 2, 3, 6], N = 4: 0.5 each.
    x = engine.constant([1.0, 2.0, 3.0, 6.0])
    with engine.GradientTape() as outer:
        outer.watch(x)
        with engine.GradientTape() as inner:
            inner.watch(x)
            _, variance = engine.nn.moments(x, axes=[0])
        total = engine.reduce_sum(inner.gradient(variance, x))
    assert outer.gradient(total, x).numpy().tolist() == [0.5] * 4


def test_zeta_has_no_gradient_for_x(engine):
    # TF's ZetaGrad returns None for x (OpDef.no_gradient_args). A source reaching the target only through x,
    # directly or through another op, gets None; one that also reaches it another way gets only that way's
    # gradient: d/dx (zeta(x, q) + x) = 0 + 1 = 1.
    x, q = [2.0, 3.0], [1.5, 0.7]
    dx, dq = _grads(engine, engine.math.zeta, x, q)
    assert dx is None and dq is not None
    dx, _ = _grads(engine, lambda a, b: engine.math.zeta(a, b) + a, x, q)
    assert dx.tolist() == [1.0, 1.0]
    dx, dq = _grads(engine, lambda a, b: engine.math.zeta(2.0 * a, b), x, q)
    assert dx is None and dq is not None


@pytest.mark.parametrize("inputs, kwargs, error, message", [
    # TF's accumulate_n checks in Python, before its AddN: one dtype, one shape (no broadcasting; TensorShape's
    # merge_with words the mismatch), and `tensor_dtype` equal to the inputs' dtype.
    ([[1.0, 2.0], np.array([1.0, 2.0])], {}, ValueError,
     "inputs must be a list of at least one Tensor with the same dtype and shape"),
    ([[[1.0, 2.0, 3.0]], [1.0, 2.0, 3.0]], {}, ValueError, "Shapes (1, 3) and (3,) are not compatible"),
    ([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], {"shape": [2]}, ValueError, "Shapes (2,) and (3,) are not compatible"),
    ([[1.0, 2.0], [3.0, 4.0]], {"tensor_dtype": "float64"}, TypeError,
     "The `tensor_dtype` argument is <dtype: 'float64'>, but `input` is of type <dtype: 'float32'>. These must be "
     "equal. Try casting the input to the desired type."),
], ids=["dtypes", "broadcast", "shape", "tensor_dtype"])
def test_accumulate_n_checks_its_inputs_like_tf(engine, inputs, kwargs, error, message):
    if "tensor_dtype" in kwargs:
        kwargs = {"tensor_dtype": getattr(engine, kwargs["tensor_dtype"])}
    with pytest.raises(error) as raised:
        engine.math.accumulate_n([engine.constant(x) for x in inputs], **kwargs)
    assert str(raised.value) == message
