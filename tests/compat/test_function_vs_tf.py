"""tf.function and control flow side by side with TensorFlow: values, gradients, tracing counts, errors, tf.print.

Each snippet takes the module under test as `tf` and is run once with tapejax and once with real TensorFlow; the
results (tensors, None, Python numbers and strings, in the same nests) must agree.
"""

from __future__ import annotations

import collections
import sys

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _agree(snippet):
    assert_same(snippet(tapejax), snippet(tf_real))


# ---------------------------------------------------------------------------------------------------
# values, gradients and tracing counts
# ---------------------------------------------------------------------------------------------------


def _retracing(tf):
    @tf.function
    def f(x):
        return x * 2.0

    counts = []
    for arg in (tf.constant(1.0), tf.constant(3.0), np.float32(2.0), np.array(5.0, np.float32), 2.0, 2.0, 3.0,
                tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0]), tf.constant(1.0, tf.float64)):
        f(arg)
        counts.append(f.experimental_get_tracing_count())
    return counts, f(tf.constant([0.5, 1.5]))


def _python_arguments(tf):
    @tf.function
    def f(x, power, mode="sum"):
        y = x ** power
        return tf.reduce_sum(y) if mode == "sum" else tf.reduce_mean(y)

    x = tf.constant([1.0, 2.0, 3.0])
    out = [f(x, 2), f(x, 2), f(x, 3), f(x, 3, mode="mean"), f(x, 3, mode="mean")]
    return out, f.experimental_get_tracing_count()


def _tape_inside(tf):
    v = tf.Variable([0.5, -0.25, 1.0])

    @tf.function
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x) * v) + tf.reduce_sum(x * x)
            z = tf.tanh(x) * y
        return y, tape.gradient(y, [x, v]), tape.jacobian(z, x), tape.gradient(z, tf.constant(1.0))

    first = f(tf.constant([0.3, -1.2, 2.0]))
    second = f(tf.constant([1.3, 0.2, -2.0]))
    return first, second, f.experimental_get_tracing_count()


def _tape_outside(tf):
    v = tf.Variable([0.5, -1.0, 2.0])
    frozen = tf.Variable(3.0, trainable=False)

    @tf.function
    def f(x, y):
        return tf.reduce_sum(tf.sin(x * v) * y) * frozen + tf.reduce_sum(x * x)

    out = []
    for scale in (1.0, -0.5):
        x, y = tf.constant([0.3, -1.2, 2.0]) * scale, tf.constant([1.5, 0.25, -0.5])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            z = f(x, y)
        out.append((z, tape.gradient(z, [x, y, v]), tape.gradient(z, frozen)))
    return out, f.experimental_get_tracing_count()


def _unused_argument_gradient(tf):
    v, unused = tf.Variable(2.0), tf.Variable(3.0)

    @tf.function
    def f(x, y):
        _ = unused * 1.0
        return tf.sin(x) * v

    x, y = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        out = f(x, y)
    return tape.gradient(out, [x, y, v, unused]), tape.gradient(out, [y, unused], unconnected_gradients="zero")


def _assign_then_read(tf):
    v = tf.Variable(2.0)

    @tf.function
    def f(x):
        v.assign(v * x)
        return v * x

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return y, v.read_value(), tape.gradient(y, [x, v])


def _variables(tf):
    v = tf.Variable(1.0)
    w = tf.Variable([1.0, -2.0])
    counter = tf.Variable(0, trainable=False)

    @tf.function
    def step(x):
        v.assign_add(x)
        w.assign(w * v)
        counter.assign_add(1)
        return v * 2.0, tf.reduce_sum(w)

    outs = [step(tf.constant(x)) for x in (0.5, -1.25, 2.0)]
    return outs, v.read_value(), w.read_value(), counter.read_value(), step.experimental_get_tracing_count()


