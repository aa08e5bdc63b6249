"""Every case of the bad-input corpus (corpus.py) on tapejax: it raises TF's exception type (the one the corpus
lists, which tests/compat/test_badinput_vs_tf.py checks against TensorFlow), with a message, never an exception
of JAX's or jaxlib's (nor one chained to it), and the Variables it touched keep their values."""

from __future__ import annotations

import builtins

import numpy as np
import pytest
from corpus import CASES, TF_SILENT

import tapejax as tf


def _expected_class(name: str) -> type[BaseException]:
    return getattr(tf.errors, name, None) or getattr(builtins, name)


def _values(state) -> list[np.ndarray]:
    variables = state if isinstance(state, tuple) else (state,)
    return [np.array(v.numpy()) for v in variables if isinstance(v, tf.Variable)]


def _is_jax(error: BaseException | None) -> bool:
    return error is not None and any(k.__module__.split(".")[0] in ("jax", "jaxlib") for k in type(error).__mro__)


def test_corpus_is_large_and_named_uniquely():
    names = [c.name for c in CASES]
    assert len(names) >= 150
    assert len(set(names)) == len(names)
    assert set(TF_SILENT) <= set(names)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_raises_tf_type(case):
    state = case.setup(tf) if case.setup else None
    before = _values(state) if state is not None else []
    with pytest.raises(Exception) as info:
        case.run(tf, state) if case.setup else case.run(tf)
    error = info.value
    assert isinstance(error, _expected_class(case.expected)), f"{type(error).__name__}: {error}"
    assert not _is_jax(error) and not _is_jax(error.__cause__), repr(error)
    message = str(error).strip()
    assert message and not message.startswith("[Op:"), f"no message: {error!r}"
    if state is not None:
        after = _values(state)
        for b, a in zip(before, after):
            np.testing.assert_array_equal(a, b, err_msg=f"{case.name} changed a variable")
