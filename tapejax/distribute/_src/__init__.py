"""tf.distribute's engine pieces: one small module per idea (see tapejax/distribute/__init__.py)."""
