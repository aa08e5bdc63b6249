"""Shape inference for the functional API: a layer called on KerasTensors runs on abstract values.

Keras 3 builds a functional model by running each layer's `call` on symbolic tensors (its TF backend: in a
scratch graph); tapejax runs it under `jax.eval_shape`, with Tensors wrapping JAX tracers as inside a
`tf.function` trace, so that no op computes anything and nothing is compiled. Variable reads see the
variables' values (traced stand-ins of float ones where constants are folded, so that no op on weights runs),
assignments (BatchNormalization's statistics) are dropped with the trace, and weights built
on the way are made concretely (`add_weight` lifts itself out of the trace). A call that needs values (a
Python `if` on a tensor, `.numpy()`, a `tf.Variable` made in `call` from a computed value, a size computed from
`tf.shape`) falls back to running on zeros.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import tapejax as tf
from tapejax._src.concrete_function import _Trace, _tracing
from tapejax._src.static_values import NotStatic
from tapejax._src.string_values import HostValueError
from tapejax._src.tensor import EagerTensor

# NotStatic: a size computed from a shape (`tf.shape(x)[0]` given to `tf.slice`), which an abstract run, that
# folds no constants, does not know. HostValueError: a string op (strings live on the host, never traced).
_NEEDS_VALUES = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                 jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError,
                 tf.errors.OperatorNotAllowedInGraphError, NotStatic, HostValueError)


def needs_values(error: Exception) -> bool:
    """Whether `error` says that a call used a traced tensor's value (then it is run on zeros instead)."""
    return isinstance(error, _NEEDS_VALUES) or (
        isinstance(error, AttributeError | TypeError) and "symbolic `tf.Tensor`" in str(error)) or (
        isinstance(error, ValueError) and "tf.Variable created inside a tf.function" in str(error))


def abstract_run(fn: Any, structure: Any, arrays: list[Any], is_symbol: Any = None,
                 fold_constants: bool = False) -> tuple[Any, list[Any]]:
    """Runs `fn` on `structure` with its KerasTensor leaves (those `is_symbol` picks, if given) replaced, in order,
    by tensors of `arrays`' shapes and dtypes (jax.ShapeDtypeStruct), without computing: returns the output
    structure's treedef and its leaves' ShapeDtypeStructs. With `fold_constants`, ops on constants alone (a size
    from `tf.shape` of a fully known shape) are computed, as in a tf.function trace."""
    is_symbol = is_symbol or _is_symbol
    holder: list[Any] = []

    def pure(anchor: Any, *values: Any) -> list[Any]:
        trace = _FoldingTrace(anchor) if fold_constants else _Trace([], (), np.uint32(0), first=True)
        with _tracing(trace, fold_constants=fold_constants):  # by default constants too are abstract: nothing runs
            leaves = iter(EagerTensor(v) for v in values)
            inputs = jax.tree_util.tree_map(lambda s: next(leaves) if is_symbol(s) else s, structure,
                                            is_leaf=lambda s: is_symbol(s) or isinstance(s, tf.Tensor | tf.Variable))
            outputs = fn(inputs)
        flat, treedef = jax.tree_util.tree_flatten(outputs, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))
        holder.append(treedef)
        return [x.value if isinstance(x, tf.Tensor) else x for x in flat]

    shapes = jax.eval_shape(pure, jax.ShapeDtypeStruct((), np.float32), *arrays)
    return holder[0], shapes


class _FoldingTrace(_Trace):
    """An abstract run that folds constants reads a float variable as a traced stand-in of its shape and dtype,
    as a tf.function trace reads its variables: folded with the variables' values, the ops on weights alone (an
    LSTM's recurrent matmul of its zero initial state) each ran eagerly, one XLA compile per op and shape
    (text_classification_rnn's fit build: 1.5 s a model). Integer and bool variables (counters, flags) keep their
    values, which Python code may read."""

    def __init__(self, anchor: Any):
        super().__init__([], (), np.uint32(0), first=True)
        self._anchor = anchor  # a traced scalar: what the stand-ins are made from

    def read(self, variable: Any) -> Any:
        uid = variable._uid
        if uid not in self.values:
            value = variable._value
            if jnp.issubdtype(getattr(value, "dtype", np.dtype(object)), jnp.inexact):  # bfloat16 too
                self.discovered[uid] = variable
                self.values[uid] = jax.lax.broadcast_in_dim(self._anchor.astype(value.dtype), value.shape, ())
        return super().read(variable)


def _is_symbol(x: Any) -> bool:
    return type(x).__name__ == "KerasTensor"
