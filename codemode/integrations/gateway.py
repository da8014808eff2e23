"""The gateway: many MCP servers (and local tools) behind one registry and one ``CodeMode``.

Upstreams come from the config file MCP clients already use::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {}},
                    "docs": {"url": "https://example.com/mcp", "headers": {"X-Key": "…"}}}}

(VS Code's ``{"servers": {...}}`` with ``"type": "stdio" | "http"`` is read too). Each
upstream's tools are registered under its name as a namespace (``tools.time.get_current_time``)
through ``register_mcp_listing``, so calls go through the one pipeline and get the adapter's
schema repairs. Each upstream has a supervisor task: it connects (the MCP handshake, stdio
or streamable HTTP), registers the tools, re-registers them on the upstream's
``notifications/tools/list_changed``, pings it, and when the connection is lost (the process
died, the server went away) makes calls fail with a message naming the upstream and
reconnects with exponential backoff. An upstream that fails to start is reported
(``Gateway.status()``) and retried; the others are served meanwhile. An HTTP upstream that
refuses a call's session (404: MCP's "the session ended"; 400 from servers that forgot it
in a restart) has its connection checked at once, and once a new session is up the call
is sent again.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, final

import anyio

from codemode.dispatch.registry import ToolRegistry
from codemode.errors import GatewayConfigError
from codemode.integrations.discovery import DISCOVERY_NAMES, discovery_tools, estimate_tokens
from codemode.integrations.identity import NAME, installed_version
from codemode.integrations.mcp import McpTools, list_tool_entries, register_mcp_listing
from codemode.integrations.upstream_stdio import MAX_LINE, stdio_transport
from codemode.integrations.upstream_wire import mended
from codemode.mode.code_mode import CodeMode

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp.types import LoggingLevel

    from codemode.dispatch.registry import Registration
    from codemode.integrations.discovery import Discovery
    from codemode.sandbox import Executor, Limits

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "Gateway",
    "ServerConfig",
    "UpstreamStatus",
    "connect",
    "load_config",
]

_LOG = logging.getLogger("codemode.gateway")

DEFAULT_BUDGET_TOKENS = 4000
"""Largest ``run_code`` description (estimated tokens) that still carries the whole SDK."""

_SERVER_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "type", "disabled"})


@final
@dataclass(frozen=True, kw_only=True, slots=True)
class ServerConfig:
    """One upstream MCP server, as a config file's ``mcpServers`` entry describes it."""

    name: str
    """Its key in the config: the namespace its tools get."""
    command: str | None = None
    """Program to start (stdio transport)."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment variables, merged over the MCP SDK's safe default environment."""
    cwd: str | None = None
    """Working directory of the process."""
    url: str | None = None
    """Streamable HTTP endpoint (instead of ``command``)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent with every request (e.g. ``Authorization``)."""

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` for a command, ``http`` for a URL."""
        return "stdio" if self.command is not None else "http"


def _strings(where: str, value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise GatewayConfigError(where, f"{what} must be an object of strings")
    return dict(value)


def _server(name: str, entry: Any, where: str) -> ServerConfig | None:
    if not isinstance(entry, dict):
        raise GatewayConfigError(where, "must be an object with 'command' or 'url'")
    unknown = sorted(set(entry) - _SERVER_KEYS)
    if unknown:
        raise GatewayConfigError(
            where, f"unknown key(s) {', '.join(map(repr, unknown))}; known: "
            + ", ".join(sorted(_SERVER_KEYS))
        )
    if entry.get("disabled") is True:
        return None
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise GatewayConfigError(where, "needs exactly one of 'command' (stdio) or 'url' (http)")
    kind = entry.get("type")
    if kind is not None and kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        raise GatewayConfigError(where, f"type {kind!r} is not served (use 'stdio' or 'http')")
    if command is not None:
        if not isinstance(command, str) or not command:
            raise GatewayConfigError(where, "'command' must be a non-empty string")
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise GatewayConfigError(where, "'args' must be a list of strings")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise GatewayConfigError(where, "'cwd' must be a string")
        if "headers" in entry:
            raise GatewayConfigError(where, "'headers' belongs to a 'url' server")
        return ServerConfig(
            name=name,
            command=command,
            args=tuple(args),
            env=_strings(where, entry.get("env", {}), "'env'"),
            cwd=cwd,
        )
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise GatewayConfigError(where, "'url' must be an http:// or https:// URL")
    for key in ("args", "env", "cwd"):
        if key in entry:
            raise GatewayConfigError(where, f"{key!r} belongs to a 'command' server")
    return ServerConfig(
        name=name, url=url, headers=_strings(where, entry.get("headers", {}), "'headers'")
    )


def load_config(source: str | Path | Mapping[str, Any]) -> tuple[ServerConfig, ...]:
    """The upstreams of a config file (path) or an already-parsed config (mapping).

    Reads ``mcpServers`` (Claude Desktop, Cursor) or ``servers`` (VS Code); entries with
    ``"disabled": true`` are left out. Every mistake raises ``GatewayConfigError`` naming
    the file and the entry.
    """
    where = "config"
    if isinstance(source, str | Path):
        where = str(source)
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise GatewayConfigError(where, f"cannot read: {exc.strerror}") from None
        try:
            data: Any = json.loads(text)
        except ValueError as exc:
            raise GatewayConfigError(where, f"not JSON: {exc}") from None
    else:
        data = source
    if not isinstance(data, Mapping):
        raise GatewayConfigError(where, "must be a JSON object with 'mcpServers'")
    key = "mcpServers" if "mcpServers" in data else "servers" if "servers" in data else None
    if key is None:
        raise GatewayConfigError(where, "has no 'mcpServers' (or VS Code 'servers') object")
    servers = data[key]
    if not isinstance(servers, Mapping):
        raise GatewayConfigError(f"{where}: {key}", "must be an object of servers by name")
    out: list[ServerConfig] = []
    for name, entry in servers.items():
        spot = f"{where}: {key}.{name}"
        if not isinstance(name, str) or not name.strip() or name in DISCOVERY_NAMES:
            raise GatewayConfigError(spot, "server names must be non-empty and not a discovery"
                                     f" tool's name ({', '.join(DISCOVERY_NAMES)})")
        server = _server(name, entry, spot)
        if server is not None:
            out.append(server)
    return tuple(out)


@final
@dataclass(frozen=True, kw_only=True, slots=True)
class UpstreamStatus:
    """What one upstream is doing, for reports and ``codemode serve``'s startup line."""

    name: str
    """The upstream's name (its namespace)."""
    state: Literal["starting", "up", "down"]
    """``up``: connected and registered; ``down``: not connected (see ``error``)."""
    tools: int
    """Tools registered for it."""
    error: str | None = None
    """Why it is down (the last failure), if it is."""
    restarts: int = 0
    """Connections made after the first."""
    renamed: tuple[str, ...] = ()
    """Wire names given ``<upstream>_`` as prefix because another tool already had the name
    (the SDK path shows it: ``tools.<upstream>.<upstream>_<name>``)."""
    repairs: tuple[str, ...] = ()
    """Schema repairs the adapter made (see ``McpTools.repairs``)."""
    skipped: tuple[str, ...] = ()
    """``"<tool>: <why>"`` for each listed tool left out: no tool can be made of its entry
    (no string name, a schema that is no object or stays invalid, a name listed twice), or
    it is only callable as a task."""


_SDK_CLOSED = "Connection closed"
"""The message of the SDK's own ``CONNECTION_CLOSED`` error (a peer may send the code too)."""
_SDK_STREAM_ENDED = "SSE stream ended "
"""How the SDK's HTTP client's ``CONNECTION_CLOSED`` errors begin when a request's event
stream ended before its answer (``without a response``, ``and reconnection attempts were
exhausted``)."""


class _Down(Exception):
    """Internal: the upstream's connection ended."""


@final
class _Session:
    """What the registered handlers call: the upstream's current ``ClientSession``, or a
    clear error while it is down. A call that finds the connection closed wakes the
    supervisor, which reconnects."""

    def __init__(self, upstream: _Upstream) -> None:
        self._upstream = upstream

    def _live(self) -> Any:
        upstream = self._upstream
        if upstream.session is None:
            # why it is down follows a colon: it often ends in a parenthesis of its own
            # (``(its process exited with code 3)``), which a nested one doubled
            raise ConnectionError(
                f"upstream MCP server {upstream.config.name!r} is not connected (the gateway"
                f" is reconnecting): {upstream.error or 'starting'}"
            )
        return upstream.session

    async def list_tools(self, *, params: Any = None) -> Any:
        return await self._live().list_tools(params=params)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                        read_timeout_seconds: float | None = None,
                        progress_callback: Any = None) -> Any:
        return await self._guard(lambda session: session.call_tool(
            name, arguments, progress_callback=progress_callback))

    async def send_request(self, request: Any, result_type: Any, progress_callback: Any = None,
                           ) -> Any:
        return await self._guard(lambda session: session.send_request(
            request, result_type, progress_callback=progress_callback))

    async def _guard(self, send: Callable[[Any], Awaitable[Any]]) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        upstream = self._upstream
        session = self._live()
        refusals = upstream.refusals
        try:
            return await send(session)
        except MCPError as exc:
            if upstream.refusals != refusals and await upstream.renewed(session):
                # the server refused the session at the HTTP level (ended, or unknown after
                # a restart): the request was not handled, so it goes once to the new one
                return await send(self._live())
            if exc.code != types.CONNECTION_CLOSED:
                raise
            # -32000 is the SDK's "connection closed" and also the JSON-RPC code servers
            # use for their own errors: the supervisor pings to tell which it was, and
            # only a lost connection is reconnected (a live upstream keeps its calls).
            upstream.suspect()
            if exc.message.startswith(_SDK_STREAM_ENDED):
                # an HTTP upstream whose answer stream ended (its process died, a proxy cut
                # it): the SDK's text named neither the upstream nor what it means
                raise ConnectionError(
                    f"upstream MCP server {upstream.config.name!r} ended the call's"
                    f" stream without an answer ({exc.message}); the gateway checks the"
                    " connection and reconnects if it is lost") from None
            if exc.message != _SDK_CLOSED:
                raise
            raise ConnectionError(
                f"upstream MCP server {upstream.config.name!r} closed the connection"
                f" during the call{upstream.exit_said()}; the gateway is reconnecting"
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            upstream.lost("connection closed")
            raise ConnectionError(
                f"upstream MCP server {upstream.config.name!r} is gone;"
                " the gateway is reconnecting"
            ) from None


@final
class _Registered:
    """One upstream's registrations (its own names, and the renamed ones)."""

    def __init__(self, parts: list[McpTools], *, renamed: tuple[str, ...],
                 refused: tuple[str, ...] = (),
                 entries: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.parts = parts
        self.entries = entries or {}
        """The listing entry of each tool registered, by its wire name."""
        self.renamed = renamed
        self.refused = refused
        """Listing entries the MCP schema refuses (left out before the SDK read them)."""
        self.registrations = tuple(r for part in parts for r in part.registrations)
        self.repairs = tuple(note for part in parts for note in part.repairs)
        self.skipped = refused + tuple(note for part in parts for note in part.skipped)

    def dispose(self) -> None:
        for part in self.parts:
            part.dispose()


def _entries(listed: list[Any], made: list[McpTools], ns: str) -> dict[str, Mapping[str, Any]]:
    """Each registered tool's listing entry by wire name (the renamed part's names carry
    ``<ns>_``; the first entry of a name listed twice is the one registered)."""
    by_name: dict[str, Mapping[str, Any]] = {}
    for entry in listed:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            by_name.setdefault(entry["name"], entry)
    out: dict[str, Mapping[str, Any]] = {}
    for part, prefix in zip(made, ("", f"{ns}_"), strict=False):
        for wire in part.names:
            entry = by_name.get(wire[len(prefix):])
            if entry is not None:
                out[wire] = entry
    return out


@final
class _Upstream:
    """One upstream's supervisor: connect, register, watch, reconnect with backoff."""

    def __init__(self, config: ServerConfig, gateway: Gateway) -> None:
        self.config = config
        self.gateway = gateway
        self.session: Any = None
        self.error: str | None = None
        self.state: Literal["starting", "up", "down"] = "starting"
        self.restarts = 0
        self.connections = 0
        self.tools: _Registered | None = None
        self.first_attempt = anyio.Event()
        self._wake = anyio.Event()
        self._changed = False
        self._level_due = False
        self._suspected = False
        self._listing: list[Any] | None = None
        self._dropped: list[str] = []
        """Listing entries the wire left out (see ``upstream_wire.mended``)."""
        self.exit_code: int | None = None
        """How the process of the current connection (a stdio one) exited, once it did."""
        self.refusals = 0
        """HTTP answers 400/404 to a request of a session (see ``upstream_http``)."""
        self._checked = anyio.Event()
        """Set (and replaced) when the supervisor found the connection alive or made one."""

    def _exited(self, code: int) -> None:
        self.exit_code = code

    def exit_said(self) -> str:
        """`` (its process exited with code N)`` once the connection's process exited."""
        code = self.exit_code
        if code is None:
            return ""
        return (f" (its process exited with code {code})" if code >= 0
                else f" (its process was killed by signal {-code})")

    def status(self) -> UpstreamStatus:
        return UpstreamStatus(
            name=self.config.name,
            state=self.state,
            tools=len(self.tools.registrations) if self.tools else 0,
            error=self.error,
            restarts=self.restarts,
            renamed=self.tools.renamed if self.tools else (),
            repairs=self.tools.repairs if self.tools else (),
            skipped=self.tools.skipped if self.tools else (),
        )

    def suspect(self) -> None:
        """A call ended as if the connection closed: ping now instead of at the interval."""
        self._suspected = True
        self._wake.set()

    def refused(self) -> None:
        """The HTTP client saw a 400/404 answer to a request of a session."""
        self.refusals += 1

    def _check_done(self) -> None:
        done, self._checked = self._checked, anyio.Event()
        done.set()

    async def renewed(self, old: Any) -> bool:
        """Have the supervisor check the connection of session ``old`` now: True once a
        new session is up (``old`` was lost), False if ``old`` still answers, the upstream
        is not restarted, or no new session came within one check and one reconnection."""
        gateway = self.gateway
        self.suspect()
        with anyio.move_on_after(gateway.ping_interval + 5 + gateway.backoff[0]
                                 + gateway.startup_timeout):
            while True:
                await self._checked.wait()
                if self.session is not None:
                    return self.session is not old
                if not gateway.restart:
                    return False
        return False

    def lost(self, why: str) -> None:
        if self.session is not None:
            self.error = why
            self.session = None
            self.state = "down"
        self._wake.set()

    async def _message(self, message: Any) -> None:
        from mcp import types

        if isinstance(message, types.ToolListChangedNotification):
            self._changed = True
            self._wake.set()
        elif isinstance(message, types.LoggingMessageNotification):
            self.gateway.logged(self.config.name, message.params)

    def level_changed(self) -> None:
        """The gateway's log level changed: tell the upstream (from the supervisor)."""
        self._level_due = True
        self._wake.set()

    async def _apply_level(self, session: Any) -> None:
        """Send the gateway's log level to an upstream that declares logging (what it
        refuses is its own business: its messages are still forwarded as it sends them)."""
        from mcp import types
        from mcp.shared.exceptions import MCPError

        self._level_due = False
        level = self.gateway.log_level
        capabilities = getattr(session, "server_capabilities", None)
        if level is None or capabilities is None or capabilities.logging is None:
            return
        try:
            await session.send_request(
                types.SetLevelRequest(params=types.SetLevelRequestParams(level=level)),
                types.EmptyResult)
        except MCPError as exc:
            _LOG.debug("upstream %s refused logging/setLevel %s: %s", self.config.name,
                       level, exc)

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Any]:
        from mcp import Client

        config = self.config
        async with AsyncExitStack() as stack:
            target: Any
            if config.command is not None:
                # bytes that are no UTF-8 become U+FFFD (strict decoding ended the SDK's
                # reader, and every call in flight waited for its timeout); lines are
                # bounded (see upstream_stdio)
                target = stdio_transport(config.command, config.args, config.env or None,
                                         config.cwd, name=config.name, exited=self._exited)
            else:
                from mcp.client.streamable_http import streamable_http_client

                from codemode.integrations.upstream_http import bounded_client

                # a JSON answer's bytes, and the values of each answer or SSE event, are
                # bounded as a stdio line's (see upstream_http)
                http = await stack.enter_async_context(
                    bounded_client(config.headers, refused=self.refused))
                assert config.url is not None
                # one SSE event carries one message: as large as a stdio line may be (the
                # SDK's 1 MiB default failed a 2 MB tool result)
                target = streamable_http_client(config.url, http_client=http,
                                                max_sse_event_size=MAX_LINE)
            # clientInfo names codemode (the SDK's default said "mcp" 0.1.0 to every upstream)
            client = await stack.enter_async_context(
                Client(mended(target, self._dropped), mode="legacy",
                       message_handler=self._message, cache=None, client_info=_client_info())
            )
            yield client.session

    async def _register(self, session: Any) -> None:
        """List the upstream's tools and (re-)register them when the listing changed; a name
        another tool has gets ``<upstream>_`` as prefix, the others keep theirs. An entry no
        tool can be made of is skipped (``UpstreamStatus.skipped``), not the upstream."""
        self._dropped.clear()
        listed = await list_tool_entries(session)
        refused = tuple(self._dropped)
        if self.tools is not None and listed == self._listing and refused == self.tools.refused:
            return
        if self.tools is not None:
            self.tools.dispose()
            self.tools = None
        names = {t.get("name") for t in listed if isinstance(t, dict)}
        registry = self.gateway.registry
        taken = frozenset(n for n in names if isinstance(n, str) and n in registry)
        ns = self.config.name
        own = [t for t in listed if not (isinstance(t, dict) and t.get("name") in taken)]
        made = [register_mcp_listing(registry, own, _Session(self), namespace=ns,
                                     skip_invalid=True)]
        if taken:
            clashing = [t for t in listed if isinstance(t, dict) and t.get("name") in taken]
            try:
                made.append(register_mcp_listing(
                    registry, clashing, _Session(self), namespace=ns, prefix=f"{ns}_",
                    skip_invalid=True))
            except BaseException:
                made[0].dispose()
                raise
        self.tools = _Registered(made, renamed=tuple(sorted(f"{ns}_{n}" for n in taken)),
                                 refused=refused, entries=_entries(listed, made, ns))
        self._listing = listed
        self.gateway.changed()

    async def run(self) -> None:
        delay = self.gateway.backoff[0]
        while True:
            self._wake = anyio.Event()
            before = self.connections
            self.exit_code = None
            try:
                await self._attempt()
            except Exception as exc:  # any failure of an upstream is reported
                if not _is_down(exc):  # else ``error`` already says why it went down
                    self.error = _describe(exc) + self.exit_said()
            self.session = None
            self.state = "down"
            self.gateway.changed()
            self.first_attempt.set()
            if not self.gateway.restart:
                _LOG.warning("upstream %s is down: %.300s", self.config.name, self.error)
                self._check_done()
                return
            if self.connections > before:
                delay = self.gateway.backoff[0]
            _LOG.warning("upstream %s is down: %.300s; reconnecting in %g s", self.config.name,
                         self.error, delay)
            await anyio.sleep(delay)
            delay = min(delay * 2, self.gateway.backoff[1])

    async def _attempt(self) -> None:
        """One connection, from the handshake to its loss (raises why it ended)."""
        timeout = self.gateway.startup_timeout
        with anyio.move_on_after(timeout) as startup:
            async with self._connect() as session:
                self.session = session
                await self._register(session)
                await self._apply_level(session)
                startup.deadline = math.inf
                self.connections += 1
                self.restarts = self.connections - 1
                self.state, self.error = "up", None
                _LOG.info("upstream %s is up (connection %d)", self.config.name,
                          self.connections)
                self.gateway.changed()
                self.first_attempt.set()
                self._check_done()
                await self._watch(session)
        if startup.cancelled_caught:
            self.error = f"did not start within {timeout:g} s (connect, initialize, tools/list)"

    async def _watch(self, session: Any) -> None:
        from mcp.shared.exceptions import MCPError

        while True:
            with anyio.move_on_after(self.gateway.ping_interval):
                await self._wake.wait()
            self._wake = anyio.Event()
            if self.session is None:
                raise _Down
            wait = self.gateway.ping_interval + 5
            try:
                with anyio.fail_after(wait):
                    if self._suspected or not (self._changed or self._level_due):
                        self._suspected = False
                        await _ping(session)
                    if self._changed:
                        self._changed = False
                        await self._register(session)
                    if self._level_due:
                        await self._apply_level(session)
                self._check_done()
            except (MCPError, TimeoutError, anyio.ClosedResourceError,
                    anyio.BrokenResourceError) as exc:
                why = (f"no answer within {wait:g} s" if isinstance(exc, TimeoutError)
                       else _describe(exc))
                # down from now: calls fail fast while the old connection is torn down
                self.lost(f"lost: {why}{self.exit_said()}")
                raise _Down from exc


def _client_info() -> Any:
    """What the gateway says it is in ``initialize`` (MCP's ``clientInfo``)."""
    from mcp import types

    return types.Implementation(name=NAME, version=installed_version())


async def _ping(session: Any) -> None:
    """Ping; a server that answers it does not know ``ping`` (hand-written ones) is alive."""
    from mcp import types
    from mcp.shared.exceptions import MCPError

    try:
        await session.send_ping()
    except MCPError as exc:
        if exc.code != types.METHOD_NOT_FOUND:
            raise


def _is_down(exc: BaseException) -> bool:
    """Whether ``exc`` is ``_Down``, also as the task groups of the SDK's client wrap it."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_down(e) for e in exc.exceptions)
    return isinstance(exc, _Down)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        leaves = exc.exceptions
        return "; ".join(_describe(e) for e in leaves[:3])
    if isinstance(exc, TimeoutError):
        return "timed out connecting"
    # one line (a pydantic error spans many): it is a status line and a call's error
    text = " ".join(line.strip() for line in str(exc).strip().splitlines()
                    if not line.strip().startswith("For further information"))[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_DISCOVER = """\
There are too many tools to list here ({tools} tools in {spaces} namespaces). Find what you
need first, then call it, in one script or several:
- `found = await tools.search(query="what it should do", limit=5)` returns
  `{{"matches": [{{"tool": "ns.name", "summary": ..., "arguments": [...]}}]}}`;
- `print(await tools.describe(names=["ns.name"]))` shows typed signatures and docs;
- or call the `search_tools` / `describe_tools` tools before writing the script.
Call a found tool as `await tools.<tool>(...)`, e.g. `await tools.ns.name(arg=...)`.

Namespaces (`tools.<namespace>.<name>`):
"""


@final
class Gateway:
    """A registry of upstream MCP servers' tools and local tools, a ``CodeMode`` over it,
    the discovery tools, and the ``run_code`` description clients read.

    Use it as an async context manager: entering starts every upstream (waiting for each
    one's first attempt, at most ``startup_timeout`` seconds), leaving stops them all.
    """

    def __init__(
        self,
        servers: Sequence[ServerConfig] = (),
        *,
        registry: ToolRegistry | None = None,
        mode: CodeMode | None = None,
        executor: Executor | None = None,
        limits: Limits | None = None,
        budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        startup_timeout: float = 30.0,
        ping_interval: float = 5.0,
        backoff: tuple[float, float] = (0.5, 30.0),
        restart: bool = True,
    ) -> None:
        names = [s.name for s in servers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise GatewayConfigError("servers", f"duplicate name(s): {', '.join(dupes)}")
        if mode is not None:
            self.mode = mode
            self.registry = mode.registry
        else:
            self.registry = registry if registry is not None else ToolRegistry()
            self.mode = CodeMode(self.registry, executor=executor, limits=limits)
        self._owns_mode = mode is None
        self.budget_tokens = budget_tokens
        self.startup_timeout = startup_timeout
        self.ping_interval = ping_interval
        self.backoff = backoff
        self.restart = restart
        self._upstreams = [_Upstream(s, self) for s in servers]
        self._listeners: list[Callable[[], None]] = []
        self._log_listeners: list[Callable[[str, Any], None]] = []
        self.log_level: LoggingLevel | None = None
        """The level upstreams are asked to log at (``logging/setLevel``), if one was set."""
        self._own: list[Registration] = []
        self._group: TaskGroup | None = None
        self._stack: AsyncExitStack | None = None
        self.discovery: Discovery
        self.discovery, self._tools = discovery_tools(self.mode)
        self._tools.append(self.mode.as_tool())

    @property
    def upstream_names(self) -> tuple[str, ...]:
        """Names of the configured upstreams."""
        return tuple(u.config.name for u in self._upstreams)

    def status(self) -> list[UpstreamStatus]:
        """Every upstream's state, in config order."""
        return [u.status() for u in self._upstreams]

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` (sync, fast) when the tool set may have changed."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def on_log(self, listener: Callable[[str, Any], None]) -> Callable[[], None]:
        """Call ``listener(upstream, params)`` (sync, fast) for each upstream's
        ``notifications/message``; ``params`` is its ``LoggingMessageNotificationParams``."""
        self._log_listeners.append(listener)
        return lambda: (self._log_listeners.remove(listener)
                        if listener in self._log_listeners else None)

    def logged(self, upstream: str, params: Any) -> None:
        for listener in list(self._log_listeners):
            listener(upstream, params)

    def set_log_level(self, level: LoggingLevel | None) -> None:
        """Ask every upstream that declares logging to log at ``level`` and above (now, and
        on each reconnection); ``None`` sends nothing more."""
        if level == self.log_level:
            return
        self.log_level = level
        if level is not None:
            for upstream in self._upstreams:
                upstream.level_changed()

    async def __aenter__(self) -> Gateway:
        """Register run_code and the discovery tools, start every upstream, and wait for
        each one's first attempt; leaving unregisters all of them and stops the upstreams."""
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            for tool in self._tools:
                self._own.append(self.registry.register(tool))
            stack.callback(self._unregister)
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            for upstream in self._upstreams:
                group.start_soon(upstream.run)
            for upstream in self._upstreams:
                await upstream.first_attempt.wait()
        except BaseException:
            await stack.aclose()
            raise
        self._group, self._stack = group, stack
        return self

    def _unregister(self) -> None:
        for upstream in self._upstreams:
            if upstream.tools is not None:
                upstream.tools.dispose()
                upstream.tools = None
        for registration in self._own:
            registration.dispose()
        self._own.clear()

    async def __aexit__(self, *exc: object) -> None:
        stack, self._stack = self._stack, None
        try:
            if stack is not None:
                await stack.aclose()
        finally:
            if self._owns_mode:
                await self.mode.aclose()

    def upstream_specs(self) -> list[Any]:
        """Specs of every tool except the gateway's own (run_code and discovery)."""
        own = {t.name for t in self._tools}
        return [s for s in self.registry.specs() if s.name not in own]

    def listing(self, name: str) -> Mapping[str, Any] | None:
        """The ``tools/list`` entry an upstream gave for the tool registered as ``name``
        (its title and annotations are the upstream's to relay), or None: a local tool, the
        gateway's own, or none registered under that name."""
        for upstream in self._upstreams:
            if upstream.tools is not None and name in upstream.tools.entries:
                return upstream.tools.entries[name]
        return None

    def run_code_description(self) -> str:
        """The ``run_code`` description: self-contained. The rules and the whole SDK when
        that fits ``budget_tokens``; else the rules, how to discover, and a namespace index."""
        sdk = self.mode.sdk()
        prompt = self.mode.prompt()
        head = (
            "Run a short async Python script in a sandbox; it calls tools as"
            " `await tools.<name>(...)` and its last expression is the result.\n\n"
        )
        full = head + prompt
        if estimate_tokens(full) <= self.budget_tokens:
            return full + self._not_connected()
        intro = prompt[: len(prompt) - len(sdk.prompt)].rstrip()
        intro = intro.removesuffix("Available tools:").rstrip()
        specs = [s for s in self.mode.visible_specs() if s.name not in DISCOVERY_NAMES]
        paths = {wire: path for path, wire in sdk.names.tools.items()}
        spaces: dict[str, list[str]] = {}
        for spec in specs:
            path = paths.get(spec.name, spec.name)
            space, _, leaf = path.rpartition(".")
            spaces.setdefault(space, []).append(leaf)
        text = head + intro + "\n\n" + _DISCOVER.format(tools=len(specs), spaces=len(spaces))
        room = self.budget_tokens * 4 - len(text) - 200
        lines: list[str] = []
        for number, (space, leaves) in enumerate(sorted(spaces.items())):
            label = space or "(top level)"
            line = _index_line(label, sorted(leaves), cap=max(80, room // max(1, len(spaces))))
            if room - len(line) - 1 < 0:
                rest = len(spaces) - number
                lines.append(f"- … {rest} more namespaces: search finds their tools")
                break
            room -= len(line) + 1
            lines.append(line)
        return text + "\n".join(lines) + "\n" + self._not_connected()

    def _not_connected(self) -> str:
        """A line naming the upstreams that are down, and why: a script would get only
        "unknown tool" for one that never connected (it has no tools), and "not connected"
        for the tools of one that went down."""
        down = [u for u in self.status() if u.state == "down"]
        if not down:
            return ""
        # one line each, ``name: why``: why often ends in a parenthesis of its own
        lines = [f"- {u.name}: {_cut(u.error or 'down', 160)}" for u in down[:5]]
        if len(down) > 5:
            lines.append(f"- and {len(down) - 5} more")
        return ("\nNot connected now (reconnecting in the background; until then their"
                " tools fail or are missing):\n" + "\n".join(lines) + "\n")


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[:size - 1] + "…"


def _index_line(space: str, leaves: list[str], *, cap: int) -> str:
    head = f"- {space} ({len(leaves)} tool{'s' if len(leaves) != 1 else ''}): "
    shown: list[str] = []
    size = len(head)
    for leaf in leaves:
        if size + len(leaf) + 2 > cap and shown:
            return head + ", ".join(shown) + f", … {len(leaves) - len(shown)} more"
        shown.append(leaf)
        size += len(leaf) + 2
    return head + ", ".join(shown)


@asynccontextmanager
async def connect(
    config: str | Path | Mapping[str, Any] | Sequence[ServerConfig],
    *,
    registry: ToolRegistry | None = None,
    executor: Executor | None = None,
    limits: Limits | None = None,
    startup_timeout: float = 30.0,
    require_all: bool = True,
) -> AsyncIterator[Gateway]:
    """Connect to every upstream of ``config`` and yield the ``Gateway``; no
    ``ClientSession`` to manage. ``gateway.mode.run(script)`` runs a script over them,
    ``gateway.registry`` holds their tools (namespaced). With ``require_all`` (the
    default) an upstream that fails to start raises ``ConnectionError`` naming it and why.
    """
    servers = (
        tuple(config)
        if isinstance(config, Sequence) and not isinstance(config, str)
        else load_config(config)
    )
    async with Gateway(
        servers, registry=registry, executor=executor, limits=limits,
        startup_timeout=startup_timeout,
    ) as gateway:
        failed = [s for s in gateway.status() if s.state != "up"]
        if require_all and failed:
            raise ConnectionError(
                "upstream MCP server(s) failed to start: "
                + "; ".join(f"{s.name}: {s.error}" for s in failed)
            )
        yield gateway

