"""tf.train: object-based checkpoints in TensorFlow's format (tapejax/_src/checkpoint*.py), and the
tf.train.Example protocol buffers (tapejax/io/example.py).

Reading or writing a checkpoint needs the `google-crc32c` and `tensorboard` packages
(`pip install tapejax[checkpoint]`).
"""

from tapejax._src.checkpoint import Checkpoint as Checkpoint
from tapejax._src.cluster import ClusterSpec as ClusterSpec
from tapejax._src.checkpoint import CheckpointLoadStatus as CheckpointLoadStatus
from tapejax._src.checkpoint_management import CheckpointManager as CheckpointManager
from tapejax._src.checkpoint_management import CheckpointReader as CheckpointReader
from tapejax._src.checkpoint_management import get_checkpoint_state as get_checkpoint_state
from tapejax._src.checkpoint_management import latest_checkpoint as latest_checkpoint
from tapejax._src.checkpoint_management import list_variables as list_variables
from tapejax._src.checkpoint_management import load_checkpoint as load_checkpoint
from tapejax._src.checkpoint_management import load_variable as load_variable

from typing import Any as _Any  # noqa: E402

from tapejax.io import example as _example  # noqa: E402
from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

_missing = _missing_symbols("tf.train")


def __getattr__(name: str) -> _Any:
    """tf.train.Example and its messages (tapejax/io/example.py, built on first use); else the missing symbol."""
    if name in _example.MESSAGES:
        return _example.messages()[name]
    return _missing(name)
