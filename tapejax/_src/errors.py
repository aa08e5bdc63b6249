"""TensorFlow's exception classes (`tf.errors`) and the long messages tapejax raises.

The classes mirror TF's hierarchy (every op error is an `OpError`) so that `except tf.errors.X` clauses in ported
code catch what they caught before.
"""

from __future__ import annotations

import itertools
import re
from typing import Final


class OpError(Exception):
    """The base class of errors raised when an op fails (`tf.errors.OpError`)."""

    def __init__(self, node_def=None, op=None, message: str = "", *args):
        super().__init__(message, *args)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return self.message


def _op_error(name: str, doc: str) -> type[OpError]:
    return type(name, (OpError,), {"__doc__": doc, "__module__": __name__})


CancelledError = _op_error("CancelledError", "An operation was cancelled.")
UnknownError = _op_error("UnknownError", "An unknown error.")
InvalidArgumentError = _op_error("InvalidArgumentError", "An op received an invalid argument.")
DeadlineExceededError = _op_error("DeadlineExceededError", "A deadline expired.")
NotFoundError = _op_error("NotFoundError", "A requested entity was not found.")
AlreadyExistsError = _op_error("AlreadyExistsError", "An entity already exists.")
PermissionDeniedError = _op_error("PermissionDeniedError", "The caller lacks permission.")
ResourceExhaustedError = _op_error("ResourceExhaustedError", "A resource (such as memory) is exhausted.")
FailedPreconditionError = _op_error("FailedPreconditionError", "The system is not in a state to run the op.")
AbortedError = _op_error("AbortedError", "The operation was aborted.")
OutOfRangeError = _op_error("OutOfRangeError", "An operation iterated past the valid range.")
UnimplementedError = _op_error("UnimplementedError", "The operation is not implemented.")
InternalError = _op_error("InternalError", "An internal invariant was broken.")
UnavailableError = _op_error("UnavailableError", "The runtime is unavailable.")
DataLossError = _op_error("DataLossError", "Unrecoverable data loss.")
UnauthenticatedError = _op_error("UnauthenticatedError", "The request lacks credentials.")


class OperatorNotAllowedInGraphError(TypeError):
    """A traced tensor (inside tf.function) was used where its value is needed, e.g. as a Python bool."""


def invalid_argument(op_type: str, message: str) -> InvalidArgumentError:
    """An InvalidArgumentError with TF's eager message shape: `<message> [Op:<OpType>] name: `."""
    return InvalidArgumentError(None, None, f"{message} [Op:{op_type}] name: ")


# XLA's status codes are TF's (both are absl's): a runtime error keeps its class.
_STATUS = {"INVALID_ARGUMENT": InvalidArgumentError, "RESOURCE_EXHAUSTED": ResourceExhaustedError,
           "INTERNAL": InternalError, "UNIMPLEMENTED": UnimplementedError, "FAILED_PRECONDITION":
           FailedPreconditionError, "OUT_OF_RANGE": OutOfRangeError, "UNKNOWN": UnknownError,
           "CANCELLED": CancelledError, "UNAVAILABLE": UnavailableError, "DEADLINE_EXCEEDED": DeadlineExceededError,
           "NOT_FOUND": NotFoundError, "ABORTED": AbortedError}


def from_jax(op_type: str, error: Exception, traced: bool = False) -> Exception:
    """TF's exception for one that JAX, XLA, MLIR or numpy raised running op `op_type` (errors of tapejax's own
    come back as they are). A runtime error keeps XLA's status as TF's class (ResourceExhaustedError, with advice,
    for out-of-memory); any other is InvalidArgumentError, or, while a tf.function traces (`traced`), the
    ValueError of TF's graph construction (the contracts raise its TypeError for dtypes themselves)."""
    if (isinstance(error, OpError) or getattr(error, "tf_error", False) or type(error).__module__.startswith("tapejax")
            or type(error).__name__ == "InconclusiveDimensionOperation"):  # function.py then traces per size
        return error
    text = str(error).strip() or type(error).__name__
    failure = _HOST_MARK.search(text)
    if failure is not None and int(failure.group(1)) in HOST_FAILURES:
        return HOST_FAILURES.pop(int(failure.group(1)))
    if type(error).__name__ in ("XlaRuntimeError", "JaxRuntimeError"):
        status = text.split(":", 1)[0]
        cls = _STATUS.get(status, InvalidArgumentError)
        if cls is ResourceExhaustedError:
            text += OUT_OF_MEMORY
        return cls(None, None, f"{text} [Op:{op_type}] name: ")
    if traced:  # JAX reports shape errors as TypeError; TF's graph construction as ValueError
        return ValueError(f"{text} for '{{node {op_type}}}'")
    return invalid_argument(op_type, text)


