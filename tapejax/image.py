"""tf.image (rows in tapejax/ops/image.py)."""

from tapejax.ops.image import adjust_contrast as adjust_contrast

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.image")
