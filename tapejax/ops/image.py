"""tf.image: the few image ops that TF-style research code differentiates through."""

from __future__ import annotations

import jax.numpy as jnp

from tapejax._src.registry import op


def _adjust_contrast(images, contrast_factor):
    # Per channel: (x - mean over height and width) * factor + mean, images shaped [..., height, width, channels].
    contrast_factor = contrast_factor.astype(images.dtype)  # TF casts the factor to the images' dtype
    mean = jnp.mean(images, axis=(-3, -2), keepdims=True)
    return (images - mean) * contrast_factor + mean


# TF registers no gradient for AdjustContrastv2: a gradient through it raises LookupError, as in TF.
adjust_contrast = op("image.adjust_contrast", _adjust_contrast, has_gradient=False, op_type="AdjustContrastv2",
                     same_dtype=False)