def _variable_created_on_first_call(tf):
    class Lazy(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = None

        @tf.function
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(tf.ones_like(x) * 2.0)
            self.w.assign_add(x)
            return tf.reduce_sum(self.w * x)

    m = Lazy()
    outs = [m(tf.constant([1.0, 2.0])), m(tf.constant([1.0, 2.0]))]
    with tf.GradientTape() as tape:
        y = m(tf.constant([0.5, -1.0]))
    return outs, y, tape.gradient(y, m.w), m.w.read_value(), m.__call__.experimental_get_tracing_count()


def _variable_read_through_a_helper(tf):
    v = tf.Variable(2.0)

    def helper(x):
        return x * v

    def make():
        w = tf.Variable(3.0)
        return lambda x: x * w

    other = make()
    log = []

    @tf.function
    def f(x):
        log.append("traced")
        return helper(x) + other(x)

    return f(tf.constant(1.0)), f(tf.constant(2.0)), f.experimental_get_tracing_count(), len(log)


def _input_signature(tf):
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return tf.reduce_sum(tf.sin(x), axis=0) * tf.cast(tf.shape(x)[0], tf.float32)

    outs = [f(tf.ones([3, 2])), f(tf.ones([5, 2]) * 0.5), f(np.ones([4, 2], np.float32))]
    return outs, f.experimental_get_tracing_count()


def _input_signature_python_list(tf):
    f = tf.function(lambda x: tf.reduce_sum(x, axis=0), input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    return f([[1.0, 2.0], [3.0, 4.0]]), f.experimental_get_tracing_count()


def _input_signature_concrete_size(tf):
    f = tf.function(lambda x: tf.reshape(x, [2, -1]), input_signature=[tf.TensorSpec([None], tf.float32)])
    return f(tf.range(4.0)), f(tf.range(6.0)), f.experimental_get_tracing_count()


def _methods(tf):
    class Scaler:
        def __init__(self, k):
            self.k = k

        @tf.function
        def apply(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(-3.0)
    outs = [a.apply(tf.constant(1.5)), b.apply(tf.constant(1.5)), a.apply(tf.constant(2.5))]
    counts = [a.apply.experimental_get_tracing_count(), b.apply.experimental_get_tracing_count(),
              Scaler.apply.experimental_get_tracing_count()]
    return outs, counts


def _nested_functions(tf):
    @tf.function
    def inner(x):
        return tf.sin(x) * x

    @tf.function
    def outer(x):
        return inner(x) + inner(x + 1.0)

    x = tf.constant([0.3, -1.2])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(outer(x))
    return y, tape.gradient(y, x), outer(x * 2.0), outer.experimental_get_tracing_count()


def _nested_inner_tracing_count(tf):
    @tf.function
    def inner(x):
        return x * x

    @tf.function
    def outer(x):
        return inner(x) + inner(x + 1.0)

    outer(tf.constant(1.0))
    outer(tf.constant(2.0))
    return outer.experimental_get_tracing_count(), inner.experimental_get_tracing_count()


def _keyword_then_positional(tf):
    @tf.function
    def f(x, scale=1.0):
        return x * scale

    return f(tf.constant(1.0), scale=2.0), f(tf.constant(1.0), 2.0), f.experimental_get_tracing_count()


def _autodiff_inside(tf):
    @tf.custom_gradient
    def clipped(x):
        def grad_fn(upstream):
            return tf.clip_by_value(upstream, -0.5, 0.5)

        return tf.identity(x), grad_fn

    @tf.function
    def f(x, rows, tangent):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, rows])
            y = tf.reduce_sum(clipped(x) * tf.constant([0.1, 2.0, -3.0]))
            per_row = tf.tanh(rows) * tf.reduce_sum(rows, axis=1, keepdims=True)
        with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
            z = tf.sin(x) * tf.reduce_sum(x * x)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                e = tf.reduce_sum(tf.sin(x) ** 2 * x)
            g = inner.gradient(e, x)
        return tape.gradient(y, x), tape.batch_jacobian(per_row, rows), acc.jvp(z), outer.jacobian(g, x)

    rows = tf.reshape(tf.range(6.0), [2, 3]) / 4.0
    return f(tf.constant([0.3, -1.2, 2.0]), rows, tf.constant([1.0, 0.5, -2.0]))


def _random(tf):
    try:
        tf.random.set_seed(1234)
        f = tf.function(lambda x: x + tf.random.normal([4]))
        a, b = f(tf.constant(0.0)).numpy(), f(tf.constant(0.0)).numpy()
        tf.random.set_seed(1234)
        g = tf.function(lambda x: x + tf.random.normal([4]))
        c, d = g(tf.constant(0.0)).numpy(), g(tf.constant(0.0)).numpy()
        tf.random.set_seed(1234)
        e = f(tf.constant(0.0)).numpy()
    finally:
        tf.random.set_seed(None)
    # the numbers differ between the libraries (other generators): compare which draws repeat
    return bool(np.array_equal(a, b)), bool(np.array_equal(a, c) and np.array_equal(b, d)), bool(np.array_equal(a, e))


def _run_functions_eagerly(tf):
    log = []

    @tf.function
    def f(x):
        log.append(float(x.numpy()))
        return x * 2.0

    try:
        tf.config.run_functions_eagerly(True)
        out = [f(tf.constant(1.0)), f(tf.constant(2.0))]
    finally:
        tf.config.run_functions_eagerly(False)
    return out, log, f.experimental_get_tracing_count()


def _side_effects(tf):
    log = []

    @tf.function
    def f(x):
        log.append("traced")
        return x + 1

    f(tf.constant(1))
    f(tf.constant(2))
    f(tf.constant([1, 2]))
    return log, f.experimental_get_tracing_count()


def _reduce_retracing(tf):
    @tf.function(reduce_retracing=True)
    def f(x, n):
        shapes.append(tuple(x.shape) if x.shape.rank is not None and x.shape.rank < 2 else "rank 2 or unknown")
        return tf.reduce_sum(x) * n + tf.cast(tf.shape(x)[0], tf.float32)

    shapes, counts, values = [], [], []
    for shape, n in [((2,), 1), ((3,), 1), ((4,), 1), ((3,), 2), ((4,), 2), ((9,), 2), ((2, 3), 1), ((5, 6), 1),
                     ((7,), 1), ((2,), 1)]:
        values.append(f(tf.ones(shape), n))
        counts.append(f.experimental_get_tracing_count())
    return shapes, counts, values


def _models_through_one_function(tf):
    """One tf.function reused by 12 Keras models (each built before): one trace per model, and a deleted model's
    variables are not kept alive by the function."""
    import gc
    import weakref

    keras = tf.keras
    x = tf.ones([2, 3])

    @tf.function
    def step(model, x):
        return tf.reduce_sum(model(x))

    refs = []
    for _ in range(12):
        model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])
        model(x)
        step(model, x)
        refs.extend(weakref.ref(v) for v in model.trainable_variables)
        del model
    gc.collect()
    return step.experimental_get_tracing_count(), sum(r() is not None for r in refs)


