"""tf.debugging, and tapejax's explanations of None gradients."""

from tapejax._src.debugging import clear_caches as clear_caches
from tapejax._src.debugging import enable_none_gradient_warnings as enable_none_gradient_warnings
from tapejax._src.debugging import explain_none as explain_none

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.debugging")
