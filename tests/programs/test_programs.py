"""The corpus of real programs (see corpus.py and the README's "Real programs" section): each one runs with
`python -m tapejax` in a subprocess and must print what TensorFlow 2.21 printed (expected/NAME.txt, written by
record.py), numbers to the program's tolerance. TensorFlow is not needed here."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .corpus import EXPECTED, HERE, PROGRAMS, Program, same_output

TIMEOUT_SECONDS = 600  # one program, on a loaded 2-core machine
REPO = HERE.parents[1]
# The subprocess imports this checkout's tapejax (not another installed copy) and finds no TensorFlow needed.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def _cases():
    for program in PROGRAMS:
        marks = [pytest.mark.xfail(reason=program.blocked_by, strict=False)] if program.blocked_by else []
        yield pytest.param(program, id=program.name, marks=marks)


@pytest.mark.parametrize("program", _cases())
def test_program_prints_what_tensorflow_printed(program: Program):
    done = subprocess.run([sys.executable, "-m", "tapejax", str(HERE / f"{program.name}.py")], capture_output=True,
                          text=True, cwd=HERE, timeout=TIMEOUT_SECONDS, env=ENV)
    assert done.returncode == 0, done.stderr[-4000:]
    difference = same_output(program, done.stdout, (EXPECTED / f"{program.name}.txt").read_text())
    assert difference is None, difference


def test_the_comparison_can_fail():
    program = Program("example", mask=r"took [0-9.]+s")
    expected = "loss 1.00000 after 3 steps\n[[0.1 0.25]]\ntook 2.5s\n"
    assert same_output(program, "loss 1.000001 after 3 steps\n[[0.1  0.25]]\ntook 9.1s\n", expected) is None
    assert "number 0" in same_output(program, "loss 1.001 after 3 steps\n[[0.1 0.25]]\ntook 2.5s\n", expected)
    assert "text differs" in same_output(program, "loss 1.00000 after 3 stops\n[[0.1 0.25]]\ntook 2.5s\n",
                                         expected)
    assert "text differs" in same_output(program, "loss 1.00000 after 3 steps\n", expected)


def test_every_program_has_its_expected_output_and_a_source_header():
    for program in PROGRAMS:
        assert (EXPECTED / f"{program.name}.txt").read_text().strip(), program.name
        header = (HERE / f"{program.name}.py").read_text().split('"""')[1]
        assert "Source:" in header and "Changes:" in header, program.name


def test_progress_bars_are_compared_as_they_end():
    program = Program("example")
    bar = "\x1b[1m{}/2\x1b[0m \x1b[32m━━\x1b[0m \x1b[1m{}\x1b[0m {}/step - loss: {}"
    # TF redrew the bar twice, tapejax three times; each run's times differ; a finished bar ends with a new line.
    expected = "Epoch 1/1\n\r" + bar.format(1, "1s", "9ms", "0.5") + "\b\b\r" + bar.format(2, "0s", "5ms", "0.25") \
        + "\n\r" + bar.format(1, "0s", "3ms", "") + "\n"
    actual = "Epoch 1/1\n\r" + bar.format(1, "4s", "1s", "0.5") + "\b\r" + bar.format(2, "2s", "9ms", "0.3") \
        + "\b\r" + bar.format(2, "5s", "80ms", "0.25") + "\n\r" + bar.format(1, "1s", "5ms", "") + "\n"
    assert same_output(program, actual, expected) is None
    assert same_output(program, actual, expected.replace("\n\r", "\r")) is not None  # two bars are not one
    assert "number" in same_output(program, actual.replace("0.25", "0.26"), expected)
