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
- image, audio and resource blocks from upstream tools are content blocks of the result;
- when the tool set changes (an upstream's ``list_changed``, one that reconnects with other
  tools, a late start) clients get ``notifications/tools/list_changed``: handshake-era
  connections directly, 2026-07-28 ones on their ``subscriptions/listen`` stream.

HTTP (streamable HTTP, ``/mcp``) binds 127.0.0.1 unless told otherwise; with a token, a
request without ``Authorization: Bearer <token>`` gets 401 before it reaches MCP.
"""

from __future__ import annotations

import contextlib
import hmac
import io
import itertools
import json
import math
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, final

import anyio

from codemode.dispatch.context import ToolCall
from codemode.dispatch.frozen import thaw

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator
    from typing import BinaryIO

    from codemode.dispatch.events import ToolEvent
    from codemode.dispatch.spec import ToolSpec
    from codemode.integrations.gateway import Gateway

__all__ = ["GatewayServer", "serve_http", "serve_stdio"]

_CLIENT_TOOLS = ("run_code", "search_tools", "describe_tools")


@final
class GatewayServer:
    """The MCP server of one ``Gateway`` (build once, serve over any transport)."""

    def __init__(self, gateway: Gateway, *, expose_upstream: bool = False,
                 name: str = "codemode") -> None:
        from mcp.server.lowlevel.server import NotificationOptions, Server
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        self.gateway = gateway
        self.expose_upstream = expose_upstream
        self._bus = InMemorySubscriptionBus()
        self._sessions: list[Any] = []
        self._calls = itertools.count(1)
        self._runs: dict[str, Callable[[ToolEvent], None]] = {}
        self._pending_change = anyio.Event()
        self._listed_version: int | None = None

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
            instructions=(
                "Code Mode over many tools: write one Python script for `run_code`;"
                " `search_tools`/`describe_tools` find the tools it can call."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        self.server.add_notification_handler(
            "notifications/initialized", _notification_params(), self._initialized
        )
        gateway.on_change(lambda: self._pending_change.set())
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

        self._listed_version = self.gateway.registry.version
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
                entry["outputSchema"] = thaw(spec.output_schema)
            tools.append(types.Tool.model_validate(entry))
        return types.ListToolsResult(tools=tools)

    # -- tools/call ---------------------------------------------------------------------

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        name = params.name
        if name not in {s.name for s in self._specs()}:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool {name!r}; this server offers "
                + ", ".join(s.name for s in self._specs()[:10]),
            )
        call_id = f"mcp-{next(self._calls)}"
        call = ToolCall(call_id=call_id, name=name, arguments=dict(params.arguments or {}))
        if name != "run_code":
            return _mcp_result(await self.gateway.registry.execute(call), self._specs(), name)
        send, receive = anyio.create_memory_object_stream[tuple[str, int]](math.inf)
        feed = _ProgressFeed(send)
        self._runs[call_id] = feed
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_report, ctx.session, receive)
                try:
                    result = await self.gateway.registry.execute(call, on_update=feed.update)
                finally:
                    self._runs.pop(call_id, None)
                    send.close()
        finally:
            self._runs.pop(call_id, None)
        return _mcp_result(result, self._specs(), name)

    def _event(self, event: ToolEvent) -> None:
        if event.type == "tool/call" and event.call_id in self._runs:
            self._runs[event.token] = self._runs[event.call_id]
            return
        feed = self._runs.get(event.parent or "")
        if feed is not None:
            feed(event)
        if event.type == "tool/result" and event.token in self._runs:
            del self._runs[event.token]

    # -- list_changed ---------------------------------------------------------------------

    async def _initialized(self, ctx: Any, params: Any) -> None:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._sessions.append(ctx.session)

    async def announce_changes(self) -> None:
        """Run for the server's lifetime: tell clients when the tool list changed."""
        from mcp.server.subscriptions import ToolsListChanged

        while True:
            await self._pending_change.wait()
            self._pending_change = anyio.Event()
            if self._listed_version == self.gateway.registry.version:
                continue
            await self._bus.publish(ToolsListChanged())
            for session in list(self._sessions):
                try:
                    await session.send_tool_list_changed()
                except Exception:  # a closed connection: forget it
                    self._sessions.remove(session)


