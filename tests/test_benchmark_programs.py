"""benchmarks/programs.py: the first-step hook finds a program's first gradient (eager or in a tf.function) and
nothing in a program without one; its results.md section is replaced in place and kept by `python -m
benchmarks`. Times are not asserted, only their order."""

from __future__ import annotations

import importlib.util

import pytest

from benchmarks import programs
from benchmarks.__main__ import _sections

EAGER = """
import tensorflow as tf
print("data")
w = tf.Variable(2.0)
with tf.GradientTape() as tape:
    loss = w * w
print(tape.gradient(loss, w).numpy())
"""
COMPILED = """
import tensorflow as tf
w = tf.Variable(2.0)

@tf.function
def step(x):
    with tf.GradientTape() as tape:
        loss = w * x
    g = tape.gradient(loss, w)
    w.assign_sub(0.1 * g)
    return loss

@tf.function
def no_gradient(x):
    return x + 1.0

no_gradient(tf.constant(1.0))
print(step(tf.constant(3.0)).numpy())
"""
NONE = """
import tensorflow as tf
print(tf.constant(1.0) + 1.0)
"""
ENGINES = ["tapejax"] + (["tf"] if importlib.util.find_spec("tensorflow") else [])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("source", [EAGER, COMPILED], ids=["eager", "tf.function"])
def test_the_first_step_is_the_first_gradient(tmp_path, engine, source):
    path = tmp_path / "program.py"
    path.write_text(source)
    result = programs.run_once(engine, path, hooked=True)
    assert 0 < result["import"] < result["first_step"] < result["wall"]
    assert result["after_import"] == pytest.approx(result["first_step"] - result["import"])
    plain = programs.run_once(engine, path, hooked=False)
    assert plain["stdout"] == result["stdout"] and "first_step" not in plain


def test_a_program_without_a_gradient_has_no_first_step(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(NONE)
    result = programs.run_once("tapejax", path, hooked=True)
    assert "import" in result and "first_step" not in result


def test_the_section_is_replaced_and_kept(tmp_path):
    results = tmp_path / "results.md"
    results.write_text("table of python -m benchmarks\n")
    programs.write_section(results, ["| a | 1 |"])
    programs.write_section(results, ["| a | 2 |"])
    text = results.read_text()
    assert text.count(programs.BEGIN) == 1 and "| a | 2 |" in text and "| a | 1 |" not in text
    assert _sections(text) == [f"{programs.BEGIN}\n| a | 2 |\n{programs.END}"]
