"""AutoGraph: Python control flow on tensors inside tf.function computes what the same function computes eagerly.

The oracle is the function run eagerly (plain Python on eager tensors) and, for gradients, the same program written
with jax.lax and differentiated by `jax.grad`. Every compiled function is called on inputs that take each branch
(or loop length) and must not trace again between them. Conditions that are Python values keep Python semantics,
as in TF. The programs are module-level functions (AutoGraph converts source, so it must be in a file).
Strict xfails mark the tapejax bugs these tests exposed; each reason names the cause.
"""

from __future__ import annotations

import ast
import inspect
import io
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def close(got, expected, rtol=1e-5, atol=1e-6):
    """Tensors (or nests of them; the same nest structure) equal in shape and value, and in dtype where both are
    tensors (a tf.function returns the Python numbers of its eager twin as tensors, as TF does)."""
    is_leaf = lambda x: hasattr(x, "numpy")
    got_leaves, got_tree = jax.tree_util.tree_flatten(got, is_leaf=is_leaf)
    exp_leaves, exp_tree = jax.tree_util.tree_flatten(expected, is_leaf=is_leaf)
    assert got_tree == exp_tree, (got_tree, exp_tree)
    for g, e in zip(got_leaves, exp_leaves):
        if hasattr(g, "dtype") and hasattr(e, "dtype") and hasattr(g, "numpy") and hasattr(e, "numpy"):
            assert g.dtype == e.dtype, (g, e)
        g = g.numpy() if hasattr(g, "numpy") else np.asarray(g)
        e = e.numpy() if hasattr(e, "numpy") else np.asarray(e)
        assert g.shape == e.shape, (g, e)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def c(value, dtype=tf.float32):
    return tf.constant(value, dtype)


def same_compiled_and_eager(fn, *arg_sets, traces=1):
    """`tf.function(fn)` returns what `fn` returns eagerly on every argument tuple, with `traces` traces in all."""
    compiled = tf.function(fn)
    results = []
    for args in arg_sets:
        expected = fn(*args)
        close(compiled(*args), expected)
        results.append(expected)
    assert compiled.experimental_get_tracing_count() == traces
    return results


def gradients(fn, *args):
    """(fn(*args), d sum(fn) / d args) on a tape that watches the arguments."""
    with tf.GradientTape() as tape:
        tape.watch(list(args))
        out = fn(*args)
        total = tf.add_n([tf.reduce_sum(o) for o in jax.tree_util.tree_leaves(
            out, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))])
    return out, tape.gradient(total, list(args))


def same_gradients_compiled_and_eager(fn, *arg_sets):
    """Gradients through `tf.function(fn)` from a tape outside it, and from a tape inside another tf.function,
    equal the eager ones on every argument tuple, each function traced once."""
    compiled = tf.function(fn)

    @tf.function
    def inside(*args):
        return gradients(fn, *args)

    results = []
    for args in arg_sets:
        expected = gradients(fn, *args)
        close(gradients(compiled, *args), expected)
        close(inside(*args), expected)
        results.append(expected)
    assert compiled.experimental_get_tracing_count() == 1
    assert inside.experimental_get_tracing_count() == 1
    return results


