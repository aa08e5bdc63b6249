"""tf.nn: activations and the losses and normalisations built from them, one row each."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tapejax._src.registry import op
from tapejax.ops.math import sigmoid as sigmoid
from tapejax.ops.math import softplus as softplus
from tapejax.ops.math import tanh as tanh


def _relu6(features):
    # TF's gradient is 0 at both kinks (0 and 6); `where` makes JAX's derivative agree.
    return jnp.where(features <= 0, jnp.zeros_like(features),
                     jnp.where(features >= 6, jnp.full_like(features, 6), features))


def _leaky_relu(features, alpha=0.2):
    return jnp.where(features > 0, features, features * alpha)


def _gelu(features, approximate=False):
    return jax.nn.gelu(features, approximate=approximate)  # TF's default is the exact (erf) form


def _softmax(logits, axis=None):
    return jax.nn.softmax(logits, axis=-1 if axis is None else axis)


def _log_softmax(logits, axis=None):
    return jax.nn.log_softmax(logits, axis=-1 if axis is None else axis)


relu = op("nn.relu", jax.nn.relu, signature="features")  # gradient 0 at 0, as TF
relu6 = op("nn.relu6", _relu6)
elu = op("nn.elu", jax.nn.elu, signature="features")
selu = op("nn.selu", jax.nn.selu, signature="features")
gelu = op("nn.gelu", _gelu, static=("approximate",))
leaky_relu = op("nn.leaky_relu", _leaky_relu, static=("alpha",))
silu = op("nn.silu", lambda features, beta=1.0: features * jax.nn.sigmoid(beta * features), static=("beta",))
softsign = op("nn.softsign", jax.nn.soft_sign, signature="features")
softmax = op("nn.softmax", _softmax, static=("axis",))
log_softmax = op("nn.log_softmax", _log_softmax, static=("axis",), op_type="LogSoftmax")
swish = silu
