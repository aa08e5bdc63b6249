"""tf.debugging extensions that make tracing and compiling visible: `explain_retrace(fn)` and `compile_stats()`.

They read what the engine keeps anyway: each Python function's retracing detector (retracing.py: its calls,
traces, compiles and last trace records) and the executable cache of eager tapes (executables.py: per trace
structure, its op-by-op runs and its executables). Nothing is added to the per-call path but a counter.
"""

from __future__ import annotations

from typing import Any

from . import background, executables, retracing


def _detector(fn: Any) -> retracing.Detector:
    found = getattr(fn, "_detector", None)
    if isinstance(found, retracing.Detector):
        return found
    return retracing.detector(getattr(fn, "python_function", fn))


def explain_retrace(fn: Any) -> str:
    """Why the `tf.function` `fn` traced again, in words: which argument changed and how (a tapejax extension).

    Compares the latest trace of `fn`'s Python function with its nearest earlier trace and names the change: a
    tensor argument's shape or dtype, a Python argument's value, a different `tf.Variable` or object passed, the
    arguments' structure, or a new tf.function object of the same Python function (created in a loop, over a
    changed closure, or a method of another instance). Traces are counted per Python function, as TF's retracing
    warning counts them, so a tf.function created anew in a loop is explained too. TF's warning about frequent
    retracing carries the same explanation after TF's text, and `enable_retrace_warnings()` logs it on every
    retrace.

    Args:
      fn: a `tf.function` (or the Python function it wraps).

    Returns:
      A sentence: how often `fn` traced and why it last traced again.

    >>> import tapejax as tf
    >>> @tf.function
    ... def scale(x, factor):
    ...     return x * factor
    >>> _ = scale(tf.ones([2]), 2.0)
    >>> _ = scale(tf.ones([3]), 2.0)
    >>> print(tf.debugging.explain_retrace(scale))  # doctest: +ELLIPSIS
    scale ... traced 2 times in 2 calls; the latest retrace was caused by: argument `x`: shape (2,) -> (3,) ...
    >>> _ = scale(tf.ones([3]), 3.0)
    >>> print(tf.debugging.explain_retrace(scale))  # doctest: +ELLIPSIS
    scale ... the latest retrace was caused by: argument `factor`: Python value 2.0 -> 3.0 ...
    """
    detector = _detector(fn)
    if detector.traces == 0:
        return f"{detector.name} has not been traced yet."
    counts = f"{detector.name} traced {detector.traces} time{'s' * (detector.traces > 1)} in {detector.total_calls} " \
             f"call{'s' * (detector.total_calls != 1)}"
    if detector.last_cause is None:
        return counts + ": it has not traced again."
    return f"{counts}; the latest retrace was caused by: {detector.last_cause}."


def compile_stats() -> dict[str, Any]:
    """Counters of tracing and compiling so far, per `tf.function` and for eager tapes (a tapejax extension).

    Returns:
      A dict with
      - "functions": per Python function wrapped by `tf.function` (named `qualname (file:line)`), a dict of
        "calls", "traces", "compiles" (XLA compiles: one per kept trace, one per size for a trace with None
        dimensions), "trace_s" and "compile_s" (seconds spent), and "last_retrace" (`explain_retrace`'s cause,
        or None);
      - "tape": for gradients of eager tapes, "structures" (trace structures cached), "compiled" (executables
        made for them), "eager_runs" (runs without an executable, by reason: "history", a structure not yet
        repeated enough to pay back a compile; "size", over the size bound; "custom gradient"; "compiling",
        while its executable compiles in the background; "compile error", after that compile failed),
        "most_run" (the 10 most-run structures: their steps, runs op by op, executables), and "background"
        (compiles done on the background worker, their seconds, and the compiles that failed, which leave
        their structure on the op-by-op path). A structure that changes on every call shows as many
        structures, each run once, none compiled.

    `tf.debugging.clear_caches()` resets the tape counters.

    >>> import tapejax as tf
    >>> @tf.function
    ... def double(x):
    ...     return 2.0 * x
    >>> _ = double(tf.ones([2])); _ = double(tf.ones([2]))
    >>> stats = tf.debugging.compile_stats()["functions"]
    >>> [(s["calls"], s["traces"], s["compiles"]) for name, s in stats.items() if name.startswith("double ")]
    [(2, 1, 1)]
    """
    functions: dict[str, dict[str, Any]] = {}
    for detector in retracing.detectors():
        if not detector.traces:
            continue
        name, n = detector.name, 2
        while name in functions:  # two lambdas on one line
            name, n = f"{detector.name} #{n}", n + 1
        functions[name] = {"calls": detector.total_calls, "traces": detector.traces, "compiles": detector.compiles,
                           "trace_s": detector.trace_s, "compile_s": detector.compile_s,
                           "last_retrace": detector.last_cause}
    stats = executables.CACHE.stats
    structures = executables.CACHE.summaries()
    structures.sort(key=lambda s: -s["eager_runs"] - s["executables"])
    tape = {"structures": len(structures), "compiled": stats.get("compiled", 0),
            "eager_runs": {key.split(": ", 1)[1]: n for key, n in stats.items() if key.startswith("eager: ")},
            "most_run": structures[:10],
            "background": {"compiles": background.STATS["compiles"], "compile_s": background.STATS["compile_s"],
                           "errors": background.STATS["errors"]}}
    return {"functions": functions, "tape": tape}


def enable_retrace_warnings(enabled: bool = True) -> None:
    """Log every retrace of a `tf.function` with its cause (`explain_retrace`'s), not only TF's warning about
    frequent retracing (a tapejax extension).

    >>> import tapejax as tf
    >>> tf.debugging.enable_retrace_warnings()
    >>> tf.debugging.enable_retrace_warnings(False)
    """
    retracing.enable_retrace_warnings(enabled)