def _notification_params() -> Any:
    from mcp import types

    return types.NotificationParams


_OUTPUT_CHUNK = 2_000
"""Characters of printed output per progress message (longer text is split)."""


@final
class _ProgressFeed:
    """Turns a run's events and updates into ``(message, step)`` progress notifications:
    nested calls started and finished, what they reported, and printed output."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self._steps = itertools.count(1)
        self._names: dict[str, str] = {}

    def __call__(self, event: ToolEvent) -> None:
        if event.type == "tool/call":
            self._names[event.call_id] = event.name
            self._put(f"call {event.call_id.rpartition(':')[2]}: {event.name} started")
        elif event.type == "tool/result":
            state = f"failed: {event.error}" if event.is_error else "ok"
            took = f" in {event.duration * 1000:.0f} ms" if event.duration is not None else ""
            self._put(f"call {event.call_id.rpartition(':')[2]}: {event.name} {state}{took}")

    def update(self, data: Any) -> None:
        """``run_code``'s partial results: printed output, or a nested call's update."""
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            text = data["output"]
            for start in range(0, len(text), _OUTPUT_CHUNK):
                self._put("output: " + text[start:start + _OUTPUT_CHUNK])
        elif isinstance(data, dict) and "tool" in data:
            call_id = str(data.get("call_id", ""))
            name = self._names.get(call_id, data["tool"])  # the name "started" gave
            said = _said(data.get("update"))[:_OUTPUT_CHUNK]
            self._put(f"call {call_id.rpartition(':')[2]}: {name} reports {said}")

    def _put(self, message: str) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait((message, next(self._steps)))


def _said(update: Any) -> str:
    """A nested call's update as text: an MCP upstream's progress as ``3/4`` (and its
    message), anything else as compact JSON."""
    update = thaw(update)
    if isinstance(update, dict) and set(update) <= {"progress", "total", "message"} and (
        isinstance(update.get("progress"), int | float)
    ):
        done, total, message = update["progress"], update.get("total"), update.get("message")
        text = f"{_number(done)}/{_number(total)}" if isinstance(total, int | float) else (
            _number(done))
        return f"{text}: {message}" if message else text
    try:
        return json.dumps(update, ensure_ascii=False, separators=(", ", ": "), default=str)
    except ValueError:  # a circular structure
        return repr(update)


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


async def _report(session: Any, receive: Any) -> None:
    async with receive:
        async for message, step in receive:
            await session.report_progress(step, None, message)


def _mcp_result(result: Any, specs: list[ToolSpec], name: str) -> Any:
    from mcp import types

    entry: dict[str, Any] = {
        "content": [thaw(block) for block in result.content],
        "isError": result.is_error,
    }
    declared = next((s.output_schema for s in specs if s.name == name), None)
    if declared is not None and result.structured is not None and not result.is_error:
        entry["structuredContent"] = thaw(result.structured)
    return types.CallToolResult.model_validate(entry)


async def serve_stdio(server: GatewayServer) -> None:
    """Serve over this process's stdin/stdout until the client closes it (or the task is
    cancelled: the read of stdin in flight is abandoned, so that returns at once)."""
    from mcp.server.stdio import stdio_server

    with _claimed_stdin() as lines:
        async with anyio.create_task_group() as group:
            group.start_soon(server.announce_changes)
            async with stdio_server(stdin=lines) as (read, write):
                await server.server.run(read, write,
                                        server.server.create_initialization_options())
            group.cancel_scope.cancel()


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

    app = server.server.streamable_http_app(streamable_http_path=path, host=host)
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
        group.start_soon(server.announce_changes)
        group.start_soon(announce)
        await web.serve()
        group.cancel_scope.cancel()
    return web.stopped_by
