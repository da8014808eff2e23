"""``codemode serve``: a ``Gateway`` as an MCP server (official ``mcp`` SDK, low-level ``Server``).

What a client sees is small and fixed: ``run_code`` (its description self-contained: the
rules and the SDK, or past the size budget the namespace index and how to discover),
``search_tools`` and ``describe_tools``; with ``expose_upstream`` also every upstream tool
under its wire name. Every call goes through the gateway's registry, so through the one
pipeline.

Protocol behaviour:

- while ``run_code`` runs, each nested call's start, end and reported progress, and the
  script's printed output as it is printed, are ``notifications/progress`` messages (when
  the client sent a progress token); the output also comes with the result;
- ``notifications/cancelled`` cancels the run (the SDK cancels the handler) and so its
  nested calls, the upstream calls among them included;
- a direct call of a listed upstream tool (``expose_upstream``) relays the upstream's
  ``notifications/progress`` as it sent them (numbers and message);
- image, audio and resource blocks from upstream tools are content blocks of the result
  (as text, for a client whose protocol revision predates the block's type);
- an upstream tool listed directly keeps its ``title`` and ``annotations``; ``run_code``
  has the hints every tool a script may call shares;
- progress and status name a tool as scripts call it (``raw.long_running``), not by its
  wire name (``long-running``);
- a direct call of a listed tool is bounded by ``call_timeout`` (the run limit by default);
- when the tool set changes (an upstream's ``list_changed``, one that reconnects with other
  tools, a late start) clients get ``notifications/tools/list_changed``: handshake-era
  connections that listed tools directly (once until they list again), 2026-07-28 ones on
  their ``subscriptions/listen`` stream;
- upstream ``notifications/message`` (and the gateway's own warnings) are log
  messages to clients, the logger naming the upstream (``raw.raw-logger``): handshake-era
  connections at the level their ``logging/setLevel`` asked (the lowest level asked is
  passed on to the upstreams), 2026-07-28 requests on their own stream as they opted in.
  A message an HTTP upstream sent on the stream of one of its requests goes only to the
  client whose request made that call (``_CAUSE``); the rest (a stdio upstream's, which
  name no request) to every client.

The SDK's lifespan runs the loop that sends those notifications while it serves.

HTTP (streamable HTTP, ``/mcp``) binds 127.0.0.1 unless told otherwise; with a token, a
request without ``Authorization: Bearer <token>`` gets 401 before it reaches MCP;
``http_guard`` makes every error answer JSON-RPC and cancels the requests of clients that
left.
"""

from __future__ import annotations

import contextlib
import hmac
import io
import itertools
import json
import logging
import math
import os
import signal
import sys
import threading
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

import anyio

from codemode.dispatch.content import text
from codemode.dispatch.context import ToolCall
from codemode.dispatch.frozen import FrozenDict, thaw
from codemode.integrations.identity import NAME, installed_version
from codemode.integrations.request_params import named_params_errors, progress_token_check
from codemode.integrations.wrapped_result import wire_schema, wire_structured, wraps

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
    from typing import BinaryIO

    from mcp.types import LoggingLevel

    from codemode.dispatch.events import ToolEvent
    from codemode.dispatch.spec import ToolSpec
    from codemode.integrations.gateway import Gateway

__all__ = ["GatewayServer", "serve_http", "serve_stdio"]

_CLIENT_TOOLS = ("run_code", "search_tools", "describe_tools")


@final
class _Peer:
    """A handshake-era client connection: where connection-wide notifications go."""

    __slots__ = ("connection", "level", "listed", "session")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.connection = _connection(session)
        self.listed: int | None = None
        """The registry version it last listed, or None (never, or told of a change since)."""
        self.level: LoggingLevel | None = None
        """The level it set with ``logging/setLevel`` (None: every message)."""


def _connection(session: Any) -> Any:
    """What identifies a client's connection: the SDK builds a ``ServerSession`` per
    request, all of them over the connection's one ``Connection``."""
    return getattr(session, "_connection", session)


