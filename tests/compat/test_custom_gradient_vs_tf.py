"""tf.custom_gradient side by side with TensorFlow: None gradients, eager grad_fn, captured tensors, nesting,
structures, variables, transformations and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _none_from_grad_fn(tf):
    @tf.custom_gradient
    def k(x):
        return x * 2.0, lambda dy: None

    x = tf.constant([1.0, 2.0])
    column = tf.constant([[1.0], [2.0]])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, column])
        y = k(x)
        z = k(x) + x * 3.0  # the other path's gradient alone
        per_row = k(column)
    # batch_jacobian gives zeros where jacobian gives None (TF's pfor fills them in)
    return (t.gradient(y, x), t.gradient(z, x), t.gradient(y, x, unconnected_gradients="zero"),
            t.jacobian(y, x), t.batch_jacobian(per_row, column))


def _none_for_one_of_two_inputs(tf):
    @tf.custom_gradient
    def k(x, w):
        return x * w, lambda dy: (None, dy * x)

    x, w = tf.constant(1.5), tf.constant(4.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, w])
        y = k(x, w)
        z = y * y
    return t.gradient(z, [x, w]), t.jacobian(y, [x, w])


def _none_for_a_variable(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def k(x):
        def grad_fn(dy, variables=None):
            return dy * v, [None]

        return x * v, grad_fn

    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = k(x)
    return t.gradient(y, [x, v])


def _grad_fn_runs_eagerly(tf):
    log = []

    @tf.custom_gradient
    def clip(x):
        def grad_fn(dy):
            values = dy.numpy()  # a concrete value, as in TF's eager mode
            log.append(f"{np.sum(values):.2f}")
            if tf.reduce_sum(dy) > 1.0:  # Python control flow on a tensor's value
                return tf.constant(np.clip(values, -1.0, 1.0))
            return dy * 2.0

        return tf.identity(x), grad_fn

    results = []
    for _ in range(3):  # the structure repeats: still eager
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            big = tf.reduce_sum(clip(x) * x)
            small = tf.reduce_sum(clip(x) * 0.1)
        results += [t.gradient(big, x), t.gradient(small, x)]
    return results, " ".join(log)


def _captured_tensor_only_is_watched(tf):
    c = tf.constant(2.0)

    @tf.custom_gradient
    def f(x):
        return x * c * c, lambda dy: dy * 100.0

    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(c)  # the tape follows only what f captures: the computation itself is differentiated
        y = f(x)
    return t.gradient(y, c)


def _captured_and_argument_watched(tf):
    c = tf.constant(2.0)

    @tf.custom_gradient
    def f(x):
        return x * c, lambda dy: dy * 100.0

    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch([x, c])
        y = f(x) + c  # the custom op gives c nothing; the other path does
    return t.gradient(y, [x, c])


def _nested_inside_grad_fn(tf):
    x = tf.Variable(0.5)

    @tf.custom_gradient
    def closes_over_upstream(x):
        def grad_fn(dy):
            @tf.custom_gradient
            def first_order(u):
                return dy * 3.0 * x * x * 10.0, lambda ddy: ddy * dy * 6.0 * x * 100.0

            return first_order(x)

        return x * x * x, grad_fn

    @tf.custom_gradient
    def used_with_another_argument(x):
        s = tf.sin(x)

        def grad_fn(dy):
            @tf.custom_gradient
            def scale(u):
                return u * s, lambda ddy: ddy * s * 7.0

            return scale(dy * tf.cos(x))

        return s, grad_fn

    @tf.custom_gradient
    def only_the_capture_is_perturbed(x):
        s = tf.sin(x)

        def grad_fn(dy):
            @tf.custom_gradient
            def scale(u):
                return u * s, lambda ddy: ddy * 5.0

            return scale(dy) + dy * s * s

        return s, grad_fn

    results = []
    for f in (closes_over_upstream, used_with_another_argument, only_the_capture_is_perturbed):
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = f(x) * 2.0
            d1 = t1.gradient(y, x)
        results += [d1, t2.gradient(d1, x)]
    return results


def _guide_nested_pattern(tf):
    @tf.custom_gradient
    def op_with_fused_backprop(x):
        y, x_grad = x * x * x, 3.0 * x * x

        def first_order_gradient(dy):
            @tf.custom_gradient
            def first_order_custom(unused_x):
                return x_grad * 10.0, lambda ddy: ddy * 6.0 * x * 100.0

            return dy * first_order_custom(x)

        return y, first_order_gradient

    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = op_with_fused_backprop(x)
        d1 = t1.gradient(y, x)
    return d1, t2.gradient(d1, x)


def _second_order_through_a_closure(tf):
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        return tf.math.log(1 + e), lambda up: up * (1 - 1 / (1 + e))

    x = tf.Variable([0.5, -1.0])
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = tf.reduce_sum(log1pexp(x))
        d1 = t1.gradient(y, x)
    return d1, t2.gradient(d1, x), t2.watched_variables()[0].name


def _unused_outputs_get_zeros(tf):
    seen = []

    @tf.custom_gradient
    def two(x):
        def grad_fn(da, db):
            seen.append(f"{float(tf.reduce_sum(tf.abs(db))):.1f}")
            return da * 2.0 + db * 3.0

        return (x * 2.0, x * 3.0), grad_fn

    x = tf.constant([1.0, -1.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        a, b = two(x)
    return t.gradient(a, x), t.gradient(b, x), t.gradient(a * 0.0 + b * 4.0, x), " ".join(seen)


def _nested_structures(tf):
    @tf.custom_gradient
    def f(pair, scale):
        def grad_fn(d_sum, d_diff, d_scaled):
            return ([d_sum + d_diff + d_scaled * scale["s"], d_sum - d_diff],), {"s": d_scaled * pair[0]}

        return {"sum": pair[0] + pair[1], "diff": pair[0] - pair[1], "scaled": pair[0] * scale["s"]}, grad_fn

    x, y, s = tf.constant(1.0), tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch([x, y, s])
        out = f([x, y], {"s": s})
        z = out["sum"] * 1.0 + out["diff"] * 10.0 + out["scaled"] * 100.0
    return t.gradient(z, [x, y, s])


def _output_gradients_are_upstream(tf):
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 10.0

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    return t.gradient(y, x, output_gradients=tf.constant([3.0, -1.0]))


def _variables_keyword(tf):
    w = tf.Variable([2.0, 3.0], name="w")
    frozen = tf.Variable(5.0, trainable=False, name="frozen")
    names = []

    @tf.custom_gradient
    def f(x):
        def grad_fn(dy, variables=None):
            names.extend(v.name for v in variables)
            return dy * w[0] * frozen, [tf.stack([tf.reduce_sum(dy * x), 0.0])]

        return w[0] * x * frozen, grad_fn

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    return t.gradient(y, [x, w, frozen]), " ".join(names)


def _variable_argument_is_not_in_variables(tf):
    v = tf.Variable(3.0)
    seen = []

    @tf.custom_gradient
    def f(x):
        def grad_fn(dy):
            seen.append("called")
            return dy * 7.0

        return x * x, grad_fn

    with tf.GradientTape() as t:
        y = f(v)
    return t.gradient(y, v), " ".join(seen)


def _integer_and_python_arguments(tf):
    @tf.custom_gradient
    def f(x, n, c):
        return x * tf.cast(n, tf.float32) * c, lambda dy: (dy * 5.0, None, None)

    x = tf.constant(2.0)
    n = tf.constant(3)
    with tf.GradientTape() as t:
        t.watch([x, n])
        y = f(x, n, 4.0)

    @tf.function
    def step(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x, n, 4.0)
        return t.gradient(y, x)

    v = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            z = f(v, n, 2.0) * v
        d = t1.gradient(z, v)
    return t.gradient(y, [x, n]), step(x), d, t2.gradient(d, v)


def _returns_its_input(tf):
    @tf.custom_gradient
    def passthrough(x):
        return x, lambda dy: dy * -1.0

    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = passthrough(x) + x
    return t.gradient(y, x)


def _persistent_tape_calls_grad_fn_each_time(tf):
    calls = []

    @tf.custom_gradient
    def f(x):
        def grad_fn(dy):
            calls.append("g")
            return dy * 3.0

        return x * 2.0, grad_fn

    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = f(x)
    return t.gradient(y, x), t.gradient(y, x), " ".join(calls)


def _under_tf_function(tf):
    @tf.custom_gradient
    def clip(x):
        return tf.identity(x), lambda dy: tf.clip_by_value(dy, -0.5, 0.5)

    @tf.function
    def step(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(clip(x) * x)
        return t.gradient(y, x)

    return step(tf.constant([0.2, 2.0])), step(tf.constant([3.0, -3.0]))


def _forward_accumulator_ignores_it(tf):
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 100.0

    x = tf.constant([3.0, 1.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0])) as acc:
        y = f(x)
    with tf.GradientTape() as t:
        t.watch(x)
        z = f(x)
    return acc.jvp(y), t.gradient(z, x)


def _jacobians(tf):
    @tf.custom_gradient
    def f(x):
        return tf.sin(x), lambda dy: dy * 10.0

    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = f(x) * x
    return t.jacobian(y, x), t.batch_jacobian(y, x)


def _gradient_of_gradient_through_custom_op(tf):
    @tf.custom_gradient
    def cube(x):
        return x * x * x, lambda dy: dy * 3.0 * x * x

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.reduce_sum(cube(x))
        d1 = t1.gradient(y, x)
    return d1, t2.jacobian(d1, x)


def _inside_a_tf_function_under_an_eager_tape(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def grad_fn(dy, variables=None):
            return dy * 10.0, [dy * 100.0]

        return x * v, grad_fn

    g = tf.function(lambda x: f(x) * 3.0)
    x = tf.constant(1.5)
    with tf.GradientTape() as t:
        t.watch(x)
        y = g(x)
    return y, t.gradient(y, [x, v])


def _keyword_tensor_arguments(tf):
    @tf.custom_gradient
    def f(x, scale=None):
        return x * scale, lambda dy: dy * 10.0

    x, s = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as both:
        both.watch([x, s])
        y_both = f(x, scale=s)
    with tf.GradientTape() as only_scale:
        only_scale.watch(s)
        y_scale = f(x, scale=s)
    return both.gradient(y_both, [x, s]), only_scale.gradient(y_scale, s)


def _output_used_twice_and_float64(tf):
    upstreams = []

    @tf.custom_gradient
    def f(x):
        def grad_fn(dy):
            upstreams.append(f"{dy.dtype.name} {float(dy):.1f}")
            return dy * 2.0

        return x * 1.0, grad_fn

    x = tf.constant(1.0, tf.float64)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
        z = y * 3.0 + y * 4.0
    return t.gradient(z, x), " ".join(upstreams)


def _integer_output(tf):
    @tf.custom_gradient
    def f(x):
        return (x * 2.0, tf.cast(x, tf.int32)), lambda da, db: da * 5.0

    x = tf.constant(1.7)
    with tf.GradientTape() as t:
        t.watch(x)
        a, n = f(x)
    return t.gradient(a, x), n

def _recompute_grad(tf):
    w = tf.Variable([0.5, 1.0])
    plain = tf.recompute_grad(lambda x: tf.sin(x) * x)
    with_variable = tf.recompute_grad(lambda x: tf.reduce_sum(tf.sin(x * w)))
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t2:
        t2.watch(x)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = tf.reduce_sum(plain(x))
            z = with_variable(x)
        d = t.gradient(y, x)
    step = tf.function(lambda x: tf.reduce_sum(plain(x)))
    with tf.GradientTape() as t3:
        t3.watch(x)
        u = step(x)
    return y, d, t.gradient(z, [x, w]), t2.gradient(d, x), t3.gradient(u, x)


def _second_order_keeps_the_rule_for_the_output(tf):
    # z = g(v) * v: the first derivative uses g's output, whose derivative on the outer tape is the rule (5),
    # not the computation's (6): TF gives 5 + 5.
    @tf.custom_gradient
    def g(x):
        return x * 6.0, lambda dy: dy * 5.0

    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            z = tf.reduce_sum(g(v) * v)
        d = t1.gradient(z, v)
    return d, t2.jacobian(d, v)


SNIPPETS = [_none_from_grad_fn, _none_for_one_of_two_inputs, _none_for_a_variable, _grad_fn_runs_eagerly,
            _captured_tensor_only_is_watched, _captured_and_argument_watched, _nested_inside_grad_fn,
            _guide_nested_pattern, _second_order_through_a_closure, _unused_outputs_get_zeros, _nested_structures,
            _output_gradients_are_upstream, _variables_keyword, _variable_argument_is_not_in_variables,
            _integer_and_python_arguments, _returns_its_input, _persistent_tape_calls_grad_fn_each_time,
            _under_tf_function, _forward_accumulator_ignores_it, _jacobians,
            _gradient_of_gradient_through_custom_op, _inside_a_tf_function_under_an_eager_tape,
            _keyword_tensor_arguments, _output_used_twice_and_float64, _integer_output, _recompute_grad,
            _second_order_keeps_the_rule_for_the_output]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda f: f.__name__.strip("_"))
def test_custom_gradients_agree_with_tensorflow(snippet):
    assert_same(snippet(tapejax), snippet(tf_real))


def _wrong_input_gradient_count(tf):
    @tf.custom_gradient
    def f(x, z):
        return x * z, lambda dy: dy

    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x, x)
    t.gradient(y, x)


def _missing_variables_keyword(tf):
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        return w * x, lambda dy: dy

    with tf.GradientTape():
        f(tf.constant(1.0))


def _wrong_variable_gradient_count(tf):
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        return w * x, lambda dy, variables=None: (dy, [])

    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    t.gradient(y, x)


def _grad_fn_raises(tf):
    @tf.custom_gradient
    def f(x):
        def grad_fn(dy):
            raise RuntimeError("from grad_fn")

        return x * 1.0, grad_fn

    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    t.gradient(y, x)


@pytest.mark.parametrize("case", [_wrong_input_gradient_count, _missing_variables_keyword,
                                  _wrong_variable_gradient_count, _grad_fn_raises],
                         ids=lambda f: f.__name__.strip("_"))
def test_errors_agree_with_tensorflow(case):
    with pytest.raises(Exception) as expected:
        case(tf_real)
    with pytest.raises(type(expected.value)) as got:
        case(tapejax)
    # tapejax's messages add how to fix the mistake; the first sentence is TF's.
    assert str(got.value).split(".")[0].split(":")[0] == str(expected.value).split(".")[0].split(":")[0]
