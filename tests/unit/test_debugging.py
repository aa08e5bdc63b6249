"""tapejax.debugging: every reason a gradient is None, each built from the guides' pitfalls."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import tapejax as tf
from tapejax._src import debugging


def test_never_watched_and_variable_replaced_by_a_tensor():
    # The intro guide's pitfall 1: `x = x + 1` replaces the variable with a tensor.
    x = tf.Variable(2.0)
    x = x + 1
    with tf.GradientTape(persistent=True) as tape:
        y = x + 1
    assert tape.gradient(y, x) is None
    why = tf.debugging.explain_none(tape, y, x)
    assert "never watched" in why and "assign_add" in why


def test_watched_but_unconnected():
    x, u = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = x * 2.0
        unused = u * 3.0
    assert tape.gradient(y, u) is None and unused is not None
    assert tf.debugging.explain_none(tape, y, u) == debugging.UNCONNECTED
    assert tf.debugging.explain_none(tape, y, x) is None  # connected: not None


def test_calculation_left_tapejax():
    # Pitfall 2: np.mean takes the value out of tapejax; it comes back as a constant.
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)
        y = tf.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None
    assert "left tapejax" in tf.debugging.explain_none(tape, y, x)


def test_integer_source_and_integer_path():
    # Pitfall 3: an integer source; and a float computation that passes through an integer.
    x = tf.constant(10)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x) is None
    assert "dtype int32" in tf.debugging.explain_none(tape, y, x)
    v, w = tf.Variable(2.5), tf.Variable(1.5)
    with tf.GradientTape(persistent=True) as tape:
        through_int = tf.cast(tf.cast(v, tf.int32), tf.float32)
        z = through_int * w  # on the tape through w, but not connected to v
        z_alone = through_int * 2.0  # followed by no tape at all
    assert tape.gradient(z, v) is None and tape.gradient(z_alone, v) is None
    assert tf.debugging.explain_none(tape, z, v) == debugging.INTEGER_PATH
    assert tf.debugging.explain_none(tape, z_alone, v) == debugging.INTEGER_PATH


def test_assignment_cuts_the_path():
    # Pitfall 4: state stops gradients.
    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape(persistent=True) as tape:
        x1.assign_add(x0)
        y = x1**2
    assert tape.gradient(y, x0) is None
    assert "assign_add" in tf.debugging.explain_none(tape, y, x0)


def test_stop_recording_and_reset():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    assert t.gradient(z, y) is None
    assert "stop_recording" in tf.debugging.explain_none(t, z, y)
    with tf.GradientTape(persistent=True) as t:
        y_sq = y * y
        t.reset()
        z = x * x + y_sq
    assert t.gradient(z, y) is None
    assert "reset" in tf.debugging.explain_none(t, z, y)


def test_unwatched_variables():
    x0 = tf.Variable(0.0)
    frozen = tf.Variable(1.0, trainable=False)
    with tf.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        y = tf.sin(x0)
    assert "watch_accessed_variables=False" in tf.debugging.explain_none(tape, y, x0)
    with tf.GradientTape(persistent=True) as tape:
        y = frozen * 2.0
    assert "not trainable" in tf.debugging.explain_none(tape, y, frozen)


def test_reasons_survive_a_non_persistent_tapes_free():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, [x, y])[0] is None
    assert tf.debugging.explain_none(tape, z, x) == debugging.NEVER_READ


def test_warning_mode_logs_the_reason(caplog):
    tf.debugging.enable_none_gradient_warnings()
    try:
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = tf.constant(1.0) * 2.0
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            assert tape.gradient(y, x) is None
        assert any("returned None for variable 'Variable:0'" in r.getMessage() and "never read" in r.getMessage()
                   for r in caplog.records)
    finally:
        tf.debugging.enable_none_gradient_warnings(False)


@pytest.mark.parametrize("mode", ["on", "off"])
def test_connected_gradients_are_unaffected(mode):
    tf.debugging.enable_none_gradient_warnings(mode == "on")
    try:
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = x * x
        assert float(tape.gradient(y, x)) == 4.0
    finally:
        tf.debugging.enable_none_gradient_warnings(False)
