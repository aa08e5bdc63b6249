"""tf.TensorArray against TensorFlow: eager semantics (shared elements, clear_after_read, TF's errors), the
operations, gradients through them, and the classic AutoGraph loop `ta = ta.write(i, ...)` inside tf.function.
Each snippet takes the module (`tf`) and runs unchanged on both."""

from __future__ import annotations

import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same_outcome  # noqa: E402


def _both(snippet):
    assert_same_outcome(snippet, tapejax, tf_real)


def _filled(tf, **kwargs):
    ta = tf.TensorArray(tf.float32, size=3, **kwargs)
    return ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0])


EAGER = {
    "stack_with_unwritten": lambda tf: _filled(tf).stack(),
    "read_unwritten": lambda tf: _filled(tf).read(2),
    "size": lambda tf: _filled(tf).size(),
    "read_twice_cleared": lambda tf: [_filled(tf).read(0) for _ in range(1)] + [_filled(tf).read(0)],
    "read_twice": lambda tf: (lambda ta: (ta.read(0), ta.read(0)))(_filled(tf)),
    "read_twice_kept": lambda tf: (lambda ta: (ta.read(0), ta.read(0)))(_filled(tf, clear_after_read=False)),
    "copies_share": lambda tf: (lambda ta: (ta.write(2, [5.0, 6.0]), ta.stack())[1])(_filled(tf)),
    "write_out_of_range": lambda tf: tf.TensorArray(tf.float32, size=2).write(2, 1.0),
    "write_negative": lambda tf: tf.TensorArray(tf.float32, size=2).write(-1, 1.0),
    "read_out_of_range": lambda tf: tf.TensorArray(tf.float32, size=2).read(5),
    "dynamic_size": lambda tf: tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(3, 1.0).stack(),
    "wrong_dtype": lambda tf: tf.TensorArray(tf.float32, size=2).write(0, tf.constant(1, tf.int32)),
    "python_int_into_float": lambda tf: tf.TensorArray(tf.float32, size=2).write(0, 1).read(0),
    "wrong_shape": lambda tf: tf.TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, [1.0, 2.0]),
    "wrong_element_shape": lambda tf: tf.TensorArray(tf.float32, size=2, element_shape=[2]).write(0, [1.0]),
    "element_shape": lambda tf: _filled(tf).element_shape.as_list(),
    "stack_empty": lambda tf: tf.TensorArray(tf.float32, size=0).stack(),
    "stack_empty_shaped": lambda tf: tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack(),
    "stack_unknown_shape": lambda tf: tf.TensorArray(tf.float32, size=2).stack(),
    "stack_zeros_of_element_shape": lambda tf: tf.TensorArray(tf.float32, size=2, element_shape=[3]).stack(),
    "unstack_read": lambda tf: tf.TensorArray(tf.float32, size=3).unstack([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
                                                                         ).read(2),
    "unstack_too_many": lambda tf: tf.TensorArray(tf.float32, size=2).unstack([1.0, 2.0, 3.0]),
    "gather": lambda tf: tf.TensorArray(tf.float32, size=3).unstack([1.0, 2.0, 3.0]).gather([2, 0]),
    "scatter": lambda tf: tf.TensorArray(tf.float32, size=3).scatter([2, 0], [5.0, 6.0]).stack(),
    "scatter_grows": lambda tf: tf.TensorArray(tf.float32, size=0, dynamic_size=True).scatter([4, 0], [5.0, 6.0]
                                                                                             ).size(),
    "concat": lambda tf: tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0]).write(
        1, [2.0, 3.0]).concat(),
    "concat_inferred_shape": lambda tf: tf.TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, [2.0, 3.0]),
    "concat_scalars": lambda tf: tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(1, 2.0).concat(),
    "split": lambda tf: (lambda ta: (ta.read(0), ta.read(1)))(
        tf.TensorArray(tf.float32, size=2, infer_shape=False).split([1.0, 2.0, 3.0], [1, 2])),
    "split_wrong_size": lambda tf: tf.TensorArray(tf.float32, size=0).split([1.0, 2.0, 3.0], [1, 2]),
    "split_bad_lengths": lambda tf: tf.TensorArray(tf.float32, size=2).split([1.0, 2.0, 3.0], [1, 1]),
    "int_dtype": lambda tf: tf.TensorArray(tf.int32, size=1).write(0, 5).stack(),
    "no_size": lambda tf: tf.TensorArray(tf.float32),
    "properties": lambda tf: (lambda ta: (ta.dtype.name, ta.dynamic_size, ta.handle is None, ta.flow))(
        tf.TensorArray(tf.float64, size=2, dynamic_size=True)),
    "close": lambda tf: tf.TensorArray(tf.float32, size=2).close(),
}


