"""Host-side gate for every tool call a script makes (both executors use it).

The broker wraps the host's ``call_tool`` with: the ``calls`` limit, the
``concurrency`` semaphore, the call trace (``CallRecord``), the JSON round trip
(no object identity crosses), error sanitising (the script only ever sees a
fresh ``ToolCallError`` built from strings) and the closed-after-run gate (no
call reaches the host once ``close()`` ran).

Replies cross to the script side as plain JSON (:meth:`CallBroker.answer`),
and the script side turns them back into a value or an exception with
:func:`~codemode.sandbox.runtime.replies.decode_reply`. The in-process executor
uses the same two steps, so both executors behave identically.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Collection
from contextvars import ContextVar
from typing import Any, Final, TypeVar, final

import anyio
import anyio.to_thread

from codemode.errors import LimitExceeded, ToolCallError, WorkerProtocolError
from codemode.jsontext import loads, small_scalars
from codemode.sandbox.executors.protocol import (
    BOUNDS_TEXT,
    INLINE_FRAME,
    MAX_FRAME,
    FrameTooLarge,
    arguments_message,
    decode_text_bounded,
    encode_large_strict,
    encode_strict,
    is_small,
    may_break_bounds,
    new_call_bounded,
)
from codemode.sandbox.limits import DEFAULT_LIMITS, Limits
from codemode.sandbox.runtime.memo import PerPaths
from codemode.sandbox.runtime.replies import RUN_ENDED, failure_reply
from codemode.sandbox.runtime.result import CallRecord, call_record

__all__ = ["NOT_KEPT", "TRACE_ARGUMENTS", "CallBroker", "CallTool", "current_call"]

CallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Host callback: (tool path, JSON keyword arguments) -> JSON result, or raise ToolCallError.

It may also have an async ``stop_calls(key=None)`` method (CodeMode's run bridge has):
the executor awaits it before it cancels calls in flight (all of them when the run
ends; one, ``key``, when the script cancelled it), so their handlers are asked to stop
(their signals) before they are cut; ``key`` is what :func:`current_call` returned
inside that call (see :meth:`CallBroker.stop_calls`).

A ``fresh_results = True`` attribute says every result it returns is a JSON value made for
that call (plain dicts, lists and exact scalars nothing else holds; CodeMode's bridge thaws
each one): the in-process executor then hands it over without a JSON round trip."""

_CURRENT: ContextVar[tuple[CallBroker, int] | None] = ContextVar("codemode_broker_call",
                                                                 default=None)


def current_call() -> tuple[CallBroker, int] | None:
    """Inside a broker's ``call_tool``: the broker and the key of the call being made
    (unique in its run; ``stop_calls(key)`` names it); None elsewhere."""
    return _CURRENT.get()

INTERNAL_ERROR: Final = "internal error"
"""What the script sees when the host callback fails for a reason other than ToolCallError."""


_T = TypeVar("_T")
_Raw = tuple[str, dict[str, Any], float, float, str | None]


def _json_copy(value: Any) -> Any:
    """Detached JSON copy; raises TypeError/ValueError for non-JSON data."""
    return json.loads(json.dumps(value, allow_nan=False))


def _keep(value: Any) -> Any:
    return value


TRACE_ARGUMENTS: Final = 64 * 1024
"""About how many bytes of JSON text of one call's arguments the run's trace keeps
(``CallRecord.arguments``); bigger ones are recorded as ``NOT_KEPT``. The trace lives as
long as the run's result, on the host: a script sending one 30 MB string twenty times
grew the host by 600 MB, whatever the worker's memory limit."""

NOT_KEPT: Final = "(not kept)"
"""The one key of the arguments the trace records for a call whose arguments were bigger
than ``TRACE_ARGUMENTS`` (its value says how big); no tool argument is spelled so."""


_FLAT_KEYS: Final = 32
_FLAT_TEXT: Final = 1024
_FLAT_INT: Final = 1 << 60
"""Arguments of at most ``_FLAT_KEYS`` scalars (and keys) this small are far under
``TRACE_ARGUMENTS``: kept without the walk."""


