"""tf.image (rows in tapejax/ops/image.py)."""

from tapejax.ops.image import adjust_contrast as adjust_contrast