_LEVELS: tuple[LoggingLevel, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_PY_LEVELS: tuple[tuple[int, LoggingLevel], ...] = (
    (logging.CRITICAL, "critical"), (logging.ERROR, "error"), (logging.WARNING, "warning"),
    (logging.INFO, "info"))
_LOG_FLUSH = 2.0
"""Seconds a 2026-07-28 request's answer waits for the log messages queued before it."""
_LOG_BACKLOG = 1_000
"""Log messages waiting to be forwarded; past this, new ones are dropped (an upstream
that floods its log never holds up the server)."""


@final
class GatewayServer:
    """The MCP server of one ``Gateway`` (build once, serve over any transport).

    ``call_timeout`` bounds each direct call of a listed tool (an upstream tool exposed
    with ``expose_upstream``, ``search_tools``, ``describe_tools``); by default it is the
    gateway's run limit (``Limits.timeout``, 30 s unless set), the bound of a ``run_code``.
    """

    def __init__(self, gateway: Gateway, *, expose_upstream: bool = False,
                 name: str = NAME, call_timeout: float | None = None,
                 version: str | None = None) -> None:
        from mcp import types
        from mcp.server.lowlevel.server import NotificationOptions, Server
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        self.gateway = gateway
        self.expose_upstream = expose_upstream
        self.call_timeout = (call_timeout if call_timeout is not None
                             else gateway.mode.limits.timeout)
        self._bus = InMemorySubscriptionBus()
        self._peers: dict[int, _Peer] = {}
        self._calls = itertools.count(1)
        self._runs: dict[str, Callable[[ToolEvent], None]] = {}
        self._pending_change = anyio.Event()
        self._published = gateway.registry.version
        self._running = anyio.Lock()
        self._log_in: Any = None
        """Where log messages go to be forwarded, while the serving loop runs."""
        self._log_requests: dict[int, tuple[Any, frozenset[str], Any]] = {}
        self._logs_taken = 0
        """Log messages the forwarding loop took from its queue (``_logs_done``: and sent)."""
        self._logs_done = 0
        self._log_sent = anyio.Event()
        self._script_names: tuple[int, dict[str, str]] = (-1, {})

        class _Server(Server[Any]):
            def create_initialization_options(self, notification_options: Any = None,
                                              experimental_capabilities: Any = None,
                                              extensions: Any = None) -> Any:
                return super().create_initialization_options(
                    notification_options or NotificationOptions(tools_changed=True),
                    experimental_capabilities, extensions,
                )

        self.server = _Server(
            name,
            version=version if version is not None else installed_version(),
            instructions=(
                "Code Mode over many tools: write one Python script for `run_code`;"
                " `search_tools`/`describe_tools` find the tools it can call."
            ),
            lifespan=self._lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        self.server.add_notification_handler(
            "notifications/initialized", _notification_params(), self._initialized
        )
        # Handshake-era logging (the 2026-07-28 revision has none: its clients opt in per
        # request); registered as a handler, the SDK also declares the capability.
        self.server.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self._set_level)
        self.server.middleware += [named_params_errors(self.server), progress_token_check]
        gateway.on_change(lambda: self._pending_change.set())
        gateway.on_log(self._upstream_log)
        gateway.registry.subscribe(self._event)

    # -- tools/list -------------------------------------------------------------------

    def _specs(self) -> list[ToolSpec]:
        registry = self.gateway.registry
        specs = {s.name: s for s in registry.specs()}
        out = [specs[n] for n in _CLIENT_TOOLS if n in specs]
        if self.expose_upstream:
            out += [s for s in self.gateway.upstream_specs() if s.name not in _CLIENT_TOOLS
                    and s.name not in ("search", "describe")]
        return out

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        if params is not None and params.cursor is not None:  # one page: no cursor of ours
            raise MCPError(code=types.INVALID_PARAMS, message=(
                f"unknown cursor {params.cursor!r}: this server lists its tools in one page"))
        peer = self._peer(ctx)
        if peer is not None:
            peer.listed = self.gateway.registry.version
        tools = []
        for spec in self._specs():
            description = spec.description
            if spec.name == "run_code":
                description = self.gateway.run_code_description()
            entry: dict[str, Any] = {
                "name": spec.name,
                "description": description,
                "inputSchema": thaw(spec.parameters),
            }
            if spec.output_schema is not None:
                entry["outputSchema"] = wire_schema(thaw(spec.output_schema))
            entry.update(self._hints(spec.name))
            tools.append(types.Tool.model_validate(entry))
        return types.ListToolsResult(tools=tools)

    def _hints(self, name: str) -> dict[str, Any]:
        """A tool's ``title`` and ``annotations``: an upstream tool's as its server listed
        them (clients ask before a ``destructiveHint`` call, not before a read-only one);
        the discovery tools read only; ``run_code`` what every tool a script may call
        declares in common (nothing said: MCP's defaults, may write and reach out)."""
        if name in _OWN_HINTS:
            return dict(thaw(_OWN_HINTS[name]))
        if name == "run_code":
            hints = _common_hints([self.gateway.listing(s.name) for s in
                                   self.gateway.upstream_specs() if s.visible_in_code])
            return {"title": "Run code", **({"annotations": hints} if hints else {})}
        return _listed_hints(self.gateway.listing(name))

    # -- tools/call ---------------------------------------------------------------------

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        name = params.name
        specs = self._specs()
        if name not in {s.name for s in specs}:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool {name!r}; this server offers "
                + ", ".join(s.name for s in specs[:10]),
            )
        call_id = f"mcp-{next(self._calls)}"
        call = ToolCall(call_id=call_id, name=name, arguments=dict(params.arguments or {}))
        async with self._logs_for(ctx):
            if name != "run_code":
                return await self._direct(call, specs, ctx.session, ctx.protocol_version)
            send, receive = anyio.create_memory_object_stream[tuple[str, int]](math.inf)
            feed = _ProgressFeed(send, self._script_name)
            self._runs[call_id] = feed
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(_report, ctx.session, receive)
                    try:
                        result = await self.gateway.registry.execute(
                            call, on_update=feed.update)
                    finally:
                        self._runs.pop(call_id, None)
                        send.close()
            finally:
                self._runs.pop(call_id, None)
            return _mcp_result(result, self._specs(), name, ctx.protocol_version)

    async def _direct(self, call: ToolCall, specs: list[ToolSpec], session: Any,
                      version: str | None) -> Any:
        """A listed tool called directly, bounded by ``call_timeout`` (the deadline cancels
        the handler, so an upstream is sent ``notifications/cancelled``); an upstream's
        progress reaches the client as the upstream sent it."""
        from mcp import types

        timeout = self.call_timeout
        send, receive = anyio.create_memory_object_stream[_Progress](math.inf)

        def relayed(update: Any) -> None:
            progress = _progress_of(update)
            if progress is not None:
                _offer(send, progress)

        async with anyio.create_task_group() as group:
            group.start_soon(_relay, session, receive)
            try:
                result = await self.gateway.registry.execute(
                    call, deadline=anyio.current_time() + timeout, on_update=relayed)
            finally:
                send.close()
        if result.is_error and result.error is not None and result.error.kind == "timeout":
            spec = next((s for s in specs if s.name == call.name), None)
            upstream = spec.namespace if spec is not None else None
            who = (f"upstream MCP server {upstream!r}"
                   if upstream in self.gateway.upstream_names else "the tool")
            return types.CallToolResult(is_error=True, content=[types.TextContent(text=(
                f"{who} did not answer {call.name!r} within {timeout:g} s; the call was"
                " cancelled (codemode serve --timeout sets the limit)"))])
        return _mcp_result(result, specs, call.name, version)

    def _script_name(self, wire: str) -> str:
        """The name a script calls a tool by (its SDK path less ``tools.``), or the wire
        name of one the SDK does not have."""
        version = self.gateway.registry.version
        if self._script_names[0] != version:
            paths = {w: path for path, w in self.gateway.mode.sdk().names.tools.items()}
            self._script_names = (version, paths)
        return self._script_names[1].get(wire, wire)

    def _event(self, event: ToolEvent) -> None:
        if event.type == "tool/call" and event.call_id in self._runs:
            self._runs[event.token] = self._runs[event.call_id]
            return
        feed = self._runs.get(event.parent or "")
        if feed is not None:
            feed(event)
        if event.type == "tool/result" and event.token in self._runs:
            del self._runs[event.token]

    # -- clients ------------------------------------------------------------------------

    def _peer(self, ctx: Any) -> _Peer | None:
        """The handshake-era connection of a request (None for a 2026-07-28 one)."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None
        key = id(_connection(ctx.session))
        peer = self._peers.get(key)
        if peer is None or peer.connection is not _connection(ctx.session):
            peer = self._peers[key] = _Peer(ctx.session)
            closing = getattr(peer.connection, "exit_stack", None)
            if closing is not None:  # the SDK unwinds it when the connection closes
                closing.callback(self._forget, key, peer)
        return peer

    def _forget(self, key: int, peer: _Peer) -> None:
        """A connection closed: its peer goes, and with it the level it asked for (a peer
        kept would hold its session, and its ``debug`` would stay asked of the upstreams
        for as long as serve runs)."""
        if self._peers.get(key) is peer:
            del self._peers[key]
            if peer.level is not None:
                self._apply_levels()

    async def _initialized(self, ctx: Any, params: Any) -> None:
        self._peer(ctx)

    @contextlib.asynccontextmanager
    async def _lifespan(self, server: Any) -> AsyncIterator[dict[str, Any]]:
        """While the SDK serves (a stdio or in-process connection, the HTTP app): the
        notification loop runs (one at a time: another waits for its turn)."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.announce_changes)
            try:
                yield {}
            finally:
                group.cancel_scope.cancel()

    async def announce_changes(self) -> None:
        """Run while serving (the SDK's lifespan runs it): tell clients when the tool list
        changed, and forward log messages, the upstreams' and the gateway's own."""
        async with self._running:
            send, receive = anyio.create_memory_object_stream[tuple[Any, str, Any, Any]](
                _LOG_BACKLOG)
            handler = _LogRecords(send)
            gateway_log = logging.getLogger("codemode.gateway")
            with send, receive:
                self._log_in = send
                gateway_log.addHandler(handler)
                try:
                    async with anyio.create_task_group() as group:
                        group.start_soon(self._forward_logs, receive)
                        await self._announce_forever()
                finally:
                    gateway_log.removeHandler(handler)
                    self._log_in = None

    async def _announce_forever(self) -> None:
        from mcp.server.subscriptions import ToolsListChanged

        while True:
            await self._pending_change.wait()
            self._pending_change = anyio.Event()
            version = self.gateway.registry.version
            if version != self._published:
                self._published = version
                await self._bus.publish(ToolsListChanged())
            # only to clients that listed tools, and once until they list them again
            for key, peer in list(self._peers.items()):
                if peer.listed is None or peer.listed == version:
                    continue
                peer.listed = None
                try:
                    await peer.session.send_tool_list_changed()
                except Exception:  # a closed connection: forget it
                    self._peers.pop(key, None)

    # -- logging ------------------------------------------------------------------------

    async def _set_level(self, ctx: Any, params: Any) -> Any:
        from mcp import types

        peer = self._peer(ctx)
        if peer is not None:
            peer.level = params.level
        self._apply_levels()
        return types.EmptyResult()

    def _apply_levels(self) -> None:
        """The upstreams log at the lowest level a connected client asked for."""
        asked = [p.level for p in self._peers.values() if p.level is not None]
        self.gateway.set_log_level(min(asked, key=_LEVELS.index) if asked else None)

    def _upstream_log(self, upstream: str, params: Any) -> None:
        if self._log_in is not None:
            logger = f"{upstream}.{params.logger}" if params.logger else upstream
            _offer(self._log_in, (params.level, logger, params.data, _CAUSE.get()))

    @contextlib.asynccontextmanager
    async def _logs_for(self, ctx: Any) -> AsyncIterator[None]:
        """While a ``tools/call`` runs: the log messages an upstream sends in the context
        of its calls (an HTTP upstream's, on that call's stream) go to this request only;
        a 2026-07-28 request also gets the messages that name no request (as far as its
        ``_meta`` opted in: the SDK's session filters them). Such a request's answer waits
        (up to ``_LOG_FLUSH`` s) for the messages queued before it: its stream closes with
        the answer, and they were lost (24 of 40 of a stdio upstream's, 4 per call)."""
        from mcp.server.connection import allowed_log_levels

        peer = self._peer(ctx)
        allowed = (frozenset(_LEVELS) if peer is not None
                   else frozenset(allowed_log_levels(ctx.protocol_version, ctx.meta)))
        cause = _CAUSE.set(_Cause(ctx.session, ctx.request_id, peer, allowed))
        key = id(ctx.session)
        if peer is None and allowed:
            self._log_requests[key] = (ctx.session, allowed, ctx.request_id)
        try:
            yield
            if peer is None and allowed:
                await self._logs_flushed()
        finally:
            self._log_requests.pop(key, None)
            _CAUSE.reset(cause)

    async def _logs_flushed(self) -> None:
        """Until the log messages queued now have been sent (or ``_LOG_FLUSH`` s)."""
        queue = self._log_in
        if queue is None:
            return
        target = self._logs_taken + queue.statistics().current_buffer_used
        with anyio.move_on_after(_LOG_FLUSH):
            while self._logs_done < target:
                await self._log_sent.wait()

    async def _forward_logs(self, receive: Any) -> None:
        async for level, logger, data, cause in receive:
            self._logs_taken += 1
            try:
                await self._forward_log(level, logger, data, cause)
            finally:
                self._logs_done += 1
                self._log_sent.set()
                self._log_sent = anyio.Event()

    async def _forward_log(self, level: LoggingLevel, logger: str, data: Any,
                           cause: _Cause | None) -> None:
        from mcp import types

        # ``notifications/message`` sent as such: the SDK's ``send_log_message`` is
        # deprecated (the 2026-07-28 revision keeps only the per-request opt-in)
        note = types.LoggingMessageNotification(params=types.LoggingMessageNotificationParams(
            level=level, data=data, logger=logger))
        if cause is not None:
            await self._send_log_to(cause, level, note)
        else:
            await self._broadcast_log(level, note)

    async def _broadcast_log(self, level: LoggingLevel, note: Any) -> None:
        """A message that names no request: to every handshake-era connection at its
        level, and every 2026-07-28 request in flight that opted in to it."""
        for key, peer in list(self._peers.items()):
            if not _at_level(level, peer.level):
                continue
            try:
                await peer.session.send_notification(note)
            except Exception:  # a closed connection: forget it
                self._peers.pop(key, None)
        for session, allowed, request_id in list(self._log_requests.values()):
            if level in allowed:
                with contextlib.suppress(Exception):  # the request ended meanwhile
                    await session.send_notification(note, related_request_id=request_id)

    async def _send_log_to(self, cause: _Cause, level: LoggingLevel, note: Any) -> None:
        """A message one request caused, to that request's client only: on the request's
        stream, or (a handshake-era request that ended meanwhile) its connection."""
        peer = cause.peer
        if level not in cause.allowed or (peer is not None and not _at_level(level, peer.level)):
            return
        try:
            await cause.session.send_notification(note, related_request_id=cause.request_id)
            return
        except Exception:  # the request ended: its stream is closed
            if peer is None or self._peers.get(id(peer.connection)) is not peer:
                return
        with contextlib.suppress(Exception):  # the connection closed too
            await peer.session.send_notification(note)


