"""``codemode serve`` against the official ``mcp`` client where MCP's rules are exact: a
progress token that is no string or integer, a client's ``notifications/cancelled`` for a
direct upstream call and for an id not in flight, isolation of concurrent HTTP sessions.
The server is a real ``codemode serve`` process (stdio, or streamable HTTP on loopback)
with real upstream processes; odd params go through the client's own ``send_request``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.integrations.checkout import ENV
from tests.integrations.ports import free_port
from tests.integrations.served_http import served_http

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

HERE = Path(__file__).resolve().parent
PY = sys.executable
TOOLS = f"{HERE / 'serve_tools.py'}:registry"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _args(tmp_path: Path, *extra: str, servers: dict[str, Any] | None = None) -> list[str]:
    config = tmp_path / "mcp.json"
    if servers is None:
        servers = {"raw": {"command": PY,
                           "args": [str(HERE / "raw_server.py"), str(tmp_path / "raw.log")]}}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return ["-m", "codemode.cli", "serve", "--executor", "inprocess", "--tools", TOOLS,
            "--config", str(config), "--expose-upstream", *extra]


def _env(tmp_path: Path) -> dict[str, str]:
    return {**ENV, "CODEMODE_TEST_LOG": str(tmp_path / "tool.log")}


@asynccontextmanager
async def _stdio(tmp_path: Path, mode: str) -> AsyncIterator[Client]:
    async with _stdio_with(tmp_path, mode=mode) as client:
        yield client


@asynccontextmanager
async def _stdio_with(tmp_path: Path, *, mode: str = "legacy",
                      servers: dict[str, Any] | None = None, **options: Any,
                      ) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=PY, args=_args(tmp_path, servers=servers),
                                   env=_env(tmp_path), cwd=str(tmp_path))
    with (tmp_path / "serve.stderr").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err), mode=mode, **options) as client:
            yield client
    assert "Traceback" not in (tmp_path / "serve.stderr").read_text(encoding="utf-8")


@asynccontextmanager
async def _http(tmp_path: Path, *extra: str,
                servers: dict[str, Any] | None = None) -> AsyncIterator[str]:
    """``codemode serve --transport http``; yields its URL."""
    async with served_http(
            [PY, *_args(tmp_path, "--transport", "http", "--port", "0", *extra,
                        servers=servers)],
            cwd=tmp_path, env={**os.environ, **_env(tmp_path)},
            errlog=tmp_path / "serve.stderr") as url:
        yield url


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _lines(path: Path, word: str) -> list[str]:
    """The lines of a log a tool or upstream process writes, once one holds ``word``."""
    with anyio.fail_after(60):
        while True:
            log = anyio.Path(path)
            text = await log.read_text(encoding="utf-8") if await log.exists() else ""
            lines = text.splitlines()
            if any(word in line for line in lines):
                return lines
            await anyio.sleep(0.05)


BAD_TOKENS = [(True, "true"), (False, "false"), (2.0, "2.0"), (1.5, "1.5"), (None, "null"),
              ({"a": 1}, '{"a": 1}'), ([1], "[1]")]


async def _refuses_bad_tokens(client: Client) -> None:
    """Every token MCP does not allow gets -32602 naming it; no run starts. A string and
    an integer token get progress."""
    for token, shown in BAD_TOKENS:
        request = types.Request[dict[str, Any], str](method="tools/call", params={
            "name": "run_code", "arguments": {"code": "await tools.shout(text='x')"},
            "_meta": {"progressToken": token}})
        with pytest.raises(MCPError) as refused:
            await client.session.send_request(request, types.CallToolResult)
        assert refused.value.error.code == types.INVALID_PARAMS
        assert refused.value.error.message == (
            "Invalid params: _meta.progressToken: must be a string or an integer (MCP's"
            f" ProgressToken), not {shown}")
    steps: list[str | None] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(message)

    run = await client.call_tool("run_code", {"code": "await tools.shout(text='x')"},
                                 progress_callback=on_progress)
    assert _text(run).startswith('value: "X"')
    assert steps == ["call 1: shout started", steps[1]]
    assert str(steps[1]).startswith("call 1: shout ok in ")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_progress_token_no_string_or_integer_is_refused_over_stdio(
        tmp_path: Path, mode: str) -> None:
    """Before: ``true`` and ``false`` (the SDK's model read them as 1 and 0, its dispatcher
    as no token) ran the request and sent no progress, and ``2.0`` alike; ``1.5``, ``null``
    and objects got ``_meta.progressToken.str: Input should be a valid string``."""
    async with _stdio(tmp_path, mode) as client:
        await _refuses_bad_tokens(client)
    assert not (tmp_path / "tool.log").exists()  # shout logs nothing; slow never ran


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_progress_token_no_string_or_integer_is_refused_over_http(
        tmp_path: Path, mode: str) -> None:
    async with _http(tmp_path) as url, httpx2.AsyncClient(timeout=30) as http, Client(
            streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
        await _refuses_bad_tokens(client)


async def test_a_cancelled_direct_upstream_call_is_cancelled_upstream_and_serving_goes_on(
        tmp_path: Path) -> None:
    """A client cancels a direct call of an upstream tool (``--expose-upstream``) that
    never answers: the upstream gets ``notifications/cancelled`` for its request, and a
    cancellation of an id that is not in flight (never sent, or already answered) changes
    nothing: the connection serves on and nothing more reaches the upstream."""
    raw_log = tmp_path / "raw.log"
    async with _stdio(tmp_path, "legacy") as client:
        async with anyio.create_task_group() as group:
            async def hang() -> None:
                await client.call_tool("hang", {})

            group.start_soon(hang)
            await _lines(raw_log, "call hang")
            group.cancel_scope.cancel()  # the client sends notifications/cancelled
        await _lines(raw_log, "cancelled")
        for request_id in (99_999, "no-such-request", 0):  # 0: answered long ago
            await client.session.send_notification(types.CancelledNotification(
                params=types.CancelledNotificationParams(request_id=request_id)))
        direct = await client.call_tool("ok", {})
        run = await client.call_tool("run_code", {"code": "await tools.raw.ok()"})
    assert _text(direct) == "ok: fine"
    assert _text(run).startswith('value: "ok: fine"')
    calls = [line for line in raw_log.read_text(encoding="utf-8").splitlines()
             if line.startswith(("call", "cancelled"))]
    # the upstream's own request id for the hang (its first tools/call) is the one cancelled
    assert calls[:2] == ["call hang", calls[1]] and calls[1].startswith("cancelled ")
    assert calls[2:] == ["call ok", "call ok"]


async def test_structured_results_follow_the_output_schema_and_errors_have_content(
        tmp_path: Path) -> None:
    """What a client gets validates as MCP says: structured content against the tool's
    ``outputSchema`` (the official client checks it in ``call_tool`` and raises where it
    does not), an ``isError`` result has content that says something. Before, an
    upstream's error result with ``"content": []`` reached the client as one empty text and
    a script as ``raw.mute_error: `` (nothing after the colon)."""
    async with _stdio(tmp_path, "legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_tools", {"query": "time", "limit": 2})
        off = await client.call_tool("off_schema", {})
        mute = await client.call_tool("mute_error", {})
        run_mute = await client.call_tool("run_code", {"code": "await tools.raw.mute_error()"})
        run_off = await client.call_tool("run_code", {"code": "await tools.raw.off_schema()"})
    assert listed["run_code"].output_schema is None
    assert listed["off_schema"].output_schema == {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert not found.is_error and isinstance(found.structured_content, dict)
    assert set(found.structured_content) == {"matches"}
    refused = ("'off_schema' returned data that does not match its output schema: $.n: 'many'"
               " is not of type 'integer'")
    assert off.is_error and off.structured_content is None and _text(off) == refused
    assert run_off.is_error and refused in _text(run_off)
    said = ("'mute_error' answered an error result with no content (the server said nothing"
            " about what went wrong)")
    assert mute.is_error and _text(mute) == said
    assert run_mute.is_error and f"raw.mute_error: {said}" in _text(run_mute)


@asynccontextmanager
async def _talker_over_http(port: int | None = None) -> AsyncIterator[tuple[str, Any]]:
    """``logging_server.py`` over streamable HTTP; yields its URL, once it answers, and
    its process."""
    url = f"http://127.0.0.1:{port or free_port()}/mcp"
    async with await anyio.open_process(
            [PY, str(HERE / "logging_server.py"), "http", url.split(":")[2].split("/")[0]],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        try:
            async with httpx2.AsyncClient() as http:
                with anyio.fail_after(60):
                    while True:
                        with contextlib.suppress(httpx2.TransportError):
                            await http.get(url)
                            break
                        await anyio.sleep(0.1)
            yield url, proc
        finally:
            if proc.returncode is None:
                proc.terminate()


@pytest.mark.parametrize("executor", ["inprocess", "pool"])
async def test_an_http_upstreams_log_of_a_call_reaches_only_the_client_that_caused_it(
        tmp_path: Path, executor: str) -> None:
    """Two clients at once over HTTP (handshake-era and 2026-07-28), each calling an HTTP
    upstream that logs while it runs, directly and from a script: each gets the messages
    of its own calls, on its request's stream, and none of the other's. Before, every
    upstream message went to every connected client. (A stdio upstream's messages name no
    request: they still go to every client; see docs/serve.md.)"""
    heard: dict[str, list[str]] = {"old": [], "new": []}

    def listener(who: str) -> Any:
        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            heard[who].append(f"{params.logger}: {params.data}")
        return on_log

    async def talk(client: Client, who: str) -> None:
        for n in range(3):
            direct = await client.call_tool("talk", {"word": f"{who}{n}"})
            assert _text(direct) == f"{who}{n}"
            run = await client.call_tool("run_code", {
                "code": f"await tools.talk.talk(word='{who}-run{n}')"})
            assert _text(run).startswith(f'value: "{who}-run{n}"')

    async with contextlib.AsyncExitStack() as stack:
        upstream, _ = await stack.enter_async_context(_talker_over_http())
        url = await stack.enter_async_context(_http(
            tmp_path, "--executor", executor, servers={"talk": {"url": upstream}}))
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30))
        old = await stack.enter_async_context(Client(
            streamable_http_client(url, http_client=http), mode="legacy",
            logging_callback=listener("old")))
        new = await stack.enter_async_context(Client(
            streamable_http_client(url, http_client=http), log_level="debug",
            logging_callback=listener("new")))
        assert old.session.protocol_version != new.session.protocol_version
        async with anyio.create_task_group() as group:
            group.start_soon(talk, old, "old")
            group.start_soon(talk, new, "new")
    for who in ("old", "new"):
        assert sorted(heard[who]) == sorted(
            [f"talk: {who}{n} said" for n in range(3)]
            + [f"talk: {who}-run{n} said" for n in range(3)])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_concurrent_http_sessions_keep_their_runs_output_and_globals_apart(
        tmp_path: Path, mode: str) -> None:
    """Two clients run scripts at once over HTTP: each one's progress holds its own
    script's output and calls only, and what a script defines is gone for the next run,
    the other client's included (serve keeps no state between runs)."""
    progress: dict[str, list[str]] = {"a": [], "b": []}

    async def runs(client: Client, who: str) -> None:
        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress[who].append(str(message))

        for n in range(4):
            run = await client.call_tool("run_code", {"code": (
                f"secret_{who} = '{who}{n}'\nprint(secret_{who})\n"
                f"await tools.shout(text=secret_{who})")}, progress_callback=on_progress)
            assert _text(run).startswith(f'value: "{who.upper()}{n}"')

    async with _http(tmp_path) as url, httpx2.AsyncClient(timeout=30) as http, Client(
            streamable_http_client(url, http_client=http), mode=mode) as a, Client(  # type: ignore[arg-type]
                streamable_http_client(url, http_client=http), mode=mode) as b:  # type: ignore[arg-type]
        async with anyio.create_task_group() as group:
            group.start_soon(runs, a, "a")
            group.start_soon(runs, b, "b")
        peek = await b.call_tool("run_code", {"code": "secret_a"})
    assert peek.is_error and "name 'secret_a' is not defined" in _text(peek)
    for who in ("a", "b"):
        outputs = [m for m in progress[who] if m.startswith("output: ")]
        assert outputs == [f"output: {who}{n}\n" for n in range(4)]
        assert sum(m.startswith("call 1: shout started") for m in progress[who]) == 4


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_process_killed_mid_run_has_its_run_stopped(
        tmp_path: Path, mode: str) -> None:
    """The official client in a process of its own starts a long run over HTTP and is
    killed (SIGKILL: it sends nothing more, its TCP connection just closes): the run's
    nested call is cancelled, serve writes no traceback, and serves the next client."""
    async with _http(tmp_path) as url:
        async with await anyio.open_process(
                [PY, str(HERE / "slow_client.py"), url, mode], env={**os.environ, **ENV},
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as client_process:
            await _lines(tmp_path / "tool.log", "started")
            client_process.kill()
        assert await _lines(tmp_path / "tool.log", "cancelled") == ["started", "cancelled"]
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
            after = await client.call_tool("run_code", {"code": "await tools.shout(text='on')"})
    assert _text(after).startswith('value: "ON"')


@pytest.mark.parametrize("asked", ["2025-06-18", "2024-11-05", "2099-01-01", "garbage"])
async def test_initialize_with_an_older_or_unknown_revision(tmp_path: Path, asked: str) -> None:
    """A revision serve supports is answered as asked; one it does not know (newer, or no
    date) gets the latest handshake revision it has, as MCP says, and the session works."""
    from mcp import ClientSession
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    params = StdioServerParameters(command=PY, args=_args(tmp_path), env=_env(tmp_path),
                                   cwd=str(tmp_path))
    with (tmp_path / "serve.stderr").open("w", encoding="utf-8") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(
                read, write) as session:
            hello = await session.send_request(types.InitializeRequest(
                params=types.InitializeRequestParams(
                    protocol_version=asked, capabilities=types.ClientCapabilities(),
                    client_info=types.Implementation(name="probe", version="1"))),
                types.InitializeResult)
            session.adopt(hello)
            await session.send_notification(types.InitializedNotification())
            listed = await session.send_request(types.ListToolsRequest(), types.ListToolsResult)
    if asked in HANDSHAKE_PROTOCOL_VERSIONS:
        assert hello.protocol_version == asked
    else:
        assert hello.protocol_version == max(HANDSHAKE_PROTOCOL_VERSIONS)
    assert hello.capabilities.tools is not None and hello.capabilities.logging is not None
    assert "run_code" in {t.name for t in listed.tools}


async def test_an_http_upstream_that_dies_mid_call_is_named_and_reconnected(
        tmp_path: Path) -> None:
    """An HTTP upstream's process is killed while a direct call of its tool is in flight:
    the client gets an error result naming the upstream at once (before: ``MCPError: SSE
    stream ended without a response``), a script's call of it fails as a ToolCallError
    while it is down, serve serves on, and once the upstream listens again (same port) the
    gateway reconnects and the tool answers."""
    port = free_port()
    waiting = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        if params.data == "waiting":
            waiting.set()

    async with contextlib.AsyncExitStack() as stack:
        upstream, proc = await stack.enter_async_context(_talker_over_http(port))
        client = await stack.enter_async_context(_stdio_with(
            tmp_path, servers={"talk": {"url": upstream}}, logging_callback=on_log))
        async with anyio.create_task_group() as group:
            async def kill_when_waiting() -> None:
                await waiting.wait()  # the call reached the upstream's tool
                proc.kill()

            group.start_soon(kill_when_waiting)
            died = await client.call_tool("wait", {"seconds": 600})
        await proc.wait()
        down = await client.call_tool("run_code", {"code": "await tools.talk.wait(seconds=0)"})
        async with _talker_over_http(port):
            with anyio.fail_after(60):
                while (back := await client.call_tool("wait", {"seconds": 0})).is_error:
                    assert "upstream MCP server 'talk'" in _text(back)
                    await anyio.sleep(0.2)
    assert died.is_error
    assert _text(died) == (
        "ConnectionError: upstream MCP server 'talk' ended the call's stream without an answer"
        " (SSE stream ended without a response); the gateway checks the connection and"
        " reconnects if it is lost")
    assert down.is_error and "ToolCallError" in _text(down) and "'talk'" in _text(down)
    assert _text(back) == "waited"


async def test_relayed_upstream_progress_only_increases(tmp_path: Path) -> None:
    """A direct call's upstream sends progress 1, 3, 2, 3, 5: the client gets 1, 3, 5 (MCP:
    the value increases with each notification; before, all five went as sent)."""
    steps: list[float] = []
    last = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(done)
        if done == 5:
            last.set()

    async with _stdio(tmp_path, "legacy") as client:
        done = await client.call_tool("regress", {}, progress_callback=on_progress)
        # the client hands each notification to a task of its own, started in the order
        # they came: once the last (5) is in, any before it are too
        with anyio.fail_after(30):
            await last.wait()
    assert _text(done) == "regressed"
    assert steps == [1, 3, 5]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_2026_request_gets_every_message_logged_before_its_answer(
        tmp_path: Path, transport: str) -> None:
    """A 2026-07-28 client gets log messages on each request's own stream, which closes
    with the answer: the upstream's four messages of each call (sent before its result)
    all arrive. Before, the answer went out while they still waited to be forwarded: 24
    of 40 arrived over stdio."""
    heard: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(str(params.data))

    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            client = await stack.enter_async_context(_stdio_with(
                tmp_path, mode="auto", log_level="debug", logging_callback=on_log))
        else:
            url = await stack.enter_async_context(_http(tmp_path))
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30))
            client = await stack.enter_async_context(Client(
                streamable_http_client(url, http_client=http), log_level="debug",
                logging_callback=on_log))
        assert client.session.protocol_version == "2026-07-28"
        for _ in range(5):
            direct = await client.call_tool("log", {})
            run = await client.call_tool("run_code", {"code": "await tools.raw.log()"})
            assert _text(direct) == "logged" and _text(run).startswith('value: "logged"')
    levels = ["debug", "info", "warning", "error"]
    assert heard == [f"{level} from raw" for level in levels] * 10


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_cancelled_direct_upstream_call_over_http(tmp_path: Path, mode: str) -> None:
    """Over HTTP too, a client's cancel of a direct upstream call reaches the upstream as
    ``notifications/cancelled``, and the session serves on."""
    raw_log = tmp_path / "raw.log"
    async with _http(tmp_path) as url, httpx2.AsyncClient(timeout=30) as http, Client(
            streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
        async with anyio.create_task_group() as group:
            async def hang() -> None:
                await client.call_tool("hang", {})

            group.start_soon(hang)
            await _lines(raw_log, "call hang")
            group.cancel_scope.cancel()
        lines = await _lines(raw_log, "cancelled")
        after = await client.call_tool("ok", {})
    assert _text(after) == "ok: fine"
    assert [line.split()[0] for line in lines if line.startswith(("call", "cancelled"))] == [
        "call", "cancelled"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_listing_ping_unknown_methods_and_bad_params(tmp_path: Path, mode: str) -> None:
    """Through the official client: the tools come in one page (no ``nextCursor``) and a
    cursor serve never gave gets -32602; ``ping`` is answered where the revision has it
    (2026-07-28 dropped it: -32601 there, as from the SDK's own servers); a method serve
    does not offer gets -32601; params MCP's schema refuses get -32602 naming the field."""
    async with _stdio(tmp_path, mode) as client:
        session = client.session
        listed = await session.list_tools()
        with pytest.raises(MCPError) as cursor:
            await session.list_tools(params=types.PaginatedRequestParams(cursor="page-2"))
        with pytest.raises(MCPError) as unknown:
            await session.send_request(types.Request[dict[str, Any], str](
                method="tools/frobnicate", params={}), types.EmptyResult)
        with pytest.raises(MCPError) as bad:
            await session.send_request(types.Request[dict[str, Any], str](
                method="tools/call", params={"name": "run_code", "arguments": [1]}),
                types.CallToolResult)
        if mode == "legacy":
            assert isinstance(await session.send_ping(), types.EmptyResult)
        else:
            with pytest.raises(MCPError) as no_ping:
                await session.send_ping()
            assert no_ping.value.error.code == types.METHOD_NOT_FOUND
        after = await client.call_tool("run_code", {"code": "await tools.shout(text='on')"})
    assert listed.next_cursor is None and "run_code" in {t.name for t in listed.tools}
    assert cursor.value.error.code == types.INVALID_PARAMS
    assert cursor.value.error.message == (
        "unknown cursor 'page-2': this server lists its tools in one page")
    assert unknown.value.error.code == types.METHOD_NOT_FOUND
    assert bad.value.error.code == types.INVALID_PARAMS
    assert bad.value.error.message.startswith("Invalid params: arguments: ")
    assert _text(after).startswith('value: "ON"')
