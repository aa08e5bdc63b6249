"""tf.debugging, and tapejax's explanations of None gradients and of retracing."""

from tapejax._src.background import wait_for_compiles as wait_for_compiles
from tapejax._src.compile_stats import compile_stats as compile_stats
from tapejax._src.compile_stats import enable_retrace_warnings as enable_retrace_warnings
from tapejax._src.compile_stats import explain_retrace as explain_retrace
from tapejax._src.debugging import clear_caches as clear_caches
from tapejax._src.debugging import enable_none_gradient_warnings as enable_none_gradient_warnings
from tapejax._src.debugging import explain_none as explain_none

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.debugging")
