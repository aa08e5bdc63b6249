"""Control flow: each construct inside tf.function (lowered to jax.lax) computes what it computes eagerly.

Eagerly a construct is Python control flow; inside a trace its bodies are captured and lowered to
`jax.lax.cond` / `switch` / `while_loop` / `scan` / `jax.vmap`. The oracle is the same program run eagerly (and,
where it is easy to write, the same program written with jax.lax and differentiated by `jax.grad`). Every
compiled program is called on inputs that take each branch (or loop length) without tracing again.
"""

from __future__ import annotations

import collections
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def close(got, expected, rtol=1e-5, atol=1e-6):
    """Tensors (or nests of them; the same nest structure) equal in dtype, shape and value."""
    is_leaf = lambda x: hasattr(x, "numpy")  # noqa: E731
    got_leaves, got_tree = jax.tree_util.tree_flatten(got, is_leaf=is_leaf)
    exp_leaves, exp_tree = jax.tree_util.tree_flatten(expected, is_leaf=is_leaf)
    assert got_tree == exp_tree, (got_tree, exp_tree)
    for g, e in zip(got_leaves, exp_leaves):
        g = g.numpy() if hasattr(g, "numpy") else np.asarray(g)
        e = e.numpy() if hasattr(e, "numpy") else np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g, e)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def same_compiled_and_eager(fn, *arg_sets, rtol=1e-5):
    """`tf.function(fn)` returns what `fn` returns eagerly on every argument tuple, all with one trace."""
    compiled = tf.function(fn)
    results = []
    for args in arg_sets:
        expected = fn(*args)
        close(compiled(*args), expected, rtol=rtol)
        results.append(expected)
    assert compiled.experimental_get_tracing_count() == 1, "new values of the same shapes: no retrace"
    return results


def c(value, dtype=tf.float32):
    return tf.constant(value, dtype)


def gradients(fn, *args):
    """(fn(*args), d sum(fn) / d args) on a tape that watches the arguments."""
    with tf.GradientTape() as tape:
        tape.watch(list(args))
        out = fn(*args)
        total = tf.add_n([tf.reduce_sum(o) for o in jax.tree_util.tree_leaves(
            out, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))])
    return out, tape.gradient(total, list(args))


def same_gradients_compiled_and_eager(fn, *arg_sets, outside=True):
    """Gradients through `tf.function(fn)`, from a tape outside it and from one inside it, equal the eager ones."""
    compiled = tf.function(fn)
    inside = tf.function(lambda *args: gradients(fn, *args))
    results = []
    for args in arg_sets:
        expected = gradients(fn, *args)
        if outside:
            close(gradients(compiled, *args), expected)
        close(inside(*args), expected)
        results.append(expected)
    assert compiled.experimental_get_tracing_count() == (1 if outside else 0)
    assert inside.experimental_get_tracing_count() == 1
    return results


# ---------------------------------------------------------------------------------------------------
# conditionals
# ---------------------------------------------------------------------------------------------------


def _cond(x):
    return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * 2.0, lambda: x * x - 1.0)


def test_cond_each_branch():
    pos, neg = same_compiled_and_eager(_cond, (c([0.5, 1.0]),), (c([-0.5, -1.0]),))
    close(pos, c(np.sin(np.float32([0.5, 1.0])) * 2.0))
    close(neg, c(np.square(np.float32([-0.5, -1.0])) - 1.0))


def test_cond_returns_nests_and_python_numbers():
    def f(x):
        return tf.cond(x > 0, lambda: {"a": x, "b": (x * 2.0, 1.0)}, lambda: {"a": -x, "b": (x * 3.0, 2.0)})

    compiled = tf.function(f)
    for x, number in ((2.0, 1.0), (-2.0, 2.0)):
        expected = f(c(x))
        assert expected["b"][1] == number  # eagerly the branch's own Python number, as in TF
        got = compiled(c(x))
        close(got["a"], expected["a"])
        close(got["b"][0], expected["b"][0])
        close(got["b"][1], c(number))  # a tf.function returns Python numbers as tensors, as in TF
    assert compiled.experimental_get_tracing_count() == 1