_KEPT_TEXT: Final = TRACE_ARGUMENTS // 8
"""Arguments whose JSON text is at most this long are kept by :func:`_traced` whatever they
hold: its estimate of a value's JSON is at most 4.5 times the value's text (``1,``: 2
characters, counted 9)."""


def _traced(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` as the trace keeps them (see ``TRACE_ARGUMENTS``). Reads at most about
    that many bytes' worth of them: a container's length counts before its items."""
    if (len(args) <= _FLAT_KEYS and small_scalars(args.values(), _FLAT_TEXT, _FLAT_INT)
            and max(map(len, args), default=0) <= _FLAT_TEXT):
        return args  # the common call: a few short scalars, kept at once
    size = 0
    stack: list[Any] = [args]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            size += len(item) + 2
        elif kind is dict:
            size += 2 + 2 * len(item)
            if size <= TRACE_ARGUMENTS:
                size += sum(len(key) for key in item)
                stack.extend(item.values())
        elif kind is list:
            size += 2 + len(item)
            if size <= TRACE_ARGUMENTS:
                stack.extend(item)
        elif kind is int:
            size += 8 if -(1 << 60) < item < 1 << 60 else item.bit_length() // 3 + 2
        else:
            size += 8
        if size > TRACE_ARGUMENTS:
            return {NOT_KEPT: f"more than {TRACE_ARGUMENTS:,} bytes of JSON arguments"}
    return args


def _json_value(name: str, text: str) -> Any:
    """Decode a call's argument text; a fresh value nothing else holds."""
    try:
        return loads(text)
    except (TypeError, ValueError) as exc:
        raise ToolCallError(name, f"arguments are not JSON data: {exc}") from None


async def _large_json_value(name: str, text: str) -> Any:
    """The arguments decoded under a frame's bounds, counted as inside their ``call`` frame
    (so both executors refuse the same arguments: a worker's frame of them would be a
    protocol violation)."""
    context = new_call_bounded()
    try:
        return await anyio.to_thread.run_sync(decode_text_bounded, text, context,
                                              abandon_on_cancel=True)
    except WorkerProtocolError as exc:
        raise ToolCallError(name, arguments_message(exc.problem)) from None
    finally:
        context.cancelled = True  # an abandoned decode stops at its next value


_path_set: Final = PerPaths(frozenset)
"""A run's tool paths as a set, made once per tuple."""


@final
class CallBroker:
    """Gate between one run's script and the host's ``call_tool``."""

    def __init__(self, call_tool: CallTool, limits: Limits = DEFAULT_LIMITS,
                 tool_paths: Collection[str] | None = None) -> None:
        self._call_tool = call_tool
        self._stop_calls: Callable[[int | None], Awaitable[None]] | None = getattr(
            call_tool, "stop_calls", None)
        self._finish: Callable[[Any], Any] = (
            _keep if getattr(call_tool, "fresh_results", False) is True else _json_copy)
        """How a result is detached for the script side (see ``CallTool``)."""
        self._active = 0
        """Calls handed to ``call_tool`` that have not returned."""
        self._flying: dict[int, str] = {}
        """Their tools, by call index (:meth:`in_flight_tools`)."""
        self.paused = 0.0
        """Seconds the run's clock has been held so far (calls waiting for an approver)."""
        self._holds = 0
        self._held_at = 0.0
        self.on_clock: Callable[[float | None], None] | None = None
        """Set by the executor: called with None when the run's clock stops (see
        :meth:`hold`) and with :attr:`paused` when it runs again; the executor moves its
        deadlines (host and script side) by that much."""
        self._limits = limits
        self._tool_paths = None if tool_paths is None else (
            _path_set(tool_paths) if type(tool_paths) is tuple else frozenset(tool_paths))
        """The run's tools; None trusts the script side (a worker could be compromised)."""
        self._semaphore: anyio.Semaphore | None = None
        """The ``concurrency`` gate, made by the run's first call (an anyio semaphore costs
        a run that makes none ~5 µs)."""
        self._t0 = time.perf_counter()
        self._records: list[_Raw | None] = []
        """Per call ``(name, arguments, started, ended, error)``; ``CallRecord``s are built
        when the trace is read (once per run), not on the per-call path."""
        self._closed = False

    def start(self) -> None:
        """Mark the moment the script starts: ``CallRecord.started`` counts from here, so a
        wait for a free worker is not charged to the first call."""
        self._t0 = time.perf_counter()

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """The call trace so far, in start order (calls still in flight are left out)."""
        t0 = self._t0
        return tuple(
            call_record(i, raw[0], raw[1], raw[2] - t0, raw[3] - raw[2], raw[4])
            for i, raw in enumerate(self._records) if raw is not None
        )

    @property
    def closed(self) -> bool:
        """True once the run ended; no call starts after that."""
        return self._closed

    def close(self) -> None:
        """End the run: calls not yet delivered to the host are refused."""
        self._closed = True

    def hold(self, waiting: bool) -> None:
        """A call starts (``True``) or stops (``False``) waiting for a person, an approver:
        while any call waits, the run's clock stands still, so the wait does not use the
        run's timeout. Sync, on the host loop; nothing happens once the run ended."""
        if waiting:
            self._holds += 1
            if self._holds == 1:
                self._held_at = time.perf_counter()
                if self.on_clock is not None and not self._closed:
                    self.on_clock(None)
            return
        self._holds -= 1
        if self._holds == 0:
            self.paused += time.perf_counter() - self._held_at
            if self.on_clock is not None and not self._closed:
                self.on_clock(self.paused)

    def in_flight_tools(self) -> tuple[str, ...]:
        """The tools of the calls handed to ``call_tool`` that have not returned."""
        return tuple(self._flying.values())

    async def stop_calls(self, key: int | None = None) -> None:
        """Before the executor cancels calls in flight (all, or the one ``key`` names: the
        worker's call id), let the host callback ask them to stop (``call_tool.stop_calls``,
        bounded by its own grace). Shielded, so a cancelled run still gets it; a no-op
        without calls in flight or without the method."""
        if self._active and self._stop_calls is not None:
            with anyio.CancelScope(shield=True):
                await self._stop_calls(key)

    async def answer(self, name: str, arguments: Any) -> dict[str, Any]:
        """Run one call and encode its outcome as a JSON reply (``replies.decode_reply``)."""
        try:
            return {"ok": await self.call(name, arguments)}
        except (LimitExceeded, ToolCallError) as exc:
            return failure_reply(exc)

    async def answer_json(self, name: str, arguments: str) -> dict[str, Any]:
        """:meth:`answer` for arguments sent as JSON text (what a script side sends).

        Text past ``INLINE_FRAME`` is decoded on a worker thread by the frames' counting
        decoder (its bounds too), which lets the loop run between its steps: one
        ``json.loads`` of 12 MB of 4,000-digit integers held the loop for 0.2 s.
        """
        try:
            size = len(arguments)
            if size > INLINE_FRAME or (size >= BOUNDS_TEXT and may_break_bounds(arguments)):
                args = await _large_json_value(name, arguments)
            else:
                args = _json_value(name, arguments)
            return {"ok": await self._call(name, args, detached=True, finish=self._finish,
                                           kept=size <= _KEPT_TEXT)}
        except (LimitExceeded, ToolCallError) as exc:
            return failure_reply(exc)

    async def answer_frame(self, call_id: int, name: str, arguments: Any) -> bytes:
        """The worker pool's :meth:`answer`: the outcome as an encoded ``reply`` frame.

        ``arguments`` come fresh from the frame decoder (nothing else holds them),
        so they are not copied, and the result is serialised once, straight into
        the frame, instead of copied and then encoded: half the host's JSON work
        per call. A result that is not JSON fails exactly as in :meth:`call`. A big
        result is encoded on a worker thread in short steps that stop at the frame cap
        (``protocol.encode_large_strict``), never on the loop: a 100 MB string took
        0.4 s to encode there before its size was checked.
        """

        async def finish(value: Any) -> bytes:
            message = ["reply", call_id, {"ok": value}]
            if is_small(value):
                return encode_strict(message)
            return await anyio.to_thread.run_sync(encode_large_strict, message,
                                                  abandon_on_cancel=True)

        try:
            return await self._call(name, arguments, detached=True, finish=_keep,
                                    afinish=finish, key=call_id)
        except (LimitExceeded, ToolCallError) as exc:
            return encode_strict(["reply", call_id, failure_reply(exc)])

    async def call(self, name: str, arguments: Any) -> Any:
        """Run one call; raises only ToolCallError or LimitExceeded (both built here)."""
        return await self._call(name, arguments, detached=False, finish=self._finish)

    async def _call(self, name: str, arguments: Any, *, detached: bool,
                    finish: Callable[[Any], _T],
                    afinish: Callable[[Any], Awaitable[_T]] | None = None,
                    key: int | None = None, kept: bool = False) -> _T:
        """The gate: limits, trace, host callback; ``finish`` (or the awaitable ``afinish``)
        detaches the result. ``key`` (default: the call's index) is :func:`current_call`
        inside the callback.

        ``detached`` says ``arguments`` is already a private JSON value (decoded
        from a frame); otherwise it is copied so the host never shares an object
        with the script side. ``kept``: they came from a JSON text so short that the
        trace keeps them whole (see ``_KEPT_TEXT``), without :func:`_traced`'s look.
        """
        if self._closed:
            raise ToolCallError(name, RUN_ENDED)
        if self._tool_paths is not None and name not in self._tool_paths:
            raise ToolCallError(str(name), "no such tool in this run")
        if len(self._records) >= self._limits.calls:
            raise LimitExceeded("calls", self._limits.calls,
                                f"more than {self._limits.calls} tool calls")
        if detached:
            args = arguments
        else:
            try:
                args = _json_copy(arguments)
            except (TypeError, ValueError) as exc:
                raise ToolCallError(name, f"arguments are not JSON data: {exc}") from None
        if type(args) is not dict:
            raise ToolCallError(name, "arguments must be a JSON object")
        index = len(self._records)
        self._records.append(None)
        semaphore = self._semaphore
        if semaphore is None:
            semaphore = self._semaphore = anyio.Semaphore(self._limits.concurrency)
        try:
            semaphore.acquire_nowait()  # the common case: no checkpoint, no loop turn
        except anyio.WouldBlock:
            await semaphore.acquire()
        try:
            if self._closed:
                self._records[index] = self._record(name, args, time.perf_counter(),
                                                    RUN_ENDED, kept)
                raise ToolCallError(name, RUN_ENDED)
            started = time.perf_counter()
            self._active += 1
            self._flying[index] = name
            current = _CURRENT.set((self, index if key is None else key))
            try:
                try:
                    answer = await self._call_tool(name, args)
                finally:
                    self._active -= 1
                    del self._flying[index]
                    _CURRENT.reset(current)
                if afinish is None:
                    value = finish(answer)
                else:
                    value = await afinish(answer)
            except FrameTooLarge:
                message = f"the result is larger than the {MAX_FRAME} byte frame cap"
                self._records[index] = self._record(name, args, started, message, kept)
                raise ToolCallError(name, message) from None
            except ToolCallError as exc:
                message, path = str(exc.message), exc.path
                self._records[index] = self._record(name, args, started, message, kept)
                raise ToolCallError(name, message, None if path is None else str(path)) from None
            except anyio.get_cancelled_exc_class():
                self._records[index] = self._record(name, args, started, "cancelled", kept)
                raise
            except BaseException:  # SystemExit or KeyboardInterrupt too: never the host's exit
                self._records[index] = self._record(name, args, started, INTERNAL_ERROR, kept)
                raise ToolCallError(name, INTERNAL_ERROR) from None
            self._records[index] = self._record(name, args, started, None, kept)
            return value
        finally:
            semaphore.release()

    def _record(self, name: str, args: dict[str, Any], started: float,
                error: str | None, kept: bool) -> _Raw:
        return (name, args if kept else _traced(args), started, time.perf_counter(), error)
