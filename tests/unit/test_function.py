"""tf.function: a compiled step computes what the same Python step computes eagerly, and follows TF's rules.

The oracle of every value is the same step run eagerly by tapejax (or JAX written directly); the rules (when a
trace is reused, which errors are raised, what happens to variables and Python side effects) are TensorFlow's,
checked against real TensorFlow in tests/compat/test_function_vs_tf.py.
"""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def close(got, expected, rtol=1e-5, atol=1e-6):
    """Tensors (or nests of them) equal in dtype, shape and value."""
    got_leaves = jax.tree_util.tree_leaves(got, is_leaf=lambda x: hasattr(x, "numpy"))
    exp_leaves = jax.tree_util.tree_leaves(expected, is_leaf=lambda x: hasattr(x, "numpy"))
    assert len(got_leaves) == len(exp_leaves)
    for g, e in zip(got_leaves, exp_leaves):
        g = g.numpy() if hasattr(g, "numpy") else np.asarray(g)
        e = e.numpy() if hasattr(e, "numpy") else np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g, e)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def _step(x, y):
    return tf.reduce_sum(tf.sin(x) * y) + tf.reduce_mean(x * x)


X = np.array([0.3, -1.2, 2.0], np.float32)
Y = np.array([1.5, 0.25, -0.5], np.float32)


# ---------------------------------------------------------------------------------------------------
# ways of making a tf.function
# ---------------------------------------------------------------------------------------------------


def test_decorator_without_arguments():
    @tf.function
    def f(x, y):
        return _step(x, y)

    assert isinstance(f, tf.Function)
    close(f(tf.constant(X), tf.constant(Y)), _step(tf.constant(X), tf.constant(Y)))


def test_decorator_with_arguments():
    @tf.function(jit_compile=True, reduce_retracing=False, autograph=True)
    def f(x, y):
        """Docstring kept."""
        return _step(x, y)

    assert isinstance(f, tf.Function)
    assert f.__name__ == "f" and f.__doc__ == "Docstring kept."
    close(f(tf.constant(X), tf.constant(Y)), _step(tf.constant(X), tf.constant(Y)))


def test_decorator_with_empty_call():
    @tf.function()
    def f(x, y):
        return _step(x, y)

    close(f(tf.constant(X), tf.constant(Y)), _step(tf.constant(X), tf.constant(Y)))


def test_called_on_a_function_and_on_a_lambda():
    f = tf.function(_step)
    assert f.python_function is _step
    close(f(tf.constant(X), tf.constant(Y)), _step(tf.constant(X), tf.constant(Y)))
    g = tf.function(lambda x: x * 2.0 + 1.0)
    close(g(tf.constant(X)), tf.constant(X) * 2.0 + 1.0)


def test_outputs_keep_their_structure_and_python_numbers_become_tensors():
    @tf.function
    def f(x):
        return {"sum": tf.reduce_sum(x), "parts": (x * 2.0, [x + 1.0])}, None, 3.0

    out, none, three = f(tf.constant(X))
    assert none is None
    assert isinstance(three, tf.Tensor) and three.dtype == tf.float32 and float(three) == 3.0
    assert set(out) == {"sum", "parts"} and isinstance(out["parts"], tuple) and isinstance(out["parts"][1], list)
    x = tf.constant(X)
    close(out, {"sum": tf.reduce_sum(x), "parts": (x * 2.0, [x + 1.0])})


# ---------------------------------------------------------------------------------------------------
# methods
# ---------------------------------------------------------------------------------------------------


class Scaler:
    def __init__(self, k):
        self.k = k

    @tf.function
    def apply(self, x):
        return x * self.k


def test_methods_have_one_trace_set_per_instance():
    a, b = Scaler(2.0), Scaler(-3.0)
    x = tf.constant(X)
    close(a.apply(x), x * 2.0)
    close(b.apply(x), x * -3.0)  # not a's trace with a's constant
    close(a.apply(tf.constant(Y)), tf.constant(Y) * 2.0)
    assert a.apply is a.apply
    assert a.apply.experimental_get_tracing_count() == 1
    assert b.apply.experimental_get_tracing_count() == 1
    assert Scaler.apply.experimental_get_tracing_count() == 0


class Dense(tf.Module):
    def __init__(self, w):
        super().__init__()
        self.w = tf.Variable(w)

    @tf.function
    def __call__(self, x):
        return tf.linalg.matvec(self.w, x)


def test_module_methods_read_their_own_variables():
    w1 = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = Dense(w1), Dense(-w1)
    x = tf.constant(X)
    close(a(x), tf.linalg.matvec(tf.constant(w1), x))
    close(b(x), tf.linalg.matvec(tf.constant(-w1), x))
    a.w.assign(w1 * 0.5)  # a new value, not a new trace
    close(a(x), tf.linalg.matvec(tf.constant(w1 * 0.5), x))
    assert a.__call__.experimental_get_tracing_count() == 1


