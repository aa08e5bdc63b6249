"""tf.autodiff.ForwardAccumulator: forward-mode derivatives, lowered to `jax.jvp` of the recorded trace.

TF computes tangents op by op as the ops run; tapejax records the ops on a tape of its own (watching the primals)
and computes the JVP of the recorded slice when `jvp` is asked, through the same lowering as GradientTape. A
gradient taken inside the accumulator is one recorded op, so forward-over-reverse (Hessian-vector products)
needs no special case.

Because the JVP is computed late, three of TF's rules are kept by hand (docs/design.md, "Forward mode"):

- which tapes see the JVP: in TF a tangent is computed when its op runs, under the tapes then active, and only
  the tapes entered *before* the accumulator record that computation ("nesting, not creation order"). So `jvp`
  records its call on the tapes that were outside this accumulator while it recorded, even if they have been
  exited since, and never on the tapes entered inside it;
- a primal's JVP is its tangent, the very tensor given (TF looks it up): an outer accumulator or tape that
  watches the tangent sees it, and a watched variable's JVP is its tangent too;
- a tangent given as a tensor keeps its identity for the same reason.
"""

from __future__ import annotations

import weakref
from typing import Any

import jax

from .context import CONTEXT
from . import dtypes, tape as tape_lib, transforms
from .convert import to_array
from .gradient_tape import UnconnectedGradients, _as_mode, _flatten, _unconnected
from .problem import Problem
from .tensor import EagerTensor, Tensor
from .variable import Variable


class ForwardAccumulator:
    """Computes Jacobian-vector products with forward mode (`tf.autodiff.ForwardAccumulator`).

    Args:
      primals: a Tensor or Variable, or a nest of them, to differentiate with respect to.
      tangents: the direction for each primal: a nest of the same structure, each of the primal's shape and
        dtype (Python numbers are converted to the primal's dtype).

    Raises:
      ValueError: a primal is given twice, a tangent's shape or dtype is not its primal's, or the nests differ.
      TypeError: the nests differ only in their sequence types, or a primal is not a Tensor or Variable.

    >>> import tapejax as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
    ...     y = tf.reduce_sum(x ** 3)
    >>> print(acc.jvp(y))
    tf.Tensor(3.0, shape=(), dtype=float32)

    Differences from TensorFlow: a tangent whose shape is not its primal's raises ValueError here, where TF
    accepts it and fails (or broadcasts) later. An op TF has no gradient for gets JAX's JVP (TF raises
    LookupError), and `tf.sign(x)` a zero JVP (TF gives None: its gradient of Sign ignores the upstream one).
    """

    def __init__(self, primals: Any, tangents: Any):
        _check_same_structure(primals, tangents)
        self._primals, _ = _flatten(primals)
        flat_tangents = _flatten(tangents)[0]
        self._tape = tape_lib.Tape(persistent=True, watch_accessed_variables=False)
        self._tangent_of: dict[tuple[str, int], Tensor] = {}  # _key(primal) -> its tangent
        # The tapes outside this accumulator while it recorded (module docstring), in the order first seen; weakly,
        # so that a used non-persistent tape's trace is freed as TF frees it (DESIGN invariant 9).
        self._outer: list[weakref.ref[tape_lib.Tape]] = []
        self._recording = False
        for p, t in zip(self._primals, flat_tangents):
            if isinstance(p, Variable):
                self._tape.watch_variable(getattr(p, "_target", p))
            elif isinstance(p, Tensor):
                self._tape.tracked.add(p._tid)
            else:
                raise TypeError(f"ForwardAccumulator primals must be Tensors or Variables, got {type(p).__name__}; "
                                "wrap values with tf.constant.")
            key = _key(p)
            if key in self._tangent_of:
                raise ValueError(f"Tensor {p!r} was specified as a primal multiple times. This may indicate an "
                                 "error. If it was intended, please sum the corresponding tangents.")
            self._tangent_of[key] = _tangent(p, t)

    def __enter__(self) -> ForwardAccumulator:
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        for t in CONTEXT.tapes:
            if not any(t is o() for o in self._outer):
                self._outer.append(weakref.ref(t))
        tape_lib.push(self._tape)
        self._recording = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            tape_lib.pop(self._tape)
            self._recording = False

    def jvp(self, primals: Any, unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE
            ) -> Any:
        """The Jacobian-vector product of `primals` (a tensor or nest computed inside the accumulator) with the
        tangents: a watched primal's own tangent; None (or zeros, with `unconnected_gradients="zero"`) where a
        target was not computed from the primals while the accumulator recorded."""
        mode = _as_mode(unconnected_gradients)
        flat_targets, tree = _flatten(primals)
        results: list[Any] = [None] * len(flat_targets)
        computed: list[int] = []
        for i, t in enumerate(flat_targets):
            tangent = self._tangent_of.get(_key(t)) if isinstance(t, Tensor | Variable) else None
            if tangent is not None:
                results[i] = tangent
            else:
                computed.append(i)
        if computed:
            problem = Problem(self._tape, [flat_targets[i] for i in computed], self._primals, "jvp")
            if problem.is_connected:
                groups = problem.connected_groups
                tangents = [self._tangent_of[_key(self._primals[k])] for k in problem.connected]
                outs = problem.run(("jvp", groups), transforms.jvp_builder(groups), tangents,
                                   record_on=self._observers())
                for i, out in zip(problem.slice.connected_targets, outs):
                    results[computed[i]] = out
        out = [_unconnected(t, r, mode) for t, r in zip(flat_targets, results)]
        return jax.tree_util.tree_unflatten(tree, out)

    def _observers(self) -> list[tape_lib.Tape]:
        """The tapes that record this JVP: those outside the accumulator while it recorded, and any tape now
        capturing a traced branch or loop body (it must replay everything computed inside it)."""
        tapes = [t for t in (o() for o in self._outer) if t is not None]
        tapes += [t for t in CONTEXT.tapes if t.records_all and not any(t is o for o in tapes)]
        return tapes


