"""Deferred restoration's trigger: restorations still waiting for variables that do not exist yet.

TF restores a checkpoint value into a variable created after `restore` (a model built later, optimizer slots
made by the first step) at the moment the new object is attached to the restored graph. tapejax does the same
from the two places where state appears: `tf.Module.__setattr__` (layers and modules; a Keras layer's `build`
assigns its weights there) and the Keras optimizers when they create slots. Both call `attached`, which costs
one truth test while nothing is pending. This module holds only the list, so that module.py stays light.
"""

from __future__ import annotations

from typing import Any

# The restorations with values not yet restored (checkpoint.py's _Restoration), each holding its objects
# weakly; each removes itself from the list when it is done or its objects are gone.
PENDING: list[Any] = []


def attached(value: Any = None) -> None:
    """Called when `value` (state, perhaps; None: unknown) joined an object: restores what became reachable."""
    for restoration in list(PENDING):
        restoration.offer(value)