def _at_level(level: LoggingLevel, asked: LoggingLevel | None) -> bool:
    return asked is None or _LEVELS.index(level) >= _LEVELS.index(asked)


@final
@dataclass(frozen=True)
class _Cause:
    """The client request an upstream call is made for. The MCP SDK's HTTP client hands an
    upstream's message that came on a request's own stream to its handler in the context
    of the code that sent the request, so ``_CAUSE`` there names the client request it is
    for; a stdio upstream's messages, and an HTTP upstream's on its standalone stream,
    name none."""

    session: Any
    request_id: Any
    peer: _Peer | None
    """The handshake-era connection (None: a 2026-07-28 request)."""
    allowed: frozenset[str]
    """The levels the request may get (a 2026-07-28 one: those its ``_meta`` opted in)."""


_CAUSE: ContextVar[_Cause | None] = ContextVar("codemode_serve_cause", default=None)


_READ_ONLY = FrozenDict(readOnlyHint=True, destructiveHint=False, idempotentHint=True,
                        openWorldHint=False)
_OWN_HINTS = {
    "search_tools": FrozenDict(title="Search tools", annotations=_READ_ONLY),
    "describe_tools": FrozenDict(title="Describe tools", annotations=_READ_ONLY),
}


def _listed_hints(listed: Any) -> dict[str, Any]:
    """The ``title`` and ``annotations`` of an upstream's listing entry (the gateway's MCP
    client read the entry with MCP's schema, so they are valid as they are)."""
    if not isinstance(listed, dict):
        return {}
    return {key: listed[key] for key in ("title", "annotations") if key in listed}


