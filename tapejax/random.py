"""tf.random: sampling with TF's seed semantics (tapejax/ops/random.py)."""

from tapejax.ops.random import set_seed as set_seed
from tapejax.ops.random import normal as normal
from tapejax.ops.random import uniform as uniform
from tapejax.ops.random import shuffle as shuffle
from tapejax.ops.random import truncated_normal as truncated_normal
from tapejax.ops.random import categorical as categorical
from tapejax.ops.random import gamma as gamma
from tapejax.ops.random import poisson as poisson
from tapejax.ops.random import stateless_normal as stateless_normal
from tapejax.ops.random import stateless_uniform as stateless_uniform
from tapejax.ops.random import stateless_truncated_normal as stateless_truncated_normal
from tapejax.ops.random import stateless_categorical as stateless_categorical
from tapejax.ops.random import Generator as Generator
from tapejax.ops.random import get_global_generator as get_global_generator
from tapejax.ops.random import set_global_generator as set_global_generator

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.random")
