"""What real programs do on their first lines, against TensorFlow: the version, formatting a tensor
(`f"{loss:.4f}"`), `tf.keras.losses.huber` and `Reduction`."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same  # noqa: E402


def test_version_is_the_tf_release_followed():
    assert tapejax.__version__ == tapejax.version.VERSION == tf_real.__version__
    assert tapejax.version.GIT_VERSION.startswith(f"v{tf_real.version.VERSION}")


def _outcome(call):
    try:
        return call()
    except Exception as e:  # noqa: BLE001 (the exception's type is the outcome)
        return type(e).__name__


DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8", "bool", "complex64")
SPECS = ("", ".2f", "d", "5", ">8", "e", ".3g", "s", "x", "+.1%")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [1, 0.1, -3.75])
def test_format_of_scalars(dtype, value):
    value = abs(value) if dtype == "uint8" else value  # a negative float cast to uint8 is undefined (C)
    for spec in SPECS:
        expected = _outcome(lambda: format(tf_real.cast(value, dtype), spec))
        got = _outcome(lambda: format(tapejax.cast(value, dtype), spec))
        assert got == expected, (dtype, value, spec)


@pytest.mark.parametrize("value", [[1.5, 2.0], [[1]], np.zeros((0,), np.float32), [True, False]])
def test_format_of_arrays_and_variables(value):
    for spec in ("", ".2f", "s"):
        assert _outcome(lambda: format(tapejax.constant(value), spec)) == \
            _outcome(lambda: format(tf_real.constant(value), spec))
        # a Variable is formatted as an object: its str with no spec, a TypeError with one (TF)
        assert type(_outcome(lambda: format(tapejax.Variable(value), spec))) is \
            type(_outcome(lambda: format(tf_real.Variable(value), spec)))
        if spec:
            assert _outcome(lambda: format(tapejax.Variable(value), spec)) == "TypeError"


def test_format_inside_tf_function():
    def step(x):
        return [_outcome(lambda: format(x, ".2f")), format(x, "").startswith("Tensor(")]
    for tf in (tf_real, tapejax):
        results = []
        tf.function(lambda x: results.append(step(x)) or x)(tf.constant(1.0))
        assert results[0] == ["TypeError", True], tf.__name__


@pytest.mark.parametrize("delta", [1.0, 0.25, 3.0])
def test_huber_function(delta):
    rng = np.random.default_rng(7)
    y_true, y_pred = rng.normal(size=(4, 3)).astype(np.float32), 2 * rng.normal(size=(4, 3)).astype(np.float32)
    assert_same(tapejax.keras.losses.huber(y_true, y_pred, delta=delta),
                tf_real.keras.losses.huber(y_true, y_pred, delta=delta))
    assert_same(tapejax.keras.losses.huber(tapejax.constant(y_true, tapejax.float64), y_pred.astype(np.float64)),
                tf_real.keras.losses.huber(tf_real.constant(y_true, tf_real.float64), y_pred.astype(np.float64)))


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none", "mean", "mean_with_sample_weight", None])
def test_huber_reductions_with_sample_weight(reduction):
    rng = np.random.default_rng(8)
    y_true, y_pred = rng.normal(size=(5, 2)).astype(np.float32), rng.normal(size=(5, 2)).astype(np.float32)
    weights = np.array([1., 0., 2., 0.5, 0.], np.float32)
    for kwargs in ({}, {"sample_weight": weights}):
        assert_same(tapejax.keras.losses.Huber(delta=0.5, reduction=reduction)(y_true, y_pred, **kwargs),
                    tf_real.keras.losses.Huber(delta=0.5, reduction=reduction)(y_true, y_pred, **kwargs))


def test_huber_name_and_bad_reduction():
    assert tapejax.keras.losses.Huber().name == tf_real.keras.losses.Huber().name
    for bad in ("bad", "SUM"):
        with pytest.raises(ValueError):
            tf_real.keras.losses.Huber(reduction=bad)
        with pytest.raises(ValueError):
            tapejax.keras.losses.Huber(reduction=bad)


def test_reduction_constants():
    ours, theirs = tapejax.keras.losses.Reduction, tf_real.keras.losses.Reduction
    for name in ("AUTO", "NONE", "SUM", "SUM_OVER_BATCH_SIZE"):
        assert getattr(ours, name) == getattr(theirs, name)
    assert ours.all() == theirs.all()
    theirs.validate("sum")
    ours.validate("sum")
    with pytest.raises(ValueError):
        theirs.validate("mean")
    with pytest.raises(ValueError):
        ours.validate("mean")
    for name in ("NONE", "SUM", "SUM_OVER_BATCH_SIZE"):  # Keras 3 losses take these (not AUTO: see README)
        y_true, y_pred = [[0., 1.], [2., 0.]], [[0.3, 0.], [0., 5.]]
        assert_same(tapejax.keras.losses.Huber(reduction=getattr(ours, name))(y_true, y_pred),
                    tf_real.keras.losses.Huber(reduction=getattr(theirs, name))(y_true, y_pred))