def test_cond_with_a_python_predicate_inside_a_function_is_python():
    def f(x, flag):
        return tf.cond(flag, lambda: x + 1.0, lambda: x - 1.0)

    compiled = tf.function(f)
    close(compiled(c(1.0), True), c(2.0))
    close(compiled(c(1.0), False), c(0.0))


def test_cond_needs_both_branches():
    with pytest.raises(TypeError):
        tf.cond(c(True, tf.bool), lambda: 1.0)


def test_cond_branches_read_and_assign_variables():
    def make():
        v, count = tf.Variable(1.0), tf.Variable(0)

        def step(x):
            def grow():
                v.assign(v * x)
                count.assign_add(1)
                return v + 1.0

            def shrink():
                v.assign_sub(1.0)
                return v * 10.0

            return tf.cond(x > 0, grow, shrink), v.read_value(), count.read_value()

        return (v, count), step

    (eager_vars, eager_step), (vars_, step) = make(), make()
    compiled = tf.function(step)
    for x in (3.0, -1.0, 2.0, -4.0):
        close(compiled(c(x)), eager_step(c(x)))
        close([v.read_value() for v in vars_], [v.read_value() for v in eager_vars])
    assert compiled.experimental_get_tracing_count() == 1


def test_cond_gradient_equals_eager_and_jax():
    x_pos, x_neg = c([0.5, 1.0]), c([-0.5, -1.0])
    (_, g_pos), (_, g_neg) = same_gradients_compiled_and_eager(_cond, (x_pos,), (x_neg,))

    def jax_cond(x):
        return jnp.sum(jax.lax.cond(jnp.sum(x) > 0, lambda: jnp.sin(x) * 2.0, lambda: x * x - 1.0))

    close(g_pos, [jax.grad(jax_cond)(x_pos.numpy())])
    close(g_neg, [jax.grad(jax_cond)(x_neg.numpy())])


def test_cond_gradient_with_respect_to_a_variable():
    v = tf.Variable(1.5)
    f = lambda x: tf.cond(x > 0, lambda: v * x, lambda: v * v)  # noqa: E731
    compiled = tf.function(f)
    for x, by_hand in ((2.0, 2.0), (-2.0, 3.0)):  # d(v x)/dv = x; d(v v)/dv = 2 v
        with tf.GradientTape() as tape:
            y = compiled(c(x))
        with tf.GradientTape() as eager_tape:
            z = f(c(x))
        g = tape.gradient(y, v)
        close(g, eager_tape.gradient(z, v))
        close(g, c(by_hand))


def _switch(i, x):
    return tf.switch_case(i, [lambda: x + 1.0, lambda: x * 2.0, lambda: tf.sin(x)], default=lambda: x * 0.0 - 7.0)


def test_switch_case_each_branch_and_out_of_range_to_default():
    x = c([0.5, 2.0])
    results = same_compiled_and_eager(_switch, *[(c(i, tf.int32), x) for i in (0, 1, 2, 3, 17, -1)])
    close(results[:3], [x + 1.0, x * 2.0, tf.sin(x)])
    for out_of_range in results[3:]:
        close(out_of_range, c([-7.0, -7.0]))


def test_switch_case_without_default_uses_the_last_branch():
    def f(i, x):
        return tf.switch_case(i, [lambda: x + 1.0, lambda: x * 2.0, lambda: x - 3.0])

    results = same_compiled_and_eager(f, *[(c(i, tf.int32), c(1.5)) for i in (0, 1, 2, 5, -2)])
    close(results, [c(2.5), c(3.0), c(-1.5), c(-1.5), c(-1.5)])


