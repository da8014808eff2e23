"""``AgentSession``: the host's handle on one agent, for notices tools send it.

codemode has no agent loop. A harness creates one session per agent, passes it
to ``registry.execute(call, session=...)`` (nested calls from a script inherit
it), and before each model request drains what tools injected
(``session.drain()``) into that request's context. Injecting never wakes an
idle agent; it only adds to what its next request sees.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, final

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["AgentSession", "Injection", "SessionEvent"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Injection:
    """Persistent context a tool or task appended for the agent's next model request."""

    seq: int
    """Position in the session (1, 2, …), so a harness can tell what it has seen."""
    content: str
    """The text the model will read."""
    source: Mapping[str, Any]
    """Who injected it, e.g. ``{"kind": "tool", "tool": "slow_count"}`` or
    ``{"kind": "task", "task": "task-1"}``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionEvent:
    """What a session's subscribers see: an injection, or the session's disposal."""

    type: Literal["agent/inject", "agent/dispose"]
    """``agent/inject`` or ``agent/dispose``."""
    injection: Injection | None = None
    """The injection, on ``agent/inject``."""


@final
class AgentSession:
    """One agent as tools see it (``ctx.session``): an inbox of injected context, the
    owner of the background tasks its calls start, and a lifetime.

    ``dispose()`` (or leaving ``async with``) cancels the tasks it owns; afterwards
    ``inject`` is a no-op that returns False, so a late task notice never crashes.
    """

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        """The agent's name (informational)."""
        self._pending: list[Injection] = []
        self._seq = itertools.count(1)
        self._disposed = False
        self._subscribers: list[Callable[[SessionEvent], Any]] = []
        self._cleanups: list[Callable[[], None]] = []

    @property
    def disposed(self) -> bool:
        """Whether ``dispose()`` was called."""
        return self._disposed

    def inject(self, content: str, *, source: Mapping[str, Any]) -> bool:
        """Append ``content`` for the next model request; False (and nothing kept) once
        disposed. Never wakes the agent."""
        if not isinstance(content, str):
            raise TypeError(f"inject() takes text, got {type(content).__name__}")
        if self._disposed:
            return False
        injection = Injection(seq=next(self._seq), content=content, source=dict(source))
        self._pending.append(injection)
        self._emit(SessionEvent(type="agent/inject", injection=injection))
        return True

    @property
    def pending(self) -> tuple[Injection, ...]:
        """Injections not drained yet, oldest first."""
        return tuple(self._pending)

    def drain(self) -> tuple[Injection, ...]:
        """Take the pending injections (the harness adds them to its next request)."""
        taken, self._pending = tuple(self._pending), []
        return taken

    def subscribe(self, fn: Callable[[SessionEvent], Any]) -> Callable[[], None]:
        """Call ``fn`` (sync, fast) on every injection and on disposal; returns an
        unsubscribe."""
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            if fn in self._subscribers:
                self._subscribers.remove(fn)

        return unsubscribe

    def on_dispose(self, cleanup: Callable[[], None]) -> Callable[[], None]:
        """Run ``cleanup`` (sync) when the session is disposed; returns a remover. Used by
        the task runtime to cancel the tasks this session owns."""
        if self._disposed:
            cleanup()
            return lambda: None
        self._cleanups.append(cleanup)

        def remove() -> None:
            if cleanup in self._cleanups:
                self._cleanups.remove(cleanup)

        return remove

    def dispose(self) -> None:
        """End the session: owned tasks are cancelled, later injections are dropped."""
        if self._disposed:
            return
        self._disposed = True
        cleanups, self._cleanups = self._cleanups, []
        for cleanup in reversed(cleanups):
            cleanup()
        self._emit(SessionEvent(type="agent/dispose"))

    def _emit(self, event: SessionEvent) -> None:
        for fn in tuple(self._subscribers):
            fn(event)

    async def __aenter__(self) -> AgentSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.dispose()

    def __repr__(self) -> str:
        state = "disposed" if self._disposed else f"{len(self._pending)} pending"
        return f"<AgentSession {self.name!r} {state}>"
