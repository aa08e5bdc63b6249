"""The same expressions in TensorFlow and tapejax: printed forms, dtypes and exception types must agree."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

# Each expression is evaluated with `tf` bound to each library; results are compared by repr (values, shapes,
# dtypes, printed forms) or, when TF raises, by exception type and message.
EXPRESSIONS = [
    "repr(tf.constant(6.0))",
    "repr(tf.constant(0.1))",
    "str(tf.constant(0.1))",
    "repr(tf.constant(1 + 2j))",
    "repr(tf.Variable(0.1))",
    "repr(tf.constant([6., 3.]))",
    "repr(tf.constant([[1., 2.], [3., 4.]]))",
    "repr(tf.constant(0.1, tf.float64))",
    "repr(tf.constant(np.float16(0.1)))",
    "str(tf.constant([0.1, 0.2]))",
    "repr(tf.Variable([[1., 2.], [3., 4.]]))",
    "repr(tf.Variable(1.).assign(0.5))",
    "str(tf.constant(6.0))",
    "tf.constant([6., 3.])",
    "str(tf.constant([[1., 2.], [3., 4.]]))",
    "tf.constant([[1, 2], [3, 4]])",
    "tf.constant(True)",
    "tf.constant(2**40).dtype",
    "tf.constant([1, 2.5]).dtype",
    "tf.constant(np.array([1., 2.])).dtype",
    "tf.constant(np.float64(1.5)).dtype",
    "tf.constant([1, 2], dtype=tf.float32)",
    "tf.constant(1.5, dtype=tf.int32)",
    "tf.constant(1.) * tf.constant(2)",
    "tf.constant(1.) + tf.constant(1., tf.float64)",
    "tf.constant(1) / tf.constant(2)",
    "tf.constant(7) // 2",
    "tf.constant(-7) % 3",
    "tf.constant(-7.5) % 2.",
    "tf.constant(2.) ** 2",
    "tf.constant(1.) + np.float64(1.)",
    "tf.constant(1.) + np.array(1.)",
    "2 * tf.constant([1., 2.])",
    "np.float32(2) - tf.constant([1., 2.])",
    "tf.constant([[1., 2.]]) @ tf.constant([[1.], [2.]])",
    "abs(tf.constant(-1))",
    "-tf.constant(2)",
    "~tf.constant(3)",
    "tf.constant(True) & tf.constant(False)",
    "tf.constant([True, False]) | tf.constant([False, False])",
    "tf.constant(3.) > 2",
    "tf.constant([1., 2.]) == tf.constant([1., 2., 3.])",
    "tf.constant([1., 2.]) == None",
    "tf.constant([1., 2.]) != None",
    "tf.constant(1.) == 1",
    "tf.constant([1., 2.])[::-1]",
    "tf.constant([[1., 2.]])[..., None]",
    "tf.constant([[1., 2.], [3., 4.]])[1]",
    "tf.constant([[1., 2.], [3., 4.]])[:, -1]",
    "tf.constant([[1., 2.], [3., 4.]])[tf.newaxis, 1:, ::2]",
    "tf.constant([1., 2.])[5]",
    "tf.constant([1., 2.]).ndim",
    "tf.zeros([2, 3]).shape",
    "str(tf.zeros([2, 3]).shape)",
    "tf.zeros([2, 3]).shape[1]",
    "tf.zeros([2, 3]).shape[1:]",
    "tf.zeros([2, 3]).shape == (2, 3)",
    "tf.zeros([2, 3]).shape.as_list()",
    "tf.zeros([2, 3]).shape.rank",
    "tf.TensorShape([None, 3])",
    "str(tf.TensorShape([None, 3]))",
    "str(tf.TensorShape([3]))",
    "str(tf.TensorShape([]))",
    "tf.TensorShape(None)",
    "len(tf.constant(1.))",
    "iter(tf.constant(1.))",
    "bool(tf.constant([1., 2.]))",
    "bool(tf.constant(0.))",
    "float(tf.constant([1.]))",
    "int(tf.constant(2.7))",
    "len(tf.zeros([4, 2]))",
    "list(tf.constant([1., 2.]))",
    "hash(tf.constant(1.))",
    "tf.constant(1.).numpy()",
    "type(tf.constant(1.).numpy())",
    "tf.constant([1, 2]).numpy()",
    "type(tf.constant(1.)).__name__",
    "isinstance(tf.constant(1.), tf.Tensor)",
    "tf.Variable(2.0)",
    "str(tf.Variable([1., 2.]))",
    "type(tf.Variable(2.0)).__name__",
    "isinstance(tf.Variable(2.0), tf.Variable)",
    "tf.Variable(1., name='w').name",
    "tf.Variable(1.).assign(2)",
    "tf.Variable(1.).assign([1., 2.])",
    "tf.Variable(1.).assign(tf.constant(1., tf.float64))",
    "tf.Variable([1., 2.]).assign_add([1., 1.])",
    "tf.Variable([1., 2.]).assign_sub([1., 1.])",
    "tf.Variable(1.).assign(2., read_value=False)",
    "hash(tf.Variable(1.))",
    "tf.Variable(2.0) * 3",
    "tf.Variable(1) + 1",
    "tf.identity(tf.Variable(2.0))",
    "tf.Variable(2.0).read_value()",
    "tf.Variable([1., 2.]).shape",
    "tf.Variable(1., trainable=False).trainable",
    "tf.Variable(np.ones(2)).dtype",
    "tf.Variable(1, dtype=tf.float64)",
    "tf.float32",
    "tf.float32 == 'float32'",
    "tf.float32 == np.float32",
    "tf.float32.is_floating, tf.int32.is_integer, tf.complex64.is_complex, tf.bool.is_bool",
    "tf.float64.as_numpy_dtype",
    "tf.as_dtype('int64')",
    "tf.as_dtype(np.float16).name",
    "tf.bfloat16.is_floating",
    "tf.range(5)",
    "tf.range(1., 3.)",
    "tf.range(1, 10, 3)",
    "tf.linspace(0., 1., 3)",
    "tf.eye(2)",
    "tf.zeros(2)",
    "tf.ones([2, 1], dtype=tf.int32)",
    "tf.zeros_like(tf.constant([1, 2]))",
    "tf.ones_like(tf.constant([1., 2.]), dtype=tf.float64)",
    "tf.fill([2, 2], 3.)",
    "tf.cast(tf.constant(2.7), tf.int32)",
    "tf.cast(tf.constant([1, 2]), tf.float32)",
    "tf.convert_to_tensor([1, 2], dtype_hint=tf.float32)",
    "tf.convert_to_tensor([tf.constant(1.), tf.constant(2.)])",
    "tf.reduce_sum(tf.constant([1, 2]))",
    "tf.reduce_mean(tf.constant([1, 2]))",
    "tf.reduce_mean(tf.constant([[1., 2.], [3., 4.]]), axis=0)",
    "tf.reduce_max(tf.constant([[1., 2.], [3., 4.]]), axis=1, keepdims=True)",
    "tf.reduce_logsumexp(tf.constant([1., 2.]))",
    "tf.shape(tf.zeros([2, 3]))",
    "tf.size(tf.zeros([2, 3]))",
    "tf.rank(tf.zeros([2, 3]))",
    "tf.stack([tf.constant([1., 2.]), tf.constant([3., 4.])], axis=1)",
    "tf.concat([tf.constant([1., 2.]), tf.constant([3.])], 0)",
    "tf.unstack(tf.constant([[1., 2.], [3., 4.]]))",
    "tf.split(tf.constant([1., 2., 3., 4.]), 2)",
    "tf.split(tf.constant([1., 2., 3., 4.]), [1, -1])",
    "tf.reshape(tf.range(6), [2, -1])",
    "tf.transpose(tf.reshape(tf.range(6), [2, 3]))",
    "tf.pad(tf.constant([[1., 2.]]), [[1, 0], [0, 1]], constant_values=-1.)",
    "tf.tile(tf.constant([1, 2]), [2])",
    "tf.squeeze(tf.zeros([1, 2, 1]))",
    "tf.expand_dims(tf.constant([1, 2]), 0)",
    "tf.broadcast_to(tf.constant([1, 2]), [2, 2])",
    "tf.gather(tf.constant([1., 2., 3.]), [2, 0])",
    "tf.where(tf.constant([True, False]), tf.constant([1., 2.]), tf.constant([3., 4.]))",
    "tf.where(tf.constant([True, False, True]))",
    "tf.einsum('ij,jk->ik', tf.ones([2, 3]), tf.ones([3, 2]))",
    "tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]), transpose_b=True)",
    "tf.linalg.solve(tf.eye(2) * 2., tf.ones([2, 1]))",
    "tf.linalg.inv(tf.eye(2) * 2.)",
    "tf.norm(tf.constant([3., 4.]))",
    "tf.clip_by_value(tf.constant([-1., 0.5, 2.]), 0., 1.)",
    "tf.clip_by_norm(tf.constant([3., 4.]), 1.)",
    "tf.maximum(tf.constant([1., 5.]), 2.)",
    "tf.math.argmax(tf.constant([1., 5., 2.]))",
    "tf.math.floor(tf.constant([1.5, -1.5]))",
    "tf.math.round(tf.constant([0.5, 1.5, 2.5]))",
    "tf.math.sign(tf.constant([-2., 0., 3.]))",
    "tf.math.is_nan(tf.constant([1., np.nan]))",
    "tf.nn.softmax(tf.constant([1., 2., 3.]))",
    "tf.nn.relu6(tf.constant([-1., 3., 7.]))",
    "tf.math.add_n([tf.constant(1.), tf.constant(2.)])",
    "tf.random.normal([2, 3]).shape",
    "tf.random.uniform([2], maxval=5, dtype=tf.int32).dtype",
    "tf.is_tensor(tf.constant(1.)), tf.is_tensor(tf.Variable(1.)), tf.is_tensor(1.)",
    "tf.UnconnectedGradients.ZERO",
    "tf.UnconnectedGradients('zero')",
]


def _evaluate(tf, expression):
    try:
        return "ok", eval(expression, {"tf": tf, "np": np})
    except Exception as e:  # noqa: BLE001 - the exception itself is the result being compared
        return type(e).__name__, str(e)


def _is_computed_float(value) -> bool:
    """A float tensor whose last bits depend on the math library (exp, log): compared by value, not by repr."""
    dtype = getattr(value, "dtype", None)
    return hasattr(value, "numpy") and dtype is not None and (dtype.is_floating or dtype.is_complex)


def _normalise(kind, text):
    """TF's eager error messages carry a device-specific prefix and node names that tapejax has no use for."""
    if kind == "ok":
        return text.replace("<dtype: '", "tf.").replace("'>", "")
    text = text.split("}} ")[-1]
    return text.split(" [Op:")[0].strip()


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_same_result_as_tensorflow(expression):
    expected = _evaluate(tf_real, expression)
    got = _evaluate(tapejax, expression)
    assert got[0] == expected[0], f"{expression}: tapejax {got}, TensorFlow {expected}"
    if got[0] == "ok" and _is_computed_float(expected[1]):
        assert got[1].dtype.name == expected[1].dtype.name
        assert got[1].shape == tuple(expected[1].shape)
        np.testing.assert_allclose(got[1].numpy(), expected[1].numpy(), rtol=2e-6)
        return
    got_text = repr(got[1]) if got[0] == "ok" else got[1]
    expected_text = repr(expected[1]) if expected[0] == "ok" else expected[1]
    assert _normalise(got[0], got_text) == _normalise(expected[0], expected_text), (
        f"{expression}: tapejax {got_text!r}, TensorFlow {expected_text!r}")
