"""``CancelSignal``: a cooperative cancellation request, shared by calls, runs and tasks.

Its own module so that the task runtime and the agent session (which
``context`` refers to) can use it without an import circle.
"""

from __future__ import annotations

from typing import final

import anyio

__all__ = ["CancelSignal"]


@final
class CancelSignal:
    """A cancellation request a wrapper, harness, run or task can attach to a call.

    The pipeline cancels the handler when it fires, ``grace`` seconds later: a
    handler that watches ``cancelled`` or ``await wait()`` can stop on its own
    (and return what it has) before the hard cancel reaches it.
    """

    __slots__ = ("_children", "_event", "grace", "reason")

    def __init__(self, *, grace: float = 0.0) -> None:
        if grace < 0:
            raise ValueError(f"grace must be >= 0, got {grace!r}")
        self._event = anyio.Event()
        self._children: set[CancelSignal] = set()
        self.reason: str | None = None
        self.grace = grace
        """Seconds the pipeline lets a handler stop by itself after the signal fires."""

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel()`` was called."""
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        """Request cancellation (and of every child); idempotent, the first reason wins."""
        if self._event.is_set():
            return
        self.reason = reason
        self._event.set()
        children, self._children = self._children, set()
        for child in children:
            child.cancel(reason)

    def child(self, *, grace: float | None = None) -> CancelSignal:
        """A signal that fires when this one does (already fired if this one has)."""
        made = CancelSignal(grace=self.grace if grace is None else grace)
        if self.cancelled:
            made.cancel(self.reason or "cancelled")
        else:
            self._children.add(made)
        return made

    def release(self, child: CancelSignal) -> None:
        """Forget ``child`` (its call ended), so a long run does not accumulate them."""
        self._children.discard(child)

    async def wait(self) -> None:
        """Return once cancellation was requested."""
        await self._event.wait()
