"""What a run derives from its tuple of tool paths, made once per tuple.

CodeMode passes one tuple per SDK to every run (and a worker keeps the one it was sent),
so the tuple's identity names it: hashing or comparing 1,000 paths on every run would make
the per-run cost grow with the registry.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Final, Generic, TypeVar, final

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PerPaths"]

T = TypeVar("T")

_SLOTS: Final = 32
"""Tuples remembered per memo (a process holds a few SDK versions at a time)."""


@final
class PerPaths(Generic[T]):
    """``make(paths)`` remembered for the last few tuples, found by identity.

    Each entry holds its tuple, so the id it is filed under cannot be reused by another
    object while the entry lives. Runs on several threads (in-process script threads,
    host loops): writes take a lock; a lookup reads one dict entry."""

    __slots__ = ("_entries", "_lock", "_make")

    def __init__(self, make: Callable[[tuple[str, ...]], T]) -> None:
        self._make = make
        self._entries: dict[int, tuple[tuple[str, ...], T]] = {}
        self._lock = threading.Lock()

    def __call__(self, paths: tuple[str, ...]) -> T:
        hit = self._entries.get(id(paths))
        if hit is not None and hit[0] is paths:
            return hit[1]
        made = self._make(paths)
        with self._lock:
            if len(self._entries) >= _SLOTS:
                self._entries.pop(next(iter(self._entries)), None)
            self._entries[id(paths)] = (paths, made)
        return made
