"""The state of a pure function (`tapejax.to_jax`): a dict from a stable key per Variable to its value.

The key of a variable is its Keras `path` (`dense/kernel`, `adam/dense_kernel_momentum`) when it has one, else its
TF name without the `:0` (`Variable`, `scope/w`); a name met twice gets `_1`, `_2`... in the order the variables
were met, as Keras numbers layer names. A dict, not a list, so that a state reads like a checkpoint and survives
a change in the order a program reads its variables; JAX flattens it in sorted key order.

A state is checked before it is used: every key present and no other, each value of the variable's shape and
dtype. TF has no such call; the errors are ValueError (keys, shapes) and TypeError (dtypes), each naming the key
and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jax
import numpy as np

from .tensor import Tensor
from .variable import Variable

CALLS_KEY = "<random calls>"  # a call counter, for a function with random ops: not a variable's name (no '<')


def variable_key(variable: Variable) -> str:
    path = getattr(variable, "path", None)
    return path if isinstance(path, str) else variable._name.removesuffix(":0")


def assign_keys(variables: Iterable[Variable], keys: dict[int, str]) -> dict[str, Variable]:
    """Gives each variable not in `keys` (uid -> key) a key not taken yet; returns key -> variable, for all."""
    taken = set(keys.values())
    for v in variables:
        if v._uid in keys:
            continue
        base = key = variable_key(v)
        n = 0
        while key in taken or key == CALLS_KEY:
            n += 1
            key = f"{base}_{n}"
        keys[v._uid] = key
        taken.add(key)
    return {keys[v._uid]: v for v in variables}


def keyed(variables: Iterable[Variable]) -> dict[str, Variable]:
    """A fresh key per variable, in the given order (a model's `variables`)."""
    return assign_keys(variables, {})


def _shape_matches(variable: Variable, shape: tuple) -> bool:
    try:
        return variable._shape.is_compatible_with(shape)
    except Exception:  # symbolic dimensions (jax.export): compared by JAX when the program is traced
        return True


def checked_values(state: Any, variables: Mapping[str, Variable], owner: str, extra: tuple[str, ...] = ()) -> list:
    """The values of `state` for `variables` (key -> variable), in their order, after checking that `state` has
    exactly these keys (plus `extra`) with values of each variable's shape and dtype."""
    if not isinstance(state, Mapping):
        raise TypeError(f"{owner}: the state must be a dict from key to array, as tapejax.variables_of returns it; "
                        f"got {type(state).__name__}.")
    expected = [*variables, *extra]
    missing = [k for k in expected if k not in state]
    if missing:
        raise ValueError(f"{owner}: the state has no entry for {missing[0]!r}"
                         + (f" (nor for {len(missing) - 1} other key(s): {missing[1:4]})" if len(missing) > 1 else "")
                         + ". Pass the whole state: start from tapejax.variables_of(...), which gives every key, "
                         "and keep each new_state the function returns.")
    unknown = [k for k in state if k not in variables and k not in extra]
    if unknown:
        raise ValueError(f"{owner}: the state has an entry {unknown[0]!r} that is not one of its variables "
                         f"({sorted(expected)[:8]}{'...' if len(expected) > 8 else ''}). Remove it: the state "
                         "holds exactly the keys tapejax.variables_of(...) gives.")
    values = []
    for key, variable in variables.items():
        value = state[key]
        if isinstance(value, Tensor | Variable):
            value = value._value if isinstance(value, Tensor) else value._current()
        dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
        if dtype is None or shape is None:
            raise TypeError(f"{owner}: state[{key!r}] is a {type(value).__name__}, not an array. Pass a "
                            f"{variable.dtype.name} array of shape {tuple(variable.shape)} (a jax or numpy array).")
        if np.dtype(dtype) != variable.dtype._np:
            raise TypeError(f"{owner}: state[{key!r}] has dtype {np.dtype(dtype).name}, but the variable is "
                            f"{variable.dtype.name}. Cast it: value.astype(jnp.{variable.dtype._np.name}).")
        if not _shape_matches(variable, tuple(shape)):
            raise ValueError(f"{owner}: state[{key!r}] has shape {tuple(shape)}, but the variable's shape is "
                             f"{tuple(variable.shape)}. Pass a value of the variable's shape (under jax.vmap, the "
                             "shape of one example).")
        values.append(value)
    return values


def assign(variables: Mapping[str, Variable], state: Any, owner: str, extra: tuple[str, ...] = ()) -> None:
    """Writes the checked values of `state` into `variables`, all or none."""
    values = checked_values(state, variables, owner, extra)
    for key, value in zip(variables, values):
        if isinstance(value, jax.core.Tracer):
            raise TypeError(f"{owner}: state[{key!r}] is a JAX tracer: assign_state writes concrete values into "
                            "Variables, so call it outside jax.jit/grad/vmap, on the state the function returned.")
    for variable, value in zip(variables.values(), values):
        variable.assign(jax.numpy.asarray(value))
