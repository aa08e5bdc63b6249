"""Shape inference for the functional API: a layer called on KerasTensors runs on abstract values.

Keras 3 builds a functional model by running each layer's `call` on symbolic tensors (its TF backend: in a
scratch graph); tapejax runs it under `jax.eval_shape`, with Tensors wrapping JAX tracers as inside a
`tf.function` trace, so that no op computes anything and nothing is compiled. Variable reads see the
variables' values, assignments (BatchNormalization's statistics) are dropped with the trace, and weights built
on the way are made concretely (`add_weight` lifts itself out of the trace). A call that needs values (a
Python `if` on a tensor, `.numpy()`, a `tf.Variable` made in `call` from a computed value, a size computed from
`tf.shape`) falls back to running on zeros.
"""

from __future__ import annotations

from typing import Any

import jax
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

    def pure(*values: Any) -> list[Any]:
        trace = _Trace([], (), np.uint32(0), first=True)
        with _tracing(trace, fold_constants=fold_constants):  # by default constants too are abstract: nothing runs
            leaves = iter(EagerTensor(v) for v in values)
            inputs = jax.tree_util.tree_map(lambda s: next(leaves) if is_symbol(s) else s, structure,
                                            is_leaf=lambda s: is_symbol(s) or isinstance(s, tf.Tensor | tf.Variable))
            outputs = fn(inputs)
        flat, treedef = jax.tree_util.tree_flatten(outputs, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))
        holder.append(treedef)
        return [x.value if isinstance(x, tf.Tensor) else x for x in flat]

    shapes = jax.eval_shape(pure, *arrays)
    return holder[0], shapes


def _is_symbol(x: Any) -> bool:
    return type(x).__name__ == "KerasTensor"
