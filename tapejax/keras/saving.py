"""tf.keras.saving: Keras 3's files (`.keras`, `.weights.h5`) and the registry of custom classes."""

from tapejax.keras.models import load_model as load_model
from tapejax.keras.models import save_model as save_model
from tapejax.keras.saving_config import deserialize as deserialize_keras_object
from tapejax.keras.saving_config import register_keras_serializable as register_keras_serializable
from tapejax.keras.saving_config import serialize as serialize_keras_object


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class registered (or given in `custom_objects`) under `name` ("Package>Name"), or None."""
    from tapejax.keras.saving_config import _REGISTERED

    for table in (custom_objects, _REGISTERED, module_objects):
        if table and name in table:
            return table[name]
    return None


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.saving")