def line_of(fn, text):
    """The file line of the first line of `fn`'s source that contains `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# ---------------------------------------------------------------------------------------------------
# if / elif / else
# ---------------------------------------------------------------------------------------------------


def branchy(x):
    if tf.reduce_sum(x) > 0:
        y = x * x
    else:
        y = -3.0 * x
    return y


def jax_branchy(x):
    return jax.lax.cond(jnp.sum(x) > 0, lambda x: x * x, lambda x: -3.0 * x, x)


def test_tensor_if_takes_each_branch_with_one_trace():
    pos, neg = same_compiled_and_eager(branchy, (c([1.0, 2.0]),), (c([-1.0, -2.0]),))
    close(pos, c([1.0, 4.0]))
    close(neg, c([3.0, 6.0]))


def test_tensor_if_gradients_equal_eager_and_jax_grad_with_one_trace():
    inputs = ([1.0, 2.0], [-1.0, -2.0])
    results = same_gradients_compiled_and_eager(branchy, *[(c(x),) for x in inputs])
    for x, (_, (grad,)) in zip(inputs, results):
        expected = jax.grad(lambda x: jnp.sum(jax_branchy(x)))(jnp.asarray(x, jnp.float32))
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6)


def python_if_plain(x, flag):
    if flag:
        y = x * 2.0
        only_here = 1.0
    else:
        y = x * 3.0
    if flag:
        y = y + only_here
    return y


def test_python_if_is_python_and_retraces_per_value_as_in_tf():
    results = same_compiled_and_eager(python_if_plain, (c(1.0), True), (c(1.0), False), (c(2.0), True), traces=2)
    close(results, [c(3.0), c(3.0), c(5.0)])


def test_python_if_runs_only_the_taken_branch_at_trace_time():
    seen = []

    def f(x, flag):
        if flag:
            seen.append("true")
            y = x + 1.0
        else:
            seen.append("false")
            y = x - 1.0
        return y

    compiled = tf.function(f)
    close(compiled(c(1.0), True), c(2.0))
    assert seen == ["true"]


def test_tensor_if_traces_both_branches_once():
    seen = []

    def f(x):
        if x > 0:
            seen.append("true")
            y = x + 1.0
        else:
            seen.append("false")
            y = x - 1.0
        return y

    compiled = tf.function(f)
    close(compiled(c(1.0)), c(2.0))
    close(compiled(c(-1.0)), c(-2.0))
    assert sorted(seen) == ["false", "true"], "both branches are traced, once, as tf.cond does"


def chain(x):
    if x < -1.0:
        y = -x
    elif x < 1.0:
        y = x * x
    elif x < 2.0:
        y = x + 1.0
    else:
        y = x * 10.0
    return y


def test_tensor_if_elif_else_chain_with_one_trace():
    results = same_compiled_and_eager(chain, *[(c(v),) for v in (-2.0, 0.5, 1.5, 3.0)])
    close(results, [c(2.0), c(0.25), c(2.5), c(30.0)])
    grads = same_gradients_compiled_and_eager(chain, *[(c(v),) for v in (-2.0, 0.5, 1.5, 3.0)])
    close([g for _, (g,) in grads], [c(-1.0), c(1.0), c(1.0), c(10.0)])


def python_chain(x, mode):
    if mode == "square":
        y = x * x
    elif mode == "negate":
        y = -x
    else:
        y = x
    return y


def test_python_if_elif_else_chain_traces_per_mode():
    results = same_compiled_and_eager(python_chain, *[(c(3.0), m) for m in ("square", "negate", "other")], traces=3)
    close(results, [c(9.0), c(-3.0), c(3.0)])


def if_without_else(x):
    y = x
    if tf.reduce_max(x) > 1.0:
        y = y / tf.reduce_max(x)
    return y


def test_tensor_if_without_else_keeps_the_value_from_before():
    results = same_compiled_and_eager(if_without_else, (c([0.5, 4.0]),), (c([0.5, 0.25]),))
    close(results, [c([0.125, 1.0]), c([0.5, 0.25])])
    same_gradients_compiled_and_eager(if_without_else, (c([0.5, 4.0]),), (c([0.5, 0.25]),))


def several_outputs(x):
    if x > 0:
        a, b = x, x * 2.0
        n = 1
    else:
        a, b = -x, x
        n = 2
    return a + b, n


def test_tensor_if_assigning_several_variables_and_python_numbers():
    results = same_compiled_and_eager(several_outputs, (c(1.0),), (c(-1.0),))
    close(results, [(c(3.0), 1), (c(0.0), 2)])


def bool_tensor_if(x, flag):
    if flag:
        return x
    return -x


def test_boolean_tensor_argument_as_condition():
    same_compiled_and_eager(bool_tensor_if, (c(2.0), c(True, tf.bool)), (c(2.0), c(False, tf.bool)))


# ---------------------------------------------------------------------------------------------------
# early return
# ---------------------------------------------------------------------------------------------------


def early_return(x):
    if x > 0:
        return x * 2.0
    y = x - 1.0
    return y * 3.0


def test_early_return_in_tensor_if():
    results = same_compiled_and_eager(early_return, (c(1.0),), (c(-1.0),))
    close(results, [c(2.0), c(-6.0)])
    grads = same_gradients_compiled_and_eager(early_return, (c(1.0),), (c(-1.0),))
    close([g for _, (g,) in grads], [c(2.0), c(3.0)])


def return_in_both(x):
    if x > 0:
        return tf.sqrt(x)
    else:
        return x * x


def test_return_in_both_branches_of_a_tensor_if():
    results = same_compiled_and_eager(return_in_both, (c(4.0),), (c(-3.0),))
    close(results, [c(2.0), c(9.0)])


def python_early_return(x, flag):
    if flag:
        return x + 1.0
    return x - 1.0


def test_early_return_in_python_if():
    results = same_compiled_and_eager(python_early_return, (c(1.0), True), (c(1.0), False), traces=2)
    close(results, [c(2.0), c(0.0)])


def return_in_else_then_fall_through(x):
    if x > 0:
        y = x * 2.0
    else:
        return -x
    return y + 1.0


def test_return_in_else_then_a_final_return():
    same_compiled_and_eager(return_in_else_then_fall_through, (c(1.0),), (c(-1.0),))


def nested_return(x):
    if x > 0:
        if x > 10.0:
            return x * 100.0
        x = x + 1.0
    return x


def test_return_in_a_nested_tensor_if_needs_a_return_in_both_branches_as_in_tf():
    # TF's AutoGraph refuses this function (the inner tensor `if` returns in one branch only); so does tapejax.
    with pytest.raises(ValueError, match="else branch must also have a return statement"):
        tf.function(nested_return)(c(20.0))
    np.testing.assert_allclose(nested_return(c(20.0)).numpy(), 2000.0)  # eagerly it is plain Python


def return_in_python_loop(x):
    for i in range(10):
        if i > 3:
            return x * i
        x = x + 1.0
    return x


def test_return_inside_a_python_loop():
    (result,) = same_compiled_and_eager(return_in_python_loop, (c(1.0),))
    close(result, c(20.0))


# ---------------------------------------------------------------------------------------------------
# while
# ---------------------------------------------------------------------------------------------------


def double_until(x, limit):
    n = tf.constant(0)
    while tf.reduce_sum(x) < limit:
        x = x * 2.0
        n += 1
    return x, n


def test_tensor_while_runs_a_data_dependent_number_of_times_with_one_trace():
    results = same_compiled_and_eager(double_until, (c([1.0, 2.0]), c(10.0)), (c([1.0, 2.0]), c(100.0)),
                                      (c([20.0, 2.0]), c(10.0)))
    close(results, [(c([4.0, 8.0]), c(2, tf.int32)), (c([64.0, 128.0]), c(6, tf.int32)),
                    (c([20.0, 2.0]), c(0, tf.int32))])


def python_while(x):
    i = 0
    while i < 3:
        x = x * 2.0 + 1.0
        i += 1
    return x, i


def test_python_while_is_unrolled_and_leaves_python_numbers():
    seen = []

    def f(x):
        i = 0
        while i < 3:
            seen.append(i)
            x = x + 1.0
            i += 1
        return x, i

    compiled = tf.function(f)
    close(compiled(c(1.0)), (c(4.0), c(3, tf.int32)))
    close(compiled(c(5.0)), (c(8.0), c(3, tf.int32)))
    assert seen == [0, 1, 2], "a Python condition: a Python loop, run once at trace time"
    (_, (grad,)), = same_gradients_compiled_and_eager(lambda x: python_while(x)[0], (c(1.0),))
    close(grad, c(8.0))


def nested_ifs_in_while(x, n):
    i = tf.constant(0)
    s = tf.constant(0.0)
    while i < n:
        if x > 0:
            if x > 1.0:
                s += x
            else:
                s -= 1.0
        else:
            s = s * 2.0 - x
        i += 1
    return s


def test_nested_tensor_ifs_in_a_tensor_while():
    args = [(c(x), c(n, tf.int32)) for x in (1.5, 0.5, -2.0) for n in (0, 3)]
    results = same_compiled_and_eager(nested_ifs_in_while, *args)
    close(results, [c(0.0), c(4.5), c(0.0), c(-3.0), c(0.0), c(14.0)])  # -2: 0 -> 2 -> 6 -> 14


def parity_in_while(x, n):
    i = tf.constant(0)
    s = tf.constant(0.0)
    while i < n:
        if i % 2 == 0:
            s += x
        else:
            s = s * 2.0
        i += 1
    return s


def parity_in_for_range(x, n):
    s = tf.constant(0.0)
    for i in tf.range(n):
        if i % 2 == 0:
            s += x
        else:
            s = s * 2.0
    return s


def break_on_counter(x, n):
    i = tf.constant(0)
    s = tf.constant(0.0)
    while i < n:
        if i > 2:
            break
        s += x
        i += 1
    return s


@pytest.mark.parametrize("fn, expected", [(parity_in_while, 9.0), (parity_in_for_range, 9.0),
                                          (break_on_counter, 3.0)], ids=["while", "for-range", "break"])
def test_if_on_a_loop_counter_started_from_a_constant(fn, expected):
    (result,) = same_compiled_and_eager(fn, (c(1.5), c(4, tf.int32)) if expected == 9.0 else (c(1.0), c(10, tf.int32)))
    close(result, c(expected))


def break_in_while(x):
    i = tf.constant(0)
    while i < 100:
        x = x * 2.0
        if x > 50.0:
            break
        i += 1
    return x, i


def test_break_in_tensor_while():
    results = same_compiled_and_eager(break_in_while, (c(1.0),), (c(30.0),), (c(-1.0),))
    close(results[:2], [(c(64.0), c(5, tf.int32)), (c(60.0), c(0, tf.int32))])


def continue_in_while(n):
    i = tf.constant(0)
    s = tf.constant(0)
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        s += i
    return s


def test_continue_in_tensor_while():
    results = same_compiled_and_eager(continue_in_while, (c(10, tf.int32),), (c(4, tf.int32),))
    close(results, [c(37, tf.int32), c(7, tf.int32)])


def python_while_break(x):
    i = 0
    while i < 10:
        i = i + 1
        if i > 3:
            break
        x = x * 2.0
    return x, i


def python_while_continue(x):
    i = 0
    while i < 5:
        i = i + 1
        if i == 2:
            continue
        x = x * float(i)
    return x


def python_for_continue(x):
    for j in range(5):
        if j == 1:
            continue
        x = x + float(j)
    return x


def test_break_and_continue_with_python_conditions_are_python():
    results = same_compiled_and_eager(python_while_break, (c(1.0),))
    close(results, [(c(8.0), c(4, tf.int32))])
    close(same_compiled_and_eager(python_while_continue, (c(1.0),)), [c(60.0)])  # 1 * 3 * 4 * 5
    close(same_compiled_and_eager(python_for_continue, (c(1.0),)), [c(10.0)])  # 1 + 0 + 2 + 3 + 4


def python_for_break(x):
    for j in range(5):
        if j == 3:
            break
        x = x + float(j)
    return x


def test_break_in_a_python_for():
    close(same_compiled_and_eager(python_for_break, (c(1.0),)), [c(4.0)])


def nested_break_python(x):
    i = 0
    while i < 10:
        i = i + 1
        if i > 1:
            if i > 3:
                break
            x = x + 100.0
        x = x * 2.0
    return x


def nested_break_tensor(x):
    while x < 1000.0:
        if x > 1.0:
            if x > 5.0:
                break
            x = x + 100.0
        x = x * 2.0
    return x


def break_after_continue(x):
    i = 0
    while i < 10:
        i = i + 1
        if i == 2:
            continue
        if i > 4:
            break
        x = x * float(i)
    return x


@pytest.mark.parametrize("fn", [nested_break_python, nested_break_tensor, break_after_continue],
                         ids=["python", "tensor", "after-continue"])
def test_statements_after_a_nested_break_do_not_run(fn):
    same_compiled_and_eager(fn, (c(1.0),))


def counts_steps(x):
    steps = 0
    while x < 10.0:
        steps += 1
        x = x + 1.0
    return x


def test_augmented_assignment_to_a_variable_only_the_loop_uses():
    (result,) = same_compiled_and_eager(counts_steps, (c(1.0),))
    close(result, c(10.0))


# ---------------------------------------------------------------------------------------------------
# for
# ---------------------------------------------------------------------------------------------------


def for_range(x, n):
    s = x
    for i in tf.range(n):
        s = s * 2.0 + tf.cast(i, tf.float32)
    return s


def test_for_over_tf_range_with_a_tensor_bound():
    results = same_compiled_and_eager(for_range, *[(c(1.0), c(n, tf.int32)) for n in (0, 1, 4)])
    close(results, [c(1.0), c(2.0), c(27.0)])  # 1 -> 2 -> 5 -> 12 -> 27


def for_range_start_delta(n):
    s = tf.constant(0)
    for i in tf.range(2, n, 3):
        s += i
    return s


def test_for_over_tf_range_with_start_and_delta():
    results = same_compiled_and_eager(for_range_start_delta, (c(12, tf.int32),), (c(3, tf.int32),))
    close(results, [c(2 + 5 + 8 + 11, tf.int32), c(2, tf.int32)])


def for_python_iterables(x):
    for k in [1.0, 2.0]:
        if x > k:
            x = x - k
    for i in range(3):
        x = x * 2.0
    return x


def test_for_over_python_iterables_with_tensor_ifs_inside():
    results = same_compiled_and_eager(for_python_iterables, (c(5.0),), (c(1.5),), (c(0.5),))
    close(results, [c(16.0), c(4.0), c(4.0)])


def rows_with_nested_ifs(x):
    s = tf.constant(0.0)
    for row in x:
        if tf.reduce_sum(row) > 0:
            if row[0] > row[1]:
                s += row[0] * row[0]
            else:
                s += row[1] * 3.0
        else:
            s -= tf.reduce_sum(row)
    return s


def jax_rows_with_nested_ifs(x):
    def step(s, row):
        inner = jax.lax.cond(row[0] > row[1], lambda r: r[0] * r[0], lambda r: r[1] * 3.0, row)
        return s + jax.lax.cond(jnp.sum(row) > 0, lambda r: inner, lambda r: -jnp.sum(r), row), None
    return jax.lax.scan(step, jnp.float32(0.0), x)[0]


ROWS = [[[3.0, 1.0], [1.0, 2.0], [-1.0, -4.0]], [[-3.0, 1.0], [2.0, 1.0], [0.5, 0.25]]]


def test_for_over_tensor_rows_with_nested_tensor_ifs():
    results = same_compiled_and_eager(rows_with_nested_ifs, *[(c(r),) for r in ROWS])
    close(results[0], c(9.0 + 6.0 + 5.0))


def test_gradients_through_a_loop_over_rows_equal_eager_and_jax_grad():
    results = same_gradients_compiled_and_eager(rows_with_nested_ifs, *[(c(rows),) for rows in ROWS])
    jax_grad = jax.jit(jax.grad(jax_rows_with_nested_ifs))
    for rows, (_, (grad,)) in zip(ROWS, results):
        np.testing.assert_allclose(grad.numpy(), jax_grad(jnp.asarray(rows, jnp.float32)), rtol=1e-6)


def bounded_loop(x):
    y = x
    for i in tf.range(3):
        y = y * x + 1.0
    return y


def test_gradients_through_a_bounded_loop_equal_eager_and_jax_grad():
    inputs = (0.5, -2.0)
    results = same_gradients_compiled_and_eager(bounded_loop, *[(c(v),) for v in inputs])
    jax_grad = jax.jit(jax.grad(lambda x: jax.lax.fori_loop(0, 3, lambda i, y: y * x + 1.0, x)))
    for v, (_, (grad,)) in zip(inputs, results):
        np.testing.assert_allclose(grad.numpy(), jax_grad(jnp.float32(v)), rtol=1e-6)


def continue_over_rows(x):
    s = tf.constant(0.0)
    for row in x:
        if tf.reduce_sum(row) < 0:
            continue
        s += tf.reduce_sum(row)
    return s


def test_continue_in_for_over_tensor_rows():
    results = same_compiled_and_eager(continue_over_rows, (c([[1.0, 2.0], [-3.0, 1.0], [5.0, 6.0]]),),
                                      (c([[-1.0, 2.0], [-3.0, 1.0], [5.0, -6.0]]),))
    close(results, [c(14.0), c(1.0)])


def continue_over_range(n):
    s = tf.constant(0)
    for i in tf.range(n):
        if i % 2 == 0:
            continue
        s += i
    return s


def test_continue_in_for_over_tf_range():
    results = same_compiled_and_eager(continue_over_range, (c(10, tf.int32),), (c(3, tf.int32),))
    close(results, [c(25, tf.int32), c(1, tf.int32)])


def break_over_range(x, n):
    s = tf.constant(0.0)
    for i in tf.range(n):
        if s > x:
            break
        s += 1.0
    return s


def test_break_in_for_over_tf_range():
    results = same_compiled_and_eager(break_over_range, (c(2.5), c(10, tf.int32)), (c(20.0), c(10, tf.int32)))
    close(results, [c(3.0), c(10.0)])


def break_over_rows(x):
    s = tf.constant(0.0)
    for row in x:
        if tf.reduce_sum(row) < 0:
            break
        s += tf.reduce_sum(row)
    return s


def test_break_in_for_over_tensor_rows():
    results = same_compiled_and_eager(break_over_rows, (c([[1.0, 2.0], [-3.0, 1.0], [5.0, 6.0]]),),
                                      (c([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),))
    close(results, [c(3.0), c(21.0)])


# ---------------------------------------------------------------------------------------------------
# loops and ifs inside tf.GradientTape blocks in the converted function
# ---------------------------------------------------------------------------------------------------


def tape_around_control_flow(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        s = tf.constant(0.0)
        for row in x:
            if tf.reduce_sum(row) > 0:
                s += tf.reduce_sum(row * row)
            else:
                s += tf.reduce_sum(tf.sin(row))
        for i in tf.range(2):
            s = s * 1.5
    return s, tape.gradient(s, x)


def jax_tape_around_control_flow(x):
    def step(s, row):
        return s + jax.lax.cond(jnp.sum(row) > 0, lambda r: jnp.sum(r * r), lambda r: jnp.sum(jnp.sin(r)), row), None
    s = jax.lax.scan(step, jnp.float32(0.0), x)[0]
    return jax.lax.fori_loop(0, 2, lambda i, s: s * 1.5, s)


def test_tape_inside_the_function_around_converted_loops_and_ifs():
    x = ROWS[0]
    (value, grad), = same_compiled_and_eager(tape_around_control_flow, (c(x),))
    jax_value, jax_grad = jax.value_and_grad(jax_tape_around_control_flow)(jnp.asarray(x, jnp.float32))
    np.testing.assert_allclose(value.numpy(), jax_value, rtol=1e-6)
    np.testing.assert_allclose(grad.numpy(), jax_grad, rtol=1e-6)


def tape_around_tensor_while(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        while y < 100.0:
            y = y * 2.0
    return tape.gradient(y, x)


def test_gradient_through_an_unbounded_tensor_while_names_maximum_iterations():
    # Documented in control_flow.while_loop: reverse mode through a traced loop needs a bound on its trip count.
    # (TF differentiates this loop: see tests/compat/test_autograph_vs_tf.py.)
    with pytest.raises(LookupError, match="maximum_iterations"):
        tf.function(tape_around_tensor_while)(c(3.0))


# ---------------------------------------------------------------------------------------------------
# and / or / not
# ---------------------------------------------------------------------------------------------------


def logic_values(x, flag):
    return (x > 0 and flag, flag and x > 0, x > 0 or flag, flag or x > 0, not x > 0, not flag,
            x > 0 and x < 2.0 and not x > 1.0)


def test_and_or_not_mixing_tensors_and_python_values():
    args = [(c(v), flag) for v in (0.5, 1.5, -1.0) for flag in (True, False)]
    compiled = tf.function(logic_values)
    for x, flag in args:
        expected = [bool(np.asarray(v)) for v in logic_values(x, flag)]  # eagerly: Python truthiness
        got = compiled(x, flag)
        assert [bool(g.numpy()) for g in got] == expected, (x, flag)
    assert compiled.experimental_get_tracing_count() == 2


def logic_in_if(x, flag):
    if (x > 0 and flag) or not x < -5.0:
        y = x
    else:
        y = -x
    return y


def test_and_or_not_in_a_tensor_condition():
    results = same_compiled_and_eager(logic_in_if, (c(1.0), True), (c(-10.0), True), (c(-1.0), True),
                                      (c(-10.0), False), traces=2)
    close(results, [c(1.0), c(10.0), c(-1.0), c(10.0)])


def python_short_circuit(x, items):
    if items and items[0] > 0:
        x = x * items[0]
    if not items or x > 10.0:
        x = x - 1.0
    return x


def test_python_and_or_short_circuit_as_python():
    results = same_compiled_and_eager(python_short_circuit, (c(3.0), ()), (c(3.0), (4.0,)), (c(1.0), (2.0,)),
                                      traces=3)
    close(results, [c(2.0), c(11.0), c(2.0)])


# ---------------------------------------------------------------------------------------------------
# functions called from converted code are converted too
# ---------------------------------------------------------------------------------------------------


def helper_abs(x):
    if x > 0:
        return x
    return -x


def calls_helpers(x):
    def inner(y):
        if y > 1.0:
            y = y * 10.0
        return y
    return inner(helper_abs(x)) + helper_abs(x - 5.0)


def test_module_level_and_nested_helpers_are_converted():
    results = same_compiled_and_eager(calls_helpers, (c(-2.0),), (c(0.5),), (c(7.0),))
    close(results, [c(27.0), c(5.0), c(72.0)])
    grads = same_gradients_compiled_and_eager(calls_helpers, (c(-2.0),), (c(0.5),), (c(7.0),))
    close([g for _, (g,) in grads], [c(-11.0), c(0.0), c(11.0)])


class Gate(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(2.0)

    def act(self, x):
        if x > 0:
            return x * self.w
        return x * 0.1

    @tf.function
    def __call__(self, x):
        if tf.reduce_sum(x) > 0:
            y = self.w * x
        else:
            y = self.w * x * x
        return y + self.act(-x)


def test_tf_module_method_with_tensor_if_and_converted_method_helper():
    compiled, eager = Gate(), Gate()
    for x in (1.0, -3.0):
        with tf.GradientTape() as tape:
            expected = Gate.__call__.python_function(eager, c(x))  # the method run eagerly
        expected_grad = tape.gradient(expected, eager.w)
        with tf.GradientTape() as tape:
            got = compiled(c(x))
        close(got, expected)
        close(tape.gradient(got, compiled.w), expected_grad)
    close([Gate.__call__.python_function(eager, c(x)) for x in (1.0, -3.0)], [c(1.9), c(24.0)])
    assert compiled.__call__.experimental_get_tracing_count() == 1


def test_lambda_calls_are_converted():
    close(tf.function(lambda x: helper_abs(x) * 2.0)(c(-1.0)), c(2.0))


@tf.function
def inner_function(x):
    if x > 0:
        return x * 2.0
    return -x


def calls_a_tf_function(x):
    return inner_function(x) + 1.0


def test_tf_function_called_from_a_converted_function_is_converted():
    results = same_compiled_and_eager(calls_a_tf_function, (c(-3.0),), (c(2.0),))
    close(results, [c(4.0), c(5.0)])


# ---------------------------------------------------------------------------------------------------
# print and tf.print
# ---------------------------------------------------------------------------------------------------


def test_print_runs_at_trace_time_and_tf_print_at_each_call(capsys):
    stream = io.StringIO()

    def f(x):
        print("tracing", x.shape)
        if x > 0:
            tf.print("positive", x, output_stream=stream)
            y = x
        else:
            tf.print("negative", x, output_stream=stream)
            y = -x
        return y

    compiled = tf.function(f)
    for v in (1.0, -2.0, 3.0):
        compiled(c(v))
    assert capsys.readouterr().out == "tracing ()\n"
    assert stream.getvalue() == "positive 1\nnegative -2\npositive 3\n"


# ---------------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------------


def defined_in_if_only(x):
    if x > 0:
        y = x * 2.0
    return y


def defined_in_else_only(x):
    if x > 0:
        pass
    else:
        z = x
    return z


def test_variable_defined_in_one_branch_of_a_tensor_if_names_it_and_the_line():
    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch") as info:
        tf.function(defined_in_if_only)(c(1.0))
    assert f"line {line_of(defined_in_if_only, 'if x > 0')}" in str(info.value)
    with pytest.raises(ValueError, match="'z' must also be initialized in the") as info:
        tf.function(defined_in_else_only)(c(1.0))
    assert f"line {line_of(defined_in_else_only, 'if x > 0')}" in str(info.value)


def defined_in_python_if_only(x, flag):
    if flag:
        y = x * 2.0
    return y


def test_variable_defined_in_one_branch_of_a_python_if_is_fine():
    close(tf.function(defined_in_python_if_only)(c(1.0), True), c(2.0))


def test_variable_left_unassigned_by_a_python_if_raises_unbound_local_error():
    with pytest.raises(UnboundLocalError):
        defined_in_python_if_only(c(1.0), False)  # eagerly
    with pytest.raises(UnboundLocalError):
        tf.function(defined_in_python_if_only)(c(1.0), False)


def dtype_change(x):
    i = tf.constant(0)
    while x > 0.0:
        i = tf.cast(i, tf.float32) + 1.0
        x -= 1.0
    return i


def shape_change(x, n):
    i = tf.constant(0)
    while i < n:
        x = tf.concat([x, x], 0)
        i += 1
    return x


def for_shape_change(x, n):
    for i in tf.range(n):
        x = tf.concat([x, x], 0)
    return x


def test_loop_variable_changing_dtype_raises_type_error_naming_it():
    with pytest.raises(TypeError, match="'i'.*int32.*float32"):
        tf.function(dtype_change)(c(3.0))


def test_loop_variable_changing_shape_raises_value_error_naming_it():
    with pytest.raises(ValueError, match=r"'x'.*\(1,\).*\(2,\)"):
        tf.function(shape_change)(c([1.0]), c(3, tf.int32))
    with pytest.raises(ValueError, match=r"'x'.*\(1,\).*\(2,\)"):
        tf.function(for_shape_change)(c([1.0]), c(3, tf.int32))


@pytest.mark.parametrize("fn, args, error, text", [
    (dtype_change, (3.0,), TypeError, "while x > 0.0"),
    (shape_change, ([1.0], 3), ValueError, "while i < n"),
    (for_shape_change, ([1.0], 3), ValueError, "for i in tf.range(n)"),
], ids=["dtype", "shape", "for-shape"])
def test_loop_variable_errors_name_the_line(fn, args, error, text):
    tensors = [c(a) if isinstance(a, float | list) else c(a, tf.int32) for a in args]
    with pytest.raises(error) as info:
        tf.function(fn)(*tensors)
    assert f"line {line_of(fn, text)}" in str(info.value)


def branch_dtype_mismatch(x):
    if x > 0:
        y = tf.constant(1)
    else:
        y = tf.constant(2.0)
    return y


def test_branches_with_different_dtypes_name_the_variable():
    with pytest.raises(TypeError, match="'y'"):
        tf.function(branch_dtype_mismatch)(c(1.0))


# ---------------------------------------------------------------------------------------------------
# tf.autograph.to_code, do_not_convert, autograph=False
# ---------------------------------------------------------------------------------------------------


def everything(x, n):
    if x > 0 and not n < 0:
        x = x * 2.0
    while x < 10.0 or n > 5:
        x = x + 1.0
        n -= 1
    for i in tf.range(n):
        x = helper_abs(x)
    return x


def test_to_code_shows_the_ag_calls():
    code = tf.autograph.to_code(everything)
    assert isinstance(code, str)
    for call in ("ag__.if_stmt(", "ag__.while_stmt(", "ag__.for_stmt(", "ag__.and_(", "ag__.or_(", "ag__.not_(",
                 "ag__.converted_call(helper_abs)", "ag__.range_("):
        assert call in code, call
    tree = ast.parse(code)
    assert tree.body[0].name == "everything"
    assert "if x > 0" not in code and "while x < 10.0" not in code
    number = lambda text: re.sub(r"_\d+\b", "_N", text)  # generated names are numbered per conversion
    assert number(tf.autograph.to_code(tf.function(everything))) == number(code), "a tf.function's python_function"
    assert "ag__.if_stmt(" in tf.autograph.to_code(Gate().act), "bound methods"


def test_to_code_converts_python_conditions_too():
    code = tf.autograph.to_code(python_if_plain)
    assert "ag__.if_stmt(" in code  # a Python condition is still converted: if_stmt decides at run time


@tf.autograph.experimental.do_not_convert
def not_converted(x):
    if x > 0:
        return x
    return -x


def calls_not_converted(x):
    return not_converted(x) * 2.0


def test_do_not_convert_leaves_a_tensor_if_as_python():
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        tf.function(not_converted)(c(1.0))
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        tf.function(calls_not_converted)(c(1.0))
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)


def test_do_not_convert_keeps_eager_behaviour_and_python_control_flow():
    assert not_converted.__name__ == "not_converted"
    close(not_converted(c(-2.0)), c(2.0))

    @tf.autograph.experimental.do_not_convert()
    def python_only(x, flag):
        if flag:
            return x * 2.0
        return x

    close(tf.function(python_only)(c(3.0), True), c(6.0))


def test_autograph_false_leaves_python_control_flow_as_it_is():
    compiled = tf.function(python_chain, autograph=False)
    close(compiled(c(3.0), "square"), c(9.0))
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        tf.function(branchy, autograph=False)(c([1.0, 2.0]))
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        tf.function(double_until, autograph=False)(c([1.0, 2.0]), c(10.0))
    close(tf.function(python_while, autograph=False)(c(1.0)), (c(15.0), c(3, tf.int32)))


def test_an_object_first_made_in_a_tensor_loop_is_loop_local():
    """A GradientTape created inside `for n in tf.range(...)` (DeepDream's loop) is local to the body, as TF
    leaves it: the loop carries only the tensors; the tape is undefined after the loop."""

    def dream(img, steps):
        for n in tf.range(steps):
            with tf.GradientTape() as tape:
                tape.watch(img)
                loss = tf.reduce_sum(img * img)
            img = img - 0.1 * tape.gradient(loss, img)
        return img

    expected = dream(tf.ones([4]), 3)  # eagerly: a Python loop
    traced = tf.function(dream)(tf.ones([4]), tf.constant(3))
    np.testing.assert_allclose(traced.numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(traced.numpy(), np.full(4, 0.8 ** 3, np.float32), rtol=1e-6)


def test_a_closure_rebound_in_a_loop_is_converted_with_its_new_value():
    # the converted function holds the cell's contents: a rebound cell must not reuse the first conversion
    def make_all():
        results = []
        for scale in (2.0, 3.0):
            def f(x):
                if x > 0:
                    return x * scale
                return x
            results.append(float(tf.function(f)(tf.constant(1.0))))
        return results

    assert make_all() == [2.0, 3.0]


def _depth(value):
    # recursive, at module level, through a comprehension: its converted form calls itself
    if isinstance(value, list):
        return 1 + max([_depth(v) for v in value] or [0])
    return tf.constant(0) if value is None else tf.cast(tf.shape(value)[0] * 0, tf.int32)


def test_a_recursive_module_function_calls_its_converted_self():
    f = tf.function(lambda x: _depth([[x], [x, [x]]]))
    assert int(f(tf.ones([2]))) == 3