def _function_trained_on_several_models(tf):
    keras = tf.keras
    x = tf.ones([2, 3])

    @tf.function
    def train(model, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x) ** 2)
        for v, g in zip(model.trainable_variables, tape.gradient(loss, model.trainable_variables)):
            v.assign_sub(0.1 * g)
        return loss

    for _ in range(3):
        model = keras.Sequential([keras.layers.Dense(4)])
        model(x)
        train(model, x)
        train(model, x)
    return train.experimental_get_tracing_count()


def _optimizer_slots_created_in_the_step(tf):
    # ddpg's update step: a method whose optimizer (a global) builds its slots inside the first trace. TF traces
    # the step twice (the first trace created variables) and counts both.
    keras = tf.keras
    model = keras.Sequential([keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")])
    model.build((None, 3))
    optimizer = keras.optimizers.Adam(0.1)
    log = []

    class Buffer:
        @tf.function
        def update(self, x):
            log.append("traced")
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x) ** 2)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            return loss

    buffer = Buffer()
    x = tf.constant([[1.0, 2.0, 3.0]])
    losses = [buffer.update(x) for _ in range(3)]
    return (losses, [v.numpy() for v in model.trainable_variables], buffer.update.experimental_get_tracing_count(),
            len(log))


SNIPPETS = [_retracing, _python_arguments, _tape_inside, _tape_outside, _unused_argument_gradient, _assign_then_read,
            _variables, _variable_created_on_first_call, _variable_read_through_a_helper, _input_signature,
            _input_signature_python_list, _input_signature_concrete_size, _methods, _nested_functions,
            _keyword_then_positional, _autodiff_inside, _random, _run_functions_eagerly, _side_effects,
            _nested_inner_tracing_count, _reduce_retracing, _models_through_one_function,
            _function_trained_on_several_models, _optimizer_slots_created_in_the_step]

