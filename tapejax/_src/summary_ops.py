"""tf.summary's summary calls: `write`, `scalar`, `histogram`, `image`, `text`, `audio`.

Each call decides in Python, as TF's does, whether anything is recorded (a default writer, `record_if`), and
checks its arguments; the event itself is made on the host (summary_enc.py) and added to the writer.
Eagerly that happens at once. Inside `tf.function` it happens when the compiled step runs, once per call, through
an ordered JAX host callback that receives the values of that call: the data, the step (a step variable is read
per call; a Python int is fixed at trace time, as in TF) and the `record_if` condition when it is a traced
tensor. The writer is the one that was the default when the function was traced, as in TF.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

from . import dispatch
from .context import CONTEXT
from .errors import InvalidArgumentError
from .registry import OpDef
from .summary_encoding import DEFAULT_BUCKETS
from . import summary_encoding as enc
from .summary_writer import STATE, _FileWriter, tensorboard_protos
from .tensor import EagerTensor, Tensor, _Operators
from .variable import Variable, name_scope

_NO_STEP = ("No step set. Please specify one either through the `step` argument or through "
            "tf.summary.experimental.set_step()")


def _array(x: Any) -> Any:
    """The array of a tensor or variable (a tracer inside tf.function), numpy for anything else."""
    if isinstance(x, Variable):
        return x._current()
    if isinstance(x, Tensor):
        return x._value
    return np.asarray(x)


def _is_traced(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def _bool_tensor(value: Any) -> Tensor:
    if isinstance(value, _Operators):
        return value if isinstance(value, Tensor) else EagerTensor(_array(value))
    return EagerTensor(np.bool_(value))


def _check_step(step: Any) -> Any:
    """TF's `_choose_step`: an int64-convertible scalar (a one-element value passes, as in TF)."""
    if isinstance(step, _Operators):
        kind = np.dtype(_array(step).dtype)
        if kind.kind not in "iu":
            raise ValueError(f"Tensor conversion requested dtype int64 for Tensor with dtype "
                             f"{step.dtype.name}: {step!r}")
        size = int(np.prod(_array(step).shape))
    else:
        value = np.asarray(step)
        if value.dtype.kind not in "iu":
            raise TypeError(f"Cannot convert {step!r} to EagerTensor of dtype int64")
        size = value.size
        shape = value.shape
    if size != 1:
        shape = tuple(_array(step).shape) if isinstance(step, _Operators) else shape
        raise ValueError(f"Argument `step` must be a scalar. Received step with shape {shape}.")
    return step


def _condition() -> Any:
    """Whether to record: False without a default writer, else the `record_if` condition (True by default) as
    a Python bool, or a traced bool array inside tf.function."""
    if STATE.writer is None:
        return False
    condition = STATE.is_recording
    if callable(condition):
        condition = condition()
    if condition is None:
        return True
    if isinstance(condition, _Operators) and _is_traced(_array(condition)):
        return condition  # decided at run time: the tensor goes to the host callback
    return bool(np.asarray(_array(condition)))


def should_record_summaries() -> Tensor:
    """A bool tensor: whether a summary call here would record (`tf.summary.should_record_summaries`)."""
    return _bool_tensor(_condition())


def summary_tag(name: str) -> str:
    """The tag of a summary named `name`: prefixed by the enclosing name scopes, as TF's summary_scope does."""
    return "/".join([*CONTEXT.name_scopes, name]) if CONTEXT.name_scopes else name


@contextlib.contextmanager
def summary_scope(name: str | None, default_name: str = "summary", values: Any = None) -> Iterator[tuple[str, str]]:
    """`tf.summary.experimental.summary_scope`: yields (tag, scope) for a summary op named `name`: the tag is
    the name under the enclosing name scopes, the scope a name scope of the name cleaned of invalid characters."""
    name = name or default_name
    tag = summary_tag(name)
    with name_scope(re.sub(r"[^-_/.A-Za-z0-9]", "", name) or default_name) as scope:
        yield tag, scope