def _common_hints(listed: list[Any]) -> dict[str, bool]:
    """What a script over tools with these listing entries (None: a local tool, which
    declares nothing) may do, as MCP hints: read-only when every tool is, not destructive
    when none is, closed-world when every tool is; a hint nothing supports is left out."""
    hints = [h.get("annotations") or {} for h in map(_listed_hints, listed)]
    out: dict[str, bool] = {}
    if all(h.get("readOnlyHint") is True for h in hints):
        out["readOnlyHint"] = True
    if all(h.get("readOnlyHint") is True or h.get("destructiveHint") is False for h in hints):
        out["destructiveHint"] = False
    if all(h.get("openWorldHint") is False for h in hints):
        out["openWorldHint"] = False
    return out


def _offer(send: Any, item: Any) -> None:
    with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError,
                             anyio.BrokenResourceError):
        send.send_nowait(item)


@final
class _LogRecords(logging.Handler):
    """The gateway's own log records (an upstream down and reconnecting: warnings, and
    infos where the application enabled them) as MCP log messages from the logger
    ``codemode`` (those logged on the event loop's thread)."""

    def __init__(self, send: Any) -> None:
        super().__init__(logging.INFO)
        self._send = send
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if threading.get_ident() != self._thread:
            return
        level = next((name for number, name in _PY_LEVELS if record.levelno >= number), None)
        if level is None:
            return
        try:
            text = " ".join(line.strip() for line in record.getMessage().splitlines())
        except Exception:  # a record whose arguments do not format
            return
        _offer(self._send, (level, "codemode", text, None))