# Snippets where tapejax differs from TensorFlow: each is a bug report (strict: it turns red the day it is fixed).
KNOWN_DIFFERENCES: dict = {}


@pytest.mark.parametrize("snippet", SNIPPETS + [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=r))
    for s, r in KNOWN_DIFFERENCES.items()
], ids=lambda f: f.__name__.strip("_"))
def test_function_agrees_with_tensorflow(snippet):
    _agree(snippet)


# ---------------------------------------------------------------------------------------------------
# control flow
# ---------------------------------------------------------------------------------------------------

ELEMS = np.array([[1.0, 2.0], [3.0, -4.0], [0.5, 6.0], [-1.0, 0.25]], np.float32)
Pair = collections.namedtuple("Pair", "j k")


def _conditionals(tf):
    def f(x, i):
        a = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * 2.0, lambda: x * x - 1.0)
        b = tf.case([(x[0] < 0, lambda: -x), (x[0] < 1, lambda: x * 10.0)], default=lambda: x + 100.0)
        s = tf.switch_case(i, [lambda: x + 1.0, lambda: x * 2.0, lambda: tf.sin(x)], default=lambda: x * 0.0 - 7.0)
        return a, b, s

    compiled = tf.function(f)
    out = []
    for x in ([0.5, 1.0], [-0.5, -1.0], [2.0, -1.0]):
        for i in (0, 1, 2, 3, -1):
            args = (tf.constant(x), tf.constant(i))
            out.append((f(*args), compiled(*args)))
    return out, compiled.experimental_get_tracing_count()


def _loops(tf):
    def f(x, n):
        tuple_loop = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 1.5 + 1.0), (tf.constant(0), x))
        list_loop = tf.while_loop(lambda i, a: tf.reduce_sum(a) < 50.0, lambda i, a: [i + 1, a * 2.0],
                                  [tf.constant(0), x])
        nested = tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, Pair(p.j + p.k, p.j - p.k)),
                               (tf.constant(0), Pair(x, x * 2.0)))
        bounded = tf.while_loop(lambda a: tf.reduce_sum(a) < 1000.0, lambda a: [a * 2.0], [x], maximum_iterations=3)
        return tuple_loop, list_loop, nested, bounded

    compiled = tf.function(f)
    out = []
    for x, n in (([1.0, 2.0], 3), ([30.0, 40.0], 0), ([0.1, 0.1], 5)):
        args = (tf.constant(x), tf.constant(n))
        out.append((f(*args), compiled(*args)))
    return out, compiled.experimental_get_tracing_count()


def _scans_and_maps(tf):
    def f(x):
        return (tf.scan(lambda a, e: a * 0.5 + e, x),
                tf.scan(lambda a, e: a * 0.5 + tf.reduce_sum(e * e), x, initializer=tf.constant(1.0)),
                tf.scan(lambda a, e: a * 0.5 - e, x, reverse=True),
                tf.scan(lambda a, e: a * 0.5 - e, x, initializer=tf.zeros([2]), reverse=True),
                tf.scan(lambda a, e: (a[0] + tf.reduce_sum(e["p"]), a[1] * e["q"]), {"p": x, "q": tf.sin(x)},
                        initializer=(tf.constant(0.0), tf.ones([2]))),
                tf.foldl(lambda a, e: a * 0.5 + e, x),
                tf.foldl(lambda a, e: a - tf.reduce_sum(e * e), x, initializer=tf.constant(2.0)),
                tf.foldr(lambda a, e: a * 0.5 + e, x),
                tf.foldr(lambda a, e: a * 0.5 - e, x, initializer=tf.ones([2])),
                tf.map_fn(lambda r: tf.reduce_sum(tf.sin(r)) * r, x),
                tf.map_fn(lambda r: (r, tf.reduce_max(r)), x, fn_output_signature=(tf.float32, tf.float32)),
                tf.vectorized_map(lambda r: tf.reduce_sum(r * r) * r + 1.0, x))

    compiled = tf.function(f)
    out = [(f(tf.constant(x)), compiled(tf.constant(x))) for x in (ELEMS, -0.5 * ELEMS)]
    return out, compiled.experimental_get_tracing_count()


