"""The seed guides' code saved as scripts (``scripts/``, with ``import tensorflow as tf``) runs unchanged.

``python -m tapejax SCRIPT`` must exit with 0 and print the guide's values, in the guide's order; the same
scripts run with plain ``python`` on TensorFlow, where it is installed, check the expectations themselves.
Values that come from random weights are matched by form (the seed tests check them against numpy).
The three scripts of an engine run at once, in subprocesses, to keep the wall time down.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from . import test_advanced_guide as advanced
from . import test_intro_guide as intro
from ._scripts import ADVANCED, CUSTOM_GRADIENT, INTRO, SCRIPTS, SCRIPTS_DIR, Script

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 600  # a whole script, on a loaded 2-core machine
FLOAT = advanced.FLOAT

Expected = tuple[str | re.Pattern[str], ...]

# --- What each script prints, in order: literal text, or a pattern where the guide's value is random -------

INTRO_STDOUT: Expected = (
    # The list and the dict of sources print the same gradients (of random weights).
    re.compile(rf"(?P<pair>{intro.GRADIENT_PAIR.pattern})\n(?P=pair)"),
    # Keras 2 (the guide) names the variables dense/kernel:0 and dense/bias:0, Keras 3 kernel and bias.
    re.compile(r"(dense(_\d+)?/)?kernel(:0)?, shape: \(3, 2\)\n(dense(_\d+)?/)?bias(:0)?, shape: \(2,\)\n"),
    "dy/dx0:  None\ndy/dx1:  0.9999546\n",
    # The guide shows "dz/dy:  18.0" here, the output of an example that its page lost (see test_intro_guide).
    "dz/dy:  [  4. 108.]\ndy/dx:  [2. 6.]\n",
    "dy0/dx:  4.0\ndy1/dx:  -0.4121803\nd(y1 + y0)/dx:  3.5878196\ndy2/dx:  3.5878196\n",
    "dv0/dx:  tf.Tensor(1.0, shape=(), dtype=float32)\ndv1/dx:  None\n",
    "dz/dx:  None\n",
    "ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32)\nEagerTensor : None\n",
    "dy/dx:  None\n",
    "dy/dx:  None\n",
    "dy/dx0:  None\n",
    "dy/dx0:  tf.Tensor(12.0, shape=(), dtype=float32)\n",
    "LookupError: gradient registry has no entry for: AdjustContrastv2\n",
    "dz/dx:  tf.Tensor([0. 0.], shape=(2,), dtype=float32)\n",
)
INTRO_WARNINGS = (  # on stderr, through the logger named "tensorflow"
    "WARNING:tensorflow:The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.int32",
    "WARNING:tensorflow:The dtype of the target tensor must be floating (e.g. tf.float32) when calling "
    "GradientTape.gradient, got tf.int32",
    "WARNING:tensorflow:The dtype of the source tensor must be floating (e.g. tf.float32) when calling "
    "GradientTape.gradient, got tf.int32",
)

ADVANCED_STDOUT: Expected = (
    advanced.DZ_DX_4_DZ_DY_NONE,  # stop_recording
    advanced.DZ_DX_4_DZ_DY_NONE,  # reset
    advanced.DZ_DX_4_DZ_DY_NONE,  # stop_gradient
    "tf.Tensor(2.0, shape=(), dtype=float32)\n",
    "1.0\n",
    "0.25\n",
    "dy_dx: 3.0\nd2y_dx2: 6.0\n",
    "[TensorShape([5, 10]), TensorShape([10])]\n",
    "(201,)\n(201,)\n",
    "TensorShape([7, 10])\n",
    "TensorShape([5, 10])\n",
    "TensorShape([7, 10, 5, 10])\n",
    re.compile(rf"g\.shape: \(5, 10\)\ndelta: {FLOAT}\n"),  # the guide: 4.7683716e-07; the script asserts < 1e-3
    "layer.kernel.shape: (5, 8)\nh.shape: (5, 8, 5, 8)\n",
    "TensorShape([7, 6])\n",
    "TensorShape([7, 6, 7, 5])\n",
    "(7, 6, 5)\n(7, 6, 5)\n",
    "TensorShape([7, 6, 5])\n",
    re.compile(rf"{FLOAT}\n"),  # the guide: 0.0; the script asserts < 1e-3
    "j.shape: (7, 6, 7, 5)\n",
    "jb.shape: (7, 6, 5)\n",
)

CUSTOM_GRADIENT_STDOUT: Expected = (
    "tf.Tensor(nan, shape=(), dtype=float32)\n",  # the naive log1pexp's gradient at 100
    "tf.Tensor(1.0, shape=(), dtype=float32)\n",  # the custom gradient's
    "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>\n",
    "<tf.Tensor: shape=(), dtype=float32, numpy=3.0>\n",
    "<tf.Tensor: shape=(), dtype=float32, numpy=2.0>\n",
    "<tf.Tensor: shape=(3,), dtype=float32, numpy=array([2., 3., 4.], dtype=float32)>\n",
    "<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 1., 1.], dtype=float32)>\n",
    "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([6., 3.], dtype=float32)>\n",
    "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 1.], dtype=float32)>\n",
)

EXPECTED_STDOUT = {
    INTRO.name: INTRO_STDOUT,
    ADVANCED.name: ADVANCED_STDOUT,
    CUSTOM_GRADIENT.name: CUSTOM_GRADIENT_STDOUT,
}


def assert_prints_in_order(stdout: str, expected: Expected) -> re.Match[str]:
    """Asserts that stdout is exactly the expected pieces, one after the other; returns the match."""
    pieces = [p.pattern if isinstance(p, re.Pattern) else re.escape(p) for p in expected]
    match = re.fullmatch("".join(pieces), stdout)
    if match is None:  # find the first piece that does not follow, for the message
        position = 0
        for piece, pattern in zip(expected, pieces):
            step = re.compile(pattern).match(stdout, position)
            if step is None:
                break
            position = step.end()
        else:
            piece = "<end of output>"
        pytest.fail(
            f"after {position} characters of the script's stdout, expected {piece!r}, got\n"
            f"{stdout[position:position + 500]!r}\n--- whole stdout ---\n{stdout}"
        )
    return match


# --- Running the scripts --------------------------------------------------------------------------------

ENGINES = {
    "tapejax": ("-m", "tapejax"),  # import tensorflow is redirected to tapejax
    "tensorflow": (),  # the real thing, where installed: checks the expectations above
}


def _engine_param(name: str) -> object:
    if name == "tapejax":
        return name
    missing = importlib.util.find_spec(name) is None
    return pytest.param(name, marks=[pytest.mark.compat, pytest.mark.skipif(missing, reason=f"{name} not installed")])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, Script], subprocess.CompletedProcess]]:
    """run(engine, script): the finished run of a script; the first call starts all of the engine's scripts."""
    started: dict[tuple[str, str], subprocess.Popen] = {}
    finished: dict[tuple[str, str], subprocess.CompletedProcess] = {}
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}

    def result(engine: str, script: Script) -> subprocess.CompletedProcess:
        if (engine, script.name) not in started:
            for each in SCRIPTS:
                command = [sys.executable, *ENGINES[engine], str(each.path)]
                started[engine, each.name] = subprocess.Popen(
                    command, cwd=tmp_path_factory.mktemp(engine), env=env, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                )
        key = (engine, script.name)
        if key not in finished:
            process = started[key]
            stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
            finished[key] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        return finished[key]

    yield result
    for process in started.values():
        if process.poll() is None:
            process.kill()
            process.communicate()


