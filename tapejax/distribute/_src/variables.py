"""Variables made under a strategy's scope: mirrored (one replicated `NamedSharding` over the strategy's mesh)
and the `synchronization`/`aggregation` TF keeps on them, which say how `strategy.run` combines the replicas'
assignments (spmd.py)."""

from __future__ import annotations

import weakref
from typing import Any

from tapejax.distribute._src import enums

# variable uid -> (weak reference to its strategy, synchronization, aggregation); an entry leaves with its variable
_INFO: dict[int, tuple[Any, enums.VariableSynchronization, enums.VariableAggregation]] = {}


class VariableOutsideScopeError(AssertionError, ValueError):
    """A variable created outside a strategy's scope updated inside its `strategy.run` (TF: AssertionError)."""


def created(strategy: Any, variable: Any, synchronization: Any, aggregation: Any) -> None:
    """The strategy scope's variable creator: places the variable's value on every replica and keeps its
    synchronization and aggregation (a Keras metric's variables: ON_READ, SUM)."""
    variable._value = strategy._replicate(variable._value)
    uid = variable._uid
    _INFO[uid] = (weakref.ref(strategy), enums.synchronization(synchronization), enums.aggregation(aggregation))
    weakref.finalize(variable, _INFO.pop, uid, None)


def strategy_of(variable: Any) -> Any:
    """The strategy under whose scope `variable` was made, or None."""
    info = _INFO.get(variable._uid)
    return None if info is None else info[0]()


def aggregation_of(variable: Any) -> enums.VariableAggregation:
    info = _INFO.get(variable._uid)
    return enums.VariableAggregation.NONE if info is None else info[2]