def _control_flow_gradients(tf):
    def f(x, w):
        c = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * w, lambda: x * x)
        loop = tf.while_loop(lambda i, a: i < 10, lambda i, a: (i + 1, tf.sin(a) * w), (tf.constant(0), x[0]),
                             maximum_iterations=4)[1]
        s = tf.scan(lambda a, e: tf.tanh(a * w + e), x, initializer=tf.zeros([2]))
        m = tf.map_fn(lambda r: tf.sin(r) * tf.reduce_sum(r * r), x)
        return tf.reduce_sum(c) + tf.reduce_sum(loop) + tf.reduce_sum(s) + tf.reduce_sum(m)

    compiled = tf.function(f)

    @tf.function
    def inside(x, w):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w)
        return tape.gradient(y, [x, w])

    out = []
    for x in (ELEMS, -ELEMS):
        x, w = tf.constant(x * 0.3), tf.constant([0.7, -0.3])
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = compiled(x, w)
        out.append((y, tape.gradient(y, [x, w]), inside(x, w)))
    return out, compiled.experimental_get_tracing_count(), inside.experimental_get_tracing_count()


def _while_loop_variables(tf):
    total = tf.Variable(0.0)

    @tf.function
    def f(n):
        def body(i):
            total.assign_add(tf.cast(i, tf.float32) * 0.5)
            return (i + 1,)

        return tf.while_loop(lambda i: i < n, body, (tf.constant(0),)), total.read_value()

    return f(tf.constant(4)), f(tf.constant(2)), total.read_value(), f.experimental_get_tracing_count()


def _case_without_default_none_true(tf):
    return tf.case([(tf.constant(5.0) < 0, lambda: tf.constant(1.0)), (tf.constant(5.0) < 1, lambda: tf.constant(2.0))])


def _case_exclusive_two_true(tf):
    x = tf.constant(-5.0)
    return tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)], default=lambda: x, exclusive=True)


def _switch_case_non_contiguous_keys(tf):
    return tf.switch_case(tf.constant(1), {0: lambda: tf.constant(10.0), 2: lambda: tf.constant(30.0)})


def _case_without_default_none_true_compiled(tf):
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        v.assign(x)
        return tf.case([(x < 0, lambda: x), (x < 1, lambda: x * 2.0)])

    f(tf.constant(0.5))
    f(tf.constant(5.0))


def _case_exclusive_two_true_compiled(tf):
    f = tf.function(lambda x: tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)], default=lambda: x,
                                      exclusive=True))
    f(tf.constant(0.5))
    f(tf.constant(-5.0))


def _switch_case_python_int_index(tf):
    return tf.switch_case(1, [lambda: tf.constant(10.0), lambda: tf.constant(20.0)])


def _case_python_bool_predicate(tf):
    return tf.case([(False, lambda: tf.constant(1.0))], default=lambda: tf.constant(2.0))


def _case_checks(tf):
    """Inputs that pass tf.case's checks: with no default, the last pair's predicate may be the only true one, and
    `exclusive` does not count it (TF makes it the default)."""
    def f(x):
        return (tf.case([(x < 0, lambda: x), (x < 1, lambda: x * 2.0)]),
                tf.case([(x < 0, lambda: x), (x < 1, lambda: x * 2.0)], exclusive=True),
                tf.case([(x < -1, lambda: -x), (x > 0, lambda: x * 10.0)], default=lambda: x, exclusive=True))

    compiled = tf.function(f)
    out = [(f(tf.constant(x)), compiled(tf.constant(x))) for x in (-0.5, 0.5)]
    return out, compiled.experimental_get_tracing_count()


