"""Execution modes: ``sequential`` tools never overlap with another call of the registry.

A sequential handler waits until no other handler is running, except its own
ancestors (a ``run_code`` call waiting on its script's calls must not block
its children) and parallel calls that have nested calls in flight: such a
call is waiting on its children, and counting it as busy would deadlock two
concurrent scripts that each wait on a sequential child. While a sequential
handler runs, other handlers that are not its descendants wait. Parallel
handlers otherwise run freely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import anyio

if TYPE_CHECKING:
    from codemode.dispatch.context import Token
    from codemode.dispatch.tool import ExecutionMode

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
        self._children: dict[Token, int] = {}
        """Calls in flight (waiting here or running) per parent token."""
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
            if entry.sequential:
                return False
            if sequential and not self._children.get(token):
                return False
        return True

    def _forget_child(self, parent: Token | None) -> None:
        if parent is None:
            return
        left = self._children[parent] - 1
        if left:
            self._children[parent] = left
        else:
            del self._children[parent]

    def try_enter(self, token: Token, parent: Token | None, mode: ExecutionMode) -> bool:
        """Mark the handler running if it may start without waiting (the common case)."""
        if mode != "parallel" or self._sequential_running or (parent is not None and self._waiters):
            return False
        self._running[token] = _Running(parent=parent, sequential=False)
        if parent is not None:
            self._children[parent] = self._children.get(parent, 0) + 1
        return True

    async def acquire(self, token: Token, parent: Token | None, mode: ExecutionMode) -> None:
        """Wait until this handler may run, then mark it running."""
        if self.try_enter(token, parent, mode):
            return
        sequential = mode == "sequential"
        if parent is not None:
            self._children[parent] = self._children.get(parent, 0) + 1
        try:
            if sequential or self._sequential_running:
                async with self._condition:
                    if parent is not None:
                        self._condition.notify_all()  # the parent now waits on a child
                    self._waiters += 1
                    try:
                        while not self._may_start(parent, sequential):
                            await self._condition.wait()
                    finally:
                        self._waiters -= 1
            elif parent is not None and self._waiters:
                async with self._condition:
                    self._condition.notify_all()  # the parent now waits on a child
        except BaseException:
            self._forget_child(parent)
            raise
        self._running[token] = _Running(parent=parent, sequential=sequential)
        if sequential:
            self._sequential_running += 1

    def leave(self, token: Token) -> bool:
        """Mark the handler finished; True when waiters must be woken with ``wake()``."""
        entry = self._running.pop(token)
        self._forget_child(entry.parent)
        if entry.sequential:
            self._sequential_running -= 1
        return bool(self._waiters)

    async def wake(self) -> None:
        """Let waiting handlers re-check (shielded: runs even when cancelled)."""
        with anyio.CancelScope(shield=True):
            async with self._condition:
                self._condition.notify_all()

    async def release(self, token: Token) -> None:
        """Mark the handler finished and wake waiters."""
        if self.leave(token):
            await self.wake()
