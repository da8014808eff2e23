"""Live events of one Code Mode run: printed output and nested calls as they happen.

``CodeMode.run(script, on_event=f)`` hands ``f`` each event on the host's loop;
``CodeMode.stream(script)`` wraps the same events in an async iterator. Both
executors forward printed text while the script runs (the worker pool in
``output`` frames), never more than the run's output limit, so a stream is
bounded by the run's limits: output bytes plus two events per tool call.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, final

import anyio

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from anyio.streams.memory import MemoryObjectReceiveStream

    from codemode.sandbox import ScriptResult

__all__ = [
    "CallEndEvent",
    "CallStartEvent",
    "OutputEvent",
    "RunEndEvent",
    "RunEvent",
    "RunStream",
    "guarded",
]

_LOG: Final = logging.getLogger("codemode.mode")


@dataclass(frozen=True, kw_only=True, slots=True)
class OutputEvent:
    """Text the script printed (a piece of ``ScriptResult.output``, in order)."""

    text: str
    """The printed text; the pieces of a run add up to its kept output."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallStartEvent:
    """The script called a tool; its dispatch is starting."""

    call_id: str
    """The nested call's id (``<run>:code:<n>``)."""
    name: str
    """Wire name of the tool."""
    tool: str
    """The SDK path the script used (``tools.<tool>``)."""
    arguments: Mapping[str, Any]
    """The call's wire arguments, as the script passed them (not yet validated)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallEndEvent:
    """A nested call's dispatch finished (its result went back to the script)."""

    call_id: str
    """The nested call's id."""
    name: str
    """Wire name of the tool."""
    tool: str
    """The SDK path the script used."""
    is_error: bool
    """Whether the script got a ``ToolCallError``."""
    error: str | None
    """The error message the script saw, when ``is_error``."""
    duration: float | None
    """Seconds the pipeline took."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunEndEvent:
    """The run is over; always the last event of a stream."""

    result: ScriptResult
    """What ``CodeMode.run`` returns."""


RunEvent = OutputEvent | CallStartEvent | CallEndEvent | RunEndEvent
"""One live event of a run."""


def guarded(on_event: Callable[[RunEvent], Any]) -> Callable[[RunEvent], None]:
    """``on_event`` made safe to call from inside a run: an exception it raises is logged
    (``codemode.mode``) and the run goes on, as a bug in an observer must not end it."""

    def deliver(event: RunEvent) -> None:
        try:
            on_event(event)
        except Exception:
            _LOG.exception("a run's on_event callback raised on %s", type(event).__name__)

    return deliver


@final
class RunStream:
    """The events of one run, in order, ending with :class:`RunEndEvent`.

    Made by ``CodeMode.stream``: iterate it inside the ``async with`` block; leaving
    the block stops a run that is still going (structured concurrency: the run is a
    task of the block).
    """

    def __init__(self, receive: MemoryObjectReceiveStream[RunEvent]) -> None:
        self._receive = receive
        self.result: ScriptResult | None = None
        """The run's result, once the run ended."""

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> RunEvent:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
