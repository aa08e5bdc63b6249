"""Iterators over datasets, and the pipeline's threads: `prefetch`'s, and `num_parallel_calls`'.

`prefetch` runs its input in a background thread that fills a bounded queue, so that the input pipeline (numpy
gathers, compiled map calls, host-to-device copies) overlaps the consumer's step. A thread rather than a loader
library (grain, torch's DataLoader): the work is numpy and XLA calls, which release the GIL, the elements are
already arrays (nothing to pickle to another process), and a thread keeps the pipeline's order and its
exceptions exactly as the element-by-element path has them. `map(num_parallel_calls=n)` runs up to n calls at
once on worker threads (`in_order`), and `interleave(num_parallel_calls=n)` reads each of its cycle's datasets
ahead in a `background` thread; both give their elements, and raise their errors, in the sequential order.
"""

from __future__ import annotations

import collections
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jax
import numpy as np

from tapejax._src import errors
from tapejax._src.checkpoint_graph import Saveable
from tapejax._src.concrete_function import init_scope
from tapejax._src.context import CONTEXT
from tapejax._src.tensor import EagerTensor

from .api import Dataset
from .stage import Stage

_DONE = object()


def _counted(elements: Iterator[tuple], read: list[int]) -> Iterator[tuple]:
    """`elements`, counted in `read[0]`. Not a method: a generator holding its iterator would make a cycle,
    and a dropped iterator's pipeline threads (prefetch, interleave) would run until the garbage collector."""
    for element in elements:
        read[0] += 1
        yield element


class OwnedIterator:
    """An iterator over a dataset (`iter(dataset)`): `next` raises StopIteration at the end, `get_next` TF's
    OutOfRangeError.

    Made inside a tf.function trace, its pass starts when the step runs (each call of the step starts a new
    one, as TF's iterator made inside a function), and `next` reads through a host callback (graph_loop.py)."""

    def __init__(self, dataset: Stage):
        self._dataset = dataset
        self._structure = dataset._structure
        self._peeked: tuple | None = None  # an element read ahead at trace time, or pushed back by a loop
        self._ahead: tuple | None = None  # the element a graph loop read last
        self._read = [0]  # elements taken from this pass (a checkpoint's position; see _checkpoint_children)
        if CONTEXT.trace is not None:
            from .graph_loop import stage_restart
            self._it: Iterator[tuple] = iter(())
            self._traced = True
            stage_restart(self)
        else:
            self._it = _counted(dataset._elements(), self._read)
            self._traced = False

    def _restart(self) -> None:
        self._close()
        self._read = [0]
        self._it, self._peeked, self._ahead = _counted(self._dataset._elements(), self._read), None, None

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        """`tf.train.Checkpoint(iterator=it)` saves the iterator's position in its pass (the elements it has
        given) as an int64; restoring starts a new pass and skips as many elements. TF saves the iterator's
        internal state (a variant tensor) instead, so the two engines do not read each other's iterator state,
        and a pass that differs from the saved one (an unseeded shuffle) resumes at the same position only."""
        return [("position", Saveable("position", self._position, self._seek))]

    def _position(self) -> np.ndarray:
        return np.asarray(self._read[0] - (self._peeked is not None), np.int64)

    def _seek(self, position: np.ndarray) -> None:
        self._restart()
        for _ in range(int(position)):
            if next(self._it, _DONE) is _DONE:
                break

    def __iter__(self) -> OwnedIterator:
        return self

    def __next__(self) -> Any:
        if CONTEXT.trace is not None:
            return self._traced_next()
        element = self._peeked if self._peeked is not None else next(self._it)
        self._peeked = None
        return self._structure.tensors(element)

    def _traced_next(self) -> Any:
        """`next(iterator)` inside a tf.function trace: a host callback that reads the next element each time
        the compiled function runs (an iterator passed into a step gives a new batch per call, as in TF). Its
        shapes are the element_spec's, or, where that has None dimensions, those of the next element (peeked
        now; the first shape the pipeline can give for an iterator made in the trace); an element of other
        shapes, or the end of the data, raises when the step runs."""
        from .graph_loop import _Reader, kinds
        specs = self._structure.specs
        if all(s.shape.is_fully_defined() for s in specs):
            shapes = tuple(tuple(s.shape.as_list()) for s in specs)
        elif self._traced:
            found = kinds(self._dataset)
            if not found:
                raise errors.InvalidArgumentError(None, None, "tapejax: next() inside tf.function needs the "
                                                  "shapes of the element, which this pipeline does not fix.")
            shapes = found[0]
        else:
            if self._peeked is None:
                with init_scope():  # the pipeline's own work (a py_function map's calls) runs now, not in the trace
                    self._peeked = next(self._it)
            shapes = tuple(tuple(np.shape(x)) for x in self._peeked)
        reader = _Reader(self, [shapes], strict=True)
        kind, buffers = reader.read()
        return reader.element(0, buffers)

    def _ag_for_stmt(self, *loop: Any) -> tuple:
        """AutoGraph's `for x in iterator:` inside a tf.function: the rest of the pass, as a graph loop."""
        from .graph_loop import for_stmt
        return for_stmt(self, *loop)

    def get_next(self, name: str | None = None) -> Any:
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self) -> Any:
        from .api import Optional
        try:
            return Optional.from_value(next(self))
        except StopIteration:
            return Optional.empty(self._dataset.element_spec)

    @property
    def element_spec(self) -> Any:
        return self._structure.element_spec

    def _close(self) -> None:
        close = getattr(self._it, "close", None)
        if close is not None:
            close()

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:
            pass