def test_switch_case_with_a_dict_and_pairs():
    def f(i, x):
        return (tf.switch_case(i, {0: lambda: x * 10.0, 1: lambda: x * 20.0}),
                tf.switch_case(i, [(0, lambda: x + 1.0), (1, lambda: x + 2.0)]))

    same_compiled_and_eager(f, (c(0, tf.int32), c(1.0)), (c(1, tf.int32), c(1.0)))


def _case(x):
    return tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)], default=lambda: x + 100.0)


def test_case_each_predicate_and_default():
    results = same_compiled_and_eager(_case, (c(-2.0),), (c(0.5),), (c(3.0),))
    close(results, [c(2.0), c(5.0), c(103.0)])


def test_case_first_true_predicate_wins_and_without_default():
    def f(x):
        return tf.case([(x < 5, lambda: x * 2.0), (x < 10, lambda: x * 3.0), (x < 100, lambda: x * 4.0)])

    results = same_compiled_and_eager(f, (c(1.0),), (c(7.0),), (c(50.0),))
    close(results, [c(2.0), c(21.0), c(200.0)])


def test_case_gradient():
    same_gradients_compiled_and_eager(lambda x: _case(x * x - 1.0), (c(0.5),), (c(1.2),), (c(3.0),))


# tf.case's input errors (TF raises InvalidArgumentError): eagerly at once, compiled when the step runs


def _no_default(x):
    return tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)])


def _exclusive(x):
    return tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)], default=lambda: x + 100.0, exclusive=True)


@pytest.mark.parametrize("fn, bad, good, message", [
    (_no_default, 5.0, 0.5, "None of conditions evaluated as True"),
    (_exclusive, -5.0, 0.5, "exclusive=True: more than 1 conditions"),
])
def test_case_input_errors_eagerly_and_compiled(fn, bad, good, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        fn(c(bad))
    compiled = tf.function(fn)
    close(compiled(c(good)), fn(c(good)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        compiled(c(bad))
    close(compiled(c(good)), fn(c(good)))  # the failed call changed nothing
    assert compiled.experimental_get_tracing_count() == 1


def test_case_exclusive_without_default_does_not_count_the_last_predicate():
    # TF makes the last pair the default, so only the predicates before it must be exclusive
    f = lambda x: tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)], exclusive=True)  # noqa: E731
    same_compiled_and_eager(f, (c(-0.5),), (c(0.5),))
    close(f(c(-0.5)), c(0.5))


