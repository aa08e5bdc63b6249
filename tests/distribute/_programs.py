"""What the tf.distribute test programs share: the library chosen by `--lib` (TensorFlow with `devices` logical
CPUs, or tapejax, whose virtual devices the runner's XLA_FLAGS set), and snippets run to their outcomes."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any


def library(devices: int) -> Any:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="tapejax")
    if parser.parse_known_args()[0].lib == "tensorflow":
        import tensorflow as tf

        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * devices)
        return tf
    import tapejax

    return tapejax


def outcomes(snippets: Iterable[tuple[str, Callable[[], Any]]], message: bool = False) -> dict:
    """Each snippet's value, or its exception's classes (and message)."""
    out: dict[str, Any] = {}
    for name, fn in snippets:
        try:
            out[name] = {"value": fn()}
        except Exception as e:  # noqa: BLE001 - the exception's type is the result
            out[name] = {"error": [c.__name__ for c in type(e).__mro__]}
            if message:
                out[name]["message"] = str(e)[:300]
    return out
