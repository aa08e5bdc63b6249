"""tf.nn: activations (rows in tapejax/ops/nn.py)."""

from tapejax.ops.nn import relu as relu
from tapejax.ops.nn import relu6 as relu6
from tapejax.ops.nn import elu as elu
from tapejax.ops.nn import selu as selu
from tapejax.ops.nn import gelu as gelu
from tapejax.ops.nn import leaky_relu as leaky_relu
from tapejax.ops.nn import silu as silu
from tapejax.ops.nn import swish as swish
from tapejax.ops.nn import sigmoid as sigmoid
from tapejax.ops.nn import softplus as softplus
from tapejax.ops.nn import softsign as softsign
from tapejax.ops.nn import tanh as tanh
from tapejax.ops.nn import softmax as softmax
from tapejax.ops.nn import log_softmax as log_softmax