def test_a_failing_case_check_leaves_every_variable_unchanged():
    v, steps = tf.Variable([1.0, 2.0]), tf.Variable(0)

    @tf.function
    def step(x):
        steps.assign_add(1)
        v.assign(v * x)
        return _no_default(tf.reduce_sum(v))

    close(step(c(0.1)), c(3.0))  # sum(v) = 0.3
    close((v.read_value(), steps.read_value()), (c([0.1, 0.2]), c(1, tf.int32)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions evaluated as True"):
        step(c(100.0))  # sum(v) = 30: no predicate is true
    close((v.read_value(), steps.read_value()), (c([0.1, 0.2]), c(1, tf.int32)))
    with tf.GradientTape() as tape:  # under a tape outside the call too
        with pytest.raises(tf.errors.InvalidArgumentError):
            step(c(100.0))
    close((v.read_value(), steps.read_value()), (c([0.1, 0.2]), c(1, tf.int32)))
    assert step.experimental_get_tracing_count() == 1
    del tape


def test_a_case_check_in_a_branch_runs_only_when_the_branch_runs():
    w = tf.Variable(0.0)

    @tf.function
    def f(x):
        w.assign_add(1.0)
        return tf.cond(x > 0, lambda: _no_default(x), lambda: x * 3.0)

    close(f(c(-2.0)), c(-6.0))  # the branch holding the failing check is not taken
    close(f(c(0.5)), c(5.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions"):
        f(c(2.0))
    close(w.read_value(), c(2.0))


def test_case_checks_inside_loops_and_maps():
    loop = tf.function(lambda n: tf.while_loop(lambda i: i < n, lambda i: tf.case([(i < 3, lambda: i + 1)]),
                                               [tf.constant(0)]))
    close(loop(c(3, tf.int32)), [c(3, tf.int32)])
    with pytest.raises(tf.errors.InvalidArgumentError):
        loop(c(5, tf.int32))  # the fourth iteration has no true predicate
    mapped = tf.function(lambda x: tf.vectorized_map(lambda r: tf.case([(r > 0, lambda: r * 2.0)]), x))
    close(mapped(c([1.0, 2.0])), c([2.0, 4.0]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        mapped(c([1.0, -1.0]))


def test_case_gradient_with_a_check():
    same_gradients_compiled_and_eager(lambda x: _no_default(x * x - 1.0), (c(0.5),), (c(0.2),))


def test_case_and_switch_case_argument_errors():
    x = c(1.0)
    with pytest.raises(TypeError, match="pred must be a Tensor"):
        tf.case([(True, lambda: x)], default=lambda: x)
    with pytest.raises(TypeError, match="type bool"):
        tf.case([(x, lambda: x)], default=lambda: x)
    with pytest.raises(TypeError, match="2-tuple"):
        tf.case([(x > 0, lambda: x, 1)], default=lambda: x)
    with pytest.raises(ValueError, match="contiguous range of \\[0 to 2\\) but found \\{0,2\\}"):
        tf.switch_case(c(1, tf.int32), {0: lambda: x, 2: lambda: x * 2.0})
    with pytest.raises(ValueError, match="contiguous range"):
        tf.switch_case(c(1, tf.int32), [(1, lambda: x), (1, lambda: x)])
    with pytest.raises(TypeError, match="key must be a Python `int`"):
        tf.switch_case(c(0, tf.int32), {"a": lambda: x})
    with pytest.raises(TypeError, match="'branch_index' must be a Tensor"):
        tf.switch_case(1, [lambda: x])
    with pytest.raises(TypeError, match="integer Tensor"):
        tf.switch_case(c(1.0), [lambda: x])
    with pytest.raises(ValueError, match="at least one"):
        tf.switch_case(c(0, tf.int32), [])
    with pytest.raises(ValueError, match="contiguous range"):  # raised while tracing, as TF does
        tf.function(lambda i: tf.switch_case(i, {0: lambda: x, 2: lambda: x}))(c(0, tf.int32))


def test_switch_case_keys_out_of_order():
    f = lambda i: tf.switch_case(i, {2: lambda: c(30.0), 0: lambda: c(10.0), 1: lambda: c(20.0)})  # noqa: E731
    close(same_compiled_and_eager(f, *[(c(i, tf.int32),) for i in (0, 1, 2)]), [c(10.0), c(20.0), c(30.0)])


# ---------------------------------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------------------------------


def _while_tuple(x, n):
    return tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 1.5 + 1.0), (tf.constant(0), x))


def test_while_loop_tuple_loop_vars():
    x = c([1.0, -2.0])
    results = same_compiled_and_eager(_while_tuple, (x, c(0, tf.int32)), (x, c(3, tf.int32)), (x, c(5, tf.int32)))
    expected = x.numpy()
    for _ in range(3):
        expected = expected * 1.5 + 1.0
    close(results[1], (c(3, tf.int32), c(expected)))
    close(results[0], (c(0, tf.int32), x))
    assert isinstance(results[1], tuple)


def test_while_loop_list_loop_vars():
    def f(x):
        return tf.while_loop(lambda i, a: tf.reduce_sum(a) < 50.0, lambda i, a: [i + 1, a * 2.0], [tf.constant(0), x])

    results = same_compiled_and_eager(f, (c([1.0, 2.0]),), (c([30.0, 40.0]),), (c([0.1, 0.1]),))
    assert isinstance(results[0], list)
    close(results[0], [c(5, tf.int32), c([32.0, 64.0])])  # sums 3, 6, 12, 24, 48: five doublings
    close(results[1], [c(0, tf.int32), c([30.0, 40.0])])


def test_while_loop_single_tensor_loop_var():
    f = lambda x: tf.while_loop(lambda a: a < 10.0, lambda a: a * 2.0, x)  # noqa: E731
    results = same_compiled_and_eager(f, (c(1.0),), (c(3.0),), (c(20.0),))
    close(results, [c(16.0), c(12.0), c(20.0)])


Pt = collections.namedtuple("Pt", "i a")
Pair = collections.namedtuple("Pair", "j k")


def test_while_loop_namedtuple_loop_vars():
    def as_namedtuple(x):
        return tf.while_loop(lambda i, a: i < 4, lambda i, a: Pt(i + 1, a * 2.0), Pt(tf.constant(0), x))

    def holding_namedtuple(x):  # TF's docstring example
        return tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, Pair(p.j + p.k, p.j - p.k)),
                             (tf.constant(0), Pair(x, x * 2.0)))

    (first,) = same_compiled_and_eager(as_namedtuple, (c(1.5),))
    assert isinstance(first, Pt)
    close(first, Pt(c(4, tf.int32), c(24.0)))
    (second,) = same_compiled_and_eager(holding_namedtuple, (c(1.0),))
    assert isinstance(second[1], Pair)
    close(second, (c(3, tf.int32), Pair(c(6.0), c(-2.0))))  # (1,2) -> (3,-1) -> (2,4) -> (6,-2)


def test_while_loop_maximum_iterations():
    def f(x, limit):
        return tf.while_loop(lambda a: a < limit, lambda a: [a * 2.0], [x], maximum_iterations=3)

    results = same_compiled_and_eager(f, (c(1.0), c(1000.0)), (c(1.0), c(3.0)))
    close(results, [[c(8.0)], [c(4.0)]])  # stopped by the bound; stopped by the condition


def test_while_loop_maximum_iterations_as_a_tensor():
    def f(x, n):
        return tf.while_loop(lambda a: a < 100.0, lambda a: (a * 2.0,), (x,), maximum_iterations=n)

    results = same_compiled_and_eager(f, (c(1.0), c(3, tf.int32)), (c(1.0), c(5, tf.int32)))
    close(results, [(c(8.0),), (c(32.0),)])


def test_while_loop_body_assigns_variables():
    def make():
        total, steps = tf.Variable(0.0), tf.Variable(0)

        def step(n):
            def body(i):
                total.assign_add(tf.cast(i, tf.float32) * 0.5)
                steps.assign_add(1)
                return i + 1

            out = tf.while_loop(lambda i: i < n, body, [tf.constant(0)])
            return out, total.read_value(), steps.read_value()

        return (total, steps), step

    (eager_vars, eager_step), (vars_, step) = make(), make()
    compiled = tf.function(step)
    for n in (4, 0, 3):
        close(compiled(c(n, tf.int32)), eager_step(c(n, tf.int32)))
        close([v.read_value() for v in vars_], [v.read_value() for v in eager_vars])
    assert compiled.experimental_get_tracing_count() == 1
    assert vars_[0].numpy() == 0.5 * (0 + 1 + 2 + 3) + 0.5 * (0 + 1 + 2)


def test_while_loop_shape_change_inside_a_function_raises_value_error():
    def f(x):
        return tf.while_loop(lambda a: tf.shape(a)[0] < 5, lambda a: [tf.concat([a, a], 0)], [x])

    close(f(c([1.0])), [c([1.0] * 8)])  # eagerly a Python loop: shapes may change, as in TF
    with pytest.raises(ValueError):
        tf.function(f)(c([1.0]))


def test_while_loop_dtype_change_inside_a_function_raises_type_error():
    @tf.function
    def f(x):
        return tf.while_loop(lambda a: a < 5, lambda a: [tf.cast(a, tf.float32) + 1.0], [x])

    with pytest.raises(TypeError):
        f(c(1, tf.int32))


def _bounded(x):
    return tf.while_loop(lambda i, a: i < 10, lambda i, a: (i + 1, tf.sin(a) * 1.5), (tf.constant(0), x),
                         maximum_iterations=4)[1]


def _bounded_jax(x):
    return jnp.sum(jax.lax.fori_loop(0, 4, lambda i, a: jnp.sin(a) * 1.5, x))


def test_bounded_while_loop_gradient_with_a_tape_inside():
    x = c([0.3, 0.7])
    inside = tf.function(lambda x: gradients(_bounded, x))
    expected = gradients(_bounded, x)
    close(inside(x), expected)
    close(expected[1], [jax.grad(_bounded_jax)(x.numpy())])
    close(inside(c([-0.2, 1.1])), gradients(_bounded, c([-0.2, 1.1])))
    assert inside.experimental_get_tracing_count() == 1


def test_bounded_while_loop_gradient_with_a_tape_outside():
    compiled = tf.function(_bounded)
    for x in (c([0.3, 0.7]), c([-0.2, 1.1])):
        got = gradients(compiled, x)
        close(got, gradients(_bounded, x))
        close(got[1], [jax.grad(_bounded_jax)(x.numpy())])
    assert compiled.experimental_get_tracing_count() == 1


def _unbounded(x):
    return tf.while_loop(lambda a: a < 10.0, lambda a: [a * 2.0], [x])[0]


def test_unbounded_while_loop_under_a_tape_inside_a_function_raises_lookup_error():
    close(gradients(_unbounded, c(1.0)), (c(16.0), [c(16.0)]))  # eagerly a Python loop: differentiable

    @tf.function
    def f(x):
        return gradients(_unbounded, x)

    with pytest.raises(LookupError, match="maximum_iterations"):
        f(c(1.0))


def test_unbounded_while_loop_without_a_tape_runs_inside_a_function():
    same_compiled_and_eager(_unbounded, (c(1.0),), (c(0.01),), (c(11.0),))


def test_unbounded_while_loop_under_a_tape_outside_a_function_raises_lookup_error():
    compiled = tf.function(_unbounded)
    x = c(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = compiled(x)
    with pytest.raises(LookupError, match="maximum_iterations"):
        tape.gradient(y, x)


def test_forward_accumulator_through_an_unbounded_while_loop_inside_a_function():
    def jvp(x):
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            y = _unbounded(x)
        return acc.jvp(y)

    close(tf.function(jvp)(c(1.0)), jvp(c(1.0)))


# ---------------------------------------------------------------------------------------------------
# scan, foldl, foldr
# ---------------------------------------------------------------------------------------------------


ELEMS = np.array([[1.0, 2.0], [3.0, -4.0], [0.5, 6.0], [-1.0, 0.25]], np.float32)


def _numpy_scan(fn, elems, init, reverse=False):
    order = range(len(elems) - 1, -1, -1) if reverse else range(len(elems))
    acc, rows = init, {}
    for i in order:
        acc = fn(acc, elems[i])
        rows[i] = acc
    return np.stack([rows[i] for i in range(len(elems))])


def test_scan_without_initializer():
    f = lambda x: tf.scan(lambda a, e: a * 0.5 + e, x)  # noqa: E731
    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS * -2.0),))
    rest = _numpy_scan(lambda a, e: a * 0.5 + e, ELEMS[1:], ELEMS[0])
    close(result, c(np.concatenate([ELEMS[:1], rest])))  # the first element starts the scan and is its first row


