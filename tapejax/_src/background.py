"""Background compilation: a repeated structure's XLA compile runs on a worker thread while the structure keeps
running op by op (executables.Lowered.run), so the first steps of a training loop never wait for a compile.

One process-wide worker, a daemon thread, compiles what the callers lowered (tracing and lowering stay on the
caller's thread: they read JAX's thread-local settings, such as the default device, and cost little; XLA's
compile is the slow part, and it releases the GIL, so the op-by-op path keeps running beside it). The queue is
bounded (`MAX_QUEUED`): a structure that finds it full compiles on the run it would have switched on. A compile
that fails is never raised to the user: its structure runs op by op from then on, and the failure is counted.
At exit, queued compiles are dropped and the one under way is finished (the worker is a daemon thread).

`TAPEJAX_BACKGROUND_COMPILE=0` in the environment, or `tf.config.experimental_background_compile(False)`, turns
it off: a repeated structure then compiles at once on the caller's thread, as before. Either way the values are
the same: an executable is a cache of the op-by-op path (DESIGN invariant 11).
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

MAX_QUEUED = 16  # compiles waiting for the worker; beyond, a structure compiles when it switches (executables.py)


class _Flag:
    on = os.environ.get("TAPEJAX_BACKGROUND_COMPILE", "").strip().lower() not in ("0", "false", "no", "off")


FLAG = _Flag()

# Counted by the worker only (no other thread writes these keys): "compiles", "compile_s", "errors".
STATS: collections.Counter = collections.Counter()

_queue: queue.Queue = queue.Queue(MAX_QUEUED)
_in_flight: set[concurrent.futures.Future] = set()
_lock = threading.Lock()  # guards _in_flight, the worker's start and submissions by several threads
CLAIM = threading.Lock()  # held by a caller while it claims a structure's compile (executables.Lowered)
_worker: threading.Thread | None = None
_stopping = False


def experimental_background_compile(enable: bool = True) -> bool:
    """Turns background compilation of repeated eager-tape structures on (the default) or off (a tapejax
    extension; `TAPEJAX_BACKGROUND_COMPILE=0` turns it off at import). Returns whether it was on before.

    On, a gradient whose trace structure starts repeating keeps running op by op while its executable compiles on
    a worker thread, and switches to the executable on a fixed run (executables.Policy.runs_while_compiling). Off,
    it compiles at once, on the calling thread, stalling that call for the compile. The values are the same
    either way, up to the last bits' rounding of a fused executable.

    >>> import tapejax as tf
    >>> was_on = tf.config.experimental_background_compile(False)
    >>> tf.config.experimental_background_compile(was_on)
    False
    """
    was_on = FLAG.on
    FLAG.on = bool(enable)
    return was_on


def enabled() -> bool:
    return FLAG.on


def submit(compile_fn: Callable[[], Any]) -> concurrent.futures.Future | None:
    """Queues `compile_fn()` for the worker; its future, or None if the queue is full (or the process exits)."""
    global _worker
    future: concurrent.futures.Future = concurrent.futures.Future()
    with _lock:
        if _stopping:
            return None
        try:
            _queue.put_nowait((future, compile_fn))
        except queue.Full:
            return None
        _in_flight.add(future)
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="tapejax background compile", daemon=True)
            _worker.start()
    return future


def _work() -> None:
    while True:
        future, compile_fn = _queue.get()
        try:
            if not future.set_running_or_notify_cancel():
                continue
            start = time.perf_counter()
            try:
                result = compile_fn()
            except BaseException as e:  # never raised to the user: the structure runs op by op from now on
                STATS["errors"] += 1
                future.set_exception(e)
            else:
                STATS["compiles"] += 1
                STATS["compile_s"] += time.perf_counter() - start
                future.set_result(result)
        finally:
            with _lock:
                _in_flight.discard(future)
            _queue.task_done()


def wait_for_compiles(timeout: float | None = None) -> bool:
    """Waits until the background compiles queued so far are done (a tapejax extension, for tests and
    benchmarks that count compiles or time compiled runs). Returns False if `timeout` seconds passed first.

    >>> import tapejax as tf
    >>> tf.debugging.wait_for_compiles()
    True
    """
    with _lock:
        pending = list(_in_flight)
    _, not_done = concurrent.futures.wait(pending, timeout)
    return not not_done


def _stop() -> None:
    """At exit: the queued compiles are dropped, and the one under way is waited for (one compile, bounded by the
    compile policy's size bound). Abandoning it would not be safe: the interpreter stops a daemon thread when it
    takes the GIL back after finalization, and XLA's C++ frames then abort the process."""
    global _stopping
    with _lock:
        _stopping = True
    while True:
        try:
            future, _ = _queue.get_nowait()
        except queue.Empty:
            break
        future.cancel()
        with _lock:
            _in_flight.discard(future)
        _queue.task_done()
    wait_for_compiles()


atexit.register(_stop)