@pytest.mark.parametrize("name", sorted(EAGER))
def test_eager(name):
    _both(EAGER[name])


def _gradients(tf):
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ta = tf.TensorArray(tf.float32, size=3)
        for i in range(3):
            ta = ta.write(i, x[i] * x[i])
        targets = [ta.stack(), ta.read(1),
                   tf.TensorArray(tf.float32, size=3).unstack(x * 2.0).read(2),
                   tf.TensorArray(tf.float32, size=3).unstack(x).gather([0, 0, 2]),
                   tf.TensorArray(tf.float32, size=2, infer_shape=False).split(x, [1, 2]).concat(),
                   tf.TensorArray(tf.float32, size=3).scatter([2, 0], x[:2] * 3.0).stack()]
    return [tape.gradient(t, x) for t in targets]


def test_eager_gradients():
    _both(_gradients)


def _write_loop(tf, n, dynamic):
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=0 if dynamic else n, dynamic_size=dynamic)
        h = tf.zeros([2])
        for i in tf.range(n):
            h = tf.tanh(h * x + tf.cast(i, tf.float32))
            ta = ta.write(i, h)
        return ta.stack()
    return f


@pytest.mark.parametrize("dynamic", [False, True])
def test_autograph_write_loop_and_its_gradient(dynamic):
    def snippet(tf):
        x = tf.constant([0.5, -1.5])
        f = _write_loop(tf, 4, dynamic)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(f(x) ** 2)
        return f(x), tape.gradient(y, x)
    _both(snippet)


def test_gradient_with_the_tape_inside_tf_function():
    def snippet(tf):
        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                ta = tf.TensorArray(tf.float32, size=3)
                for i in tf.range(3):
                    ta = ta.write(i, tf.gather(x, i) ** 2 * tf.cast(i + 1, tf.float32))
                y = tf.reduce_sum(ta.stack()) + ta.read(1)
            return tape.gradient(y, x)
        return step(tf.constant([1.0, 2.0, 3.0]))
    _both(snippet)


def test_reads_in_a_traced_loop():
    def snippet(tf):
        @tf.function
        def f(x):
            ta = tf.TensorArray(tf.float32, size=3).unstack(x)
            s = tf.constant(0.0)
            for i in tf.range(3):
                s += ta.read(i) * ta.read(2 - i)
            return s, ta.read(0), ta.read(0)  # read twice: allowed inside tf.function
        return f(tf.constant([1.0, 2.0, 3.0]))
    _both(snippet)


def test_tf_while_loop_carries_an_array():
    def snippet(tf):
        @tf.function
        def f():
            ta = tf.TensorArray(tf.float32, size=3)
            _, ta = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t.write(i, tf.cast(i, tf.float32) * 2)),
                                  (0, ta))
            return ta.stack(), ta.concat() if False else ta.gather([2, 1])
        return f()
    _both(snippet)


def test_traced_static_indices_and_unwritten_reads():
    def snippet(tf):
        @tf.function
        def f(x):
            ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
            ta = ta.write(0, x).write(0, x * 2.0)  # a second write replaces the first (TF's graph TensorArray)
            return ta.stack(), ta.read(2), ta.size()
        return f(tf.constant([1.0, 2.0]))
    _both(snippet)


def test_traced_errors():
    def read_unknown(tf):
        return tf.function(lambda: tf.TensorArray(tf.float32, size=3).read(1))()

    def write_out_of_range(tf):
        return tf.function(lambda: tf.TensorArray(tf.float32, size=3).write(5, 1.0).stack())()
    _both(read_unknown)
    _both(write_out_of_range)
