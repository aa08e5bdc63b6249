"""GradientTape's arguments read as TensorFlow 2.21 reads them: unconnected_gradients, output_gradients,
batch_jacobian's shapes, and the checks of TF's two jacobian loops (pfor and the sequential one).

These are TF's visible rules, some of them surprising, kept in one place so that gradient_tape.py reads as the
lowering it is. Each rule is a compat test (tests/compat/test_tape_edges_vs_tf.py).
"""

from __future__ import annotations

import enum
from typing import Any

import jax
import numpy as np

from .context import CONTEXT
from . import errors, logs
from .convert import tf_type_string, to_array
from .tensor import OPERATORS, EagerTensor, Tensor, TensorShape
from .variable import Variable

class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on (`tf.UnconnectedGradients`)."""

    NONE = "none"
    ZERO = "zero"


def unconnected_mode(unconnected_gradients: UnconnectedGradients | str) -> UnconnectedGradients:
    if isinstance(unconnected_gradients, UnconnectedGradients):
        return unconnected_gradients
    try:
        return UnconnectedGradients(unconnected_gradients)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}; use 'none', 'zero' "
                         "or a tf.UnconnectedGradients member.") from None


NONE_SEED: str = "Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) to a Tensor."

SEED_COUNT: str = (
    "GradientTape.gradient got %d output_gradients (after flattening them as tf.nest.flatten does) for %d "
    "targets. TensorFlow pairs the flattened values with the targets by position: extra values are ignored and "
    "missing ones default to ones, so output_gradients=[3., 4.] for one target means 3. (broadcast). To give one "
    "tensor per target, pass tensors: output_gradients=[tf.constant([3., 4.])]."
)


def seeds(flat_targets: list[Any], output_gradients: Any) -> list[Tensor | None]:
    """One seed (cotangent) per target, or None for the default of ones, as TF 2.21 pairs them.

    TF flattens `output_gradients` completely (`tf.nest.flatten`: a Python list of numbers is a nest, not one
    tensor), converts each leaf with `tf.convert_to_tensor` and gives leaf i to target i: leaves beyond the
    targets are ignored and targets beyond the leaves get ones. tapejax does the same, and warns when the counts
    differ, since that is almost always a list meant as one tensor.

    Raises:
      ValueError: for a None leaf (TF 2.21 cannot convert it).
    """
    if output_gradients is None:
        return [None] * len(flat_targets)
    leaves = (jax.tree_util.tree_leaves(output_gradients, is_leaf=lambda x: x is None or isinstance(x, Tensor | Variable))
              if not isinstance(output_gradients, Tensor) else [output_gradients])
    converted: list[Tensor | None] = []
    for leaf in leaves:
        if leaf is None:
            raise ValueError(NONE_SEED)
        if isinstance(leaf, Variable):
            leaf = leaf.read_value()  # a read, so a tape that watches the variable sees the dependence
        converted.append(leaf if isinstance(leaf, Tensor) else EagerTensor(to_array(leaf)))
    if len(converted) != len(flat_targets):
        logs.warning(SEED_COUNT, len(converted), len(flat_targets))
    converted = converted[:len(flat_targets)]
    return converted + [None] * (len(flat_targets) - len(converted))


def checked_seed(index: int, target: Any, seed: Tensor) -> Tensor:
    """`seed` for target `index` (its array, or its Pending: only its shape and dtype are read), broadcast to the
    target's shape as TF's elementwise gradients broadcast it.

    Raises:
      InvalidArgumentError: if its dtype is not the target's, or its shape does not broadcast to the target's
        (where TF's first gradient op fails, with the same exception type).
    """
    seed_dtype, target_dtype = np.dtype(seed.dtype.as_numpy_dtype), np.dtype(target.dtype)
    if seed_dtype != target_dtype:
        raise errors.invalid_argument(
            "GradientTape.gradient",
            f"output_gradients[{index}] was expected to be a {tf_type_string(target_dtype)} tensor (the dtype of "
            f"target {index}) but is a {tf_type_string(seed_dtype)} tensor; cast it with tf.cast")
    seed_shape, target_shape = tuple(seed.shape), tuple(target.shape)
    if seed_shape == target_shape:
        return seed
    try:
        broadcasts = np.broadcast_shapes(seed_shape, target_shape) == target_shape
    except ValueError:
        broadcasts = False
    if not broadcasts:
        raise errors.invalid_argument(
            "GradientTape.gradient",
            f"output_gradients[{index}] has shape {list(seed_shape)}, which does not broadcast to the shape "
            f"{list(target_shape)} of target {index}; pass one value per element of the target")
    return OPERATORS["broadcast_to"](seed, target_shape)


def check_batch_jacobian_shapes(target: Any, source: Any) -> None:
    """TF's checks, in TF's order: the target has a first dimension (IndexError otherwise), target and source
    are at least matrices, and their first dimensions match (ValueError otherwise)."""
    t_shape, s_shape = TensorShape(tuple(target.shape)), TensorShape(tuple(source.shape))
    if t_shape.rank == 0:
        raise IndexError("list index out of range (GradientTape.batch_jacobian needs a target with a batch "
                         "dimension)")
    for shape in (t_shape, s_shape):
        if shape.rank < 2:
            raise ValueError(f"Shape {shape} must have rank at least 2 (GradientTape.batch_jacobian maps over the "
                             "first dimension of target and source; use GradientTape.jacobian for vectors)")
    if t_shape[0] != s_shape[0]:
        raise ValueError(f"Need first dimension of target shape ({t_shape}) and source shape ({s_shape}) to match.")


def check_loop(method: str, persistent: bool, experimental_use_pfor: bool, parallel_iterations: int | None) -> None:
    """TF's checks of the two ways it loops over a jacobian's rows, kept although tapejax vectorises either way.

    Without pfor TF calls `gradient` once per row, so eagerly (not inside tf.function, where the rows are one
    while_loop) it refuses a non-persistent tape up front, and its while_loop wants a positive
    `parallel_iterations`; pfor refuses `parallel_iterations` below 2.
    """
    if experimental_use_pfor:
        if parallel_iterations is None or parallel_iterations > 1:
            return
        cause = (f"Argument `parallel_iterations` must be None or a positive integer. Received: {parallel_iterations}."
                 if parallel_iterations < 1 else "Found `parallel_iterations == 1`. Use `for_loop` instead.")
        raise ValueError(f"Encountered an exception while vectorizing the {method} computation. Vectorization can be "
                         "disabled by setting experimental_use_pfor to False.") from ValueError(cause)
    if not persistent and CONTEXT.trace is None:
        # TF's two messages differ in their spacing; kept, since code may match them.
        gap = "with  " if method == "jacobian" else " with "
        raise RuntimeError(f"GradientTape must be created with persistent=True to compute the {method} with eager "
                           f"execution enabled and {gap}experimental_use_pfor set to False.")
    if parallel_iterations is not None and parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
