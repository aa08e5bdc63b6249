"""The max/min rows whose TF kernels skip NaN (tapejax/ops/nan_extrema.py), side by side with TensorFlow on the cases
the edge sweep does not reach: a NaN before, amid and after the other elements, NaN against -inf, ties (-0 and 0,
and MaxPool3DGrad's 1e-5), whole segments and windows of NaN. Values and tape gradients are compared."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

NAN, INF = np.nan, np.inf
# one segment, window or scatter target each: the elements in order
CASES = {
    "nan_first": [NAN, 1.0, 2.0], "nan_amid": [1.0, NAN, 2.0], "nan_last": [1.0, 2.0, NAN], "all_nan": [NAN, NAN],
    "nan_then_-inf": [NAN, -INF, -INF], "-inf_then_nan": [-INF, NAN], "-inf_only": [-INF, -INF],
    "nan_then_inf": [NAN, INF], "zeros": [-0.0, 0.0], "ties": [2.0, 1.0, 2.0], "near_ties": [1.0, 1.000001],
}


def _rows(m, values):
    return m.constant(np.stack([values, values[::-1]], axis=1).astype(np.float32))  # two columns: both orders


OPS = {
    "segment_max": lambda m, x: m.math.segment_max(x, [0] * x.shape[0]),
    "segment_min": lambda m, x: m.math.segment_min(x, [0] * x.shape[0]),
    "unsorted_segment_max": lambda m, x: m.math.unsorted_segment_max(x, [1] * x.shape[0], 2),
    "unsorted_segment_min": lambda m, x: m.math.unsorted_segment_min(x, [1] * x.shape[0], 2),
    # the first element is the tensor's, the others are updates to it
    "tensor_scatter_nd_max": lambda m, x: m.tensor_scatter_nd_max(x[:1], [[0]] * (x.shape[0] - 1), x[1:]),
    "tensor_scatter_nd_min": lambda m, x: m.tensor_scatter_nd_min(x[:1], [[0]] * (x.shape[0] - 1), x[1:]),
    "max_pool1d": lambda m, x: m.nn.max_pool1d(x[None], x.shape[0], 1, "VALID"),
    "max_pool2d_same": lambda m, x: m.nn.max_pool2d(x[None, None], [1, 2], 1, "SAME"),
    "max_pool3d": lambda m, x: m.nn.max_pool3d(x[None, None, :, :, None], [1, 1, x.shape[0], 1, 1], 1, "VALID"),
    "max_pool3d_same": lambda m, x: m.nn.max_pool3d(x[None, None, :, :, None], [1, 1, 2, 1, 1], 1, "SAME"),
}


def _run(m, op, values):
    x = _rows(m, values)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = OPS[op](m, x)
        loss = m.reduce_sum(y * np.arange(1, int(np.prod(y.shape)) + 1, dtype=np.float32).reshape(y.shape))
    return y.numpy(), tape.gradient(loss, x).numpy()


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("op", list(OPS))
def test_nan_skipping_extremum_matches_tf(op, case):
    if op.startswith("tensor_scatter") and len(CASES[case]) < 2:
        pytest.skip("no update")
    assert_same(_run(tapejax, op, CASES[case]), _run(tf_real, op, CASES[case]))