CONTROL_FLOW = [_conditionals, _loops, _scans_and_maps, _control_flow_gradients, _while_loop_variables,
                _case_checks]


@pytest.mark.parametrize("snippet", CONTROL_FLOW, ids=lambda f: f.__name__.strip("_"))
def test_control_flow_agrees_with_tensorflow(snippet):
    _agree(snippet)


# ---------------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------------


def _bool_of_traced_tensor(tf):
    tf.function(lambda x: bool(x > 0))(tf.constant(1.0))


def _if_on_traced_tensor_without_autograph(tf):
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    f(tf.constant(1.0))


def _numpy_of_traced_tensor(tf):
    tf.function(lambda x: x.numpy())(tf.constant(1.0))


def _variable_on_a_later_call(tf):
    @tf.function
    def f(x, make):
        if make:
            tf.Variable(1.0)
        return x

    f(tf.constant(1.0), False)
    f(tf.constant(1.0), True)


def _variable_on_every_call(tf):
    tf.function(lambda x: tf.Variable(1.0) + x)(tf.constant(1.0))


def _signature(shape, dtype):
    def run(tf):
        f = tf.function(lambda x: x * 2.0, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        f(tf.ones([2, 3]))
        f(tf.ones(shape, getattr(tf, dtype)))

    run.__name__ = f"_signature_{'x'.join(map(str, shape)) or 'scalar'}_{dtype}"
    return run


def _while_shape_change(tf):
    f = tf.function(lambda x: tf.while_loop(lambda a: tf.shape(a)[0] < 5, lambda a: [tf.concat([a, a], 0)], [x]))
    f(tf.constant([1.0]))


def _while_dtype_change(tf):
    f = tf.function(lambda x: tf.while_loop(lambda a: a < 5, lambda a: [tf.cast(a, tf.float32) + 1.0], [x]))
    f(tf.constant(1))


def _exception_after_assign(tf):
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        v.assign(100.0)
        raise KeyError("boom")

    try:
        f(tf.constant(1.0))
    finally:
        assert v.numpy() == 1.0


ERRORS = [_bool_of_traced_tensor, _if_on_traced_tensor_without_autograph, _numpy_of_traced_tensor,
          _variable_on_a_later_call, _variable_on_every_call, _signature([2, 4], "float32"),
          _signature([3], "float32"), _signature([2, 3], "float64"), _signature([2, 3], "int32"),
          _while_shape_change, _while_dtype_change, _exception_after_assign, _case_without_default_none_true,
          _case_without_default_none_true_compiled, _case_exclusive_two_true, _case_exclusive_two_true_compiled,
          _switch_case_non_contiguous_keys, _switch_case_python_int_index, _case_python_bool_predicate]

ERROR_DIFFERENCES: dict = {}


def _error_type(snippet, module):
    with pytest.raises(Exception) as info:
        snippet(module)
    return info.value


@pytest.mark.parametrize("snippet", ERRORS + [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, raises=pytest.fail.Exception, reason=r))  # DID NOT RAISE
    for s, r in ERROR_DIFFERENCES.items()
], ids=lambda f: f.__name__.strip("_"))
def test_errors_agree_with_tensorflow(snippet):
    expected = _error_type(snippet, tf_real)
    got = _error_type(snippet, tapejax)
    # tapejax's classes are its own (tf.errors.X), so compare names and the builtin base TF code catches
    assert type(got).__name__ == type(expected).__name__, f"tapejax {got!r}, TensorFlow {expected!r}"
    builtin = next(c for c in type(expected).__mro__ if c.__module__ == "builtins")
    assert isinstance(got, builtin)


def test_bool_of_traced_tensor_is_a_type_error_naming_tf_cond():
    got = _error_type(_bool_of_traced_tensor, tapejax)
    assert isinstance(got, TypeError) and isinstance(got, tapejax.errors.OperatorNotAllowedInGraphError)
    assert isinstance(_error_type(_bool_of_traced_tensor, tf_real), TypeError)
    assert "tf.cond" in str(got)