def _notification_params() -> Any:
    from mcp import types

    return types.NotificationParams


_OUTPUT_CHUNK = 2_000
"""Characters of printed output per progress message (longer text is split)."""


@final
class _ProgressFeed:
    """Turns a run's events and updates into ``(message, step)`` progress notifications:
    nested calls started and finished, what they reported, and printed output."""

    def __init__(self, send: Any, script_name: Callable[[str], str]) -> None:
        self._send = send
        self._script_name = script_name
        self._steps = itertools.count(1)
        self._names: dict[str, str] = {}

    def _name(self, call_id: str, wire: str) -> str:
        """The tool as the script called it (``raw.long_running``), fixed at "started"."""
        name = self._names.get(call_id)
        if name is None:
            name = self._names[call_id] = self._script_name(wire)
        return name

    def __call__(self, event: ToolEvent) -> None:
        if event.type == "tool/call":
            name = self._name(event.call_id, event.name)
            self._put(f"call {event.call_id.rpartition(':')[2]}: {name} started")
        elif event.type == "tool/result":
            name = self._name(event.call_id, event.name)
            state = f"failed: {event.error}" if event.is_error else "ok"
            took = f" in {event.duration * 1000:.0f} ms" if event.duration is not None else ""
            self._put(f"call {event.call_id.rpartition(':')[2]}: {name} {state}{took}")

    def update(self, data: Any) -> None:
        """``run_code``'s partial results: printed output, or a nested call's update."""
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            text = data["output"]
            for start in range(0, len(text), _OUTPUT_CHUNK):
                self._put("output: " + text[start:start + _OUTPUT_CHUNK])
        elif isinstance(data, dict) and "tool" in data:
            call_id = str(data.get("call_id", ""))
            name = self._name(call_id, str(data["tool"]))  # the name "started" gave
            said = _said(data.get("update"))[:_OUTPUT_CHUNK]
            self._put(f"call {call_id.rpartition(':')[2]}: {name} reports {said}")

    def _put(self, message: str) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait((message, next(self._steps)))