def test_scan_with_initializer():
    f = lambda x: tf.scan(lambda a, e: a * 0.5 + tf.reduce_sum(e * e), x, initializer=tf.constant(1.0))  # noqa
    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS + 1.0),))
    close(result, c(_numpy_scan(lambda a, e: a * 0.5 + np.sum(e * e), ELEMS, np.float32(1.0))))


@pytest.mark.parametrize("initializer", [None, np.zeros(2, np.float32)], ids=["no-initializer", "initializer"])
def test_scan_reverse(initializer):
    def f(x):
        init = None if initializer is None else tf.constant(initializer)
        return tf.scan(lambda a, e: a * 0.5 - e, x, initializer=init, reverse=True)

    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS[::-1].copy()),))
    if initializer is None:
        expected = np.concatenate([_numpy_scan(lambda a, e: a * 0.5 - e, ELEMS[:-1], ELEMS[-1], reverse=True),
                                   ELEMS[-1:]])
    else:
        expected = _numpy_scan(lambda a, e: a * 0.5 - e, ELEMS, initializer, reverse=True)
    close(result, c(expected))


def test_scan_nested_elems_and_accumulators():
    def f(x):
        return tf.scan(lambda a, e: (a[0] + tf.reduce_sum(e["p"]), a[1] * e["q"]), {"p": x, "q": tf.sin(x)},
                       initializer=(tf.constant(0.0), tf.ones([2])))

    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS * 0.5),))
    assert isinstance(result, tuple)
    close(result[0], c(np.cumsum(ELEMS.sum(axis=1))))
    close(result[1], c(np.cumprod(np.sin(ELEMS), axis=0)))


