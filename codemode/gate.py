"""Execution modes: ``sequential`` tools never overlap with another call of the registry.

A sequential handler waits until no other handler is running, except its own
ancestors (a ``run_code`` call waiting on its script's calls must not block
its children). While it runs, other handlers that are not its descendants
wait. Parallel handlers otherwise run freely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import anyio

if TYPE_CHECKING:
    from .context import Token
    from .tool import ExecutionMode

__all__ = ["ExecutionGate"]


@dataclass(slots=True)
class _Running:
    parent: Token | None
    sequential: bool


@final
class ExecutionGate:
    """Admits handlers according to their execution mode."""

    def __init__(self) -> None:
        self._running: dict[Token, _Running] = {}
        self._sequential_running = 0
        self._waiters = 0
        self._condition = anyio.Condition()

    def _lineage(self, parent: Token | None) -> set[Token]:
        seen: set[Token] = set()
        while parent is not None and parent not in seen:
            seen.add(parent)
            entry = self._running.get(parent)
            parent = entry.parent if entry is not None else None
        return seen

    def _may_start(self, parent: Token | None, sequential: bool) -> bool:
        ancestors = self._lineage(parent)
        for token, entry in self._running.items():
            if token in ancestors:
                continue
            if sequential or entry.sequential:
                return False
        return True

    async def acquire(self, token: Token, parent: Token | None, mode: ExecutionMode) -> None:
        """Wait until this handler may run, then mark it running."""
        sequential = mode == "sequential"
        if sequential or self._sequential_running:
            async with self._condition:
                self._waiters += 1
                try:
                    while not self._may_start(parent, sequential):
                        await self._condition.wait()
                finally:
                    self._waiters -= 1
        self._running[token] = _Running(parent=parent, sequential=sequential)
        if sequential:
            self._sequential_running += 1

    async def release(self, token: Token) -> None:
        """Mark the handler finished and wake waiters (shielded: runs even when cancelled)."""
        entry = self._running.pop(token)
        if entry.sequential:
            self._sequential_running -= 1
        if self._waiters:
            with anyio.CancelScope(shield=True):
                async with self._condition:
                    self._condition.notify_all()
