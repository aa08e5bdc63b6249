"""Shape-like arguments inside tf.function: every registry row whose static parameters take a shape, size, axis,
multiples, depth, count, bound, permutation or begin/size, given that argument as a tensor computed from
`tf.shape` of a traced input, must give what it gives eagerly with the Python value.

The rows come from the registry's declarations: a row's static parameters (`OpDef.static`) whose values in its
`op_specs.SPEC` case are integers or (nested) tuples of integers. A new row with such a parameter is covered by
adding its spec. Each case runs twice: traced for the inputs' shapes, and under an `input_signature` whose
dimensions are all None (tapejax then traces per size, where every shape is concrete again).

The public functions that are not rows (`tf.zeros`, `tf.range`, `tf.random.normal`, slicing, ...) are checked
with the patterns real programs use; a value that depends on a tensor's contents raises InvalidArgumentError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import op_specs as S
import pytest

import tapejax as tf
from tapejax._src.registry import REGISTRY
from tapejax._src.tensor import OPERATORS


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _int_like(value: Any) -> bool:
    """An integer, or a non-empty (nested) tuple or list of integers: a shape-like value."""
    if _is_int(value):
        return True
    return isinstance(value, tuple | list) and len(value) > 0 and all(_int_like(v) for v in value)


def shape_like(name: str, spec: S.Spec) -> dict[str, Any]:
    """The static parameters of row `name` whose spec values are shape-like."""
    return {k: v for k, v in spec.kwargs.items() if k in REGISTRY[name].static and _int_like(v)}


def _cases() -> list[Any]:
    cases = [(name, name, S.SPEC[name]) for name in REGISTRY if name in S.SPEC]
    cases += [case for case in S.EXTRA_CASES if case[1] in REGISTRY]
    return [pytest.param(case_id, name, spec, id=case_id) for case_id, name, spec in cases
            if shape_like(name, spec)]


CASES = _cases()

# Rows whose output shape depends on the values of a tensor argument (not on the shape-like one): those
# arguments are closed over as constants, so that the trace knows them.
READS_VALUES = {"math.bincount": "the output has max(arr) + 1 bins",
                "boolean_mask": "the output has one element or row per true element of mask"}


def test_the_rows_with_shape_arguments_are_found():
    """The derivation from the registry finds the rows the issue names (so it cannot shrink silently)."""
    names = {p.values[1] for p in CASES}
    assert {"reshape", "broadcast_to", "tile", "pad", "transpose", "expand_dims", "split", "unstack", "one_hot",
            "slice", "math.reduce_sum", "concat", "stack", "roll", "scatter_nd"} <= names


# -- encoding a value as a tensor computed from tf.shape -----------------------------------------------------


def _anchor_shapes(value: Any) -> list[tuple[int, ...]]:
    """The shapes of the inputs whose tf.shape gives `value`: an int's magnitude, a tuple of non-negative ints
    itself, anything else element by element."""
    if _is_int(value):
        return [(abs(int(value)),)]
    if all(_is_int(v) and v >= 0 for v in value):
        return [tuple(int(v) for v in value)]
    return [s for v in value for s in _anchor_shapes(v)]


def _from_shapes(value: Any, anchors: Any) -> Any:
    """`value` as a tensor computed from tf.shape of the next anchors: indexing, negation, tf.stack."""
    if _is_int(value):
        n = tf.shape(next(anchors))[0]
        return -n if value < 0 else n
    if all(_is_int(v) and v >= 0 for v in value):
        return tf.shape(next(anchors))
    return tf.stack([_from_shapes(v, anchors) for v in value])


def _call(name: str, spec: S.Spec, tensors: list[Any], kwargs: dict[str, Any]) -> Any:
    fn = OPERATORS[name]
    return fn(list(tensors), **kwargs) if spec.variadic else fn(*tensors, **kwargs)


def _assert_same(got: Any, expected: Any) -> None:
    got, expected = S.as_outputs(got), S.as_outputs(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and tuple(g.shape) == tuple(e.shape)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("signature", ["shapes", "none_dims"])
@pytest.mark.parametrize("case_id, name, spec", CASES)
def test_shape_argument_computed_by_tf_shape(case_id, name, spec, signature):
    args = S.sample(case_id, spec)
    shaped = shape_like(name, spec)
    plans = {k: _anchor_shapes(v) for k, v in shaped.items()}
    anchors = [np.zeros(s, np.float32) for k in shaped for s in plans[k]]
    closed = [tf.constant(a) for a in args] if name in READS_VALUES else None
    n = 0 if closed else len(args)

    def f(*inputs):
        rest = iter(inputs[n:])
        kwargs = dict(spec.kwargs)
        kwargs.update({k: _from_shapes(v, rest) for k, v in shaped.items()})
        return _call(name, spec, closed or list(inputs[:n]), kwargs)

    inputs = [*args[:n], *anchors]
    specs = None
    if signature == "none_dims":
        specs = [tf.TensorSpec([None] * np.ndim(a), tf.as_dtype(np.asarray(a).dtype)) for a in inputs]
    traced = tf.function(f, input_signature=specs)
    expected = _call(name, spec, [tf.constant(a) for a in args], dict(spec.kwargs))
    _assert_same(traced(*inputs), expected)
    assert traced.experimental_get_tracing_count() == 1
