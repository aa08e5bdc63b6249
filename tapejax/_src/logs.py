"""The "tensorflow" logger, configured as TF configures it, so warnings print as `WARNING:tensorflow:...`.

tapejax logs under TF's logger name on purpose: ported code that silences TF's warnings
(`tf.get_logger().setLevel("ERROR")`, `logging.getLogger("tensorflow")`) silences tapejax's too.
"""

from __future__ import annotations

import logging
import sys
import threading

_logger: logging.Logger | None = None
_LOCK = threading.Lock()  # two threads warning first must not both add a handler (each line printed twice)


def get_logger() -> logging.Logger:
    """The logger tapejax warns through (`tf.get_logger()`)."""
    global _logger
    if _logger is not None:
        return _logger
    with _LOCK:
        if _logger is not None:
            return _logger
        logger = logging.getLogger("tensorflow")
        if not logger.handlers and not logging.getLogger().handlers:
            interactive = hasattr(sys, "ps1") or bool(sys.flags.interactive)
            handler = logging.StreamHandler(sys.stdout if interactive else sys.stderr)
            handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT, None))
            logger.addHandler(handler)
        _logger = logger
    return _logger


def warning(message: str, *args: object) -> None:
    get_logger().warning(message, *args)
