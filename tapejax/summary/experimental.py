"""tf.summary.experimental: the default step, and summary_scope."""

from tapejax._src.summary_writer import get_step as get_step
from tapejax._src.summary_writer import set_step as set_step
from tapejax._src.summary_ops import summary_scope as summary_scope

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.summary.experimental")
