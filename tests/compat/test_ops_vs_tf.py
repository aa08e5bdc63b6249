"""Every op row side by side with TensorFlow: values, dtypes, shapes and tape gradients, on the same inputs.

The inputs and numpy references come from tests/ops/op_specs.py. A row is compared when TF has a public function
under the row's path ("math.sin" -> tf.math.sin, "reshape" -> tf.reshape) or the spec says how TF spells the call
(`tf.fill(dims, value)`, `tf.einsum(equation, *inputs)`, `tf.where(condition)` for "where_indices"). Both sides are
called through their public namespaces. Internal rows ("__eq__", "__getitem__", ...) and rows without a TF
counterpart are skipped with the reason, so `pytest -ra` lists them. Random rows compare shapes and dtypes only.

`test_reference_matches_tf` checks the test data itself: numpy's reference against TF. A failure there is a bug
in op_specs.py, not in tapejax. A tapejax discrepancy is listed in `XFAIL` (strict) with what tapejax gets wrong.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
import op_specs as S  # noqa: E402

import tapejax  # noqa: E402
from tapejax._src.registry import REGISTRY  # noqa: E402

# (test, case id) -> what tapejax gets wrong. Strict xfails: delete the line when the row is fixed.
XFAIL: dict[tuple[str, str], str] = {
    ("gradient", "linalg.det[complex64]"): "TF's MatrixDeterminant gradient misses a conj for complex inputs "
    "(grad * det * inv(a)^H; TF's own a*d - b*c gives grad * conj(det) * inv(a)^H, as tapejax does)",
    ("gradient", "linalg.lstsq[slow]"): "TF raises ValueError 'Gradient not defined for fast=False'; tapejax "
    "differentiates the minimum-norm solution",
    ("gradient", "signal.rfft[crop]"): "TF's RFFT gradient fails when fft_length crops the input (InvalidArgumentError "
    "'Incompatible shapes' in AddV2); tapejax gives the gradient, zero on the cropped samples",
    ("gradient", "math.top_k[ties]"): "TF's TopKV2 gradient fails with index_type=int64 (InvalidArgumentError, int64 "
    "+ int32 in AddV2); tapejax gives the gradient",
}


# -- which rows have a TF counterpart -----------------------------------------------------------------------


def resolve(module: Any, path: str) -> Any:
    """`module.<path>` ("math.sin" -> module.math.sin), or None if TF has no such public function."""
    obj = module
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def skip_reason(name: str, spec: S.Spec) -> str | None:
    if name.startswith("__"):
        return f"internal row {name!r} (a Python operator): no public TF function"
    if spec.tf_call is None and resolve(tf_real, name) is None:
        return f"no TF counterpart: tf.{name} does not exist"
    return None


def call(module: Any, name: str, spec: S.Spec, tensors: list[Any]) -> Any:
    """The row's op through `module`'s public API (tapejax or tensorflow), with TF's calling convention."""
    if spec.tf_call is not None:
        return spec.tf_call(module, list(tensors), spec.kwargs)
    fn = resolve(module, name)
    if fn is None:
        raise AttributeError(f"{module.__name__}.{name} does not exist")
    return fn(list(tensors), **spec.kwargs) if spec.variadic else fn(*tensors, **spec.kwargs)


def cases(test: str, keep=lambda spec, args: True) -> list[Any]:
    params = []
    for case_id, name, spec in [(n, n, s) for n, s in S.SPEC.items()] + list(S.EXTRA_CASES):
        if name not in REGISTRY or not keep(spec, S.sample(case_id, spec)):
            continue
        marks = []
        reason = skip_reason(name, spec)
        if reason and test != "forward":
            continue  # listed once, as a skip of test_forward_matches_tf
        if reason:
            marks.append(pytest.mark.skip(reason=reason))
        elif (test, case_id) in XFAIL:
            marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[(test, case_id)]))
        params.append(pytest.param(case_id, name, spec, id=case_id, marks=marks))
    return params


# -- comparing ----------------------------------------------------------------------------------------------


def to_numpy(x: Any) -> np.ndarray:
    """A result as numpy; an IndexedSlices (the gradient of tf.gather, in TF and in tapejax) densified first."""
    if isinstance(x, tf_real.IndexedSlices | tapejax.IndexedSlices):
        x = (tf_real if isinstance(x, tf_real.IndexedSlices) else tapejax).convert_to_tensor(x)
    return np.asarray(x.numpy())