# A host callback (tf.numpy_function / tf.py_function inside tf.function) that fails leaves TF's error here and
# raises a marker that JAX wraps in its runtime error; from_jax gives back the error the marker names. Bounded:
# a failure nobody converts (JAX swallowed it) is forgotten after _MAX_HOST_FAILURES more.
HOST_FAILURES: dict[int, Exception] = {}
_MAX_HOST_FAILURES: Final = 64
_HOST_MARK = re.compile(r"tapejax host callback failure #(\d+)")
_host_failure_ids = itertools.count(1)


def host_failure(error: Exception) -> RuntimeError:
    """The exception for a host callback to raise so that the compiled call raises `error` (TF's class)."""
    number = next(_host_failure_ids)
    HOST_FAILURES[number] = error
    while len(HOST_FAILURES) > _MAX_HOST_FAILURES:
        HOST_FAILURES.pop(next(iter(HOST_FAILURES)))
    return RuntimeError(f"tapejax host callback failure #{number}: {type(error).__name__}")


def is_jax(error: BaseException) -> bool:
    """Whether an exception is one of JAX's or jaxlib's own (XLA's runtime errors, MLIR's, jax.errors)."""
    return type(error).__module__.split(".", 1)[0] in ("jax", "jaxlib")


OUT_OF_MEMORY: Final = (
    " (tapejax: the device ran out of memory. Use smaller batches; for a jacobian, pass "
    "`parallel_iterations` to compute it in chunks; `tf.debugging.clear_caches()` frees cached executables.)"
)

NON_PERSISTENT_SECOND_CALL: Final = (
    "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians). "
    "To compute several, create the tape with `tf.GradientTape(persistent=True)`."
)

GRADIENT_IN_CONTEXT: Final = (
    "Calling GradientTape.gradient on a persistent tape inside its context is significantly less efficient "
    "than calling it outside the context (it causes the gradient ops to be recorded on the tape, leading to "
    "increased CPU and memory usage). Only call GradientTape.gradient inside the context if you actually want "
    "to trace the gradient in order to compute higher order derivatives."
)

WATCH_NON_TENSOR: Final = (
    "GradientTape.watch expects Tensors or Variables (or nests of them), got {type_name}: {value!r}. "
    "Wrap Python and numpy values with tf.constant first, e.g. `x = tf.constant(3.0); tape.watch(x)`."
)

SOURCE_NON_TENSOR: Final = (
    "GradientTape.gradient sources must be Tensors or Variables (or nests of them), got {type_name}: "
    "{value!r}. A Python or numpy value is not on the tape: create it with tf.constant and tape.watch it, or "
    "use a tf.Variable."
)

NO_GRADIENT_REGISTERED: Final = "gradient registry has no entry for: {op_type}"


class NotImplementedSymbolError(AttributeError, NotImplementedError):
    """A TF symbol tapejax lacks: a NotImplementedError, and an AttributeError so that `hasattr` and
    `getattr(tf, name, default)` in ported code still work."""


def missing_symbols(namespace: str):
    """A module `__getattr__` for a tf namespace: a TF symbol tapejax lacks fails with an error naming it."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedSymbolError(
            f"tapejax does not implement {namespace}.{name} yet (or TensorFlow has no such symbol). "
            "docs/coverage.md lists what tapejax has; `python -m tapejax --coverage` prints it.", name=name)

    return __getattr__


X64_MESSAGE: Final = (
    "tapejax turned on JAX's x64 mode (jax_enable_x64=True) for this whole process, so that tf.float64 and "
    "tf.int64 tensors compute in 64 bits. JAX code of your own in this process now defaults to 64 bits too: "
    "jnp.array(1.0) is float64 and jnp.arange(3) is int64 (tapejax's tensors keep TF's float32/int32 defaults). "
    "To choose this explicitly and silence this warning, enable x64 yourself before importing tapejax: "
    "jax.config.update('jax_enable_x64', True); to keep float32 in your JAX code, pass dtype=jnp.float32 there. "
    "JAX has no x64 mode scoped to a library that computes float64 correctly: see README.md, "
    "'JAX's x64 mode'.")


class X64ModeWarning(UserWarning):
    """Importing tapejax changed JAX's process-wide x64 mode under JAX code that was already running."""
