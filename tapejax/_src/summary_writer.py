"""tf.summary's writers: TensorBoard event files, and the per-thread default writer, step and recording condition.

The file format is TensorBoard's, written with the `tensorboard` package's own pieces (its `RecordWriter` frames
each record with TFRecord's masked CRC32C, its `event_pb2` protos are the events), so TensorBoard reads what
tapejax writes. The package is optional (`pip install tensorboard`, or `tapejax[summary]`) and imported only when
a file writer is made. tensorboard's own `EventFileWriter` is not used: it writes through
`tensorboard.compat.tf`, which imports TensorFlow where it is installed, and under `python -m tapejax` that name
is tapejax itself. The flushing policy is TF's (its C++ summary writer, not a thread): events are queued and
written out when more than `max_queue` are waiting or `flush_millis` have passed since the last flush, and on
`flush()`, on leaving `as_default()`, on `close()` and when the writer is garbage collected.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

from . import logs

INSTALL = ("tf.summary needs the `tensorboard` package, which writes TensorBoard's event files: "
           "pip install tensorboard (or pip install 'tapejax[summary]').")

_FILES = itertools.count()  # the writer's number in the file name, as TF numbers them per process


def tensorboard_protos() -> Any:
    """tensorboard's proto modules (event_pb2 and summary_pb2); an ImportError saying how to install it."""
    try:
        import tensorboard  # noqa: F401, PLC0415 (optional dependency)
        from tensorboard.compat.proto import event_pb2, summary_pb2  # noqa: PLC0415
    except ImportError as e:
        raise ImportError(INSTALL) from e
    return event_pb2, summary_pb2


class _State(threading.local):
    """TF's per-thread summary state: the default writer, the default step, the `record_if` condition."""

    def __init__(self):
        self.writer: SummaryWriter | None = None
        self.step: Any = None
        self.is_recording: Any = None  # None (record), a bool, a bool tensor, or a callable giving one


STATE = _State()
_TRACING = [False]  # tf.summary.trace_on was called (process-wide, as TF's trace context)