def assert_same(got: Any, want: Any, spec: S.Spec, what: str) -> None:
    """tapejax's result `got` against TF's `want`: count, dtypes, shapes, and values (rtol 1e-5 in float32)."""
    got_outs, want_outs = S.as_outputs(got), S.as_outputs(want)
    assert len(got_outs) == len(want_outs), f"{what}: {len(got_outs)} outputs, TF gives {len(want_outs)}"
    for g, w in zip(got_outs, want_outs):
        assert (g is None) == (w is None), f"{what}: tapejax gives {g!r}, TF gives {w!r}"
        if g is None:
            continue
        assert g.dtype.name == w.dtype.name, f"{what}: dtype {g.dtype.name}, TF gives {w.dtype.name}"
        # An IndexedSlices where TF gives one
        assert (type(g).__name__ == "IndexedSlices") == (type(w).__name__ == "IndexedSlices"), \
            f"{what}: tapejax gives a {type(g).__name__}, TF a {type(w).__name__}"
        g_value, w_value = to_numpy(g), to_numpy(w)
        assert g_value.shape == w_value.shape, f"{what}: shape {g_value.shape}, TF gives {w_value.shape}"
        if spec.permutation:
            continue  # random: different generators, so only the shape and dtype can agree
        if w_value.dtype.kind in "fc":
            rtol, atol = (1e-12, 1e-12) if w_value.dtype in (np.float64, np.complex128) else (1e-5, 1e-6)
            rtol, atol = max(rtol, spec.rtol), max(atol, spec.atol)
            np.testing.assert_allclose(g_value, w_value, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(g_value, w_value, err_msg=what)


def outcome(fn) -> tuple[Any, BaseException | None]:
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 (the exception type is what is compared)
        return None, e


# -- tests --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case_id, name, spec", cases("reference"))
def test_reference_matches_tf(case_id, name, spec):
    """The numpy reference of op_specs.py gives TF's value, shape and dtype (a check of the test data)."""
    args = S.sample(case_id, spec)
    want = S.as_outputs(call(tf_real, name, spec, [tf_real.constant(a) for a in args]))
    ref = S.as_outputs(spec.ref(*args, **spec.kwargs))
    assert len(ref) == len(want)
    for r, w in zip(ref, want):
        r, w_value = np.asarray(r), to_numpy(w)
        assert r.dtype.name == w.dtype.name and r.shape == w_value.shape
        if spec.permutation:
            continue
        if r.dtype.kind in "fc":
            np.testing.assert_allclose(r, w_value, rtol=max(spec.rtol, 1e-5), atol=max(spec.atol, 1e-6),
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(r, w_value)


@pytest.mark.parametrize("case_id, name, spec", cases("forward"))
def test_forward_matches_tf(case_id, name, spec):
    args = S.sample(case_id, spec)
    want = call(tf_real, name, spec, [tf_real.constant(a) for a in args])
    got = call(tapejax, name, spec, [tapejax.constant(a) for a in args])
    assert_same(got, want, spec, f"tf.{name}")


@pytest.mark.parametrize("case_id, name, spec", cases("gradient"))
def test_tape_gradient_matches_tf(case_id, name, spec):
    """The gradient of sum(op(x) * w): the same values, and None (or LookupError) exactly where TF has them.

    Float arguments are watched directly; a row with no float argument gets its inputs through `cast` from
    watched float64 sources (see op_specs.tape_gradient), so that there is still a gradient to compare.
    """
    args = S.sample(case_id, spec)
    through_cast = not S.grad_positions(args)

    def run(m):
        return S.tape_gradient(m, lambda ts: call(m, name, spec, ts), args, case_id, through_cast=through_cast)[1]

    want, tf_error = outcome(lambda: run(tf_real))
    got, error = outcome(lambda: run(tapejax))
    if tf_error is not None:
        assert error is not None, f"TF raises {type(tf_error).__name__}: {tf_error}; tapejax gives {got!r}"
        assert type(error).__name__ == type(tf_error).__name__, f"tapejax raises {error!r}, TF {tf_error!r}"
        if isinstance(tf_error, LookupError):
            assert str(error) == str(tf_error).strip("'\"")
        return
    if error is not None:
        raise error
    assert_same(got, want, spec, f"gradient of tf.{name}")


@pytest.mark.parametrize("case_id, name, spec", cases("mixed", lambda spec, args: len(S.grad_positions(args)) >= 2))
def test_float32_with_float64_errors_like_tf(case_id, name, spec):
    """The first float argument as float64, the others float32: an error of the same type, or a value, as in TF.

    Also checks `Spec.mixed`, the expectation that tests/ops/test_registry.py holds tapejax to.
    """
    args = list(S.sample(case_id, spec))
    first = S.grad_positions(tuple(args))[0]
    args[first] = S.to_float64((args[first],))[0]
    want, tf_error = outcome(lambda: call(tf_real, name, spec, [tf_real.constant(a) for a in args]))
    assert spec.mixed == ("" if tf_error is None else type(tf_error).__name__), f"TF: {tf_error!r}; fix Spec.mixed"
    got, error = outcome(lambda: call(tapejax, name, spec, [tapejax.constant(a) for a in args]))
    if tf_error is None:
        assert error is None, f"TF accepts float32 with float64 here; tapejax raises {error!r}"
        assert_same(got, want, spec, f"tf.{name} on float32 and float64")
    else:
        assert error is not None, f"TF raises {tf_error!r}; tapejax gives {got!r}"
        assert type(error).__name__ == type(tf_error).__name__, f"tapejax raises {error!r}, TF {tf_error!r}"
        if type(tf_error).__name__ == "ValueError":
            # raised by TF's Python wrapper ("y: Tensor conversion requested dtype float64 for Tensor with dtype
            # float32: <tf.Tensor: ...>"): tapejax's is the same text
            assert str(error) == str(tf_error)
        if type(tf_error).__name__ == "InvalidArgumentError":
            # TF's message names the op and the mismatch: "cannot compute Mul as input #1(zero-based) was expected
            # to be a float tensor but is a double tensor [Op:Mul]"; the TF op name may differ (_MklMatMul).
            pattern = r"as input #\d+\(zero-based\) was expected to be a \w+ tensor but is a \w+ tensor"
            assert re.search(pattern, str(tf_error))
            assert re.search(pattern, str(error)), f"tapejax's message: {error}"
