"""tf.nn: activations, convolutions, pooling, losses and normalisations (rows in tapejax/ops/nn.py)."""

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
from tapejax.ops.nn import conv1d as conv1d
from tapejax.ops.nn import conv2d as conv2d
from tapejax.ops.nn import conv3d as conv3d
from tapejax.ops.nn import conv2d_transpose as conv2d_transpose
from tapejax.ops.nn import depthwise_conv2d as depthwise_conv2d
from tapejax.ops.nn import max_pool as max_pool
from tapejax.ops.nn import max_pool1d as max_pool1d
from tapejax.ops.nn import max_pool2d as max_pool2d
from tapejax.ops.nn import max_pool3d as max_pool3d
from tapejax.ops.nn import avg_pool as avg_pool
from tapejax.ops.nn import avg_pool1d as avg_pool1d
from tapejax.ops.nn import avg_pool2d as avg_pool2d
from tapejax.ops.nn import avg_pool3d as avg_pool3d
from tapejax.ops.nn import bias_add as bias_add
from tapejax.ops.nn import softmax_cross_entropy_with_logits as softmax_cross_entropy_with_logits
from tapejax.ops.nn import sparse_softmax_cross_entropy_with_logits as sparse_softmax_cross_entropy_with_logits
from tapejax.ops.nn import sigmoid_cross_entropy_with_logits as sigmoid_cross_entropy_with_logits
from tapejax.ops.nn import log_poisson_loss as log_poisson_loss
from tapejax.ops.nn import l2_loss as l2_loss
from tapejax.ops.nn import l2_normalize as l2_normalize
from tapejax.ops.nn import moments as moments
from tapejax.ops.nn import batch_normalization as batch_normalization
from tapejax.ops.nn import embedding_lookup as embedding_lookup
from tapejax.ops.dropout import dropout as dropout

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

from tapejax.distribute._src.losses import compute_average_loss as compute_average_loss
from tapejax.distribute._src.losses import scale_regularization_loss as scale_regularization_loss
__getattr__ = _missing_symbols("tf.nn")
