"""tf.autograph: how tf.function converts Python control flow on tensors (see tapejax/_src/autograph.py)."""

from tapejax._src.autograph import to_code as to_code
from tapejax.autograph import experimental as experimental