# ---------------------------------------------------------------------------------------------------
# retracing
# ---------------------------------------------------------------------------------------------------


def test_tracing_count_starts_at_zero():
    f = tf.function(lambda x: x + 1.0)
    assert f.experimental_get_tracing_count() == 0


def test_new_tensor_values_do_not_retrace():
    f = tf.function(_step)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x, y = rng.normal(size=3).astype(np.float32), rng.normal(size=3).astype(np.float32)
        close(f(tf.constant(x), tf.constant(y)), _step(tf.constant(x), tf.constant(y)))
    assert f.experimental_get_tracing_count() == 1


def test_new_shapes_and_dtypes_retrace():
    f = tf.function(lambda x: tf.reduce_sum(x * x))
    f(tf.constant(X))
    assert f.experimental_get_tracing_count() == 1
    close(f(tf.constant(X[:2])), tf.reduce_sum(tf.constant(X[:2]) ** 2))
    assert f.experimental_get_tracing_count() == 2
    x64 = tf.constant(X.astype(np.float64))
    close(f(x64), tf.reduce_sum(x64 * x64), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 3
    f(tf.constant(Y))  # the first signature again
    f(tf.constant(Y.astype(np.float64)))
    assert f.experimental_get_tracing_count() == 3


def test_new_python_values_retrace_equal_ones_do_not():
    calls = []

    @tf.function
    def f(x, power, mode="sum"):
        calls.append((power, mode))
        y = x ** power
        return tf.reduce_sum(y) if mode == "sum" else tf.reduce_mean(y)

    x = tf.constant(X)
    close(f(x, 2), tf.reduce_sum(x ** 2))
    close(f(tf.constant(Y), 2), tf.reduce_sum(tf.constant(Y) ** 2))
    assert f.experimental_get_tracing_count() == 1
    close(f(x, 3), tf.reduce_sum(x ** 3))
    close(f(x, 3, mode="mean"), tf.reduce_mean(x ** 3))
    close(f(x, 3, mode="mean"), tf.reduce_mean(x ** 3))
    assert f.experimental_get_tracing_count() == 3
    assert calls == [(2, "sum"), (3, "sum"), (3, "mean")]


def test_python_float_and_tensor_are_different_signatures():
    f = tf.function(lambda x: x * 3.0)
    close(f(tf.constant(2.0)), tf.constant(6.0))
    close(f(2.0), tf.constant(6.0))
    assert f.experimental_get_tracing_count() == 2
    close(f(5.0), tf.constant(15.0))  # a new Python value: a new trace
    assert f.experimental_get_tracing_count() == 3


def test_numpy_arguments_count_as_tensors():
    f = tf.function(lambda x: tf.reduce_sum(x * 2.0))
    close(f(tf.constant(X)), tf.constant(float(np.sum(X * 2.0)), tf.float32))
    close(f(X), tf.reduce_sum(tf.constant(X) * 2.0))
    close(f(Y), tf.reduce_sum(tf.constant(Y) * 2.0))  # new values of the same shape and dtype: no retrace
    assert f.experimental_get_tracing_count() == 1
    s = tf.function(lambda x: x + 1.0)
    s(tf.constant(1.0))
    close(s(np.float32(4.0)), tf.constant(5.0))
    close(s(np.array(6.0, np.float32)), tf.constant(7.0))
    assert s.experimental_get_tracing_count() == 1


# ---------------------------------------------------------------------------------------------------
# input_signature
# ---------------------------------------------------------------------------------------------------


def _row_sums(x):
    return tf.reduce_sum(tf.sin(x), axis=1) * tf.cast(tf.shape(x)[0], tf.float32)


def test_input_signature_with_none_dimensions_traces_once():
    spec = tf.TensorSpec([None, 3], tf.float32)
    f = tf.function(_row_sums, input_signature=[spec])
    assert f.input_signature == (spec,)
    rng = np.random.default_rng(1)
    for n in (1, 4, 7, 2):
        x = rng.normal(size=(n, 3)).astype(np.float32)
        close(f(tf.constant(x)), _row_sums(tf.constant(x)))
    close(f(x * 2.0), _row_sums(tf.constant(x * 2.0)))  # numpy input, converted by the signature
    assert f.experimental_get_tracing_count() == 1


def test_input_signature_static_shape_is_the_spec():
    shapes = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([], tf.int32)])
    def f(x, k):
        shapes.append((tuple(x.shape), tuple(k.shape)))
        return x * tf.cast(k, tf.float32)

    close(f(tf.ones([2, 3]), tf.constant(3)), tf.ones([2, 3]) * 3.0)
    close(f(tf.ones([5, 3]), tf.constant(2)), tf.ones([5, 3]) * 2.0)
    assert shapes == [((None, 3), ())]