def test_scan_nested_without_initializer():
    f = lambda x: tf.scan(lambda a, e: (a[0] + e[0] * e[1], a[1] * e[1]), (x, x * 2.0))  # noqa: E731
    same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS - 1.0),))


def test_scan_gradient_equals_eager_and_jax():
    def f(x, w):
        return tf.scan(lambda a, e: tf.tanh(a * w + e), x, initializer=tf.zeros([2]))

    def jax_f(x, w):
        return jnp.sum(jax.lax.scan(lambda a, e: (jnp.tanh(a * w + e),) * 2, jnp.zeros(2, x.dtype), x)[1])

    w = c([0.7, -0.3])
    ((_, grads), _) = same_gradients_compiled_and_eager(f, (c(ELEMS), w), (c(ELEMS * 0.1), w))
    close(grads, list(jax.grad(jax_f, argnums=(0, 1))(ELEMS, w.numpy())))


def test_foldl_and_foldr():
    def f(x):
        return (tf.foldl(lambda a, e: a * 0.5 + e, x),
                tf.foldl(lambda a, e: a - tf.reduce_sum(e * e), x, initializer=tf.constant(2.0)),
                tf.foldr(lambda a, e: a * 0.5 + e, x),
                tf.foldr(lambda a, e: a * 0.5 - e, x, initializer=tf.ones([2])))

    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS * 3.0),))
    left = functools.reduce(lambda a, e: a * 0.5 + e, ELEMS[1:], ELEMS[0])
    right = functools.reduce(lambda a, e: a * 0.5 + e, ELEMS[-2::-1], ELEMS[-1])
    close(result, (c(left), c(2.0 - float(np.sum(ELEMS * ELEMS))), c(right),
                   c(functools.reduce(lambda a, e: a * 0.5 - e, ELEMS[::-1], np.ones(2, np.float32)))))


