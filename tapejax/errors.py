"""tf.errors: TensorFlow's exception classes."""

from tapejax._src.errors import OpError as OpError
from tapejax._src.errors import CancelledError as CancelledError
from tapejax._src.errors import UnknownError as UnknownError
from tapejax._src.errors import InvalidArgumentError as InvalidArgumentError
from tapejax._src.errors import DeadlineExceededError as DeadlineExceededError
from tapejax._src.errors import NotFoundError as NotFoundError
from tapejax._src.errors import AlreadyExistsError as AlreadyExistsError
from tapejax._src.errors import PermissionDeniedError as PermissionDeniedError
from tapejax._src.errors import ResourceExhaustedError as ResourceExhaustedError
from tapejax._src.errors import FailedPreconditionError as FailedPreconditionError
from tapejax._src.errors import AbortedError as AbortedError
from tapejax._src.errors import OutOfRangeError as OutOfRangeError
from tapejax._src.errors import UnimplementedError as UnimplementedError
from tapejax._src.errors import InternalError as InternalError
from tapejax._src.errors import UnavailableError as UnavailableError
from tapejax._src.errors import DataLossError as DataLossError
from tapejax._src.errors import UnauthenticatedError as UnauthenticatedError
from tapejax._src.errors import OperatorNotAllowedInGraphError as OperatorNotAllowedInGraphError

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.errors")
