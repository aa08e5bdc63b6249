"""Seeding a tf.function trace's variable set: the variables a step can reach without running it.

A trace reads each variable it meets as an input; those found here before the first trace are inputs from the
start, so that a step whose variables are all reachable traces once (function.py traces again for the others).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from . import autograph
from .module import Module
from .signature import Static, Template
from .variable import Variable


def reachable_variables(fn: Callable, tensors: list, template: Template) -> dict[int, Variable]:
    """Variables the step can see without running it: in its arguments, its bound object, its closure and the
    globals its code names, and so on through the user functions it names (a few levels deep). Only
    variables, plain containers, user functions and tapejax's holders of variables (tf.Module, optimizers) are
    walked, never other objects."""
    found: dict[int, Variable] = {}
    roots: list[Any] = [s.value for s in template.statics if isinstance(s, Static)]
    functions: list[Any] = [fn]
    seen: set[int] = set()
    for _ in range(3):  # the step, the helpers it calls, theirs
        next_functions: list[Any] = []
        for f in functions:
            if isinstance(f, types.MethodType):
                roots.append(f.__self__)
                f = f.__func__
            f = inspect.unwrap(f)
            if not isinstance(f, types.FunctionType) or id(f) in seen or not autograph.is_user_code(f):
                continue
            seen.add(id(f))
            named = [cell.cell_contents for cell in (f.__closure__ or ()) if _cell_full(cell)]
            names = set(f.__code__.co_names)
            for const in f.__code__.co_consts:  # names used by nested functions and comprehensions
                if isinstance(const, types.CodeType):
                    names.update(const.co_names)
            named.extend(f.__globals__[n] for n in names if n in f.__globals__)
            roots.extend(named)
            next_functions.extend(x for x in named if isinstance(x, types.FunctionType | types.MethodType))
        functions = next_functions
    for root in roots:
        _collect(root, found, depth=3)
    return found


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _collect(obj: Any, found: dict[int, Variable], depth: int) -> None:
    if isinstance(obj, Variable):
        found.setdefault(obj._uid, obj)
    elif isinstance(obj, Module) or (type(obj).__module__.startswith("tapejax.")
                                     and isinstance(getattr(type(obj), "variables", None), property)):
        for v in obj.variables:  # tf.Modules, and tapejax's other holders of variables (Keras optimizers)
            found.setdefault(v._uid, v)
    elif depth and isinstance(obj, list | tuple):
        for x in obj:
            _collect(x, found, depth - 1)
    elif depth and isinstance(obj, dict):
        for x in obj.values():
            _collect(x, found, depth - 1)
