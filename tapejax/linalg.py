"""tf.linalg: matrix ops (rows in tapejax/ops/linalg.py)."""

from tapejax.ops.linalg import matmul as matmul
from tapejax.ops.linalg import matvec as matvec
from tapejax.ops.linalg import solve as solve
from tapejax.ops.linalg import inv as inv
from tapejax.ops.linalg import norm as norm
from tapejax.ops.array import einsum as einsum
from tapejax.ops.array import eye as eye
from tapejax.ops.linalg import det as det
from tapejax.ops.linalg import slogdet as slogdet
from tapejax.ops.linalg import logdet as logdet
from tapejax.ops.linalg import cholesky as cholesky
from tapejax.ops.linalg import cholesky_solve as cholesky_solve
from tapejax.ops.linalg import triangular_solve as triangular_solve
from tapejax.ops.linalg import qr as qr
from tapejax.ops.linalg import svd as svd
from tapejax.ops.linalg import eigh as eigh
from tapejax.ops.linalg import eigvalsh as eigvalsh
from tapejax.ops.linalg import lstsq as lstsq
from tapejax.ops.linalg import pinv as pinv
from tapejax.ops.linalg import lu as lu
from tapejax.ops.linalg import expm as expm
from tapejax.ops.linalg import trace as trace
from tapejax.ops.linalg import diag as diag
from tapejax.ops.linalg import diag_part as diag_part
from tapejax.ops.linalg import set_diag as set_diag
from tapejax.ops.linalg import band_part as band_part
from tapejax.ops.linalg import matrix_transpose as matrix_transpose
from tapejax.ops.linalg import adjoint as adjoint
from tapejax.ops.linalg import cross as cross
from tapejax.ops.linalg import tensordot as tensordot
from tapejax.ops.linalg import global_norm as global_norm
from tapejax.ops.linalg import normalize as normalize

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.linalg")
