"""tf.random: sampling with TF's seed semantics (tapejax/ops/random.py)."""

from tapejax.ops.random import set_seed as set_seed
from tapejax.ops.random import normal as normal
from tapejax.ops.random import uniform as uniform
from tapejax.ops.random import shuffle as shuffle
from tapejax.ops.random import truncated_normal as truncated_normal