@pytest.mark.parametrize("bad", [
    pytest.param(lambda: tf.ones([2, 4]), id="wrong-dimension"),
    pytest.param(lambda: tf.ones([3]), id="wrong-rank"),
    pytest.param(lambda: tf.ones([2, 3], tf.float64), id="wrong-dtype"),
    pytest.param(lambda: tf.ones([2, 3], tf.int32), id="int-for-float"),
])
def test_input_signature_rejects_incompatible_arguments(bad):
    f = tf.function(_row_sums, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    f(tf.ones([2, 3]))
    with pytest.raises(TypeError):
        f(bad())
    assert f.experimental_get_tracing_count() == 1


def test_input_signature_rejects_a_wrong_number_of_arguments():
    f = tf.function(_row_sums, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    with pytest.raises(TypeError):
        f(tf.ones([2, 3]), tf.ones([2, 3]))


def test_input_signature_fully_defined_shape():
    f = tf.function(lambda x: x * x, input_signature=[tf.TensorSpec([2], tf.float64)])
    x = tf.constant([1.5, -2.0], tf.float64)
    close(f(x), x * x)
    with pytest.raises(TypeError):
        f(tf.constant([1.0, 2.0, 3.0], tf.float64))


def test_input_signature_converts_a_python_list():
    f = tf.function(lambda x: tf.reduce_sum(x, axis=0), input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    close(f([[1.0, 2.0], [3.0, 4.0]]), tf.constant([4.0, 6.0]))


def test_input_signature_step_needing_a_concrete_size_traces_once():
    f = tf.function(lambda x: tf.reshape(x, [2, -1]), input_signature=[tf.TensorSpec([None], tf.float32)])
    close(f(tf.range(4.0)), tf.reshape(tf.range(4.0), [2, 2]))
    close(f(tf.range(6.0)), tf.reshape(tf.range(6.0), [2, 3]))
    close(f(tf.range(4.0) * 2.0), tf.reshape(tf.range(4.0) * 2.0, [2, 2]))
    assert f.experimental_get_tracing_count() == 1  # one input_signature, one trace, as TF counts it


def test_input_signature_arguments_may_be_passed_by_keyword():
    f = tf.function(lambda x: x * 2.0, input_signature=[tf.TensorSpec([None], tf.float32)])
    close(f(x=tf.ones([2])), tf.constant([2.0, 2.0]))
    close(f(tf.ones([3])), tf.constant([2.0, 2.0, 2.0]))
    assert f.experimental_get_tracing_count() == 1


# ---------------------------------------------------------------------------------------------------
# binding arguments to the Python signature
# ---------------------------------------------------------------------------------------------------


def test_keyword_positional_and_default_arguments_are_one_call():
    @tf.function
    def f(x, scale=1.0, *rest, **options):
        return x * scale

    x = tf.constant(3.0)
    close([f(x, scale=2.0), f(x, 2.0), f(x=x, scale=2.0)], [x * 2.0] * 3)
    assert f.experimental_get_tracing_count() == 1
    close([f(x), f(x, 1.0), f(x, scale=1.0)], [x] * 3)  # the default filled in: one more key
    assert f.experimental_get_tracing_count() == 2
    f(x, 1.0, 5)
    f(x, 1.0, mode="other")
    assert f.experimental_get_tracing_count() == 4  # extra positional and keyword arguments are keys too


def test_arguments_that_do_not_bind_raise_type_error():
    f = tf.function(lambda x, scale=1.0: x * scale)
    with pytest.raises(TypeError, match="multiple values for argument 'scale'"):
        f(tf.constant(1.0), 2.0, scale=3.0)
    with pytest.raises(TypeError, match="Binding inputs to tf.function failed"):
        f()
    assert f.experimental_get_tracing_count() == 0


# ---------------------------------------------------------------------------------------------------
# Python side effects and tf.print
# ---------------------------------------------------------------------------------------------------


def test_python_side_effects_run_once_per_trace_tf_print_on_every_call():
    log, stream = [], io.StringIO()

    @tf.function
    def f(x):
        log.append("traced")
        tf.print("x =", x, output_stream=stream)
        return x + 1

    f(tf.constant(1))
    f(tf.constant(2))
    f(tf.constant(3))
    assert log == ["traced"]
    assert stream.getvalue() == "x = 1\nx = 2\nx = 3\n"
    f(tf.constant([4, 5]))  # a new shape: a new trace
    assert log == ["traced", "traced"]
    assert stream.getvalue().splitlines()[-1] == "x = [4 5]"


def test_tf_print_goes_to_stderr_by_default(capsys):
    @tf.function
    def f(x):
        tf.print("value:", x * 2)
        return x

    f(tf.constant(3))
    f(tf.constant(4))
    captured = capsys.readouterr()
    assert captured.err == "value: 6\nvalue: 8\n"
    assert captured.out == ""


def test_tf_print_keeps_program_order_and_summarizes():
    stream = io.StringIO()

    @tf.function
    def f(x):
        tf.print("first", output_stream=stream)
        y = x * 2
        tf.print("second", y, summarize=2, output_stream=stream)
        return y

    f(tf.range(10))
    assert stream.getvalue() == "first\nsecond [0 2 ... 16 18]\n"


def test_tf_print_eagerly_prints_the_same_text():
    stream_fn, stream_eager = io.StringIO(), io.StringIO()

    def show(x, stream):
        tf.print(x, {"sq": x * x}, output_stream=stream)
        return x

    tf.function(show)(tf.constant([[0.5, 1.0 / 3.0]]), stream_fn)
    show(tf.constant([[0.5, 1.0 / 3.0]]), stream_eager)
    assert stream_fn.getvalue() == stream_eager.getvalue()


def _printed(*tensors):
    stream = io.StringIO()
    tf.print(*tensors, summarize=-1, output_stream=stream)
    return stream.getvalue()


def test_tf_print_writes_the_shortest_float_text_that_reads_back():
    """TF's rule: 6 significant digits if they give the same float32 back, else 9 (15 / 17 for float64)."""
    values = np.array([0.1, 0.2, 3e-8, 1 / 3, 123456789.0, 1e-5, 0.000123456789, 1e16], np.float32)
    texts = _printed(tf.constant(values)).strip("[]\n").split(" ")
    for value, text in zip(values, texts):
        assert np.float32(text) == value  # reads back
        assert text in (f"{value:.6g}", f"{value:.9g}") and len(text) <= len(f"{value:.9g}")
        assert (np.float32(f"{value:.6g}") == value) == (text == f"{value:.6g}")
    assert texts[:3] == ["0.1", "0.2", "3e-08"] and texts[3] == f"{np.float32(1 / 3):.9g}"
    for value, digits in ((0.1, 15), (1 / 3, 17), (0.1 * 3, 17)):
        assert _printed(tf.constant(value, tf.float64)) == f"{value:.{digits}g}\n"


def test_tf_print_flushes_subnormals_and_shows_complex_as_question_marks():
    # TF 2.21 prints float32 1e-45 (a subnormal) as 0, keeping the sign, and has no text for complex numbers
    assert _printed(tf.constant([1e-45, -1e-45])) == "[0 -0]\n"
    assert _printed(tf.constant([1 + 2j, 0.5 + 0j]), tf.constant(1j)) == "[? ?] ?\n"


def test_tf_print_of_float16_reads_back_as_float32():
    half = tf.constant([0.1, 0.5], tf.float16)
    texts = _printed(half).strip("[]\n").split(" ")
    assert [np.float32(t) for t in texts] == [np.float32(v) for v in half.numpy()]


# ---------------------------------------------------------------------------------------------------
# variables
# ---------------------------------------------------------------------------------------------------


def _twin_steps():
    """The same stateful step on two sets of variables: one run eagerly (the oracle), one compiled."""

    def make():
        v = tf.Variable(1.0)
        w = tf.Variable([1.0, -2.0])
        counter = tf.Variable(0, trainable=False)

        def step(x):
            v.assign_add(x)
            w.assign(w * v)  # reads the value just assigned
            counter.assign_add(1)
            return v * 2.0, tf.reduce_sum(w), counter.read_value()

        return (v, w, counter), step

    return make(), make()


def test_variables_read_and_assigned_inside_are_written_back():
    (eager_vars, eager_step), (vars_, step) = _twin_steps()
    compiled = tf.function(step)
    for x in (0.5, -1.25, 2.0):
        close(compiled(tf.constant(x)), eager_step(tf.constant(x)))
        for got, expected in zip(vars_, eager_vars):
            close(got.read_value(), expected.read_value())
    assert compiled.experimental_get_tracing_count() == 1


_HELPER_VARIABLE = tf.Variable(2.0)


def _scaled_by_helper_variable(x):
    return x * _HELPER_VARIABLE


def test_a_variable_read_through_a_helper_does_not_retrace():
    log = []

    @tf.function
    def f(x):
        log.append("traced")
        return _scaled_by_helper_variable(x) + 1.0

    close(f(tf.constant(3.0)), tf.constant(7.0))
    assert f.experimental_get_tracing_count() == 1
    assert log == ["traced"]


def test_variable_passed_as_argument():
    @tf.function
    def bump(var, x):
        var.assign_add(x)
        return var * 1.0

    a, b = tf.Variable(1.0), tf.Variable(10.0)
    close(bump(a, tf.constant(2.0)), tf.constant(3.0))
    close(bump(b, tf.constant(2.0)), tf.constant(12.0))
    close(bump(a, tf.constant(2.0)), tf.constant(5.0))
    assert (a.numpy(), b.numpy()) == (5.0, 12.0)


def test_value_assigned_outside_between_calls_is_seen():
    v = tf.Variable(2.0)
    f = tf.function(lambda x: v * x)
    close(f(tf.constant(3.0)), tf.constant(6.0))
    v.assign(-1.0)
    close(f(tf.constant(3.0)), tf.constant(-3.0))
    assert f.experimental_get_tracing_count() == 1


def test_an_exception_in_the_step_leaves_every_variable_unchanged():
    v = tf.Variable(1.0)
    w = tf.Variable([1.0, 2.0])

    @tf.function
    def step(x, fail):
        v.assign(100.0)
        w.assign_add(x)
        if fail:
            raise ValueError("boom")
        return v + 1.0

    with pytest.raises(ValueError, match="boom"):
        step(tf.constant([1.0, 1.0]), True)  # the first trace fails
    assert v.numpy() == 1.0 and w.numpy().tolist() == [1.0, 2.0]
    close(step(tf.constant([1.0, 1.0]), False), tf.constant(101.0))
    assert v.numpy() == 100.0 and w.numpy().tolist() == [2.0, 3.0]
    v.assign(5.0)
    with pytest.raises(ValueError, match="boom"):
        step(tf.constant([1.0, 1.0]), True)  # a later trace fails
    assert v.numpy() == 5.0 and w.numpy().tolist() == [2.0, 3.0]


def test_creating_a_variable_on_a_later_trace_raises_value_error():
    @tf.function
    def f(x, make):
        if make:
            tf.Variable(1.0)
        return x * 2.0

    close(f(tf.constant(1.0), False), tf.constant(2.0))
    with pytest.raises(ValueError):
        f(tf.constant(1.0), True)


def test_creating_a_variable_on_every_call_raises_value_error():
    @tf.function
    def f(x):
        return tf.Variable(1.0) + x  # TF: "only supports singleton tf.Variables created on the first call"

    with pytest.raises(ValueError):
        f(tf.constant(1.0))


class Lazy(tf.Module):
    """Builds its variable on the first call, as Keras layers do."""

    def __init__(self):
        super().__init__()
        self.w = None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.ones_like(x) * 2.0)
        self.w.assign_add(x)
        return tf.reduce_sum(self.w * x)


def test_a_variable_created_on_the_first_call_works():
    m = Lazy()
    x = np.array([1.0, 2.0], np.float32)
    close(m(tf.constant(x)), tf.constant(float(np.sum((2.0 + x) * x)), tf.float32))
    assert m.w.numpy().tolist() == [3.0, 4.0]
    close(m(tf.constant(x)), tf.constant(float(np.sum((2.0 + 2 * x) * x)), tf.float32))
    assert m.w.numpy().tolist() == [4.0, 6.0]
    assert m.__call__.experimental_get_tracing_count() == 2  # as TF: the creating trace, then the real one
    with tf.GradientTape() as tape:
        y = m(tf.constant(x))
    close(tape.gradient(y, m.w), tf.constant(x))



def test_a_variable_created_in_init_scope_by_the_first_trace_counts_both_traces_as_tf():
    # Keras optimizers build their slots so (ddpg's update step); TF 2.21 traces twice and counts 2 (its
    # count, checked in tests/compat/test_function_vs_tf.py::_optimizer_slots_created_in_the_step).
    slots = []
    log = []

    @tf.function
    def step(x):
        log.append("traced")
        if not slots:
            with tf.init_scope():
                slots.append(tf.Variable(tf.zeros([2])))
        slots[0].assign_add(x)
        return slots[0] * 2.0

    close(step(tf.constant([1.0, 2.0])), tf.constant([2.0, 4.0]))
    close(step(tf.constant([1.0, 2.0])), tf.constant([4.0, 8.0]))
    assert step.experimental_get_tracing_count() == 2
    assert log == ["traced", "traced"]


# ---------------------------------------------------------------------------------------------------
# run_functions_eagerly and errors on traced tensors
# ---------------------------------------------------------------------------------------------------


def test_run_functions_eagerly_runs_python_directly():
    log = []

    @tf.function
    def f(x):
        log.append(float(x.numpy()))  # .numpy() works: x is an eager tensor
        return x * 2.0

    try:
        tf.config.run_functions_eagerly(True)
        assert tf.config.functions_run_eagerly()
        close(f(tf.constant(1.0)), tf.constant(2.0))
        close(f(tf.constant(2.0)), tf.constant(4.0))
        assert log == [1.0, 2.0]
        assert f.experimental_get_tracing_count() == 0
    finally:
        tf.config.run_functions_eagerly(False)
    assert not tf.config.functions_run_eagerly()
    with pytest.raises(AttributeError):
        f(tf.constant(3.0))  # compiled again: the tensor is symbolic


def test_a_traced_tensor_as_a_python_bool_raises():
    @tf.function
    def f(x):
        return bool(x > 0)  # AutoGraph converts `if` statements, never an explicit bool()

    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="tf.cond") as info:
        f(tf.constant(1.0))
    assert isinstance(info.value, TypeError)


def test_a_traced_tensor_in_a_python_if_raises_without_autograph():
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="tf.cond"):
        f(tf.constant(1.0))


