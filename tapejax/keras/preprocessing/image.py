"""tf.keras.preprocessing.image: the image helpers of tf.keras.utils under their Keras 2 names."""

from tapejax.keras.image_utils import array_to_img as array_to_img
from tapejax.keras.image_utils import img_to_array as img_to_array
from tapejax.keras.image_utils import load_img as load_img
from tapejax.keras.image_utils import save_img as save_img

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.preprocessing.image")
