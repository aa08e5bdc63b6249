"""The programs here run when imported, so pytest (its doctest collection) must not import them: they are run
by test_programs.py in subprocesses, and record.py runs them on TensorFlow."""

from pathlib import Path

collect_ignore = [p.name for p in Path(__file__).parent.glob("*.py")
                  if p.name not in ("conftest.py", "corpus.py", "test_programs.py", "__init__.py")]