class NumpyIterator(OwnedIterator):
    """`as_numpy_iterator()`: elements as numpy arrays in the element's nest."""

    def __next__(self) -> Any:
        return self._structure.numpy(next(self._it))


def _to_device(element: tuple) -> tuple:
    # strings (object arrays) stay on the host
    return tuple(jax.device_put(x) if isinstance(x, np.ndarray | np.generic) and x.dtype.kind not in "OSU" else x
                 for x in element)


def background(elements: Iterator[tuple], size: int) -> Iterator[tuple]:
    """`elements`, computed ahead by a background thread into a queue of `size`, from now on (an interleave's
    next datasets start before their turn). The thread stops when the consumer closes the iterator or drops it,
    and the producer's exception is re-raised in the consumer, after the elements before it."""
    buffer: queue.Queue = queue.Queue(maxsize=max(size, 1))
    stop = threading.Event()

    def produce() -> None:  # holds the queue and the event, never the iterator: dropping that stops this
        try:
            for element in elements:
                element = _to_device(element)
                while not stop.is_set():
                    try:
                        buffer.put(element, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            item: Any = _DONE
        except BaseException as e:  # noqa: BLE001 (handed to the consumer, which raises it)
            item = e
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    threading.Thread(target=produce, name="tf.data prefetch", daemon=True).start()
    return _Drain(buffer, stop)


class _Drain:
    """The consumer's side of `background`: its queue's elements, until the end or the producer's error."""

    __slots__ = ("_buffer", "_stop")

    def __init__(self, buffer: queue.Queue, stop: threading.Event):
        self._buffer, self._stop = buffer, stop

    def __iter__(self) -> _Drain:
        return self

    def __next__(self) -> tuple:
        if self._stop.is_set():
            raise StopIteration
        item = self._buffer.get()
        if item is _DONE or isinstance(item, BaseException):
            self._stop.set()
            if item is _DONE:
                raise StopIteration
            raise item
        return item

    def close(self) -> None:
        self._stop.set()

    def __del__(self) -> None:
        self._stop.set()


def in_order(calls: Iterator[tuple[Callable[..., Any], tuple]], width: int) -> Iterator[Any]:
    """`fn(*args)` for each `(fn, args)` of `calls`, up to `width` of them running at once on worker threads,
    the results yielded in the order of `calls`. `calls` is read on the caller's thread, at most `width` ahead
    of the results (its next input is read while the calls before it run); an exception, the input's or a
    call's, is raised where its element falls in that order. Closing the generator cancels the calls not
    started; those running finish on their threads and are dropped."""
    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="tf.data parallel call")
    pending: collections.deque = collections.deque()
    source: Iterator | None = iter(calls)
    try:
        while True:
            while source is not None and len(pending) < width:
                try:
                    fn, args = next(source)
                except StopIteration:
                    source = None
                    break
                except Exception as e:  # noqa: BLE001 (raised after the elements before it)
                    pending.append(e)
                    source = None
                    break
                pending.append(pool.submit(fn, *args))
            if not pending:
                return
            head = pending.popleft()
            if isinstance(head, BaseException):
                raise head
            yield head.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


class PrefetchDataset(Dataset):
    _tf_name = "_PrefetchDataset"

    def __init__(self, input: Dataset, buffer_size: Any):
        from .transforms import _count
        self._input = input
        size = _count(buffer_size)
        if size < -1:
            raise errors.InvalidArgumentError(None, None, f"buffer_size must be >= -1, got {size}.")
        self._size = 2 if size in (-1, 0) else size  # AUTOTUNE: TF tunes it; two steps ahead is enough here
        self._structure = input._structure
        self._card = input._card

    def _elements(self) -> Iterator[tuple]:
        return background(self._input._elements(), self._size)