def test_a_traced_tensor_in_a_python_while_raises_without_autograph():
    @tf.function(autograph=False)
    def f(x):
        while x < 10.0:
            x = x * 2.0
        return x

    with pytest.raises(TypeError, match="tf.while_loop"):
        f(tf.constant(1.0))


def test_a_python_value_condition_is_fine():
    @tf.function
    def f(x, flag):
        if flag and x.shape[0] == 3:
            return x * 2.0
        return x

    close(f(tf.constant(X), True), tf.constant(X) * 2.0)
    close(f(tf.constant(X), False), tf.constant(X))


def test_numpy_of_a_traced_tensor_raises_attribute_error():
    @tf.function
    def f(x):
        return x.numpy()

    with pytest.raises(AttributeError):
        f(tf.constant(1.0))


# ---------------------------------------------------------------------------------------------------
# random ops
# ---------------------------------------------------------------------------------------------------


def _noisy(x):
    return x + tf.random.normal([4]), tf.random.uniform([2], seed=7)


@pytest.fixture
def unseeded():
    """Leaves the global seed unset after the test, as other tests expect."""
    yield
    tf.random.set_seed(None)


def test_random_ops_draw_new_numbers_on_each_call():
    f = tf.function(_noisy)
    (a, u), (b, w) = f(tf.constant(0.0)), f(tf.constant(0.0))
    assert f.experimental_get_tracing_count() == 1
    assert not np.allclose(a.numpy(), b.numpy())
    assert not np.allclose(u.numpy(), w.numpy())  # also with an op seed, as in TF
    assert np.all((u.numpy() >= 0) & (u.numpy() < 1))