def _said(update: Any) -> str:
    """A nested call's update as text: an MCP upstream's progress as ``3/4`` (and its
    message), anything else as compact JSON."""
    progress = _progress_of(update)
    if progress is not None:
        done, total, message = progress
        text = f"{_number(done)}/{_number(total)}" if total is not None else _number(done)
        return f"{text}: {message}" if message else text
    update = thaw(update)
    try:
        return json.dumps(update, ensure_ascii=False, separators=(", ", ": "), default=str)
    except ValueError:  # a circular structure
        return repr(update)


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


_Progress = tuple[float, float | None, str | None]


def _progress_of(update: Any) -> _Progress | None:
    """An MCP upstream's progress (as the adapter reports it), else None."""
    update = thaw(update)
    if not isinstance(update, dict) or set(update) - {"progress", "total", "message"}:
        return None
    done, total, message = update.get("progress"), update.get("total"), update.get("message")
    if not isinstance(done, int | float) or isinstance(done, bool):
        return None
    return (done, total if isinstance(total, int | float) else None,
            message if isinstance(message, str) else None)


async def _relay(session: Any, receive: Any) -> None:
    """An upstream's progress as it sent it, less a notification whose progress does not
    exceed the last one's: MCP says the value increases with each (an upstream sending
    1, 3, 2 broke that rule for serve's client)."""
    last: float | None = None
    async with receive:
        async for done, total, message in receive:
            if last is not None and done <= last:
                continue
            last = done
            await session.report_progress(done, total, message)