def _key(value: Tensor | Variable) -> tuple[str, int]:
    """A primal's identity: its tensor id, or for a variable its uid (every read of it is then connected)."""
    if isinstance(value, Variable):
        return ("variable", getattr(value, "_target", value)._uid)
    return ("tensor", value._tid)


def _tangent(primal: Tensor | Variable, tangent: Any) -> Tensor:
    """The tangent as a tensor of the primal's dtype and shape; a tensor of the right dtype is kept as it is."""
    dtype = dtypes.from_numpy(primal._value.dtype)
    if isinstance(tangent, Tensor):
        to_array(tangent, dtype)  # TF's ValueError for a tensor of another dtype
        result = tangent
    else:
        result = EagerTensor(to_array(tangent, dtype))
    if tuple(result.shape) != tuple(primal.shape):
        raise ValueError(f"ForwardAccumulator: a tangent has shape {tuple(result.shape)} but its primal has shape "
                         f"{tuple(primal.shape)}; each tangent must have its primal's shape.")
    return result


def _check_same_structure(primals: Any, tangents: Any) -> None:
    """TF's `nest.assert_same_structure(primals, tangents)`: ValueError if the nests differ, TypeError if only
    their sequence types do (a list for a tuple)."""
    p_tree, t_tree = _structure(primals, True), _structure(tangents, True)
    if p_tree == t_tree:
        return
    message = (f"The two structures don't have the same nested structure: primals {primals!r} and tangents "
               f"{tangents!r}. ForwardAccumulator needs one tangent per primal, in the same nest.")
    if _structure(primals, False) == _structure(tangents, False):
        raise TypeError(message)
    raise ValueError(message)


def _structure(nest: Any, typed: bool) -> Any:
    """A nest's shape: lists, tuples and dicts are nodes (named by type if `typed`), anything else a leaf."""
    if isinstance(nest, list | tuple):
        kind = type(nest) if typed else "sequence"
        return (kind, tuple(_structure(x, typed) for x in nest))
    if isinstance(nest, dict):
        return (dict, tuple((k, _structure(nest[k], typed)) for k in sorted(nest, key=repr)))
    return None
