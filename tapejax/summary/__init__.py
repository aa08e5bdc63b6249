"""tf.summary: TensorBoard event files (tapejax/_src/summary_*.py). Needs the `tensorboard` package to write."""

from tapejax.summary import experimental as experimental
from tapejax._src.summary_writer import SummaryWriter as SummaryWriter
from tapejax._src.summary_writer import create_file_writer as create_file_writer
from tapejax._src.summary_writer import create_noop_writer as create_noop_writer
from tapejax._src.summary_writer import flush as flush
from tapejax._src.summary_writer import record_if as record_if
from tapejax._src.summary_writer import trace_export as trace_export
from tapejax._src.summary_writer import trace_off as trace_off
from tapejax._src.summary_writer import trace_on as trace_on
from tapejax._src.summary_ops import audio as audio
from tapejax._src.summary_ops import histogram as histogram
from tapejax._src.summary_ops import image as image
from tapejax._src.summary_ops import scalar as scalar
from tapejax._src.summary_ops import should_record_summaries as should_record_summaries
from tapejax._src.summary_ops import text as text
from tapejax._src.summary_ops import write as write

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.summary")