def record(tag: str, inputs: list, make: Callable[..., np.ndarray], plugin: str | None, step: Any,
           description: str | None = None, metadata: Any = None) -> Tensor:
    """Records one summary (the body of `tf.summary.write`): `make(*input values)` gives its tensor as numpy,
    computed only when it is recorded."""
    if step is not None:
        _check_step(step)
    writer = STATE.writer
    if writer is None:
        return _bool_tensor(False)
    if step is None:
        step = STATE.step
    condition = _condition()
    if condition is False:
        return _bool_tensor(False)
    if step is None:
        raise ValueError(_NO_STEP)
    if not isinstance(writer, _FileWriter):
        return _bool_tensor(condition)  # a user's SummaryWriter subclass: nothing to write to
    if plugin is not None:
        metadata = enc.metadata(plugin, description)
    serialized = b"" if metadata is None else (
        metadata if isinstance(metadata, bytes) else metadata.SerializeToString())
    event_pb2, summary_pb2 = tensorboard_protos()

    def host(step_value: Any, recording: Any, *values: Any) -> None:
        if not bool(np.asarray(recording)):
            return
        value = summary_pb2.Summary.Value(tag=tag, tensor=enc.tensor_proto(make(*values)))
        if serialized:
            value.metadata.ParseFromString(serialized)
        event = event_pb2.Event(wall_time=time.time(), step=int(np.asarray(step_value).reshape(())))
        event.summary.value.append(value)
        writer.add(event.SerializeToString())

    _run_on_host(host, [step, condition, *inputs])
    return _bool_tensor(condition)


def _run_on_host(host: Callable[..., None], inputs: list) -> None:
    """Calls `host` with the numpy values of `inputs`: now, or inside tf.function when the step runs."""
    trace = CONTEXT.trace
    if trace is None:
        host(*[np.asarray(_array(x)) for x in inputs])
        return
    positions = [i for i, x in enumerate(inputs) if isinstance(x, _Operators)]
    constants = [None if isinstance(x, _Operators) else np.asarray(x) for x in inputs]

    def emit(*values: Any) -> None:
        full = list(constants)
        for i, v in zip(positions, values):
            full[i] = np.asarray(v)
        host(*full)

    if trace.captures:  # inside a traced branch or loop body: a step of the captured body (as tf.print)
        reads = [inputs[i]._read() if isinstance(inputs[i], Variable) else (inputs[i]._tid, inputs[i]._value)
                 for i in positions]
        opdef = OpDef("summary.write", lambda *values: (jax.debug.callback(emit, *values, ordered=True), ())[1],
                      op_type="WriteSummary", jit=False)
        dispatch.record_call(opdef, [t for t, _ in reads], [v for _, v in reads], (), CONTEXT.tapes[:1],
                             effect=True)
    else:  # the call number goes along so that the callback is staged even when every value is a constant
        jax.debug.callback(lambda *values: emit(*values[:-1]), *[_array(inputs[i]) for i in positions],
                           trace._calls, ordered=True)


def write(tag: str, tensor: Any, step: Any = None, metadata: Any = None, name: str | None = None) -> Tensor:
    """Writes `tensor` (or what the callable `tensor` returns, called only when recording) as the summary
    `tag` (`tf.summary.write`); `metadata` is a SummaryMetadata proto or its bytes. Returns a bool tensor:
    True if recorded, False without a default writer or under `record_if(False)`.
    """
    lazy = callable(tensor) and not isinstance(tensor, _Operators)

    def make(value: np.ndarray) -> np.ndarray:
        return value

    if lazy:  # called only when recording, as TF does
        if STATE.writer is None or _condition() is False:
            return record(tag, [], make, None, step, metadata=metadata)
        tensor = tensor()
    return record(tag, [tensor], make, None, step, metadata=metadata)


