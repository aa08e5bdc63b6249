"""tf.device and tf.config's devices on JAX's devices, and the small symbols of tapejax/ops/graph.py and
tapejax/init_ops.py, by properties (tests/compat/test_small_symbols_vs_tf.py compares them with TF)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import devices


@pytest.mark.parametrize("spec, parsed", [("/CPU:0", ("CPU", 0)), ("gpu:2", ("GPU", 2)), ("/device:GPU:1", ("GPU", 1)),
                                          ("/job:w/replica:0/task:1/device:CPU:0", ("CPU", 0)), ("CPU", ("CPU", None)),
                                          ("/device:CPU:*", ("CPU", None)), ("", (None, None))])
def test_device_strings_parse(spec, parsed):
    assert devices.parse(spec) == parsed


def test_device_places_eager_ops_on_that_jax_device():
    cpu = jax.devices("cpu")[0]
    with tf.device("/CPU:0"):
        x = tf.constant([1.0, 2.0]) * 2.0
    assert x.value.devices() == {cpu}
    assert [d.name for d in tf.config.list_physical_devices("CPU")] == [
        f"/physical_device:CPU:{i}" for i in range(len(jax.devices("cpu")))]


def test_device_inside_tf_function_changes_nothing():
    @tf.function
    def f(x):
        with tf.device("/GPU:7"):
            return x + 1.0
    assert float(f(tf.constant(1.0))) == 2.0


def test_memory_growth_is_remembered_for_a_gpu():
    gpu = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
    assert not tf.config.experimental.get_memory_growth(gpu)
    tf.config.experimental.set_memory_growth(gpu, True)
    assert tf.config.experimental.get_memory_growth(gpu)


def test_eagerness_and_static_values_inside_tf_function():
    seen = []

    @tf.function
    def f(x):
        seen.append((tf.executing_eagerly(), tf.inside_function(), tf.get_static_value(x),
                     tf.get_static_value(tf.constant(3))))
        return x

    f(tf.constant(1.0))
    assert seen[0][:3] == (False, True, None) and seen[0][3] == 3
    assert tf.executing_eagerly() and not tf.inside_function()


def test_ensure_shape_inside_tf_function_is_a_trace_time_value_error():
    f = tf.function(lambda x: tf.ensure_shape(x, [3]))
    with pytest.raises(ValueError, match="not compatible"):
        f(tf.zeros([2]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.ensure_shape(tf.zeros([2]), [3])


def test_saturate_cast_stays_in_range():
    values = np.array([-1e20, -129.5, -1.0, 0.0, 127.9, 255.5, 1e20, np.inf, -np.inf], np.float32)
    for dtype in (tf.int8, tf.uint8, tf.int32, tf.int64, tf.uint16):
        info = np.iinfo(dtype.as_numpy_dtype)
        out = tf.saturate_cast(values, dtype).numpy()
        assert out.dtype == dtype.as_numpy_dtype and out.min() >= info.min and out.max() <= info.max


def test_initializers_follow_the_seed():
    tf.random.set_seed(3)
    a = tf.random_normal_initializer(seed=1)([4]).numpy()
    tf.random.set_seed(3)
    b = tf.random_normal_initializer(seed=1)([4]).numpy()
    np.testing.assert_array_equal(a, b)
    u = tf.random_uniform_initializer(-1.0, 1.0)([1000]).numpy()
    assert u.min() >= -1.0 and u.max() < 1.0


def test_control_dependencies_group_and_no_op_run_nothing_extra():
    calls = []
    with tf.control_dependencies([lambda: calls.append(1), tf.constant(1.0)]):
        y = tf.identity_n([tf.constant(2.0)])[0]
    assert calls == [1] and float(y) == 2.0 and tf.group(y) is None and tf.no_op() is None
