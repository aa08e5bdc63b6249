"""tf.experimental: `tf.experimental.numpy` (NumPy's API on tapejax tensors)."""

from tapejax.experimental import numpy as numpy

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.experimental")