def test_random_ops_are_reproducible_after_set_seed(unseeded):
    def run():
        tf.random.set_seed(1234)
        f = tf.function(_noisy)
        return [t.numpy() for t in (*f(tf.constant(0.0)), *f(tf.constant(0.0)))]

    first, second = run(), run()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_set_seed_restarts_an_already_traced_function(unseeded):
    f = tf.function(_noisy)
    tf.random.set_seed(99)
    first = [f(tf.constant(0.0))[0].numpy() for _ in range(2)]
    tf.random.set_seed(99)
    again = [f(tf.constant(0.0))[0].numpy() for _ in range(2)]
    np.testing.assert_array_equal(first, again)


# ---------------------------------------------------------------------------------------------------
# autodiff inside a tf.function
# ---------------------------------------------------------------------------------------------------


def _same_compiled_and_eager(step, *args, rtol=1e-5, autograph=True):
    compiled = tf.function(step, autograph=autograph)
    expected = step(*args)
    close(compiled(*args), expected, rtol=rtol)
    assert compiled.experimental_get_tracing_count() == 1
    return expected


def test_gradient_tape_inside():
    v = tf.Variable([0.5, -0.25, 1.0])

    def step(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x) * v) + tf.reduce_sum(x * x)
            z = tf.tanh(y)
        return y, tape.gradient(y, [x, v]), tape.gradient(z, x)

    y, (gx, gv), gz = _same_compiled_and_eager(step, tf.constant(X))
    jx, jv = jax.grad(lambda x, v: jnp.sum(jnp.sin(x) * v) + jnp.sum(x * x), argnums=(0, 1))(X, v.numpy())
    close(gx, jx)
    close(gv, jv)