def test_foldl_gradient_equals_eager_and_jax():
    f = lambda x: tf.foldl(lambda a, e: a * e + tf.sin(e), x)  # noqa: E731
    (_, grads), _ = same_gradients_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS * 0.5),))

    def jax_f(x):
        return jnp.sum(jax.lax.scan(lambda a, e: (a * e + jnp.sin(e), None), x[0], x[1:])[0])

    close(grads, [jax.grad(jax_f)(ELEMS)])


# ---------------------------------------------------------------------------------------------------
# map_fn and vectorized_map
# ---------------------------------------------------------------------------------------------------


def test_map_fn():
    f = lambda x: tf.map_fn(lambda r: tf.reduce_sum(tf.sin(r)) * r, x)  # noqa: E731
    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS * 2.0),))
    close(result, c(np.sin(ELEMS).sum(axis=1, keepdims=True) * ELEMS))


def test_map_fn_nests_and_output_signature():
    def f(x):
        return (tf.map_fn(lambda r: r[0] * r[1], (x, x + 1.0), fn_output_signature=tf.float32),
                tf.map_fn(lambda r: (r, tf.reduce_max(r)), x, fn_output_signature=(tf.float32, tf.float32)),
                tf.map_fn(lambda r: tf.cast(r > 0, tf.int32), x, fn_output_signature=tf.int32))

    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(-ELEMS),))
    close(result, (c(ELEMS * (ELEMS + 1.0)), (c(ELEMS), c(ELEMS.max(axis=1))), c((ELEMS > 0).astype(np.int32),
                                                                                   tf.int32)))


