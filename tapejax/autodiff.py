"""tf.autodiff: forward and reverse mode."""

from tapejax._src.forward import ForwardAccumulator as ForwardAccumulator
from tapejax._src.gradient_tape import GradientTape as GradientTape
