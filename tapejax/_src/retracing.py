"""tf.function's retracing policy: TF's warning about frequent retracing, and `reduce_retracing`'s relaxed shapes.

The warning follows TF 2.21's detector: per Python function (keyed by its code object, so that a tf.function
created anew in a loop is caught too), the calls of the last few traces are remembered; once 5 of the last
calls (at most 10 back) traced, TF's message is logged, at most twice per code object.

With `reduce_retracing=True`, a call that no trace accepts is traced for a *relaxed* signature, as TF relaxes
it: its shapes joined with those of every earlier trace of the same Python arguments and dtypes, a dimension
that differs becomes None, a rank that differs an unknown shape. So a second distinct size gives a trace for
`(None,)`, which every later size reuses.
"""

from __future__ import annotations

import collections
import threading
import weakref
from typing import Any

import jax

from . import logs, retrace_causes

_MAX_CALL_HISTORY = 10
_THRESHOLD = 5
_MAX_WARNINGS = 2
_HISTORY = 8  # trace records kept per Python function, to explain a retrace against (retrace_causes.py)
_VERBOSE = {"on": False}  # tf.debugging.enable_retrace_warnings: log every retrace with its cause

_RETRACING_MESSAGE = (
    "{} out of the last {} calls to {} triggered tf.function retracing. Tracing is expensive and the excessive "
    "number of tracings could be due to (1) creating @tf.function repeatedly in a loop, (2) passing tensors with "
    "different shapes, (3) passing Python objects instead of tensors. For (1), please define your @tf.function "
    "outside of the loop. For (2), @tf.function has reduce_retracing=True option that can avoid unnecessary "
    "retracing. For (3), please refer to https://www.tensorflow.org/guide/function#controlling_retracing and "
    "https://www.tensorflow.org/api_docs/python/tf/function for  more details.")


class Detector:
    """The recent calls of one Python function: how many calls each of its last traces served; and, for
    tf.debugging.compile_stats and explain_retrace, its totals and its last traces' records."""

    __slots__ = ("calls_per_trace", "calls", "warnings", "storm_traces", "name", "total_calls", "traces",
                 "compiles", "trace_s", "compile_s", "history", "last_cause", "__weakref__")

    def __init__(self, name: str = "function"):
        self.calls_per_trace: list[int] = []
        self.calls = 0
        self.warnings = 0
        self.storm_traces = 0  # traces made while retracing frequently
        self.name = name
        self.total_calls = 0
        self.traces = 0  # calls that traced (and get_concrete_function traces)
        self.compiles = 0  # XLA compiles of its traces (one per trace; per size for a symbolic one)
        self.trace_s = 0.0
        self.compile_s = 0.0
        self.history: collections.deque = collections.deque(maxlen=_HISTORY)
        self.last_cause: str | None = None  # why the latest retrace traced (None: traced once at most)

    def traced(self, record: retrace_causes.Record) -> str:
        """Notes a trace; returns why it traced (against the earlier traces of this Python function)."""
        with _LOCK:
            cause = retrace_causes.explain(list(self.history), record)
            if self.history:
                self.last_cause = cause
            self.history.append(record)
            self.traces += 1
        return cause

    def compiled(self, seconds: float) -> None:
        self.compiles += 1
        self.compile_s += seconds

    def called_without_tracing(self) -> None:
        # the hot path of every call: three increments, no lock (a lost update only blurs a heuristic)
        if not self.calls_per_trace:
            self.calls_per_trace.append(0)
        self.calls_per_trace[-1] += 1
        self.calls += 1
        self.total_calls += 1

    def called_with_tracing(self, function: Any, cause: str | None = None) -> None:
        """A call that traced; `cause` (Detector.traced's) is added to TF's warning, and logged on every retrace
        with tf.debugging.enable_retrace_warnings."""
        with _LOCK:
            self.total_calls += 1
            self.calls += 1
            self.calls_per_trace.append(1)
            while self.calls_per_trace and self.calls - self.calls_per_trace[0] > _MAX_CALL_HISTORY:
                self.calls -= self.calls_per_trace.pop(0)
            traces, calls = len(self.calls_per_trace), self.calls
            clear = warn = False
            if traces >= _THRESHOLD:
                self.storm_traces += 1
                clear = self.storm_traces % CLEAR_EVERY == 0
                warn = self.warnings < _MAX_WARNINGS
                self.warnings += warn
        why = f" tapejax: the latest retrace was caused by: {cause}." if cause and self.traces > 1 else ""
        if warn:
            logs.warning(_RETRACING_MESSAGE.format(traces, calls, function) + why)
        elif _VERBOSE["on"] and why:
            logs.warning(f"tapejax: {function} traced again ({self.traces} traces).{why}")
        if clear:
            jax.clear_caches()


