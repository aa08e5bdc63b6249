"""tf.experimental: `tf.experimental.numpy` (NumPy's API on tapejax tensors) and `tf.experimental.dtensor`
(meshes and layouts on JAX's sharding)."""

from tapejax.experimental import dlpack as dlpack
from tapejax.experimental import dtensor as dtensor
from tapejax.experimental import numpy as numpy

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.experimental")