async def _report(session: Any, receive: Any) -> None:
    async with receive:
        async for message, step in receive:
            await session.report_progress(step, None, message)


_NULL = (text("null"),)
"""The content of a result that is JSON null (a handler that returned None)."""


_BLOCKS_SINCE = {"audio": "2025-03-26", "resource_link": "2025-06-18"}
"""Content block types by the protocol revision that brought them."""


def _in_version(block: dict[str, Any], version: str | None) -> dict[str, Any]:
    """``block`` as a client of protocol ``version`` can read it: a type its revision does
    not have (audio before 2025-03-26, a resource link before 2025-06-18) would fail the
    whole result in its client, so it is sent as a text saying what it was."""
    since = _BLOCKS_SINCE.get(str(block.get("type")))
    if since is None or version is None or version >= since:  # revisions are dates
        return block
    if block["type"] == "resource_link":
        what = ", ".join(str(block[k]) for k in ("name", "mimeType") if block.get(k))
        said = f"resource link {block.get('uri')}{f' ({what})' if what else ''}"
    else:
        data = block.get("data")
        said = (f"audio {block.get('mimeType')}, {len(data) if isinstance(data, str) else 0}"
                f" base64 chars: not sent, protocol {version} has no audio content")
    return {"type": "text", "text": f"[{said}]"}


def _mcp_result(result: Any, specs: list[ToolSpec], name: str, version: str | None) -> Any:
    from mcp import types

    entry: dict[str, Any] = {
        "content": [_in_version(thaw(block), version) for block in result.content],
        "isError": result.is_error,
    }
    declared = next((s.output_schema for s in specs if s.name == name), None)
    structured = result.structured
    if structured is None and declared is not None and not result.is_error:
        # MCP: a tool with an output schema answers structured content (the official
        # client raises on a result without: RuntimeError, the content unread)
        if wraps(declared) and result.content == _NULL:  # a wrapped None: {"result": null}
            entry["structuredContent"] = wire_structured(thaw(declared), None)
        else:  # an upstream that declared one and answered without: said, and readable
            entry["isError"] = True
            entry["content"].append({"type": "text", "text": (
                f"{name!r} declares an output schema but answered without structured"
                " content (MCP requires it): the text above is all it sent")})
    elif structured is None:
        pass
    elif declared is not None and not result.is_error:
        entry["structuredContent"] = wire_structured(thaw(declared), thaw(structured))
    elif isinstance(structured, FrozenDict):
        # as the tool gave it: an error's details, an object without an output schema
        # (MCP allows both; they were dropped)
        entry["structuredContent"] = thaw(structured)
    return types.CallToolResult.model_validate(entry)


