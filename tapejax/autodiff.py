"""tf.autodiff: forward and reverse mode."""

from tapejax._src.forward import ForwardAccumulator as ForwardAccumulator
from tapejax._src.gradient_tape import GradientTape as GradientTape

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.autodiff")
