"""The engine's memo tables: each one bounded, named, and cleared by one call.

Every cache in tapejax is a `Memo`: a dict that empties itself when it reaches its bound (DESIGN invariant 12:
no structure, shape or model may grow a cache without limit). Emptying whole, rather than evicting one entry,
keeps tables that must agree with each other consistent (convert.py keys literals by the id of arrays that
another table keeps alive) and costs nothing on the hit path, which stays `dict.get`. A cache is a cache of
the plain path (invariant 11), so forgetting is always correct, only slower.

Threads share the memos. Reads take no lock (a `dict.get` is atomic); writes and clears take the memo's `lock`,
so that emptying at the bound and filling a companion stay one step (hold `lock` to fill a memo and its
companions together). Two threads missing the same key both compute it and one answer is kept: either is right.
"""

from __future__ import annotations

import collections
import threading
from typing import Any

ALL: list[Any] = []  # every Memo made (and registered cache), in import order (tests fill each past its bound)


class Memo(dict):
    """A dict bounded by `maxsize` entries; `companions` are emptied with it.

    >>> m = Memo("example", 2)
    >>> m[1] = m[2] = "x"; m[3] = "y"
    >>> sorted(m)
    [3]
    >>> ALL.remove(m)
    """

    __slots__ = ("name", "maxsize", "companions", "lock")

    def __init__(self, name: str, maxsize: int, companions: tuple[dict, ...] = ()):
        super().__init__()
        self.name = name
        self.maxsize = maxsize
        self.companions = companions
        self.lock = threading.RLock()
        ALL.append(self)

    def __setitem__(self, key: Any, value: Any) -> None:
        with self.lock:
            if len(self) >= self.maxsize and key not in self:
                self.clear()
            super().__setitem__(key, value)

    def clear(self) -> None:
        with self.lock:
            super().clear()
            for c in self.companions:
                c.clear()

    def __repr__(self) -> str:
        return f"Memo({self.name!r}, {len(self)}/{self.maxsize})"


class Recent(collections.OrderedDict):
    """A table of at most `maxsize` entries that forgets the least recently used one (a tf.function's traces:
    emptying whole would retrace a training step because a shape storm passed by). Not listed in ALL: one
    lives per tf.function, and dies with it.

    >>> r = Recent("example", 2)
    >>> r[1] = r[2] = "x"; _ = r.get(1); r[3] = "y"
    >>> sorted(r), r.evicted
    ([1, 3], 1)
    """

    def __init__(self, name: str, maxsize: int):
        super().__init__()
        self.name = name
        self.maxsize = maxsize
        self.evicted = 0  # entries forgotten so far

    def get(self, key: Any, default: Any = None) -> Any:
        value = super().get(key, _MISSING)
        if value is _MISSING:
            return default
        try:
            self.move_to_end(key)
        except KeyError:  # forgotten meanwhile by another thread's write: the value found is still right
            pass
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)
            self.evicted += 1


_MISSING = object()


def register(cache: Any) -> Any:
    """Lists a cache of another kind (it has `name`, `maxsize`, `clear()` and `len()`) with the memos."""
    ALL.append(cache)
    return cache


def clear_all() -> None:
    """Empties every memo: the next call runs as in a fresh process (compiled executables included)."""
    for memo in ALL:
        memo.clear()
