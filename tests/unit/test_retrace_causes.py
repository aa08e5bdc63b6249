"""tf.debugging.explain_retrace, the cause added to TF's retracing warning, and compile_stats (issue 22, item 3):
one test per documented cause of a retrace, and the counters of traces and compiles."""

from __future__ import annotations

import logging

import pytest

import tapejax as tf
from tapejax._src import function as function_lib, retracing


def _cause(fn) -> str:
    text = tf.debugging.explain_retrace(fn)
    assert "the latest retrace was caused by: " in text, text
    return text.split("the latest retrace was caused by: ", 1)[1].removesuffix(".")


def test_a_new_shape():
    @tf.function
    def f(x):
        return x * 2.0

    f(tf.ones([2]))
    assert "has not traced again" in tf.debugging.explain_retrace(f)
    f(tf.ones([3]))
    assert _cause(f).startswith("argument `x`: shape (2,) -> (3,)")
    assert "reduce_retracing=True" in _cause(f)


def test_a_new_dtype():
    @tf.function
    def f(x, y):
        return x + 1

    f(tf.ones([2]), tf.ones([2]))
    f(tf.ones([2], tf.int32), tf.ones([2]))
    assert _cause(f) == "argument `x`: dtype float32 -> int32"


def test_a_new_python_value_by_keyword_and_default():
    @tf.function
    def f(x, scale=1.0):
        return x * scale

    f(tf.ones([2]))
    f(tf.ones([2]), scale=2.0)
    assert _cause(f).startswith("argument `scale`: Python value 1.0 -> 2.0")
    assert "tf.constant" in _cause(f)


def test_a_python_value_in_place_of_a_tensor():
    @tf.function
    def f(x):
        return x

    f(tf.constant(1))
    f(1)
    assert _cause(f).startswith("argument `x`: a tensor of shape () and dtype int32 -> the Python int 1")


def test_a_new_variable():
    @tf.function
    def f(v):
        return v + 1.0

    f(tf.Variable(1.0))
    f(tf.Variable(1.0))
    assert _cause(f).startswith("argument `v`: a new tf.Variable")


def test_a_closure_that_changed():
    def make(k):
        @tf.function
        def f(x):
            return x * k

        return f

    make(1.0)(tf.ones([2]))
    last = make(2.0)
    last(tf.ones([2]))
    assert _cause(last).startswith("a new tf.function object over a changed closure (closure variable `k`: 1.0 -> "
                                   "2.0)")


def test_a_tf_function_created_in_a_loop():
    def g(x):
        return x + 1.0

    for _ in range(2):
        step = tf.function(g)
        step(tf.ones([2]))
    assert _cause(step).startswith("a new tf.function object of the same Python function (created repeatedly")
    assert _cause(g) == _cause(step)  # the Python function names the same history


def test_a_method_of_another_instance():
    class Model(tf.Module):
        @tf.function
        def __call__(self, x):
            return x

    Model()(tf.ones([1]))
    Model()(tf.ones([1]))
    assert _cause(Model.__call__).startswith("a method called on another instance")


def test_the_structure_of_the_arguments():
    @tf.function
    def f(xs):
        return xs[0]

    f([tf.ones([1])])
    f([tf.ones([1]), tf.ones([1])])
    assert _cause(f) == "the arguments' structure changed (now also `xs[1]`)"


def test_nested_argument_paths_are_named():
    @tf.function
    def f(batch):
        return batch["image"]

    f({"image": tf.ones([2])})
    f({"image": tf.ones([3])})
    assert _cause(f).startswith("argument `batch['image']`: shape (2,) -> (3,)")


def test_a_trace_that_was_dropped(monkeypatch):
    monkeypatch.setattr(function_lib, "MAX_TRACES", 2)

    @tf.function
    def f(x):
        return x

    for n in (1, 2, 3, 1):  # the trace for shape (1,) was forgotten: the 4th call traces it again
        f(tf.ones([n]))
    assert f.experimental_get_tracing_count() == 3  # TF counts it once
    assert _cause(f).startswith("the same arguments as an earlier trace, which was dropped")


def test_reduce_retracing_says_it_relaxes():
    @tf.function(reduce_retracing=True)
    def f(x):
        return x

    f(tf.ones([1]))
    f(tf.ones([2]))
    assert "reduce_retracing=True: traced once more" in _cause(f)