def test_gradient_inside_of_an_unconnected_source_is_none():
    @tf.function
    def f(x, y):
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            z = x * 3.0
        return tape.gradient(z, [x, y])

    gx, gy = f(tf.constant(1.0), tf.constant(2.0))
    close(gx, tf.constant(3.0))
    assert gy is None


def test_jacobian_and_batch_jacobian_inside():
    def step(x, rows):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, rows])
            y = tf.sin(x) * tf.reduce_sum(x)
            per_row = tf.tanh(rows) * tf.reduce_sum(rows, axis=1, keepdims=True)
        return tape.jacobian(y, x), tape.batch_jacobian(per_row, rows)

    rows = np.arange(6, dtype=np.float32).reshape(2, 3) / 4.0
    jac, bjac = _same_compiled_and_eager(step, tf.constant(X), tf.constant(rows))
    close(jac, jax.jacrev(lambda x: jnp.sin(x) * jnp.sum(x))(X))
    per_row = jax.vmap(jax.jacrev(lambda r: jnp.tanh(r) * jnp.sum(r)))(rows)
    close(bjac, per_row)


def _energy_tf(x):
    return tf.reduce_sum(tf.sin(x) ** 2 * x)


def _energy_jnp(x):
    return jnp.sum(jnp.sin(x) ** 2 * x)


