"""tf.linalg: matrix ops (rows in tapejax/ops/linalg.py)."""

from tapejax.ops.linalg import matmul as matmul
from tapejax.ops.linalg import matvec as matvec
from tapejax.ops.linalg import solve as solve
from tapejax.ops.linalg import inv as inv
from tapejax.ops.linalg import norm as norm
from tapejax.ops.array import einsum as einsum
from tapejax.ops.array import eye as eye