def test_map_fn_reads_a_variable():
    v = tf.Variable([2.0, -1.0])

    def f(x):
        return tf.map_fn(lambda r: r * v, x)

    def grads(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.map_fn(lambda r: tf.sin(r * v), x))
        return tape.gradient(y, [x, v])

    compiled, compiled_grads = tf.function(f), tf.function(grads)
    close(compiled(c(ELEMS)), c(ELEMS * np.array([2.0, -1.0], np.float32)))
    close(compiled_grads(c(ELEMS)), grads(c(ELEMS)))
    v.assign([0.5, 0.25])
    close(compiled(c(ELEMS)), f(c(ELEMS)))
    close(compiled_grads(c(ELEMS)), grads(c(ELEMS)))
    assert compiled.experimental_get_tracing_count() == compiled_grads.experimental_get_tracing_count() == 1


def test_map_fn_gradient_equals_eager_and_jax():
    f = lambda x: tf.map_fn(lambda r: tf.sin(r) * tf.reduce_sum(r * r), x)  # noqa: E731
    (_, grads), _ = same_gradients_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS * 0.3),))
    jax_f = lambda x: jnp.sum(jax.lax.map(lambda r: jnp.sin(r) * jnp.sum(r * r), x))  # noqa: E731
    close(grads, [jax.grad(jax_f)(ELEMS)])


def test_vectorized_map():
    f = lambda x: tf.vectorized_map(lambda r: tf.reduce_sum(r * r) * r + 1.0, x)  # noqa: E731
    (result, _) = same_compiled_and_eager(f, (c(ELEMS),), (c(ELEMS * 0.5),))
    close(result, c((ELEMS * ELEMS).sum(axis=1, keepdims=True) * ELEMS + 1.0))


def test_vectorized_map_nested_and_gradient():
    f = lambda x, y: tf.vectorized_map(lambda r: tf.tanh(r[0]) * r[1], (x, y))  # noqa: E731
    (_, grads), _ = same_gradients_compiled_and_eager(f, (c(ELEMS), c(ELEMS * 2.0)), (c(-ELEMS), c(ELEMS)))
    jax_f = lambda x, y: jnp.sum(jax.vmap(lambda a, b: jnp.tanh(a) * b)(x, y))  # noqa: E731
    close(grads, list(jax.grad(jax_f, argnums=(0, 1))(ELEMS, ELEMS * 2.0)))


# ---------------------------------------------------------------------------------------------------
# constructs together
# ---------------------------------------------------------------------------------------------------


def test_cond_inside_scan_inside_while():
    def f(x, n):
        def body(i, acc):
            rows = tf.scan(lambda a, e: tf.cond(tf.reduce_sum(e) > 0, lambda: a + e, lambda: a * 0.5), x)
            return i + 1, acc + tf.reduce_sum(rows) * 0.01

        return tf.while_loop(lambda i, acc: i < n, body, (tf.constant(0), tf.constant(0.0)), maximum_iterations=5)

    same_compiled_and_eager(f, (c(ELEMS), c(2, tf.int32)), (c(-ELEMS), c(7, tf.int32)))
    same_gradients_compiled_and_eager(lambda x: f(x, 3)[1], (c(ELEMS),), (c(ELEMS * 0.5),))
