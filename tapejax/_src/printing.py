"""tf.print: TF's text for tensors, printed when the step runs (inside tf.function, through a JAX callback).

TF writes a float with the fewest digits of two that read back as the same number: 6 or 9 significant digits for
float32 (and float16 / bfloat16, printed as float32), 15 or 17 for float64; bools as 1/0, complex numbers as "?".
It shows `summarize` items at each end of a long axis around "...". Nests of tensors print like Python's
containers, tensors formatted.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import jax
import numpy as np

from .context import CONTEXT
from . import dispatch
from .registry import OpDef
from .tensor import Tensor, _Operators
from .variable import Variable


def print_(*inputs: Any, output_stream: Any = None, summarize: int = 3, sep: str = " ", end: str = "\n",
           name: str | None = None) -> None:
    """Prints `inputs` to `output_stream` (default: sys.stderr, as in TF) when the step runs."""
    leaves, treedef = jax.tree_util.tree_flatten(list(inputs), is_leaf=lambda x: isinstance(x, _Operators))
    arrays = [_value(x) for x in leaves if isinstance(x, _Operators)]

    def emit(*values: Any) -> None:
        it = iter(values)
        filled = [_Text(format_array(np.asarray(next(it)), summarize)) if isinstance(x, _Operators) else x
                  for x in leaves]
        parts = jax.tree_util.tree_unflatten(treedef, filled)
        stream = sys.stderr if output_stream is None else output_stream
        stream.write(sep.join(p.text if isinstance(p, _Text) else _python_text(p) for p in parts) + end)

    trace = CONTEXT.trace
    if trace is not None and trace.captures:
        # inside a traced branch or loop body: a step of the captured body, so it prints when the body runs
        tensors = [x for x in leaves if isinstance(x, _Operators)]
        reads = [x._read() if isinstance(x, Variable) else (x._tid, x._value) for x in tensors]
        opdef = OpDef("print", lambda *values: (jax.debug.callback(emit, *values, ordered=True), ())[1],
                      op_type="PrintV2", jit=False)
        # Appended whatever its inputs: a print is a side effect, kept even with no tensor to print.
        dispatch.record_call(opdef, [t for t, _ in reads], [v for _, v in reads], (), CONTEXT.tapes[:1],
                             effect=True)
    elif trace is not None:
        # inside tf.function: at run time, in program order. The call number (a traced input) goes along so the
        # callback is staged even when every printed value is a constant folded at trace time.
        jax.debug.callback(lambda *values: emit(*values[:-1]), *arrays, trace._calls, ordered=True)
    else:
        emit(*arrays)


def _value(x: _Operators) -> Any:
    return x._value if isinstance(x, Tensor) else x._current()


class _Text:
    """A formatted tensor inside a printed nest: shown as is, not repr'd."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _python_text(x: Any) -> str:
    return x if isinstance(x, str) else str(x)


def format_array(array: np.ndarray, summarize: int = 3) -> str:
    """TF's PrintV2 text of an array: `[1 2 ... 9 10]`, rows on their own lines, no column alignment."""
    if summarize is None or summarize < 0:
        summarize = sys.maxsize
    return _format(array, summarize, depth=0)


def _format(array: np.ndarray, summarize: int, depth: int) -> str:
    if array.ndim == 0:
        return _scalar(array)
    n = array.shape[0]
    indices: list[int | None] = list(range(n))
    if n > 2 * summarize:
        indices = [*range(summarize), None, *range(n - summarize, n)]
    if array.ndim == 1:
        return "[" + " ".join("..." if i is None else _scalar(array[i]) for i in indices) + "]"
    rows = ["..." if i is None else _format(array[i], summarize, depth + 1) for i in indices]
    # as TF (and numpy): blocks of rank r are set apart by r - 1 newlines
    return "[" + ("\n" * (array.ndim - 1) + " " * (depth + 1)).join(rows) + "]"


def _scalar(x: Any) -> str:
    if isinstance(x, bytes) or getattr(x, "dtype", None) == object:  # an element of a string tensor
        return '"' + _escape(x if isinstance(x, bytes) else x.item()) + '"'
    kind = x.dtype.kind
    if kind == "b":
        return "1" if x else "0"
    if kind == "f" or x.dtype.name == "bfloat16":
        if x.dtype.itemsize >= 8:
            return _shortest(float(x), np.float64, 15, 17)
        return _shortest(float(x), np.float32, 6, 9)
    if kind == "c":
        return "?"  # TF's PrintV2 has no text for complex numbers
    return str(x.item() if hasattr(x, "item") else x)


_ESCAPES = {ord("\\"): "\\\\", ord('"'): '\\"', ord("'"): "\\'", ord("\n"): "\\n", ord("\t"): "\\t",
            ord("\r"): "\\r"}


def _escape(text: bytes) -> str:
    """TF's UTF-8-safe C escape of a string element: quotes, backslashes and control bytes escaped, UTF-8 kept."""
    out = []
    for byte in text:
        if byte in _ESCAPES:
            out.append(_ESCAPES[byte])
        elif byte < 0x20 or byte == 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))  # a Latin-1 character per byte: UTF-8 sequences are decoded below
    return "".join(out).encode("latin-1").decode("utf-8", "backslashreplace")


def _shortest(value: float, dtype: type, short: int, long: int) -> str:
    """`value` with `short` significant digits if that text reads back as the same `dtype` number, else `long`
    (enough for any): TF's float-to-text rule, so 0.1 prints as 0.1, not 0.100000001.

    >>> _shortest(float(np.float32(0.1)), np.float32, 6, 9), _shortest(1 / 3, np.float64, 15, 17)
    ('0.1', '0.33333333333333331')
    """
    if abs(value) < np.finfo(dtype).tiny:
        value = math.copysign(0.0, value)  # TF prints with subnormals flushed to zero
    text = f"{value:.{short}g}"
    return text if dtype(text) == dtype(value) else f"{value:.{long}g}"
