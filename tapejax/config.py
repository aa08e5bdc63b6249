"""tf.config: the switches TF code sets around tf.function and devices."""

from tapejax._src.checking import experimental_check as experimental_check
from tapejax._src.function import functions_run_eagerly as functions_run_eagerly
from tapejax._src.function import run_functions_eagerly as run_functions_eagerly

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.config")
