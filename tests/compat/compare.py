"""One comparison of a tapejax result with TensorFlow's, for every compat test that runs a snippet in both."""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_same(got: Any, expected: Any, path: str = "result", *, rtol: float = 1e-5,
                any_sequence: bool = False) -> None:
    """Asserts that `got` (tapejax's) is `expected` (TensorFlow's): None where TF gives None, the same nest (lists
    and tuples told apart unless `any_sequence`), Python values equal and of one type, tensors of the same dtype
    and shape and values within `rtol`."""
    if expected is None:
        assert got is None, f"{path}: TensorFlow gives None, tapejax {got!r}"
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), path
        for k in expected:
            assert_same(got[k], expected[k], f"{path}[{k!r}]", rtol=rtol, any_sequence=any_sequence)
    elif isinstance(expected, list | tuple):
        assert isinstance(got, list | tuple) and len(got) == len(expected), f"{path}: {got!r} vs {expected!r}"
        assert any_sequence or isinstance(got, tuple) == isinstance(expected, tuple), \
            f"{path}: {type(got).__name__} vs {type(expected).__name__}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{path}[{i}]", rtol=rtol, any_sequence=any_sequence)
    elif isinstance(expected, bool | int | float | str):
        assert type(got) is type(expected) and got == expected, f"{path}: tapejax {got!r}, TensorFlow {expected!r}"
    else:
        assert got is not None, f"{path}: tapejax gives None, TensorFlow {expected!r}"
        assert got.dtype.name == expected.dtype.name, f"{path}: {got.dtype.name} vs {expected.dtype.name}"
        assert tuple(got.shape) == tuple(expected.shape), f"{path}: {tuple(got.shape)} vs {tuple(expected.shape)}"
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=rtol, atol=1e-6, err_msg=path)


def _outcome(call: Any) -> Any:
    try:
        return call()
    except Exception as e:  # noqa: BLE001 (the exception's type is the outcome)
        return type(e).__name__


def assert_same_outcome(snippet: Any, ours: Any, theirs: Any) -> None:
    """Runs `snippet(module)` with tapejax (`ours`) and TensorFlow (`theirs`): the same exception type where TF
    raises, else `assert_same` of the results."""
    got, expected = _outcome(lambda: snippet(ours)), _outcome(lambda: snippet(theirs))
    if isinstance(expected, str):
        assert got == expected
    else:
        assert_same(got, expected)
