"""TPUStrategy on a machine without TPUs fails as TF does: ValueError from the resolver that finds no TPU name
(compared with TF in tests/compat/test_multi_worker_config_vs_tf.py); naming "local" TPUs that are not there is
tf.errors.NotFoundError with what to do instead."""

from __future__ import annotations

import jax
import pytest

import tapejax as tf

pytestmark = pytest.mark.skipif(any(d.platform == "tpu" for d in jax.devices()), reason="a machine with TPUs")


def test_tpu_strategy_without_tpus_raises_tf_value_error():
    with pytest.raises(ValueError, match="Please provide a TPU Name to connect to"):
        tf.distribute.TPUStrategy()
    with pytest.raises(ValueError, match="Please provide a TPU Name to connect to"):
        tf.distribute.cluster_resolver.TPUClusterResolver()


def test_local_tpus_that_are_not_there_raise_not_found():
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
    with pytest.raises(tf.errors.NotFoundError, match="MirroredStrategy"):
        tf.distribute.TPUStrategy(resolver)
