"""tf.autodiff.ForwardAccumulator: forward-mode derivatives, lowered to `jax.jvp` of the recorded trace.

TF computes tangents op by op as the ops run; tapejax records the ops on a tape of its own (watching the primals)
and computes the JVP of the recorded slice when `jvp` is asked, through the same lowering as GradientTape. A
gradient taken inside the accumulator is one recorded op, so forward-over-reverse (Hessian-vector products)
needs no special case.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from . import tape as tape_lib, transforms
from .gradient_tape import UnconnectedGradients, _as_mode, _flatten, _unconnected
from .problem import Problem
from .tensor import EagerTensor, Tensor
from .variable import Variable


class ForwardAccumulator:
    """Computes Jacobian-vector products with forward mode (`tf.autodiff.ForwardAccumulator`).

    Args:
      primals: a Tensor or Variable, or a nest of them, to differentiate with respect to.
      tangents: the direction for each primal: a nest of the same structure, each of the primal's shape.

    >>> import tapejax as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
    ...     y = tf.reduce_sum(x ** 3)
    >>> print(acc.jvp(y))
    tf.Tensor(3.0, shape=(), dtype=float32)
    """

    def __init__(self, primals: Any, tangents: Any):
        self._primals, _ = _flatten(primals)
        flat_tangents = _flatten(tangents)[0]
        if len(flat_tangents) != len(self._primals):
            raise ValueError(f"ForwardAccumulator needs one tangent per primal: got {len(flat_tangents)} tangents "
                             f"for {len(self._primals)} primals.")
        self._tape = tape_lib.Tape(persistent=True, watch_accessed_variables=False)
        self._tangents = []
        for p, t in zip(self._primals, flat_tangents):
            if isinstance(p, Variable):
                self._tape.watch_variable(getattr(p, "_target", p))
            elif isinstance(p, Tensor):
                self._tape.tracked.add(p._tid)
            else:
                raise TypeError(f"ForwardAccumulator primals must be Tensors or Variables, got {type(p).__name__}; "
                                "wrap values with tf.constant.")
            tangent = t._value if isinstance(t, Tensor | Variable) else jnp.asarray(t, p._value.dtype)
            if tangent.shape != p._value.shape:
                raise ValueError(f"ForwardAccumulator: a tangent has shape {tuple(tangent.shape)} but its primal has "
                                 f"shape {tuple(p._value.shape)}; each tangent must have its primal's shape.")
            self._tangents.append(EagerTensor(tangent.astype(p._value.dtype)))

    def __enter__(self) -> ForwardAccumulator:
        tape_lib.push(self._tape)
        return self

    def __exit__(self, *exc: Any) -> None:
        tape_lib.pop(self._tape)

    def jvp(self, primals: Any, unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE
            ) -> Any:
        """The Jacobian-vector product of `primals` (a tensor or nest computed inside the accumulator) with the
        tangents: None (or zeros) where a target does not depend on the watched primals."""
        mode = _as_mode(unconnected_gradients)
        flat_targets, tree = _flatten(primals)
        problem = Problem(self._tape, flat_targets, self._primals, "jvp")
        results: list[Any] = [None] * len(flat_targets)
        if problem.is_connected:
            groups = problem.connected_groups
            tangents = [self._tangents[k] for k in problem.connected]
            outs = problem.run(("jvp", groups), transforms.jvp_builder(groups), tangents)
            for i, out in zip(problem.slice.connected_targets, outs):
                results[i] = out
        out = [_unconnected(t, r, mode) for t, r in zip(flat_targets, results)]
        return jax.tree_util.tree_unflatten(tree, out)
