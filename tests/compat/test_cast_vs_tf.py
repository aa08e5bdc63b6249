"""`tf.cast` from every float type to every integer type at the values where conversions part ways, side by side
with TensorFlow: NaN, +-inf, values just inside and outside each integer range, beyond int32 and int64, negative
values into unsigned types (XLA would clamp them all; TF's CPU kernel converts as C on x86-64: tapejax/_src/dtypes.py
`cast_array`).

Each value is cast alone, where TF's answer is its per-element rule. For int32, int64 and uint64 TF gives that answer
at every length, so whole arrays are compared too, eagerly and in a tf.function. (For the 8- and 16-bit types and
uint32, TF's vectorised loop clamps instead on all but an array's last elements, an answer that depends on the
array's length: tapejax keeps the per-element rule there.)"""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

EDGES = [
    -1.2, -0.7, 255.9, 300.0, -129.5, 127.5, -32769.0, 65535.7, 70000.0, 2.0**31 - 1, 2.0**31, -(2.0**31),
    -2147483648.5, -(2.0**31) - 1000, 3e9, 2.0**32 + 5, 1e10, -1e10, 2.0**63, -(2.0**63), 1.5 * 2**63,
    2.0**64 - 2**40, 2.0**64 + 4096, 1e30, np.nan, np.inf, -np.inf,
]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTEGERS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def _cast(m, values, src, dst):
    return m.cast(m.cast(m.constant(values, m.float64), getattr(m, src)), getattr(m, dst))


@pytest.mark.parametrize("dst", INTEGERS)
@pytest.mark.parametrize("src", FLOATS)
def test_each_edge_value_casts_as_tf(src, dst):
    for value in EDGES:
        want = _cast(tf_real, value, src, dst)
        assert_same(_cast(tapejax, value, src, dst), want, f"cast({value!r})", rtol=0)


@pytest.mark.parametrize("dst", ["int32", "int64", "uint64"])
@pytest.mark.parametrize("src", FLOATS)
def test_arrays_cast_as_tf_eagerly_and_compiled(src, dst):
    values = np.tile(np.array(EDGES), 3)  # long enough for TF's vectorised loop
    want = _cast(tf_real, values, src, dst)
    assert_same(_cast(tapejax, values, src, dst), want, rtol=0)
    compiled = tapejax.function(lambda x: tapejax.cast(x, getattr(tapejax, dst)))
    assert_same(compiled(tapejax.cast(tapejax.constant(values, tapejax.float64), getattr(tapejax, src))), want, rtol=0)


def test_convert_image_dtype_wraps_as_cast_and_saturate_cast_clamps():
    image = np.array([[-0.5, 0.2], [1.5, np.nan]], np.float32)
    for m_dtype in ["uint8", "int16", "int32"]:
        want = tf_real.image.convert_image_dtype(tf_real.constant(image), getattr(tf_real, m_dtype))
        assert_same(tapejax.image.convert_image_dtype(tapejax.constant(image), getattr(tapejax, m_dtype)), want, rtol=0)
        want = tf_real.dtypes.saturate_cast(tf_real.constant(image * 300), getattr(tf_real, m_dtype))
        got = tapejax.dtypes.saturate_cast(tapejax.constant(image * 300), getattr(tapejax, m_dtype))
        assert_same(got, want, rtol=0)


def test_a_cast_to_the_same_dtype_returns_its_input():
    # TF returns a tensor or variable already of the dtype as it is (no op); a Python value is converted
    for m in (tapejax, tf_real):
        x, v = m.constant([1.0, 2.0]), m.Variable(1.0)
        assert m.cast(x, m.float32) is x and m.cast(x, "float32") is x and m.cast(v, m.float32) is v
        assert m.cast(x, m.float64) is not x and m.cast(1.5, m.float32).dtype == m.float32