ENGINE = pytest.mark.parametrize("engine", [_engine_param(name) for name in ENGINES])
SCRIPT = pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])


@ENGINE
@SCRIPT
def test_script_prints_the_guides_values(run, engine: str, script: Script) -> None:
    done = run(engine, script)
    assert done.returncode == 0, f"{' '.join(done.args)} exited with {done.returncode}:\n{done.stderr[-3000:]}"
    match = assert_prints_in_order(done.stdout, EXPECTED_STDOUT[script.name])

    if script is INTRO:
        # By hand, as in test_intro_guide: dl/dw = outer([1, 2, 3], dl/db), so the rows are 1x, 2x, 3x dl/db.
        rows = np.array([[float(v) for v in match[f"w{i}"].split()] for i in range(3)])
        db = np.array([float(v) for v in match["b"].split()])
        np.testing.assert_allclose(rows, np.outer([1.0, 2.0, 3.0], db), rtol=1e-5, atol=1e-6)
        logged = [line for line in done.stderr.splitlines() if line.startswith("WARNING:tensorflow:The dtype")]
        if engine == "tapejax":
            assert logged == list(INTRO_WARNINGS), done.stderr
        else:  # TensorFlow 2.21 logs the last two at verbosity level 1 (see test_integer_gradients_warn)
            assert logged[:1] == list(INTRO_WARNINGS[:1]), done.stderr


# --- The checked-in scripts are the generated ones --------------------------------------------------------


@SCRIPT
def test_script_is_generated_from_the_seed_snippets(script: Script) -> None:
    assert script.path.read_text(encoding="utf-8") == script.render(), (
        f"{script.path} is out of date: run `python -m tests.seeds._scripts` from the repository root"
    )


def test_every_script_is_generated() -> None:
    on_disk = {path.name for path in SCRIPTS_DIR.glob("*.py")} - {"conftest.py"}
    assert on_disk == {script.name for script in SCRIPTS}


def test_scripts_keep_the_tensorflow_import() -> None:
    for script in SCRIPTS:
        lines = script.path.read_text(encoding="utf-8").splitlines()
        assert "import tensorflow as tf" in lines, script.name
        assert not [line for line in lines if re.match(r"\s*(import|from) tapejax", line)], script.name