def test_hessian_from_nested_tapes_inside():
    def step(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = _energy_tf(x)
            g = inner.gradient(y, x)
        return outer.jacobian(g, x)

    hessian = _same_compiled_and_eager(step, tf.constant(X))
    close(hessian, jax.hessian(_energy_jnp)(X), rtol=1e-4)


def test_tape_hessian_inside():
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = _energy_tf(x)
        return tape.hessian(y, x)

    hessian = _same_compiled_and_eager(step, tf.constant(X))
    close(hessian, jax.hessian(_energy_jnp)(X), rtol=1e-4)


@tf.custom_gradient
def _clipped_identity(x):
    def grad_fn(upstream):
        return tf.clip_by_value(upstream, -0.5, 0.5)

    return tf.identity(x), grad_fn


def _custom_gradient_step(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(_clipped_identity(x) * tf.constant([0.1, 2.0, -3.0]))
    return y, tape.gradient(y, x)


def test_custom_gradient_inside():
    y, g = _same_compiled_and_eager(_custom_gradient_step, tf.constant(X), autograph=False)
    close(g, tf.constant([0.1, 0.5, -0.5]))  # upstream [0.1, 2, -3] clipped to [-0.5, 0.5]


def test_custom_gradient_inside_with_autograph():
    y, g = _same_compiled_and_eager(_custom_gradient_step, tf.constant(X))
    close(g, tf.constant([0.1, 0.5, -0.5]))


def test_forward_accumulator_inside():
    tangent = np.array([1.0, 0.5, -2.0], np.float32)

    def step(x, t):
        with tf.autodiff.ForwardAccumulator(x, t) as acc:
            y = tf.sin(x) * tf.reduce_sum(x * x)
        return y, acc.jvp(y)

    y, jvp = _same_compiled_and_eager(step, tf.constant(X), tf.constant(tangent))
    _, expected = jax.jvp(lambda x: jnp.sin(x) * jnp.sum(x * x), (X,), (tangent,))
    close(jvp, expected)


# ---------------------------------------------------------------------------------------------------
# nesting, and tapes outside a call
# ---------------------------------------------------------------------------------------------------


def test_nested_functions():
    @tf.function
    def inner(x):
        return tf.sin(x) * x

    @tf.function
    def outer(x):
        return inner(x) + inner(x + 1.0)

    def eager(x):
        return tf.sin(x) * x + tf.sin(x + 1.0) * (x + 1.0)

    x = tf.constant(X)
    close(outer(x), eager(x))
    close(outer(tf.constant(Y)), eager(tf.constant(Y)))
    assert outer.experimental_get_tracing_count() == 1
    close(inner(x), tf.sin(x) * x)  # still callable on its own
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(outer(x))
    with tf.GradientTape() as eager_tape:
        eager_tape.watch(x)
        z = tf.reduce_sum(eager(x))
    close(tape.gradient(y, x), eager_tape.gradient(z, x))


def test_a_function_inlined_in_another_trace_counts_its_trace_once_per_key():
    # autograph=False: AutoGraph inlines tf.functions itself, without counting yet (an xfail in the compat tests)
    @tf.function
    def inner(x):
        return x * x

    @tf.function(autograph=False)
    def outer(x):
        return inner(x) + inner(x + 1.0)

    close(outer(tf.constant(2.0)), tf.constant(13.0))
    close(outer(tf.constant(3.0)), tf.constant(25.0))
    assert (outer.experimental_get_tracing_count(), inner.experimental_get_tracing_count()) == (1, 1)
    outer(tf.constant([1.0, 2.0]))  # a new shape for inner too
    assert inner.experimental_get_tracing_count() == 2
    close(inner(tf.constant(4.0)), tf.constant(16.0))  # the key inlined before: reused, as TF reuses it
    assert inner.experimental_get_tracing_count() == 2
    inner(tf.constant([[1.0]]))
    assert inner.experimental_get_tracing_count() == 3


def test_tape_outside_differentiates_through_a_call():
    v = tf.Variable([0.5, -1.0, 2.0])
    frozen = tf.Variable(3.0, trainable=False)

    def f(x, y):
        return tf.reduce_sum(tf.sin(x * v) * y) * frozen + tf.reduce_sum(x * x)

    compiled = tf.function(f)
    results = []
    for fn in (compiled, f):
        x, y = tf.constant(X), tf.constant(Y)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            out = fn(x, y)
        results.append((out, tape.gradient(out, [x, y, v]), tape.gradient(out, frozen)))
    (out, grads, g_frozen), (e_out, e_grads, e_frozen) = results
    close(out, e_out)
    close(grads, e_grads)
    assert g_frozen is None and e_frozen is None  # not trainable, not watched
    jx, jy, jv = jax.grad(lambda x, y, v: jnp.sum(jnp.sin(x * v) * y) * 3.0 + jnp.sum(x * x),
                          argnums=(0, 1, 2))(X, Y, v.numpy())
    close(grads, [jx, jy, jv])


def _assign_then_read(v):
    def step(x):
        v.assign(v * x)  # state: the read after it is a new leaf, so no gradient flows through the assign
        return v * x

    return step


def _outer_tape_gradients(fn, x, v):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return y, v.read_value(), tape.gradient(y, [x, v])


def test_tape_inside_does_not_differentiate_through_an_assign():
    def step(v):
        def run(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = _assign_then_read(v)(x)
            return y, tape.gradient(y, [x, v])
        return run

    v_eager, v_compiled = tf.Variable(2.0), tf.Variable(2.0)
    expected = step(v_eager)(tf.constant(3.0))
    close(tf.function(step(v_compiled))(tf.constant(3.0)), expected)
    close(v_compiled.read_value(), v_eager.read_value())


def test_tape_outside_does_not_differentiate_through_an_assign():
    v_eager, v_compiled = tf.Variable(2.0), tf.Variable(2.0)
    expected = _outer_tape_gradients(_assign_then_read(v_eager), tf.constant(3.0), v_eager)
    got = _outer_tape_gradients(tf.function(_assign_then_read(v_compiled)), tf.constant(3.0), v_compiled)
    close(got, expected)


def test_second_order_through_a_call():
    compiled = tf.function(_energy_tf)
    x = tf.constant(X)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = compiled(x)
        g = inner.gradient(y, x)
    close(g, jax.grad(_energy_jnp)(X))
    close(outer.jacobian(g, x), jax.hessian(_energy_jnp)(X), rtol=1e-4)


def test_jacobian_outside_a_call():
    compiled = tf.function(lambda x: tf.sin(x) * tf.reduce_sum(x))
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = compiled(x)
    close(tape.jacobian(y, x), jax.jacrev(lambda x: jnp.sin(x) * jnp.sum(x))(X))


def test_tape_outside_gives_none_for_an_unused_argument():
    v, unused = tf.Variable(2.0), tf.Variable(3.0)

    @tf.function
    def f(x, y):
        _ = unused * 1.0
        return tf.sin(x) * v

    x, y = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        out = f(x, y)
    gx, gy, gv, gu = tape.gradient(out, [x, y, v, unused])
    close([gx, gv], [tf.cos(x) * 2.0, tf.sin(x)])
    assert gy is None and gu is None


def test_a_symbolic_trace_leaks_no_tracer_into_the_scalar_cache():
    # A trace with None dimensions does not fold constants: a Python scalar converted there is a tracer, and must
    # not be cached for eager ops that later convert the same scalar.
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def total(x):
        result = tf.zeros([3])
        for row in x:
            result = result + row
        return result

    np.testing.assert_allclose(total(tf.ones([4, 3])).numpy(), [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(tf.range(tf.constant(7), 0, -2).numpy(), [7, 5, 3, 1])


@pytest.fixture
def checkify_calls(monkeypatch):
    """The calls of checkify.checkify that tf.function traces make, in order."""
    from jax.experimental import checkify
    from tapejax._src import concrete_function
    calls = []
    original = checkify.checkify

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(concrete_function.checkify, "checkify", counting)
    return calls


def test_a_step_without_run_time_checks_is_traced_once_without_checkify_and_one_with_them_keeps_them(checkify_calls):
    """checkify interprets a traced step's whole jaxpr: only a step that holds checks pays for it, and its Python
    body still runs once (the checks are functionalised from the jaxpr)."""
    calls = checkify_calls
    v = tf.Variable(1.0)
    runs = []

    @tf.function
    def plain(x):
        runs.append(1)
        v.assign_add(tf.reduce_sum(x))
        return x * 2.0

    np.testing.assert_array_equal(plain(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    assert calls == [] and len(runs) == 1 and v.numpy() == 4.0

    @tf.function
    def checked(x, i):
        runs.append(1)
        v.assign_add(1.0)
        return tf.gather(x, i)

    x = tf.constant([1.0, 2.0, 3.0])
    assert checked(x, tf.constant(2)).numpy() == 3.0 and len(calls) >= 1 and len(runs) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices are not in \[0, 3\)"):
        checked(x, tf.constant(5))
    assert v.numpy() == 5.0 and len(runs) == 2  # nothing written by the failed call; not traced again


def test_a_step_with_none_dimensions_skips_checkify_too_and_keeps_its_checks(checkify_calls):
    calls = checkify_calls
    runs = []

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def plain(x):
        runs.append(1)
        return tf.reduce_sum(x * x)

    for n in (2, 5):
        assert plain(tf.constant(np.arange(n, dtype=np.float32))).numpy() == sum(k * k for k in range(n))
    assert calls == [] and len(runs) == 1

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])
    def checked(x, i):
        runs.append(1)
        return tf.gather(x, i)

    assert checked(tf.constant([1.0, 2.0, 3.0]), tf.constant(2)).numpy() == 3.0 and calls and len(runs) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="indices are not in"):
        checked(tf.constant([1.0, 2.0]), tf.constant(5))
    assert len(runs) == 2