def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> Tensor:
    """Writes a scalar summary (`tf.summary.scalar`): `data` cast to float32, shown in TensorBoard's Scalars.

    Returns a bool tensor: True if recorded, False without a default writer or under `record_if(False)`.

    Raises:
      ValueError: `data` is not a scalar; or a writer is set but no step was given or set.
    """
    shape = tuple(_array(data).shape)
    if shape != ():
        raise ValueError(f"Expected scalar shape, saw shape: {shape}.")
    return record(summary_tag(name), [data], enc.scalar, "scalar", step, description)


def histogram(name: str, data: Any, step: Any = None, buckets: Any = None, description: str | None = None) -> Tensor:
    """Writes a histogram summary (`tf.summary.histogram`) of all of `data`'s values, in `buckets` buckets
    (default 30), bucketed as TF 2.21 does (see summary_enc.py)."""
    if buckets is None:
        buckets = DEFAULT_BUCKETS
    if STATE.writer is not None and _condition() is not False:
        kind = np.dtype(_array(buckets).dtype) if isinstance(buckets, _Operators) else np.asarray(buckets).dtype
        if isinstance(buckets, bool) or kind.kind not in "iu" or (isinstance(buckets, _Operators) and
                                                                 kind != np.int32):
            got = "float32" if kind.kind == "f" else kind.name
            raise TypeError(f"tensor must be of type tf.int32; got tf.{got}")
    return record(summary_tag(name), [data, buckets], enc.histogram, "histogram", step, description)


def image(name: str, data: Any, step: Any = None, max_outputs: Any = 3, description: str | None = None) -> Tensor:
    """Writes an image summary (`tf.summary.image`) of the first `max_outputs` of the [k, h, w, c] `data`
    (c = 1, 2, 3 or 4), as PNG after TF's conversion to uint8 (floats: `x * 255.5` clipped to [0, 255]).

    Differences from TensorFlow: the PNG files hold the same pixels as TF's but are compressed differently (no
    row filters), so their sizes differ.
    """
    if STATE.writer is not None and _condition() is not False:
        shape = tuple(_array(data).shape)
        if len(shape) != 4:
            raise ValueError(f"Tensor  must have rank 4.  Received rank {len(shape)}, shape {shape}")
        if shape[3] not in (1, 2, 3, 4):
            message = f"image must have 1, 2, 3, or 4 channels, got {shape[3]}"
            raise ValueError(message) if CONTEXT.trace is not None else InvalidArgumentError(
                None, None, message + " [Op:EncodePng] name: ")
    return record(summary_tag(name), [data, max_outputs], enc.image, "image", step, description)


def text(name: str, data: Any, step: Any = None, description: str | None = None) -> Tensor:
    """Writes a text summary (`tf.summary.text`) of a Python string, bytes, or a (nested) list or numpy array
    of them; TensorBoard renders it as Markdown.

    Differences from TensorFlow: tapejax has no string tensors, so `data` is a Python or numpy value, fixed at
    trace time inside tf.function.
    """
    if isinstance(data, _Operators) or np.asarray(data).dtype.kind not in "USO":
        got = data.dtype.name if isinstance(data, _Operators) else {
            "f": "float32", "b": "bool"}.get(np.asarray(data).dtype.kind, "int32")
        raise TypeError(f"tensor must be of type tf.string; got tf.{got}")
    strings = enc.text(data)
    return record(summary_tag(name), [], lambda: strings, "text", step, description)


def audio(name: str, data: Any, sample_rate: Any, step: Any = None, max_outputs: Any = 3, encoding: Any = None,
          description: str | None = None) -> Tensor:
    """Writes an audio summary (`tf.summary.audio`) of the first `max_outputs` clips of the [k, t, c] float
    `data` in [-1, 1], as 16-bit WAV at `sample_rate` Hz."""
    if encoding not in (None, "wav"):
        raise ValueError(f"Unknown encoding: {encoding!r}")
    return record(summary_tag(name), [data, sample_rate, max_outputs], enc.audio, "audio", step, description)
