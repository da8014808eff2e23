"""``codemode serve --transport http`` against the official ``mcp`` streamable HTTP client
and against raw HTTP requests that are no proper MCP message: every answer is readable
(JSON-RPC), runs stop when their client cancels or leaves, and the server serves on."""

from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import httpx2
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.integrations.served_http import served_http

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

TOOLS = f"{Path(__file__).resolve().parent / 'serve_tools.py'}:registry"
_JSON = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def _served(tmp_path: Path) -> AsyncIterator[str]:
    """``codemode serve`` over HTTP (local tools, in-process executor); yields its URL."""
    async with served_http(
            [sys.executable, "-m", "codemode.cli", "serve", "--executor", "inprocess",
             "--tools", TOOLS, "--transport", "http", "--port", "0"],
            cwd=tmp_path, env={**os.environ, "CODEMODE_TEST_LOG": str(tmp_path / "tool.log")},
            errlog=tmp_path / "serve.stderr") as url:
        yield url


async def _logged(tmp_path: Path, word: str) -> list[str]:
    """The slow tool's log once it holds ``word`` (the tool writes it: poll)."""
    with anyio.fail_after(30):
        while True:
            log = tmp_path / "tool.log"
            lines = log.read_text(encoding="utf-8").split() if log.exists() else []
            if word in lines:
                return lines
            await anyio.sleep(0.05)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_client_over_http(tmp_path: Path, mode: str) -> None:
    async with _served(tmp_path) as url, httpx2.AsyncClient(
            timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["run_code", "search_tools", "describe_tools"]
            failed = await client.call_tool("run_code", {"code": "1/0"})
            assert failed.is_error
            assert "ZeroDivisionError at line 1" in _text(failed)
            progress: list[str | None] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append(message)

            shouted = await client.call_tool(
                "run_code", {"code": "print('a')\nawait tools.shout(text='hi')"},
                progress_callback=on_progress)
            assert _text(shouted).startswith('value: "HI"')
            assert progress[:2] == ["output: a\n", "call 1: shout started"]
            big = await client.call_tool("run_code", {"code": "'y' * 900_000"})
            assert not big.is_error and _text(big).startswith('value: "yyyy')

            started = anyio.Event()

            async def on_start(done: float, total: float | None, message: str | None) -> None:
                if message == "call 1: slow started":
                    started.set()

            async with anyio.create_task_group() as group:
                async def slow() -> None:
                    await client.call_tool("run_code", {"code": "await tools.slow(seconds=600)"},
                                           progress_callback=on_start)

                group.start_soon(slow)
                await started.wait()
                if mode == "legacy":  # a ping while a run goes is answered
                    with pytest.warns(MCPDeprecationWarning):  # gone in 2026-07-28
                        assert isinstance(await client.send_ping(), types.EmptyResult)
                group.cancel_scope.cancel()  # the client cancels the request
            assert await _logged(tmp_path, "cancelled") == ["started", "cancelled"]

        answers: list[str] = []

        async def one(n: int) -> None:  # two clients at once, each with its own answer
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as c:  # type: ignore[arg-type]
                run = await c.call_tool("run_code", {"code": f"await tools.shout(text='c{n}')"})
                answers.append(_text(run).split("\n")[0])

        async with anyio.create_task_group() as group:
            group.start_soon(one, 1)
            group.start_soon(one, 2)
        assert sorted(answers) == ['value: "C1"', 'value: "C2"']


async def _session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    """A handshake-era session's headers (initialize, then initialized)."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}
    answer = await http.post(url, json=init, headers=_JSON)
    headers = {**_JSON, "mcp-session-id": answer.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-06-18"}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=headers)
    return headers


_LIST = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
MALFORMED: list[tuple[str, bytes, dict[str, str | None], int, int, int | None]] = [
    # (case, body, headers changed (None: left out), HTTP status, JSON-RPC code, its id)
    ("not JSON", b"{nope", {}, 400, -32700, None),
    ("text/plain", _LIST, {"Content-Type": "text/plain"}, 415, -32600, None),
    ("no session id", _LIST, {"mcp-session-id": None}, 400, -32600, None),
    ("unknown session id", _LIST, {"mcp-session-id": "nope"}, 404, -32600, None),
    ("a batch", b"[" + _LIST + b"," + _LIST + b"]", {}, 400, -32600, None),
    ("a number", b"42", {}, 400, -32600, None),
    ("no method", b'{"jsonrpc": "2.0", "id": 3}', {}, 400, -32600, None),
    ("past 4 MiB", b'{"x": "' + b"a" * (5 << 20) + b'"}', {}, 413, -32600, None),
    # only the params are at fault: before, id null and "the body must be one JSON-RPC
    # request ... (batches are not accepted)"
    ("params no object", b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": 5}',
     {}, 400, -32602, 5),
    ("params a list", b'{"jsonrpc": "2.0", "id": "s", "method": "ping", "params": [1]}',
     {}, 400, -32602, "s"),
    ("a notification's params", b'{"jsonrpc": "2.0", "method": "notifications/cancelled",'
     b' "params": 5}', {}, 400, -32602, None),
    # as over stdio: before, 202 and no answer (read as a notification) ...
    ("an object id", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
     {}, 400, -32600, None),
    ("a null id", b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', {}, 400, -32600, None),
    # ... and -32700 with id null
    ("nested 300 deep", b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {'
     b'"name": "run_code", "arguments": {"x": ' + b"[" * 300 + b"]" * 300 + b"}}}",
     {}, 400, -32600, 7),
]


async def test_malformed_requests_get_json_rpc_errors_and_the_server_serves_on(
        tmp_path: Path) -> None:
    async with _served(tmp_path) as url, httpx2.AsyncClient(timeout=30) as http:
        session = await _session(http, url)
        seen = []
        for case, body, changed, *_ in MALFORMED:
            headers = {k: v for k, v in {**session, **changed}.items() if v is not None}
            answer = await http.post(url, content=body, headers=headers)
            error = answer.json()
            seen.append((case, answer.status_code, error["error"]["code"], error["id"]))
            assert len(error["error"]["message"]) < 200, (case, error)
        assert seen == [(c, status, code, id_) for c, _, _, status, code, id_ in MALFORMED]
        cursor = await http.post(url, headers=session, json={
            "jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "x"}})
        assert '"code":-32602' in cursor.text and "unknown cursor" in cursor.text
        listed = await http.post(url, content=_LIST, headers=session)
        assert '"run_code"' in listed.text


async def test_a_client_that_disconnects_mid_run_stops_the_run(tmp_path: Path) -> None:
    """The SDK kept a handshake-era request running after its client went away (a run to
    its timeout, its answer written nowhere)."""
    async with _served(tmp_path) as url, httpx2.AsyncClient(timeout=30) as http:
        session = await _session(http, url)
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "run_code", "arguments": {"code": "await tools.slow(seconds=600)"}}}
        async with http.stream("POST", url, json=call, headers=session):
            await _logged(tmp_path, "started")
        assert await _logged(tmp_path, "cancelled") == ["started", "cancelled"]
        async with Client(streamable_http_client(url, http_client=http)) as client:
            after = await client.call_tool("run_code", {"code": "await tools.shout(text='on')"})
        assert _text(after).startswith('value: "ON"')


