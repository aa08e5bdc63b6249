"""Run the seed guides' code examples against a module under test.

A guide example is kept in its test as a verbatim string. These helpers execute it with ``tf`` bound to the
module under test (tapejax or tensorflow), the way the guide's reader runs it after ``import tensorflow as tf``:

* ``run_snippet`` runs one example and returns what it printed.
* ``Notebook`` runs the cells of a notebook-style guide in one shared namespace and, like Jupyter, shows the
  value of a cell whose last statement is an expression (``y.shape`` shows ``TensorShape([7, 10])``).
* ``captured_tf_warnings`` collects what is logged through the Python logger named "tensorflow", formatted as
  the guides print it: ``WARNING:tensorflow:<message>``.
* ``FakePyplot`` stands in for ``matplotlib.pyplot`` in the few examples whose helper functions mix TF code
  with plotting; it records the calls so that a test can check what would have been drawn.
* ``hand_dense`` builds a dense layer out of a ``tf.Variable`` kernel and bias, for variants of the keras
  examples that exercise only the core API.
"""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import linecache
import logging
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

TF_LOGGER_NAME = "tensorflow"
_LOG_FORMAT = "%(levelname)s:%(name)s:%(message)s"
_cell_counter = itertools.count()


class Notebook:
    """A minimal notebook kernel: cells share one namespace, and a trailing expression is displayed.

    The guides were rendered from Jupyter notebooks under numpy 1.x, which shows ``np.float32(1.0)`` as
    ``1.0``; the display therefore uses numpy's 1.25 print style. ``print`` output is not affected.
    """

    def __init__(self, tf_module: Any, extra_globals: dict[str, Any] | None = None) -> None:
        self.namespace: dict[str, Any] = {"__name__": "__seed__", "tf": tf_module, "np": np}
        self.namespace.update(extra_globals or {})

    def run(self, source: str) -> str:
        """Executes one cell and returns its stdout, with the displayed value of a trailing expression."""
        filename = f"<seed-cell-{next(_cell_counter)}>"
        # Registering the source lets tracebacks from a failing snippet show the guide's lines.
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        module = ast.parse(source, filename)
        last_expression = None
        if module.body and isinstance(module.body[-1], ast.Expr):
            last_expression = ast.Expression(module.body.pop().value)
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(module, filename, "exec"), self.namespace)
                if last_expression is not None:
                    value = eval(compile(last_expression, filename, "eval"), self.namespace)
                    if value is not None:
                        with np.printoptions(legacy="1.25"):
                            print(repr(value))
        except BaseException as error:
            error.add_note(f"stdout of the snippet before it raised:\n{buffer.getvalue()}")
            raise
        return buffer.getvalue()


def run_snippet(source: str, tf_module: Any, extra_globals: dict[str, Any] | None = None) -> str:
    """Runs a guide example with ``tf`` bound to ``tf_module`` (and ``np`` to numpy); returns its stdout.

    Args:
      source: the example's code, verbatim from the guide minus the ``import tensorflow as tf`` line.
      tf_module: the module under test, ``tapejax`` or ``tensorflow``.
      extra_globals: further names the snippet needs (a ``plt`` stand-in, a hand-written layer class).

    Returns:
      Everything the snippet printed; a trailing bare expression is displayed as in a notebook cell.
    """
    return Notebook(tf_module, extra_globals).run(source)


class _ListHandler(logging.Handler):
    def __init__(self, lines: list[str], level: int) -> None:
        super().__init__(level=level)
        self.lines = lines
        self.setFormatter(logging.Formatter(_LOG_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextlib.contextmanager
def captured_tf_warnings(level: int = logging.WARNING) -> Iterator[list[str]]:
    """Collects the lines logged at ``level`` or above while the block runs, as ``WARNING:tensorflow:...``.

    Both TensorFlow and tapejax log through the Python logger named "tensorflow". TensorFlow's verbose
    messages (``tf_logging.vlog(1, ...)``) are logged at numeric level 1 and show as ``Level 1:tensorflow:...``
    when ``level`` is 1.
    """
    lines: list[str] = []
    logger = logging.getLogger(TF_LOGGER_NAME)
    handler = _ListHandler(lines, level)
    old_level = logger.level
    if logger.getEffectiveLevel() > level:
        logger.setLevel(level)
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


class FakePyplot:
    """Stands in for ``matplotlib.pyplot``: every call is recorded as ``(name, args, kwargs)``.

    Array-like positional arguments (tensors included) are stored as numpy arrays.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("_"):
            raise AttributeError(name)

        def record(*args: Any, **kwargs: Any) -> None:
            stored = tuple(a if isinstance(a, (str, int, float)) else np.asarray(a) for a in args)
            self.calls.append((name, stored, kwargs))

        return record

    def named(self, name: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """The recorded calls of one pyplot function, oldest first."""
        return [(args, kwargs) for called, args, kwargs in self.calls if called == name]


def hand_dense(tf_module: Any) -> type:
    """A ``Dense`` class with the slice of ``tf.keras.layers.Dense``'s interface the guides use.

    Built only from core API: a ``tf.Variable`` kernel (random normal) and bias (zeros), created on the first
    call, and ``activation(x @ kernel + bias)``. Substituting it for ``tf.keras.layers.Dense`` in a guide
    example tests the example's math before tapejax has keras.
    """
    tf = tf_module
    activations = {None: None, "relu": tf.nn.relu, "elu": tf.nn.elu}

    class Dense:
        def __init__(self, units: int, activation: Any = None) -> None:
            self.units = units
            self.activation = activations.get(activation, activation)
            self.kernel = None
            self.bias = None

        def __call__(self, x: Any) -> Any:
            if self.kernel is None:
                self.kernel = tf.Variable(tf.random.normal([x.shape[-1], self.units]), name="dense/kernel")
                self.bias = tf.Variable(tf.zeros([self.units]), name="dense/bias")
            y = x @ self.kernel + self.bias
            return y if self.activation is None else self.activation(y)

        @property
        def trainable_variables(self) -> list[Any]:
            return [self.kernel, self.bias]

    return Dense


def lines(text: str) -> list[str]:
    """The non-empty lines of a snippet's output, each stripped of trailing spaces."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]
