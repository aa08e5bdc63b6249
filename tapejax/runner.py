"""Running unchanged TensorFlow code on tapejax: `python -m tapejax SCRIPT.py [ARGS...]`, or
`tapejax.install_as_tensorflow()` in code.

`import tensorflow as tf`, `from tensorflow import keras` and `import tensorflow.keras.layers` then resolve to
tapejax's modules, and so do Keras 3's own `import keras` and `from keras import layers` (TF 2.21's Keras, which
TF programs import either way), through an import hook on `sys.meta_path` (nothing is written to `sys.modules`
until a module is imported, so the hook can be installed before or after other imports). The runner also tunes
Python's garbage collector for the process it owns (`_tune_gc`).
"""

from __future__ import annotations

import gc
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
from collections.abc import Sequence
from typing import Any

# The prefixes redirected: tensorflow.X.Y -> tapejax.X.Y, keras.X -> tapejax.keras.X.
_ALIASES = {"tensorflow": "tapejax", "keras": "tapejax.keras"}


class _Redirect(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of `tensorflow[.X]` load `tapejax[.X]`, as the same module object under both names."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        root, _, rest = fullname.partition(".")
        if root not in _ALIASES:
            return None
        real = _ALIASES[root] + ("." + rest if rest else "")
        if importlib.util.find_spec(real) is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: tapejax does not implement {fullname} yet (it would be {real}). "
                "See docs/coverage.md for what tapejax has.", name=fullname)
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        root, _, rest = spec.name.partition(".")
        return importlib.import_module(_ALIASES[root] + ("." + rest if rest else ""))

    def exec_module(self, module: Any) -> None:
        pass  # already executed under its tapejax name


def install_as_tensorflow() -> None:
    """From now on, `import tensorflow` and `import keras` (and their submodules) import tapejax. Idempotent."""
    if not any(isinstance(f, _Redirect) for f in sys.meta_path):
        for name in [n for n in sys.modules if n.partition(".")[0] in _ALIASES]:
            del sys.modules[name]  # a real TensorFlow or Keras imported earlier would shadow the redirect
        sys.meta_path.insert(0, _Redirect())


GC_THRESHOLD = 10_000  # allocations between young collections (Python's default: 700)


def _tune_gc() -> None:
    """The runner owns its process, as an application server does: the objects imported so far (tapejax's and
    JAX's modules, some 150,000) are moved out of the collector's sight (`gc.freeze`), and young collections run
    less often. Tracing a training step allocates millions of short-lived objects, and each full collection walked
    every imported object again: 0.2-0.8 s of a Keras program's 5-10 s (tests/programs/), now about a third."""
    gc.freeze()
    _, *older = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, *older)


def run_script(path: str, argv: Sequence[str]) -> int:
    """Runs a script as `python SCRIPT ARGS` would, with TensorFlow redirected; returns its exit code."""
    install_as_tensorflow()
    _tune_gc()
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0
