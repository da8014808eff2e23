"""``codemode serve``: many MCP servers (and local tools) as one MCP server with ``run_code``.

Clients see ``run_code``, ``search_tools`` and ``describe_tools`` (``--expose-upstream``
adds every upstream tool). Upstreams come from ``--config`` (the ``mcpServers`` file MCP
clients use); local Python tools from ``--tools``. Status goes to stderr; stdout is the
MCP stream (stdio transport).

SIGINT and SIGTERM stop it cleanly (runs cancelled, upstreams closed); warnings (an
upstream down and reconnecting, the MCP SDK's, uvicorn's) are one stderr line each.

Exit codes: 0 stopped cleanly (the client closed stdin or stdout, or SIGTERM); 130 stopped
by SIGINT; 2 bad usage or an invalid config; 3 ``--tools`` could not be loaded.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING, TextIO

import anyio

from codemode.errors import GatewayConfigError, ToolsLoadError
from codemode.integrations.discovery import estimate_tokens
from codemode.integrations.gateway import DEFAULT_BUDGET_TOKENS, Gateway, load_config
from codemode.integrations.server import GatewayServer, serve_http, serve_stdio
from codemode.mode import CodeMode

from .targets import load_all

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["REPEATS", "REPEAT_WINDOW", "main_serve", "serve_parser", "status_handler"]

TOKEN_ENV = "CODEMODE_SERVE_TOKEN"
_SKIPS_SHOWN = 20
"""Listed tools left out that startup names one by one (a line each)."""


def serve_parser() -> argparse.ArgumentParser:
    """The ``codemode serve`` argument parser (its ``--help`` is documented in docs/serve.md)."""
    parser = argparse.ArgumentParser(
        prog="codemode serve",
        description="Serve MCP servers and local tools as one MCP server: run_code plus "
        "search_tools/describe_tools.",
    )
    parser.add_argument("--config", metavar="FILE",
                        help='MCP servers config: {"mcpServers": {name: {command, args, env} '
                        "| {url, headers}}} (VS Code's \"servers\" too)")
    parser.add_argument("--tools", metavar="MODULE:OBJECT", action="append", default=[],
                        help="local Python tools (a ToolRegistry, CodeMode, list of tools, or "
                        "a callable returning one); repeatable")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                        help="stdio (default) or streamable HTTP")
    parser.add_argument("--host", default="127.0.0.1",
                        help="HTTP bind address (default 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=int, default=8765,
                        help="HTTP port (default 8765; 0 picks a free one)")
    parser.add_argument("--path", default="/mcp", help="HTTP endpoint path (default /mcp)")
    parser.add_argument("--token", help=f"HTTP bearer token clients must send (default: "
                        f"${TOKEN_ENV}); required when --host is not loopback")
    parser.add_argument("--expose-upstream", action="store_true",
                        help="also list every upstream tool directly, next to run_code")
    parser.add_argument("--budget-tokens", type=int, default=DEFAULT_BUDGET_TOKENS, metavar="N",
                        help="largest run_code description carrying the whole SDK; beyond, it "
                        f"holds a namespace index and discovery (default {DEFAULT_BUDGET_TOKENS})")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="wall-time limit of one script, and of one direct call of a "
                        "listed tool (--expose-upstream), seconds (default 30)")
    parser.add_argument("--executor", choices=("pool", "inprocess"), default="pool",
                        help="where scripts run: the sandboxed worker pool (default) or "
                        "in-process (trusted code only)")
    parser.add_argument("--startup-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="seconds each upstream may take to start (default 30)")
    parser.add_argument("--describe", action="store_true",
                        help="start the upstreams, print their status and the run_code "
                        "description, and exit")
    return parser


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_STATUS_TEXT = 2_000
"""Characters of a warning's message a status line keeps."""


class _StatusFormatter(logging.Formatter):
    """Warnings as status lines: an upstream that went down and its reconnection, and what
    the MCP SDK or uvicorn warn about, each on one line (an exception as its type and first
    line, no traceback: stderr is the status a user reads in the client's log)."""

    def format(self, record: logging.LogRecord) -> str:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the message: the message as written
            message = str(record.msg)
        text = " ".join(line.strip() for line in message[:_STATUS_TEXT].strip().splitlines())
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            try:
                said = str(exc).strip().splitlines()
            except Exception:  # an exception whose text fails: its type is the status
                said = []
            text += f" ({type(exc).__name__}{': ' + said[0][:300] if said else ''})"
        where = "" if record.name.split(".")[0] == "codemode" else f"[{record.name}] "
        left_out = getattr(record, "codemode_left_out", 0)
        if left_out:
            text += f" ({left_out} more like this left out)"
        return f"codemode serve: {where}{text}"


REPEATS = 5
"""Status lines of one kind shown per ``REPEAT_WINDOW``."""
REPEAT_WINDOW = 10.0
"""Seconds after which a kind of status line may be shown ``REPEATS`` times again."""
_BOUNDED_OWN = frozenset({"codemode.upstream"})
"""codemode's loggers that an upstream's traffic drives (a line per bad line it sends)."""
_KINDS = 1_000
"""Kinds of line remembered at once (a flood of distinct messages starts afresh)."""


