"""DLPack and numpy round trips against TensorFlow 2.21: the same values, dtypes and shapes through
`tf.experimental.dlpack`, capsules exchanged both ways between tapejax and TF, and TF's exception types."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402
from .compare import assert_same, assert_same_outcome  # noqa: E402

VALUES = [(np.arange(6, dtype=np.float32).reshape(2, 3), "float32"), (np.array([1, -2], np.int32), "int32"),
          (np.array([[True, False]]), "bool"), (np.array(2.5, np.float64), "float64")]


@pytest.mark.parametrize("value, dtype", VALUES)
def test_round_trip_through_a_capsule(value, dtype):
    def run(tf):
        t = tf.constant(value, dtype=dtype)
        return tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(t))

    assert_same(run(tapejax), run(tf_real))


@pytest.mark.parametrize("value, dtype", VALUES[:2])
def test_capsules_cross_between_tapejax_and_tf(value, dtype):
    from_tf = tapejax.experimental.dlpack.from_dlpack(tf_real.experimental.dlpack.to_dlpack(
        tf_real.constant(value, dtype=dtype)))
    assert_same(from_tf, tf_real.constant(value, dtype=dtype))
    to_tf = tf_real.experimental.dlpack.from_dlpack(tapejax.experimental.dlpack.to_dlpack(
        tapejax.constant(value, dtype=dtype)))
    assert_same(tapejax.constant(value, dtype=dtype), to_tf)


def test_array_api_protocol_as_tf():
    for tf in (tapejax, tf_real):
        t = tf.constant([1.0, 2.0])
        assert hasattr(t, "__dlpack__") and hasattr(t, "__dlpack_device__")
        np.testing.assert_array_equal(np.from_dlpack(t), [1.0, 2.0])


def test_errors_are_tfs():
    capsule_twice = lambda tf: (lambda c: (tf.experimental.dlpack.from_dlpack(c),  # noqa: E731
                                           tf.experimental.dlpack.from_dlpack(c)))(
        tf.experimental.dlpack.to_dlpack(tf.constant([1.0])))
    not_a_tensor = lambda tf: tf.experimental.dlpack.to_dlpack(np.arange(3.0))  # noqa: E731
    not_a_capsule = lambda tf: tf.experimental.dlpack.from_dlpack(np.arange(3.0))  # noqa: E731
    for call in (capsule_twice, not_a_tensor, not_a_capsule):
        assert_same_outcome(call, tapejax, tf_real)


def test_numpy_copies_as_tf():
    n = np.arange(4, dtype=np.float32)
    for tf in (tapejax, tf_real):
        t = tf.constant(n)
        n[0] = 7.0
        assert float(t.numpy()[0]) == 0.0  # the constant copied n
        n[0] = 0.0
        first, second = t.numpy(), t.numpy()
        assert first.flags.writeable and not np.shares_memory(first, second)
