"""The small symbols real programs use (docs/coverage.md's most-used missing list) against TensorFlow 2.21:
tf.device and tf.config's device lists, tf.math.l2_normalize, TF's initializers, the graph-bookkeeping calls,
ensure_shape, shape_n, broadcast shapes, saturate_cast, realdiv: values, dtypes and exception types."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same  # noqa: E402


def _outcome(call):
    try:
        result = call()
    except Exception as e:  # noqa: BLE001 (the exception's type is the outcome)
        return type(e).__name__
    if isinstance(result, list | tuple):
        return [np.asarray(r) if hasattr(r, "numpy") else r for r in result]
    return np.asarray(result) if hasattr(result, "numpy") else result


def _same(case):
    expected, got = _outcome(lambda: case(tf_real)), _outcome(lambda: case(tapejax))
    if isinstance(expected, str) or expected is None:
        assert got == expected
    elif isinstance(expected, list):
        assert_same(got, expected, any_sequence=True)
    elif isinstance(expected, np.ndarray):
        assert_same(got, expected)
    else:
        assert got == expected


DEVICE_STRINGS = ["/CPU:0", "cpu:0", "/device:GPU:0", "GPU:0", "/gpu:3", "foo", "CPU", "/device:CPU:*", "", None,
                  "/job:localhost/replica:0/task:0/device:CPU:0", "/TPU:0", "cpu:x", "/CPU:0/GPU:0", 3,
                  "/replica:x/CPU:0"]


@pytest.mark.parametrize("spec", DEVICE_STRINGS, ids=repr)
def test_device_strings(spec):
    def case(tf):
        with tf.device(spec) as entered:
            return [entered, (tf.constant(1.0) + 1).device]
    _same(case)


def test_device_refuses_functions_and_lists_devices():
    _same(lambda tf: tf.device(lambda op: "/cpu:0").__enter__())
    for kind in (None, "CPU", "GPU", "XPU"):
        _same(lambda tf: [tuple(d) for d in tf.config.list_physical_devices(kind)])
        _same(lambda tf: [tuple(d) for d in tf.config.list_logical_devices(kind)])
        _same(lambda tf: [tuple(d) for d in tf.config.experimental.list_physical_devices(kind)])
    _same(lambda tf: type(tf.config.list_physical_devices()[0])._fields)
    _same(lambda tf: tf.config.experimental.set_memory_growth(tf.config.list_physical_devices("CPU")[0], True))


@pytest.mark.parametrize("x, axis", [([3.0, 4.0], None), ([0.0, 0.0], None), ([[1.0, 2.0], [0.0, 1e-7]], 1),
                                     ([[1.0, 2.0], [3.0, 4.0]], 0)])
def test_l2_normalize_and_its_gradient(x, axis):
    def case(tf):
        v = tf.Variable(x)
        with tf.GradientTape() as tape:
            y = tf.math.l2_normalize(v, axis=axis)
            loss = tf.reduce_sum(y * tf.constant(np.arange(1.0, 1.0 + np.size(x), dtype=np.float32).reshape(
                np.shape(x))))
        return [y, tape.gradient(loss, v)]
    _same(case)


INITIALIZERS = {
    "normal_zero_stddev": lambda tf: tf.random_normal_initializer(1.5, 0.0)([2, 2]),
    "normal_float64": lambda tf: tf.random_normal_initializer()([3], tf.float64).dtype.name,
    "normal_int": lambda tf: tf.random_normal_initializer()([2], tf.int32),
    "uniform_same_bounds": lambda tf: tf.random_uniform_initializer(2.0, 2.0)([3]),
    "uniform_int_default_bounds": lambda tf: tf.random_uniform_initializer()([2], tf.int32),
    "uniform_int_range": lambda tf: tf.random_uniform_initializer(3, 4)([5], tf.int64),
    "zeros_int": lambda tf: tf.zeros_initializer()([2], tf.int32),
    "zeros": lambda tf: tf.zeros_initializer()([2, 1]),
    "ones_bool": lambda tf: tf.ones_initializer()([2], tf.bool),
    "constant_list": lambda tf: tf.constant_initializer([1, 2])([2]),
    "constant_list_float": lambda tf: tf.constant_initializer([1, 2])([2], tf.float32),
    "constant_scalar": lambda tf: tf.constant_initializer(3)([2, 2]),
    "constant_reshaped": lambda tf: tf.constant_initializer([1, 2, 3, 4])([2, 2]),
    "constant_wrong_size": lambda tf: tf.constant_initializer([1, 2, 3])([2]),
    "constant_of_tensor": lambda tf: tf.constant_initializer(tf.constant([1.0, 2.0]))([2]),
    "configs": lambda tf: [tf.random_normal_initializer(1.0, 2.0, seed=3).get_config(),
                           tf.random_uniform_initializer().get_config(), tf.constant_initializer(3).get_config(),
                           tf.zeros_initializer().get_config()],
}


@pytest.mark.parametrize("case", sorted(INITIALIZERS))
def test_initializers(case):
    _same(INITIALIZERS[case])


CALLS = {
    "executing_eagerly": lambda tf: [tf.executing_eagerly(), tf.inside_function()],
    "in_function": lambda tf: [bool(b) for b in tf.function(lambda: (tf.constant(tf.executing_eagerly()),
                                                                    tf.constant(tf.inside_function())))()],
    "get_static_value": lambda tf: tf.get_static_value(tf.constant([1, 2])),
    "get_static_value_python": lambda tf: tf.get_static_value([1, 2]),
    "no_op": lambda tf: tf.no_op(),
    "group": lambda tf: tf.group(tf.constant(1), tf.constant(2.0)),
    "control_dependencies": lambda tf: tf.control_dependencies([tf.constant(1)]).__enter__(),
    "identity_n": lambda tf: tf.identity_n([tf.constant(1), 2.0]),
    "shape_n": lambda tf: tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])]),
    "shape_n_int64": lambda tf: tf.shape_n([tf.zeros([2, 3])], out_type=tf.int64),
    "ensure_shape": lambda tf: tf.ensure_shape(tf.zeros([2, 3]), [2, None]),
    "ensure_shape_bad": lambda tf: tf.ensure_shape(tf.zeros([2, 3]), [2, 4]),
    "ensure_shape_rank": lambda tf: tf.ensure_shape(tf.zeros([2, 3]), [2]),
    "broadcast_static": lambda tf: tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list(),
    "broadcast_static_unknown": lambda tf: tf.broadcast_static_shape(tf.TensorShape([None, 1]),
                                                                     tf.TensorShape([4])).as_list(),
    "broadcast_static_bad": lambda tf: tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3])),
    "broadcast_dynamic": lambda tf: tf.broadcast_dynamic_shape([2, 1], [3]),
    "broadcast_dynamic_int64": lambda tf: tf.broadcast_dynamic_shape(tf.constant([2, 1], tf.int64),
                                                                     tf.constant([3], tf.int64)),
    "broadcast_dynamic_bad": lambda tf: tf.broadcast_dynamic_shape([2], [3]),
    "timestamp": lambda tf: tf.timestamp().dtype.name,
    "saturate_int32": lambda tf: tf.saturate_cast(tf.constant([3e9, -3e9, 2.7, -2.7, 300.0]), tf.int32),
    "saturate_uint8": lambda tf: tf.saturate_cast(tf.constant([3e9, -3e9, 2.7, -2.7, 300.0, -5.0]), tf.uint8),
    "saturate_int16": lambda tf: tf.saturate_cast(tf.constant([70000, -5, -70000]), tf.int16),
    "saturate_float32": lambda tf: tf.saturate_cast(tf.constant([1e300, -1e300, 1.5], tf.float64), tf.float32),
    "realdiv": lambda tf: tf.realdiv(tf.constant([7.0, -7.0]), tf.constant([2.0, 0.0])),
    "realdiv_python": lambda tf: tf.realdiv(tf.constant([7.0]), 2),
    "realdiv_int": lambda tf: tf.realdiv(tf.constant([7]), tf.constant([2])),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_calls(case):
    _same(CALLS[case])
