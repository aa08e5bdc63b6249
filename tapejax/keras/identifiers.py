"""Keras's `get(identifier)`: an object of a kind (constraint, regularizer) from a name, a config dict, an
instance or a callable."""

from __future__ import annotations

from typing import Any


def get(kind: str, by_name: dict[str, Any], identifier: Any) -> Any:
    """`by_name[identifier]()` for a name, `by_name[class_name](**config)` for a config dict; a callable or None
    as it is; else Keras's ValueError."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in by_name:
        return by_name[identifier]()
    if isinstance(identifier, dict) and identifier.get("class_name") in by_name:
        return by_name[identifier["class_name"]](**identifier.get("config", {}))
    raise ValueError(f"Could not interpret {kind} identifier: {identifier}")
