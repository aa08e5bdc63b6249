"""The bad-input corpus (tests/badinput/corpus.py) run with TensorFlow: each case raises exactly the exception
type the corpus lists, so the list tapejax is tested against (tests/badinput/test_badinput.py) is TF's own; the
cases in `TF_SILENT` (where tapejax raises and TF returns a value) must still be silent in TF."""

from __future__ import annotations

import builtins
import sys
from pathlib import Path

import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "badinput"))
from corpus import CASES, TF_SILENT  # noqa: E402


def _run(case):
    state = case.setup(tf_real) if case.setup else None
    return case.run(tf_real, state) if case.setup else case.run(tf_real)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_listed_type_is_tf(case):
    if case.name in TF_SILENT:
        _run(case)  # TF returns a value: the allow-list entry still holds
        return
    expected = getattr(tf_real.errors, case.expected, None) or getattr(builtins, case.expected)
    with pytest.raises(expected) as info:
        _run(case)
    assert type(info.value).__name__ == case.expected, f"TF raises {type(info.value).__name__}: {info.value}"