# ---------------------------------------------------------------------------------------------------
# tf.print
# ---------------------------------------------------------------------------------------------------


def _prints(tf):
    @tf.function
    def f(x, y):
        tf.print("vals:", x, y, output_stream=sys.stdout)
        tf.print(x * 1.0000001, tf.constant(1.0 / 3.0, tf.float64), output_stream=sys.stdout)
        tf.print(tf.range(20), summarize=2, output_stream=sys.stdout)
        tf.print(tf.reshape(tf.range(12), [3, 4]), output_stream=sys.stdout)
        tf.print(tf.reshape(tf.range(80), [8, 10]), output_stream=sys.stdout)
        tf.print(tf.constant([True, False]), "end", sep="|", end="$\n", output_stream=sys.stdout)
        tf.print({"a": x, "b": [y, 3]}, output_stream=sys.stdout)
        tf.print(tf.range(10), summarize=-1, output_stream=sys.stdout)
        tf.print(tf.constant([1.5, -0.25, 0.125]), tf.constant([[1, -2], [3, 4]], tf.int64), output_stream=sys.stdout)
        return x

    f(tf.constant(1.0 / 3.0), tf.range(1, 11))
    f(tf.constant(2.0 / 3.0), tf.range(11, 21))


def _prints_short_floats(tf):
    @tf.function
    def f(x):
        tf.print(x, x * 1e10, output_stream=sys.stdout)
        tf.print(tf.cast(x, tf.float64) * 3.0, tf.cast(x, tf.float16), output_stream=sys.stdout)
        tf.print(tf.constant([1 / 3, 1e-5, 1e16, 1e-45, -1e-45]), tf.constant([1 / 3, 0.1 * 3, 1e-320], tf.float64),
                 tf.constant([1 + 2j]), output_stream=sys.stdout)
        return x

    f(tf.constant([0.1, 0.2, 3.0e-8, 123456789.0, 0.000123456789, -0.0, float("inf"), float("nan")]))


def _printed(snippet, capfd):
    capfd.readouterr()
    snippet(tapejax)
    got = capfd.readouterr().out
    snippet(tf_real)
    expected = capfd.readouterr().out
    return got, expected


def test_tf_print_text_agrees_with_tensorflow(capfd):
    got, expected = _printed(_prints, capfd)
    assert expected.count("vals:") == 2  # TF printed on both calls
    assert got == expected


def test_tf_print_short_floats_agree_with_tensorflow(capfd):
    got, expected = _printed(_prints_short_floats, capfd)
    assert got == expected


# ---------------------------------------------------------------------------------------------------
# TF's warning about frequent retracing
# ---------------------------------------------------------------------------------------------------


def _retrace_warnings(tf, caplog):
    def f(x):
        return x + 1.0

    step = tf.function(f)
    for n in range(1, 9):  # a new shape on every call: TF warns on the 5th and 6th, then no more
        step(tf.ones([n]))
    for _ in range(3):  # a tf.function made anew in a loop: the same Python code, its warnings already spent
        tf.function(f)(tf.ones([1]))

    @tf.function
    def g(x):
        return x * 2.0

    for _ in range(20):  # calls that do not trace: no warning
        g(tf.ones([3]))
    messages = [r.getMessage().replace(repr(f), "<f>") for r in caplog.records
                if r.name == "tensorflow" and "retracing" in r.getMessage()]
    caplog.clear()
    return messages


def test_retracing_warning_agrees_with_tensorflow(caplog):
    import logging

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        got, expected = _retrace_warnings(tapejax, caplog), _retrace_warnings(tf_real, caplog)
    assert len(expected) == 2 and "5 out of the last 5 calls to <f>" in expected[0]
    # TF's text first, then tapejax's cause of the latest retrace (tf.debugging.explain_retrace)
    assert len(got) == len(expected)
    for mine, tfs in zip(got, expected):
        assert mine.startswith(tfs + " tapejax: the latest retrace was caused by: argument `x`: shape "), mine