def test_an_input_signature_step_that_needs_concrete_sizes():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return tf.reshape(x, [2, -1])

    f(tf.range(4.0))
    f(tf.range(6.0))
    assert _cause(f).startswith("argument `x`: a tensor of shape (6,) and dtype float32 (the step needs concrete "
                                "sizes")


def test_the_retracing_warning_is_tensorflows_then_the_cause(caplog):
    @tf.function
    def f(x):
        return x * 2.0

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for n in range(1, 7):
            f(tf.ones([n]))
    found = [r.getMessage() for r in caplog.records if "retracing" in r.getMessage()]
    assert len(found) == 2
    tensorflow_text = retracing._RETRACING_MESSAGE.format(5, 5, f.python_function)
    assert found[0].startswith(tensorflow_text + " tapejax: the latest retrace was caused by: argument `x`: shape "
                               "(4,) -> (5,)")


def test_retrace_warnings_log_every_retrace_when_enabled(caplog):
    @tf.function
    def f(x):
        return x

    tf.debugging.enable_retrace_warnings()
    try:
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            f(tf.ones([1]))
            f(tf.ones([1]))  # no trace
            f(tf.ones([2]))
    finally:
        tf.debugging.enable_retrace_warnings(False)
    found = [r.getMessage() for r in caplog.records if "traced again" in r.getMessage()]
    assert len(found) == 1 and "shape (1,) -> (2,)" in found[0]


def test_compile_stats_counts_calls_traces_and_compiles():
    @tf.function
    def f(x):
        return x + 1.0

    for n in (1, 1, 2, 2, 2):
        f(tf.ones([n]))

    @tf.function(input_signature=[tf.TensorSpec([None])])
    def g(x):
        return x + 1.0

    for n in (1, 2, 3):  # one symbolic trace, compiled per size
        g(tf.ones([n]))
    stats = tf.debugging.compile_stats()["functions"]
    (f_stats,) = [s for name, s in stats.items() if name.startswith("test_compile_stats_counts_calls_traces_and_"
                                                                   "compiles.<locals>.f (")]
    (g_stats,) = [s for name, s in stats.items() if ".<locals>.g (" in name and "test_compile_stats" in name]
    assert (f_stats["calls"], f_stats["traces"], f_stats["compiles"]) == (5, 2, 2)
    assert f_stats["last_retrace"].startswith("argument `x`: shape (1,) -> (2,)")
    assert (g_stats["calls"], g_stats["traces"], g_stats["compiles"]) == (3, 1, 3)
    assert g_stats["last_retrace"] is None
    assert f_stats["trace_s"] > 0 and f_stats["compile_s"] > 0


def test_compile_stats_of_eager_tapes_a_repeated_structure_compiles_a_changing_one_never():
    w = tf.Variable(tf.ones([4]))

    def gradient(n_ops):
        with tf.GradientTape() as tape:
            y = w
            for _ in range(n_ops):
                y = tf.sin(y)
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, w)

    tf.debugging.clear_caches()
    for n_ops in range(1, 9):  # a new structure on every call
        gradient(n_ops)
    tape = tf.debugging.compile_stats()["tape"]
    assert tape["compiled"] == 0 and tape["structures"] >= 8
    assert tape["eager_runs"].get("history", 0) >= 8
    for _ in range(3):  # a structure that repeats (a training loop) compiles once
        gradient(3)
    tape = tf.debugging.compile_stats()["tape"]
    assert tape["compiled"] == 1
    assert tape["most_run"][0]["executables"] == 1 or tape["most_run"][0]["eager_runs"] >= 1


def test_the_history_of_traces_is_bounded():
    @tf.function
    def f(x):
        return x

    for n in range(1, 3 * retracing._HISTORY):
        f(tf.ones([n]))
    assert len(f._detector.history) == retracing._HISTORY
    assert _cause(f).startswith(f"argument `x`: shape ({3 * retracing._HISTORY - 2},) -> "
                                f"({3 * retracing._HISTORY - 1},)")


def test_explain_retrace_before_any_trace():
    @tf.function
    def f(x):
        return x

    assert tf.debugging.explain_retrace(f).endswith("has not been traced yet.")


@pytest.mark.parametrize("name", ["explain_retrace", "compile_stats", "enable_retrace_warnings"])
def test_documented_with_an_example(name):
    assert ">>>" in getattr(tf.debugging, name).__doc__