# Each trace fills JAX's own staging caches (a jaxpr per jitted jax.numpy function and shape, with their partial
# evaluations and transposes: about 3 MB a new shape for a training step with a gradient), which JAX bounds only
# by thousands of entries each: a shape storm held gigabytes there after tf.function had forgotten its traces.
# While a function retraces frequently (TF's warning condition), every CLEAR_EVERY of its traces empty those
# caches (jax.clear_caches: the AOT executables tapejax keeps survive; jitted functions compile again on their
# next call). A program that does not retrace frequently never pays this.
CLEAR_EVERY = 8

_DETECTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def detector(python_function: Any) -> Detector:
    """The detector shared by every tf.function of this Python code (TF's key: the unwrapped code object)."""
    target = python_function
    while hasattr(target, "__wrapped__"):
        target = target.__wrapped__
    target = getattr(target, "__func__", target)
    key = getattr(target, "__code__", python_function)
    with _LOCK:
        try:
            found = _DETECTORS.get(key)
        except TypeError:  # not weakly referable: a detector of its own
            return Detector(_name(python_function))
        if found is None:
            found = _DETECTORS[key] = Detector(_name(python_function))
        return found


def _name(python_function: Any) -> str:
    target = getattr(python_function, "__func__", python_function)
    code = getattr(target, "__code__", None)
    name = getattr(target, "__qualname__", getattr(target, "__name__", type(target).__name__))
    return f"{name} ({code.co_filename}:{code.co_firstlineno})" if code is not None else name


def detectors() -> list[Detector]:
    """The detectors of the Python functions alive that tf.function wrapped (compile_stats.py)."""
    with _LOCK:
        return list(_DETECTORS.values())


def enable_retrace_warnings(enabled: bool = True) -> None:
    _VERBOSE["on"] = bool(enabled)


# -- relaxed signatures (reduce_retracing) ---------------------------------------------------------------------
# A signature is a tuple of (shape, dtype) per tensor argument; a shape is a tuple of ints and Nones, or None for
# an unknown rank.


def _join(a: tuple | None, b: tuple | None) -> tuple | None:
    """The most specific shape both shapes are instances of (TF's most_specific_common_supertype)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def relax(specs: tuple, traced: list[tuple]) -> tuple:
    """The signature TF traces a new call for: its shapes joined with those of each earlier trace whose dtypes
    are the same (traces of other dtypes, like traces for other Python values, are not joined)."""
    relaxed = specs
    for other in traced:
        if len(other) == len(relaxed) and all(a[1] == b[1] for a, b in zip(relaxed, other)):
            relaxed = tuple((_join(a[0], b[0]), a[1]) for a, b in zip(relaxed, other))
    return relaxed


def _accepts_shape(general: tuple | None, shape: tuple) -> bool:
    return general is None or (len(general) == len(shape) and all(g is None or g == d
                                                                  for g, d in zip(general, shape)))


def _generality(specs: tuple) -> int:
    return sum(1_000 if shape is None else shape.count(None) for shape, _ in specs)


def accepting(traced: list[tuple], specs: tuple) -> tuple | None:
    """The most specific traced signature that accepts a call's exact `specs`, or None."""
    best = None
    for general in traced:
        if len(general) == len(specs) and all(g[1] == s[1] and _accepts_shape(g[0], s[0])
                                              for g, s in zip(general, specs)):
            if best is None or _generality(general) < _generality(best):
                best = general
    return best


def realise(general: tuple, specs: tuple) -> tuple:
    """A signature for one trace: an unknown rank becomes the call's rank, every dimension unknown (XLA needs a
    rank; TF's one trace for an unknown rank is, here, one trace per rank, counted once)."""
    return tuple(((None,) * len(s[0]) if g[0] is None else g[0], g[1]) for g, s in zip(general, specs))



def unbatched(specs: tuple) -> tuple:
    """`specs` with every leading dimension unknown (a batch dimension, as a batched dataset's element_spec has)."""
    return tuple(((None, *shape[1:]) if shape else shape, dtype) for shape, dtype in specs)