async def serve_stdio(server: GatewayServer) -> bool:
    """Serve over this process's stdin/stdout until the client closes it (or the task is
    cancelled: the read of stdin in flight is abandoned, so that returns at once).

    True when the client closed its end of stdout while stdin may still be open: the
    abandoned read's thread then waits until it closes (a process that exits normally
    waits for it too)."""
    from mcp.server.stdio import stdio_server

    from codemode.integrations.stdio_requests import ClientLines, answer_refused

    with _claimed_stdin() as claimed:
        lines = ClientLines(claimed) if claimed is not None else None
        stdin: Any = lines  # the SDK reads it as an async iterator of lines only
        broken = False
        try:
            async with stdio_server(stdin=stdin) as (read, write), \
                    anyio.create_task_group() as tg:
                send, passed = anyio.create_memory_object_stream[Any](0)
                tg.start_soon(answer_refused, read, write, send, lines)
                async with passed:
                    await server.server.run(passed, write,
                                            server.server.create_initialization_options())
                tg.cancel_scope.cancel()
        except* BrokenPipeError:
            # the client closed its end of stdout (it exited, or dropped the pipe): gone as
            # when it closes stdin; the SDK's writer let the error out as a traceback
            logging.getLogger("codemode.serve").warning(
                "the client closed the connection (stdout: broken pipe)")
            broken = True
    return broken


@final
class _Lines:
    """Lines of a binary stream, read in a worker thread that a cancellation abandons.

    The SDK's own reader (``anyio.wrap_file``) cannot be cancelled while it waits for a
    line: a server told to stop (SIGINT, SIGTERM, a cancelled task) would wait for the
    client's next message or for it to close the pipe."""

    def __init__(self, stream: BinaryIO) -> None:
        self._file = io.TextIOWrapper(stream, encoding="utf-8", errors="replace")

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._file.readline, abandon_on_cancel=True)
        if not line:
            raise StopAsyncIteration
        return line


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[Any]:
    """The client's messages as ``_Lines``; while serving, fd 0 reads the null device, as
    the SDK's own stdio server has it, so nothing else in the process consumes them."""
    if sys.platform == "win32":  # the SDK's reader and claim, as they are
        yield None
        return
    import fcntl

    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # no fd 0: read whatever sys.stdin is
        yield _Lines(sys.stdin.buffer)
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # closefd=False, never closed: an abandoned read may still wait on it
        yield _Lines(os.fdopen(private, "rb", closefd=False))
    finally:
        os.dup2(private, 0)


_GRACEFUL_SHUTDOWN = 2
"""Seconds a stopping HTTP server waits for requests in flight before cancelling them."""


def _bearer(app: Any, token: str) -> Any:
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = b'{"error": "missing or wrong bearer token"}'
                await send({
                    "type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"www-authenticate", b'Bearer realm="codemode"'),
                                (b"content-length", str(len(body)).encode())],
                })
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


async def serve_http(
    server: GatewayServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    path: str = "/mcp",
    ready: Callable[[str], Awaitable[None] | None] | None = None,
) -> signal.Signals | None:
    """Serve streamable HTTP at ``http://host:port/path`` until cancelled or, in the main
    thread, until SIGINT or SIGTERM (then returned, after a graceful shutdown); ``port`` 0
    picks a free port. ``ready`` gets the URL once the socket listens."""
    import uvicorn
    import uvicorn.server

    from codemode.integrations.http_guard import guarded

    app = guarded(server.server.streamable_http_app(streamable_http_path=path, host=host))
    asgi = _bearer(app, token) if token else app
    # A stop (SIGINT, SIGTERM) gives requests in flight, runs of run_code among them, this
    # long to finish, then cancels them: uvicorn's default waits for them however long.
    # log_config None: uvicorn's records go where the process's logging sends them
    # (`codemode serve`: one status line each), not to a handler of uvicorn's own.
    config = uvicorn.Config(asgi, host=host, port=port, log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN, log_config=None)
    listening = anyio.Event()

    class _Web(uvicorn.Server):
        stopped_by: signal.Signals | None = None

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            listening.set()

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.stopped_by = self.stopped_by or signal.Signals(sig)
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            """uvicorn's, less its re-raising of the signal after the shutdown: that ended
            the process there, before the gateway closed its upstreams."""
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = uvicorn.server.HANDLED_SIGNALS
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    web = _Web(config)

    async def announce() -> None:
        await listening.wait()
        if not web.started:
            return
        bound = web.servers[0].sockets[0].getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        if ready is not None:
            done = ready(f"http://{shown}:{bound}{path}")
            if done is not None:
                await done

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        await web.serve()
        group.cancel_scope.cancel()
    return web.stopped_by
