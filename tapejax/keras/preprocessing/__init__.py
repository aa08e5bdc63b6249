"""tf.keras.preprocessing: Keras 3 keeps the image helpers here too (`tf.keras.preprocessing.image`)."""

from tapejax.keras.preprocessing import image as image

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.preprocessing")
