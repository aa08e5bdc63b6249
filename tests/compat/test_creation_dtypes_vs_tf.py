"""TF's dtype rules for the creation ops, swept over argument kinds against real TensorFlow.

Each creation op (`constant`, `convert_to_tensor`, `zeros`, `ones`, `fill`, `eye`, `zeros_like`, `ones_like`,
`range`, `linspace`, `one_hot`, `random.uniform`, `random.normal`) is called with Python ints, floats and bools,
numpy scalars and arrays of several dtypes, lists, and tensors, in TF and in tapejax; the outcome compared is the
result's dtype and shape, or the exception's type. Differences left alone are in `KNOWN`, each with its reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same  # noqa: E402


def _kinds(tf: Any) -> dict[str, Any]:
    return {
        "int": 3, "float": 3.0, "negint": -2, "bool": True,
        "np_i32": np.int32(3), "np_i64": np.int64(3), "np_f32": np.float32(3), "np_f64": np.float64(3),
        "np_f16": np.float16(3), "np_u8": np.uint8(3),
        "t_i32": tf.constant(3), "t_f32": tf.constant(3.), "t_i64": tf.constant(3, dtype=tf.int64),
        "t_f64": tf.constant(3., dtype=tf.float64),
        "list_int": [1, 2], "list_float": [1., 2.], "list_mixed": [1, 2.], "list_bool": [True, False],
        "arr_i64": np.array([1, 2]), "arr_f64": np.array([1., 2.]), "arr_f32": np.array([1., 2.], np.float32),
        "arr_i32": np.array([1, 2], np.int32), "arr_bool": np.array([True]), "complex": 1 + 2j,
    }


SCALARS = ("int", "float", "negint", "np_i32", "np_i64", "np_f32", "np_f64", "np_f16", "t_i32", "t_f32", "t_i64",
           "t_f64", "bool")
UNARY = ("tf.constant(a)", "tf.convert_to_tensor(a)", "tf.zeros_like(a)", "tf.ones_like(a)", "tf.fill([2], a)",
         "tf.range(a)", "tf.linspace(a, a, 3)", "tf.one_hot(a, 4)", "tf.range(a, 10)", "tf.range(0, 10, a)",
         "tf.constant(a, shape=[2])", "tf.zeros_like(a, dtype=tf.float32)", "tf.eye(a)")
BINARY = ("tf.linspace(a, b, 3)", "tf.range(a, b)", "tf.random.uniform([2], a, b)", "tf.random.normal([2], a, b)",
          "tf.one_hot([0], 3, a, b)")
DTYPES = ("int32", "int64", "float32", "float64", "float16", "bool", "uint8", "complex64")
SINGLE = (
    "tf.random.uniform([2])", "tf.random.normal([2])", "tf.random.uniform([2], maxval=5, dtype=tf.int32)",
    "tf.random.truncated_normal([2])", "tf.random.uniform([2], dtype=tf.float64)", "tf.random.normal([2], dtype=tf.float16)",
    "tf.random.uniform([2], 0, 5, dtype=tf.int64)", "tf.random.uniform([2], np.int32(0), 5.)",
    "tf.eye(2, 3)", "tf.eye(2, dtype=tf.int32)", "tf.eye(2, batch_shape=[3])", "tf.eye(tf.constant(2))",
    "tf.eye(np.int64(2))", "tf.one_hot([1, 2], 3, dtype=tf.int32)", "tf.one_hot(tf.constant([1], tf.int64), 3)",
    "tf.one_hot([1], 3, on_value=5)", "tf.one_hot([1], 3, on_value=5, off_value=0)", "tf.one_hot([1], 3, on_value=5.)",
    "tf.zeros([2], tf.int64)", "tf.ones((2,), dtype='int32')", "tf.zeros(tf.constant([2]))",
    "tf.zeros(tf.constant([2], tf.int64))", "tf.zeros(np.array([2]))", "tf.zeros([])", "tf.zeros(tf.TensorShape([2]))",
    "tf.zeros(3)", "tf.ones(np.int64(3))", "tf.fill([2], np.array(1.))", "tf.fill([2], 2**40)", "tf.constant(2**40)",
    "tf.constant([1, 2**40])", "tf.convert_to_tensor(2**40)", "tf.range(5, dtype=tf.float32)",
    "tf.range(5, dtype=tf.int64)", "tf.range(0.5, 5)", "tf.range(tf.constant(5, tf.int64))", "tf.linspace(0, 1, 5)",
    "tf.linspace(0., 1., 5)", "tf.linspace(np.float32(0), 1, 5)", "tf.linspace([0., 1.], [1., 2.], 5)",
    "tf.linspace(0, tf.constant(1.), 5)", "tf.linspace(tf.constant(0), tf.constant(1), 5)",
    "tf.linspace(0, 1, tf.constant(3))", "tf.linspace(np.float16(0), np.float16(1), 3)", "tf.linspace(-2, 2, 5, axis=0)",
    "tf.constant(1, dtype=tf.float32)", "tf.constant(1.5, dtype=tf.int32)", "tf.constant([1, 2], dtype=tf.float16)",
    "tf.convert_to_tensor(1, dtype_hint=tf.float32)", "tf.convert_to_tensor(1., dtype_hint=tf.int32)",
    "tf.convert_to_tensor(np.int64(1), dtype_hint=tf.float32)", "tf.convert_to_tensor([1, 2.], dtype_hint=tf.int32)",
    "tf.convert_to_tensor(1, tf.float64)", "tf.zeros_like([1, 2])", "tf.ones_like([1., 2.])",
    "tf.zeros_like(tf.Variable(1.))", "tf.ones_like(tf.Variable(1), dtype=tf.float64)",
    "tf.fill([2], tf.constant(1, tf.int64))", "tf.fill(tf.constant([2, 3]), 1.)", "tf.fill([2], True)",
    "tf.constant(np.float16(1))", "tf.constant(np.array(1, np.uint16))", "tf.constant(1+2j)", "tf.ones_like(True)",
    # a Python number out of its inferred dtype's range is an error (a float32 inf, an int64 overflow), unless a
    # dtype is asked for; an infinity is not out of range
    "tf.constant(1e40)", "tf.constant([1., -1e39])", "tf.constant([[3.5e38]])", "tf.constant(2**63)",
    "tf.convert_to_tensor(-2**63 - 1)", "tf.constant(-2**63)", "tf.constant(1e40, dtype=tf.float32)",
    "tf.constant(1e308 * 10)", "tf.Variable(1e40)", "tf.fill([2], 1e40)", "tf.cast(1e40, tf.float64)",
    "tf.cast(0.5, tf.float32)", "tf.cast(2, tf.float16)", "tf.constant([1.]) * 1e40",
)

# (expression, kinds) -> why tapejax differs from TF there. A kind of "*" matches every kind.
KNOWN: dict[tuple[str, str], str] = {
    **{(e, k): "TF fails an internal assertion (AssertionError) on bool/uint8/complex bounds; tapejax computes "
               "the range (bool/uint8) or raises TypeError (complex)"
       for e in ("tf.range(a)", "tf.range(a, 10)", "tf.range(0, 10, a)")
       for k in ("bool", "np_u8", "arr_bool", "list_bool", "complex")},
    **{(e, k): "a non-scalar bound: TF raises InvalidArgumentError, tapejax ValueError"
       for e in ("tf.range(a)", "tf.range(a, 10)", "tf.range(0, 10, a)")
       for k in ("list_int", "list_float", "list_mixed", "arr_i64", "arr_f64", "arr_f32", "arr_i32")},
    **{("tf.eye(a)", k): "TF rejects a float or bool size (TypeError); tapejax truncates it"
       for k in ("float", "bool", "np_f32", "np_f64", "np_f16")},
    **{("tf.one_hot(a, 4)", k): "TF casts float and bool numpy indices (and raises TypeError for a Python float); "
                                "tapejax requires integer indices (InvalidArgumentError)"
       for k in ("float", "bool", "np_f32", "np_f64", "np_f16", "arr_f64", "arr_f32", "arr_bool", "list_bool")},
    ("tf.fill([2], a)", "arr_bool"): "TF fills from a 1-element array; tapejax requires a scalar value, as TF's "
                                     "documentation says",
    **{(f"tf.{f}(a, dtype=tf.uint8)", "negint"): "TF wraps a negative Python int around; tapejax raises TypeError "
                                                 "(README, Errors)" for f in ("constant", "convert_to_tensor")},
    ("tf.one_hot([0], 3, a, b)", "*"): "on_value and off_value of different numpy/tensor dtypes: TF raises "
                                       "TypeError, tapejax converts one to the other's dtype",
    **{("tf.range(a, b)", f"{k1} {k2}"): "a bool bound: TF fails an internal assertion, tapejax raises "
       "InvalidArgumentError or computes the range" for k1 in SCALARS for k2 in SCALARS if "bool" in (k1, k2)},
}


def _outcome(tf: Any, expr: str, a: Any = None, b: Any = None) -> str:
    try:
        result = eval(expr, {"tf": tf, "np": np, "a": a, "b": b})  # noqa: S307 (fixed expressions above)
    except Exception as e:  # noqa: BLE001 (the exception's type is the outcome)
        return type(e).__name__
    return f"{result.dtype.name} {tuple(result.shape)}"


def _known(expr: str, kinds: str) -> bool:
    return (expr, kinds) in KNOWN or (expr, "*") in KNOWN


def _differences(cases: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    theirs, ours = _kinds(tf_real), _kinds(tapejax)
    out = []
    for expr, names in cases:
        args_tf, args_tj = [theirs[n] for n in names], [ours[n] for n in names]
        expected, got = _outcome(tf_real, expr, *args_tf), _outcome(tapejax, expr, *args_tj)
        if expected != got and not _known(expr, " ".join(names)):
            out.append(f"{expr} with {names}: TF {expected}, tapejax {got}")
    return out


@pytest.mark.parametrize("expr", UNARY)
def test_one_argument_kinds(expr):
    assert _differences([(expr, (k,)) for k in _kinds(tf_real)]) == []


@pytest.mark.parametrize("expr", BINARY)
def test_two_argument_kinds(expr):
    assert _differences([(expr, (k1, k2)) for k1 in SCALARS for k2 in SCALARS]) == []


def test_single_calls():
    assert _differences([(expr, ()) for expr in SINGLE]) == []


@pytest.mark.parametrize("dtype", DTYPES)
def test_convert_to_requested_dtype(dtype):
    """`convert_to_tensor(value, dtype=...)`: TF casts numpy values (as numpy's astype) and Python bools to signed
    ints and floats, but never a Python float to an integer nor a tensor of another dtype."""
    exprs = [f"tf.convert_to_tensor(a, dtype=tf.{dtype})", f"tf.constant(a, dtype=tf.{dtype})"]
    assert _differences([(e, (k,)) for e in exprs for k in _kinds(tf_real) if k != "complex"]) == []


def test_linspace_values():
    """Integer bounds give float64 values, the same as TF's."""
    for args in [(-2, 2, 5), (0, 10, 4), (np.uint8(0), np.uint8(9), 4), ([0, 1], [4, 9], 3), (1., 0., 6)]:
        assert_same(tapejax.linspace(*args), tf_real.linspace(*args), f"linspace{args}")


def test_known_differences_still_differ():
    """Each KNOWN entry names a real difference: one fixed must be taken off the list."""
    theirs, ours = _kinds(tf_real), _kinds(tapejax)
    for (expr, kinds), reason in KNOWN.items():
        if kinds == "*":
            continue
        names = kinds.split()
        assert _outcome(tf_real, expr, *[theirs[n] for n in names]) != \
            _outcome(tapejax, expr, *[ours[n] for n in names]), f"{expr} {kinds} now agrees with TF: {reason}"
