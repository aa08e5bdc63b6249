"""tf.saved_model: `save` and `load` in TF's directory layout, with the variables as a TF checkpoint and the
functions as StableHLO (tapejax/_src/saved_model*.py; README, "tf.saved_model")."""

from tapejax._src.saved_model import SaveOptions as SaveOptions
from tapejax._src.saved_model import save as save
from tapejax._src.saved_model_load import LoadOptions as LoadOptions
from tapejax._src.saved_model_load import load as load

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

SERVING = "serve"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
__getattr__ = _missing_symbols("tf.saved_model")