class _Repeats(logging.Filter):
    """At most ``REPEATS`` lines of one kind (a library's logging call site) per
    ``REPEAT_WINDOW`` seconds; the next line let through after a burst says how many were
    left out. An upstream writing garbage to its stdout made one status line of each of
    its lines (the MCP SDK logs every line it cannot parse), 200,000 of them in a test."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[tuple[str, str, int], tuple[float, int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.split(".")[0] == "codemode" and record.name not in _BOUNDED_OWN:
            return True  # serve's own status lines are few (an upstream's backoff)
        key = (record.name, record.pathname, record.lineno)  # the call site
        start, shown, left_out = self._seen.get(key, (record.created, 0, 0))
        if record.created - start > REPEAT_WINDOW:
            start, shown = record.created, 0
        if shown >= REPEATS:
            self._seen[key] = (start, shown, left_out + 1)
            return False
        record.codemode_left_out = left_out  # the formatter says so (the message stays)
        if len(self._seen) >= _KINDS and key not in self._seen:
            self._seen.clear()
        self._seen[key] = (start, shown + 1, 0)
        return True


def status_handler(stream: TextIO) -> logging.Handler:
    """The handler that writes warnings to ``stream`` as one-line status lines, repeats
    bounded (see :class:`_Repeats`)."""
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_StatusFormatter())
    handler.addFilter(_Repeats())
    return handler


def _say(text: str) -> None:
    print(f"codemode serve: {text}", file=sys.stderr, flush=True)


def _gateway(args: argparse.Namespace) -> Gateway:
    servers = load_config(args.config) if args.config else ()
    loaded = load_all(args.tools)
    if isinstance(loaded, CodeMode):
        return Gateway(servers, mode=loaded, budget_tokens=args.budget_tokens,
                       startup_timeout=args.startup_timeout)
    from codemode.sandbox import InProcessExecutor, Limits

    return Gateway(
        servers,
        registry=loaded,
        executor=InProcessExecutor() if args.executor == "inprocess" else None,
        limits=Limits(timeout=args.timeout) if args.timeout else None,
        budget_tokens=args.budget_tokens,
        startup_timeout=args.startup_timeout,
    )


async def _serve(args: argparse.Namespace, gateway: Gateway) -> int:
    async with gateway:
        for status in gateway.status():
            if status.state == "up":
                note = f" (renamed: {', '.join(status.renamed)})" if status.renamed else ""
                _say(f"upstream {status.name}: up, {status.tools} tools{note}")
                for skipped in status.skipped[:_SKIPS_SHOWN]:
                    _say(f"upstream {status.name}: left out {skipped[:300]}")
                if len(status.skipped) > _SKIPS_SHOWN:
                    _say(f"upstream {status.name}: left out"
                         f" {len(status.skipped) - _SKIPS_SHOWN} more listed tools")
            else:
                _say(f"upstream {status.name}: FAILED: {status.error}; retrying with backoff")
        description = gateway.run_code_description()
        tools = len(gateway.upstream_specs())
        _say(f"{tools} tools; run_code description {len(description)} chars"
             f" (~{estimate_tokens(description)} tokens)")
        if args.describe:
            print(description)
            return 0
        server = GatewayServer(gateway, expose_upstream=args.expose_upstream)
        if args.transport == "stdio":
            _say("serving MCP on stdio")
            async with anyio.create_task_group() as group:
                group.start_soon(_stop_on_signal, args, group.cancel_scope)
                args.stdin_left = await serve_stdio(server)
                group.cancel_scope.cancel()
            if args.stopped_by is not None:
                _say(f"stopped by {args.stopped_by.name}")
                return 130 if args.stopped_by == signal.SIGINT else 0
        else:
            stopped = await serve_http(
                server, host=args.host, port=args.port, token=args.token, path=args.path,
                ready=lambda url: _say(f"serving MCP on {url}"))
            if stopped is not None:
                _say(f"stopped by {stopped.name}")
                return 130 if stopped == signal.SIGINT else 0
    return 0


async def _stop_on_signal(args: argparse.Namespace, scope: anyio.CancelScope) -> None:
    """SIGINT or SIGTERM stops the stdio server the way the client closing stdin does:
    runs cancelled, upstreams closed (their processes ended), then exit."""
    if sys.platform == "win32":  # no loop signal handlers there: the default action stays
        return
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            args.stopped_by = signal.Signals(signum)
            scope.cancel()
            return


def main_serve(argv: Sequence[str]) -> int:
    """Entry point of ``codemode serve``."""
    parser = serve_parser()
    args = parser.parse_args(list(argv))
    if args.token and args.transport != "http":
        parser.error("--token protects the HTTP transport; add --transport http")
    args.token = args.token or os.environ.get(TOKEN_ENV) or None
    if args.transport == "http" and not _loopback(args.host) and not args.token:
        parser.error(f"--host {args.host} is not loopback: give --token (or ${TOKEN_ENV})")
    if not args.config and not args.tools:
        parser.error("nothing to serve: give --config FILE and/or --tools MODULE:OBJECT")
    try:
        gateway = _gateway(args)
    except GatewayConfigError as exc:
        print(f"codemode serve: invalid config: {exc}", file=sys.stderr)
        return 2
    except ToolsLoadError as exc:
        print(f"codemode serve: {exc}", file=sys.stderr)
        return 3
    args.stopped_by = None
    args.stdin_left = False
    handler = status_handler(sys.stderr)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        code = anyio.run(_serve, args, gateway)
    except KeyboardInterrupt:
        return 130
    finally:
        root.removeHandler(handler)
    if args.stopped_by is not None or args.stdin_left:
        # The MCP SDK reads stdin in a worker thread that stays blocked on the read until
        # the client closes the pipe, and the interpreter's exit would wait for it (a
        # signal, or a client that closed only its end of stdout): all is closed by now, so
        # leave without waiting.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
