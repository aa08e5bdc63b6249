"""TensorFlow's exception classes (`tf.errors`) and the long messages tapejax raises.

The classes mirror TF's hierarchy (every op error is an `OpError`) so that `except tf.errors.X` clauses in ported
code catch what they caught before.
"""

from __future__ import annotations

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

