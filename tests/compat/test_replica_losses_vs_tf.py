"""tf.nn.compute_average_loss, scale_regularization_loss and dropout, and tf.config's logical device
configurations, against TensorFlow 2.21 (default strategy): values, dtypes, exception types."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same_outcome  # noqa: E402

CASES = {
    "average": lambda tf: tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0])),
    "average_2d": lambda tf: tf.nn.compute_average_loss(tf.constant([[1.0, 2.0], [3.0, 4.0]])),
    "global_batch": lambda tf: tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]), global_batch_size=6),
    "weights": lambda tf: tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]),
                                                     sample_weight=tf.constant([1.0, 0.0, 2.0])),
    "scalar_weight": lambda tf: tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]), sample_weight=2.0),
    "int_loss": lambda tf: tf.nn.compute_average_loss(tf.constant([1, 2])),
    "float64": lambda tf: tf.nn.compute_average_loss(tf.constant([1.0, 2.0], tf.float64), global_batch_size=4),
    "scalar_loss": lambda tf: tf.nn.compute_average_loss(tf.constant(2.0)),
    "regularization": lambda tf: tf.nn.scale_regularization_loss(tf.constant(2.0)),
    "regularization_list": lambda tf: tf.nn.scale_regularization_loss([tf.constant(2.0), tf.constant(3.0)]),
    "dropout_zero": lambda tf: tf.nn.dropout(tf.ones([2, 3]), 0.0),
    "dropout_bad_rate": lambda tf: tf.nn.dropout(tf.ones([2, 3]), 1.5),
    "dropout_int": lambda tf: tf.nn.dropout(tf.ones([2, 3], tf.int32), 0.5),
    "config": lambda tf: tuple(tf.config.LogicalDeviceConfiguration(memory_limit=10)),
    "set_not_a_device": lambda tf: tf.config.set_logical_device_configuration("CPU:0", []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name):
    assert_same_outcome(CASES[name], tapejax, tf_real)


def test_dropout_keeps_scaled_values_and_its_gradient():
    x = tapejax.Variable(np.arange(1.0, 1001.0, dtype=np.float32))
    with tapejax.GradientTape() as tape:
        y = tapejax.nn.dropout(x, 0.25, seed=1)
    kept = y.numpy() != 0
    np.testing.assert_allclose(y.numpy()[kept], x.numpy()[kept] / 0.75, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), kept / 0.75, rtol=1e-6)
    assert 0.65 < kept.mean() < 0.85


def test_logical_devices_are_accepted_as_jax_has_them_else_runtime_error():
    """TF accepts a configuration before its runtime starts and raises RuntimeError after; tapejax's runtime (JAX)
    has started at import, so it accepts the configurations that describe JAX's devices and raises TF's error
    for the others."""
    cpu = tapejax.config.list_physical_devices("CPU")[0]
    n = len(tapejax.config.list_logical_devices("CPU"))
    tapejax.config.set_logical_device_configuration(cpu, [tapejax.config.LogicalDeviceConfiguration()] * n)
    assert len(tapejax.config.get_logical_device_configuration(cpu)) == n
    with pytest.raises(RuntimeError, match="xla_force_host_platform_device_count"):
        tapejax.config.set_logical_device_configuration(cpu, [tapejax.config.LogicalDeviceConfiguration()] * (n + 1))