class _EventFile:
    """One event file: records queued, written and flushed by TF's rules."""

    def __init__(self, logdir: str, max_queue: int, flush_millis: int, filename_suffix: str):
        from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: PLC0415 (optional)

        event_pb2, _ = tensorboard_protos()
        os.makedirs(logdir, exist_ok=True)
        self.path = os.path.join(logdir, f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                                         f"{os.getpid()}.{next(_FILES)}{filename_suffix}")
        self._file = open(self.path, "wb")  # noqa: SIM115 (closed by close(), also when collected)
        self._records = RecordWriter(self._file)
        self._queue: list[bytes] = []
        self._max_queue = max_queue
        self._flush_seconds = flush_millis / 1000.0
        self._lock = threading.Lock()  # a compiled step's callback may write from JAX's thread
        self._last_flush = time.monotonic()
        first = event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2")
        first.source_metadata.writer = "tapejax"
        self.add(first.SerializeToString())
        self.flush()

    def add(self, record: bytes) -> None:
        with self._lock:
            if self._file.closed:
                return
            self._queue.append(record)
            if len(self._queue) > self._max_queue or time.monotonic() - self._last_flush > self._flush_seconds:
                self._flush_locked()

    def _flush_locked(self) -> None:
        for record in self._queue:
            self._records.write(record)
        self._queue.clear()
        self._file.flush()
        self._last_flush = time.monotonic()

    def flush(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._flush_locked()

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._flush_locked()
                self._file.close()


class _WriterContext:
    """`as_default()`: the writer (and step, if given) for the block; flushes on exit, as TF does. A class,
    not a generator, so that `set_as_default` can enter it and never leave."""

    def __init__(self, writer: SummaryWriter | None, step: Any = None):
        self._writer, self._step = writer, step
        self._old: tuple[Any, Any] = (None, None)

    def __enter__(self) -> SummaryWriter | None:
        self._old = (STATE.writer, STATE.step)
        STATE.writer = self._writer
        if self._step is not None:
            STATE.step = self._step
        return self._writer

    def __exit__(self, *exc: object) -> bool:
        if STATE.writer is not None:
            STATE.writer.flush()
        STATE.writer = self._old[0]
        if self._step is not None:
            STATE.step = self._old[1]
        return False


class SummaryWriter:
    """A summary writer (`tf.summary.SummaryWriter`): made by `tf.summary.create_file_writer`."""

    def set_as_default(self, step: Any = None) -> None:
        """Makes this the default writer of this thread from now on (and `step`, if given, the default step)."""
        self.as_default(step).__enter__()

    def as_default(self, step: Any = None) -> Any:
        """A context manager in which summaries go to this writer; `step`, if given, is the default step
        inside it (restored after). The writer is flushed on exit."""
        return _WriterContext(self, step)

    def init(self) -> None:
        """Nothing to do: the file is created with the writer (TF's eager writers are initialised too)."""

    def flush(self) -> None:
        """Writes the queued events to the file."""

    def close(self) -> None:
        """Flushes and closes the writer."""


class _FileWriter(SummaryWriter):
    def __init__(self, logdir: str, max_queue: int, flush_millis: int, filename_suffix: str):
        self._file = _EventFile(logdir, max_queue, flush_millis, filename_suffix)
        self._closed = False
        weakref.finalize(self, self._file.close)  # TF's resource deleter flushes a dropped writer too

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")

    def set_as_default(self, step: Any = None) -> None:
        self._check_open()
        super().set_as_default(step)

    def as_default(self, step: Any = None) -> Any:
        self._check_open()
        return super().as_default(step)

    def init(self) -> None:
        self._check_open()

    def flush(self) -> None:
        if not self._closed:
            self._file.flush()

    def close(self) -> None:
        if not self._closed:
            self._file.close()
            self._closed = True

    def add(self, record: bytes) -> None:
        self._file.add(record)


class _NoopWriter(SummaryWriter):
    """`create_noop_writer()`: its `as_default` sets no writer, so nothing is recorded inside it (TF's too)."""

    def set_as_default(self, step: Any = None) -> None:
        pass

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator[None]:
        yield


def _int_arg(value: Any, name: str, default: int) -> int:
    if value is None:
        return default
    value = getattr(value, "_value", value)  # a tapejax tensor, as TF's writer takes a tensor too
    if isinstance(value, bool) or not float(value).is_integer():
        raise TypeError(f"tf.summary.create_file_writer: `{name}` must be an integer, got {value!r}.")
    return int(value)


def create_file_writer(logdir: Any, max_queue: Any = None, flush_millis: Any = None, filename_suffix: Any = None,
                       name: str | None = None, experimental_trackable: bool = False,
                       experimental_mesh: Any = None) -> SummaryWriter:
    """A writer of TensorBoard event files in `logdir` (created if missing), as `tf.summary.create_file_writer`.

    Args:
      logdir: the directory of the event file (a local path; `os.PathLike` too).
      max_queue: events queued before the file is written (default 10): it is written once more are waiting.
      flush_millis: the longest time between writes of the file, in milliseconds (default 120,000), checked when
        an event is added.
      filename_suffix: the end of the file's name (default ".v2", as TF).
      name, experimental_trackable, experimental_mesh: accepted and ignored.

    Raises:
      ValueError: `logdir` is None (TF's error).
      ImportError: the `tensorboard` package is not installed; the message says how to install it.

    >>> import tapejax as tf, tempfile
    >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())  # doctest: +SKIP
    >>> with writer.as_default(step=0):  # doctest: +SKIP
    ...     tf.summary.scalar("loss", 0.25)
    <tf.Tensor: shape=(), dtype=bool, numpy=True>

    Differences from TensorFlow: only local paths (TF's file systems, `gs://` and the rest, are not there).
    """
    if logdir is None:
        raise ValueError("Argument `logdir` cannot be None")
    tensorboard_protos()
    suffix = ".v2" if filename_suffix is None else str(filename_suffix)
    return _FileWriter(os.fspath(logdir), _int_arg(max_queue, "max_queue", 10),
                       _int_arg(flush_millis, "flush_millis", 120_000), suffix)


def create_noop_writer() -> SummaryWriter:
    """A writer that writes nothing (`tf.summary.create_noop_writer`), for code that wants a context manager."""
    return _NoopWriter()


def flush(writer: Any = None, name: str | None = None) -> None:
    """Writes out the queued events of `writer`, or of the default writer (`tf.summary.flush`)."""
    if writer is None:
        writer = STATE.writer
        if writer is None:
            return None
    if isinstance(writer, SummaryWriter):
        return writer.flush()
    raise ValueError(f"Invalid argument to flush(): {writer!r}")


@contextlib.contextmanager
def record_if(condition: Any) -> Iterator[None]:
    """Records summaries inside the block only where `condition` holds (`tf.summary.record_if`): a bool, a bool
    tensor, or a callable giving one, called at each summary (inside tf.function, at trace time: its tensor
    decides at run time)."""
    old = STATE.is_recording
    STATE.is_recording = condition
    try:
        yield
    finally:
        STATE.is_recording = old


def get_step() -> Any:
    """The default step of this thread (`tf.summary.experimental.get_step`), or None."""
    return STATE.step


def set_step(step: Any) -> None:
    """Sets the default step of this thread (`tf.summary.experimental.set_step`): an int, or a variable read
    at each summary (inside tf.function, a Python int is fixed at trace time, a variable is read per call)."""
    STATE.step = step


def trace_on(graph: bool = True, profiler: bool = False, profiler_outdir: str | None = None) -> None:
    """Accepted for ported code (`tf.summary.trace_on`); nothing is traced.

    Differences from TensorFlow: TF records the graphs (and profiles) of the tf.functions that run until
    `trace_export`; tapejax's steps are XLA programs with no TF graph, so there is nothing to record, and
    `trace_export` writes nothing. Use `jax.profiler` to profile.
    """
    if _TRACING[0]:
        logs.warning("Trace already enabled")
    _TRACING[0] = True


def trace_off() -> None:
    """Stops what `trace_on` started (`tf.summary.trace_off`): nothing, in tapejax."""
    _TRACING[0] = False


def trace_export(name: str, step: Any = None, profiler_outdir: str | None = None) -> None:
    """`tf.summary.trace_export`: raises TF's ValueError without `trace_on`, else ends the trace, writing
    nothing (see `trace_on`)."""
    if not _TRACING[0]:
        raise ValueError("Must enable trace before export through tf.summary.trace_on.")
    _TRACING[0] = False
