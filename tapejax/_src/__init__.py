"""tapejax internals. See docs/design.md for a walkthrough."""

import jax

# TF's dtypes include float64 and int64, which JAX keeps only with x64 enabled. Every tapejax value carries an
# explicit dtype, so float32 code stays float32.
jax.config.update("jax_enable_x64", True)
