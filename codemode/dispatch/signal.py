"""``CancelSignal``: a cooperative cancellation request, shared by calls, runs and tasks.

Its own module so that the task runtime and the agent session (which
``context`` refers to) can use it without an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import anyio
import anyio.lowlevel

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CancelSignal"]


def _nothing() -> None:
    return None


@final
class CancelSignal:
    """A cancellation request a wrapper, harness, run or task can attach to a call.

    The pipeline cancels the handler when it fires, ``grace`` seconds later: a
    handler that watches ``cancelled`` or ``await wait()`` can stop on its own
    (and return what it has) before the hard cancel reaches it.
    """

    __slots__ = ("_callbacks", "_children", "_event", "_fired", "_parent", "grace", "reason")

    def __init__(self, *, grace: float = 0.0) -> None:
        if grace < 0:
            raise ValueError(f"grace must be >= 0, got {grace!r}")
        self._fired = False
        self._event: anyio.Event | None = None  # made by the first wait(): most never wait
        self._callbacks: set[Callable[[], None]] = set()
        self._children: set[CancelSignal] | None = None
        """Children that fire with this signal (a set once the first one is made)."""
        self._parent: CancelSignal | None = None
        """The signal this one is a live child of (until released)."""
        self.reason: str | None = None
        self.grace = grace
        """Seconds the pipeline lets a handler stop by itself after the signal fires."""

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel()`` was called."""
        return self._fired

    def cancel(self, reason: str = "cancelled") -> None:
        """Request cancellation (children and callbacks too); idempotent, the first
        reason wins. Call it on the event loop's thread."""
        if self._fired:
            return
        self._fired = True
        self.reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, set()
        children, self._children = self._children, None
        for fn in callbacks:
            fn()
        for child in children or ():
            child._parent = None
            child.cancel(reason or "cancelled")

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` (sync, fast) when the signal fires, at once if it has; returns a
        remover. The pipeline stops handlers this way, without a watcher task."""
        if self._fired:
            fn()
            return _nothing
        self._callbacks.add(fn)
        return lambda: self._callbacks.discard(fn)

    def child(self, *, grace: float | None = None) -> CancelSignal:
        """A signal that fires when this one does (already fired if this one has)."""
        made = CancelSignal(grace=self.grace if grace is None else grace)
        if self._fired:
            made.cancel(self.reason or "cancelled")
        else:
            # a set of children, not a callback each: a run makes one child per tool call
            children = self._children
            if children is None:
                children = self._children = set()
            children.add(made)
            made._parent = self
        return made

    def release(self, child: CancelSignal) -> None:
        """Forget ``child`` (its call ended), so a long run does not accumulate them."""
        parent = child._parent
        if parent is not None:
            child._parent = None
            if parent._children is not None:
                parent._children.discard(child)

    async def wait(self) -> None:
        """Return once cancellation was requested."""
        if self._fired:
            await anyio.lowlevel.checkpoint()
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()
