"""`python -m tapejax SCRIPT.py`, `tapejax.install_as_tensorflow()` and `--coverage`, each in a fresh process
(the redirect replaces `tensorflow` in `sys.modules`, which the comparison tests in this process import)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tapejax import coverage


def _run(args: list[str], cwd, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _script(tmp_path, text: str):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_tensorflow_script_runs_unchanged_with_its_argv_name_and_exit_code(tmp_path):
    path = _script(tmp_path, """
        import sys
        import tensorflow as tf
        from tensorflow import keras
        import tensorflow.keras.layers
        x = tf.Variable(3.0)
        with tf.GradientTape() as tape:
            y = x * x
        print(__name__, sys.argv[1:], tf.__name__, keras.layers.Dense.__module__, float(tape.gradient(y, x)))
        sys.exit(int(sys.argv[2]))
    """)
    done = _run(["-m", "tapejax", str(path), "a", "7"], tmp_path)
    assert done.returncode == 7, done.stderr
    assert done.stdout.split() == ["__main__", "['a',", "'7']", "tapejax", "tapejax.keras.layers", "6.0"]


def test_an_uncaught_exception_exits_1_with_its_traceback(tmp_path):
    path = _script(tmp_path, "import tensorflow as tf\nraise KeyError('boom')\n")
    done = _run(["-m", "tapejax", str(path)], tmp_path)
    assert done.returncode == 1
    assert "KeyError: 'boom'" in done.stderr


def test_a_missing_symbol_names_itself(tmp_path):
    path = _script(tmp_path, "import tensorflow as tf\ntf.raw_ops.Foo()\n")
    done = _run(["-m", "tapejax", str(path)], tmp_path)
    assert done.returncode == 1
    assert "NotImplementedSymbolError: tapejax does not implement tf.raw_ops yet" in done.stderr


def test_a_missing_module_names_itself(tmp_path):
    path = _script(tmp_path, "import tensorflow.python.ops.array_ops\n")
    done = _run(["-m", "tapejax", str(path)], tmp_path)
    assert done.returncode == 1
    assert "tapejax does not implement tensorflow.python yet" in done.stderr


def test_install_as_tensorflow_in_code(tmp_path):
    code = ("import tapejax\ntapejax.install_as_tensorflow()\nimport tensorflow as tf\n"
            "import tensorflow.math\nprint(tf is tapejax, tf.math is tapejax.math)")
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True"


def test_coverage_lists_tapejax_symbols_without_tensorflow():
    rows = dict((path, have) for path, have, _ in coverage.table(None))
    assert "GradientTape" in rows["tf"] and "relu" in rows["tf.nn"] and "Dense" in rows["tf.keras.layers"]


def test_docs_coverage_is_generated_from_the_code():
    tensorflow = pytest.importorskip("tensorflow")
    assert coverage.DOC.read_text() == coverage.markdown(tensorflow), (
        "docs/coverage.md is out of date: run `python -m tapejax --coverage --write`")


def test_a_missing_symbol_is_not_implemented_and_absent():
    import tapejax as tf

    with pytest.raises(NotImplementedError, match="tapejax does not implement tf.raw_ops"):
        tf.raw_ops
    assert not hasattr(tf, "raw_ops") and getattr(tf.math, "no_such_op", None) is None


def test_the_runner_freezes_the_imported_objects_and_collects_young_objects_less_often(tmp_path):
    path = _script(tmp_path, """
        import gc
        import tensorflow as tf
        print(gc.get_freeze_count(), *gc.get_threshold())
    """)
    done = _run(["-m", "tapejax", str(path)], tmp_path)
    assert done.returncode == 0, done.stderr
    frozen, young, *older = map(int, done.stdout.split())
    plain = _run(["-c", "import gc, tapejax; print(gc.get_freeze_count(), *gc.get_threshold())"], tmp_path)
    assert plain.stdout.split()[:2] == ["0", "700"]  # importing tapejax changes nothing: only the runner does
    assert frozen > 50_000 and young == 10_000 and older == [10, 10]
