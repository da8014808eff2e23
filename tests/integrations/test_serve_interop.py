"""Interop with MCP peers as they really behave, found by running the gateway and
``codemode serve`` against third-party servers and clients.

The upstream is ``raw_server.py``: plain JSON-RPC, no SDK, answering like hand-written
servers do (``-32000`` for its own errors, ``-32601`` for ``ping``, results the MCP schema
refuses, stray non-JSON lines). Clients are the official ``mcp`` SDK, in-process or
against a ``codemode serve`` subprocess over stdio.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client

import codemode as cm
from codemode.integrations.gateway import Gateway, load_config
from codemode.integrations.server import GatewayServer
from tests.integrations.raw_peer import PY
from tests.integrations.raw_peer import raw_config as _raw

if TYPE_CHECKING:
    from anyio.abc import Process

HERE = Path(__file__).resolve().parent
TOOLS = f"{HERE / 'serve_tools.py'}:registry"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"



async def _lines(path: Path, wanted: str, *, count: int = 1) -> list[str]:
    """The file's lines once ``wanted`` is among them ``count`` times (the peer writes it)."""
    with anyio.fail_after(60):
        while True:
            file = anyio.Path(path)
            text = await file.read_text(encoding="utf-8") if await file.exists() else ""
            lines = text.splitlines()
            if sum(line == wanted for line in lines) >= count:
                return lines
            await anyio.sleep(0.02)


async def test_a_server_error_and_an_unimplemented_ping_keep_the_connection(
    tmp_path: Path,
) -> None:
    """``-32000`` is the SDK's "connection closed" code and the code servers use for
    their own errors: the gateway took such an answer for a lost connection, tore the
    upstream down (and every call in flight on it) and reconnected. A ``ping`` answered
    "method not found" did the same, every ping interval."""
    log = tmp_path / "raw.log"
    servers = load_config(_raw(log))
    async with cm.InProcessExecutor() as executor, Gateway(
        servers, executor=executor, ping_interval=0.1
    ) as gateway:
        run = await gateway.mode.run(
            "try:\n"
            "    await tools.raw.fail()\n"
            "    said = None\n"
            "except ToolCallError as e:\n"
            "    said = e.message\n"
            "[said, await tools.raw.ok()]"
        )
        assert run.ok, run.error
        said, after = run.value
        assert said == "MCPError: the database is locked"
        assert after == "ok: fine"  # the same connection still serves
        lines = await _lines(log, "ping", count=5)
        (status,) = gateway.status()
        assert (status.state, status.restarts, status.error) == ("up", 0, None)
    assert sum(line.startswith("initialize") for line in lines) == 1


async def test_results_the_mcp_schema_refuses_fail_with_one_clear_line(tmp_path: Path) -> None:
    """The SDK's pydantic error (a dozen lines for an unknown content block type) was the
    script's error message."""
    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor
    ) as gateway:
        run = await gateway.mode.run(
            "out = []\n"
            "for call in (tools.raw.not_a_list, tools.raw.video):\n"
            "    try:\n"
            "        await call()\n"
            "    except ToolCallError as e:\n"
            "        out.append(e.message)\n"
            "out"
        )
        assert run.ok, run.error
        head = "McpResultError: the server's result for '{}' is not a valid MCP tools/call result"
        assert run.value == [
            f"{head.format('not_a_list')}: content: Input should be a valid list",
            f"{head.format('video')}: content.1: matches no type MCP defines"
            " (type 'video')",
        ]
        assert (await gateway.mode.run("await tools.raw.ok()")).value == "ok: fine"


async def test_a_dead_upstream_says_why_it_is_down(tmp_path: Path) -> None:
    """Its status said ``_Down`` (the supervisor's internal signal, as the SDK's task
    group wrapped it) instead of how the connection was lost; the call, the status and a
    later call say how its process ended (before: only "Connection closed")."""
    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor, backoff=(60.0, 60.0)
    ) as gateway:
        run = await gateway.mode.run("await tools.raw.die()")
        assert run.error is not None
        assert ("upstream MCP server 'raw' closed the connection during the call (its"
                " process exited with code 3)") in run.error.message
        with anyio.fail_after(60):
            while True:
                status = gateway.status()[0]
                if status.state == "down":
                    break
                await anyio.sleep(0.02)
        assert status.error is not None
        assert "_Down" not in status.error
        assert "Connection closed (its process exited with code 3)" in status.error
        again = await gateway.mode.run("await tools.raw.ok()")
        assert again.error is not None
        # why follows a colon: nested in parentheses it ended "code 3))"
        assert again.error.message.endswith(
            "'raw' is not connected (the gateway is reconnecting): lost: MCPError: Connection"
            " closed (its process exited with code 3)")


async def test_an_upstream_that_exits_at_start_says_how(tmp_path: Path) -> None:
    """Before: ``MCPError: Connection closed``, the same as a server that hung up."""
    config = {"mcpServers": {"gone": {"command": PY, "args": [
        "-c", "import sys; sys.exit(2)"]}}}
    async with cm.InProcessExecutor() as executor, Gateway(
            load_config(config), executor=executor, backoff=(60.0, 60.0)) as gateway:
        status = gateway.status()[0]
        described = gateway.run_code_description()
    assert status.state == "down" and status.error is not None
    assert status.error.endswith("Connection closed (its process exited with code 2)")
    # the model reads why ``tools.gone`` is missing (before: nothing; a call of one of its
    # tools got only "unknown tool")
    # one line per upstream, ``name: why`` (before: ``gone (MCPError: ... code 2)).``)
    assert described.endswith(
        "\nNot connected now (reconnecting in the background; until then their tools fail"
        " or are missing):\n- gone: MCPError: Connection closed (its process exited with code"
        " 2)\n")


async def test_upstream_progress_reaches_the_client_as_readable_steps(tmp_path: Path) -> None:
    """An upstream's progress arrived as ``reports FrozenDict({'progress': 1.0, ...})``,
    under another name than the call's "started" line."""
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor
    ) as gateway, Client(GatewayServer(gateway).server) as client:
        result = await client.call_tool(
            "run_code", {"code": "await tools.raw.progress()"}, progress_callback=on_progress)
    assert not result.is_error
    assert messages[:3] == [
        "call 1: raw.progress started",
        "call 1: raw.progress reports 1/2: half way",
        "call 1: raw.progress reports 2/2",
    ]
    assert messages[3].startswith("call 1: raw.progress ok in ")


async def _serve(tmp_path: Path, *extra: str) -> tuple[Process, Path]:
    """``codemode serve`` over stdio with the raw upstream, initialized by hand."""
    errlog = tmp_path / "serve.stderr"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(_raw(tmp_path / "raw.log")), encoding="utf-8")
    with errlog.open("w", encoding="utf-8") as err:
        proc = await anyio.open_process(
            [PY, "-m", "codemode.cli", "serve", "--executor", "inprocess", "--tools", TOOLS,
             "--config", str(config), *extra],
            stderr=err, cwd=tmp_path,
            env={**os.environ, "CODEMODE_TEST_LOG": str(tmp_path / "tool.log")},
        )
    await _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-client", "version": "0"}}})
    assert "serverInfo" in await _receive(proc, 0)
    await _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc, errlog


async def _send(proc: Process, message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    await proc.stdin.send((json.dumps(message) + "\n").encode())


_READERS: dict[int, tuple[Process, BufferedByteReceiveStream]] = {}
"""Each process's stdout, buffered across reads (the process is kept: ids stay unique)."""


async def _receive(proc: Process, request_id: int) -> str:
    """The server's answer to ``request_id`` (notifications before it are skipped)."""
    assert proc.stdout is not None
    _, reader = _READERS.setdefault(id(proc), (proc, BufferedByteReceiveStream(proc.stdout)))
    with anyio.fail_after(60):
        while True:
            line = await reader.receive_until(b"\n", 1 << 24)
            if json.loads(line).get("id") == request_id:
                return line.decode()


async def _ended(pid: int) -> None:
    """Once process ``pid`` is gone (bounded: the server ends its upstreams as it stops)."""
    with anyio.fail_after(60):
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            await anyio.sleep(0.02)


def _run_code(request_id: int, code: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "run_code", "arguments": {"code": code}}}


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
async def test_a_signal_stops_the_stdio_server_while_the_client_keeps_stdin_open(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    """SIGINT (Ctrl-C) left ``codemode serve`` waiting for the client's next line, however
    long; SIGTERM killed it without cancelling the run or closing the upstreams."""
    proc, errlog = await _serve(tmp_path)
    try:
        await _send(proc, _run_code(1, "await tools.slow(seconds=600)"))
        await _lines(tmp_path / "tool.log", "started")
        (upstream,) = [int(line.split()[1]) for line in
                       (tmp_path / "raw.log").read_text(encoding="utf-8").splitlines()
                       if line.startswith("initialize")]
        proc.send_signal(signum)
        with anyio.fail_after(60):
            assert await proc.wait() == code
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert (tmp_path / "tool.log").read_text(encoding="utf-8").split() == [
        "started", "cancelled"]
    assert f"codemode serve: stopped by {signum.name}" in errlog.read_text(encoding="utf-8")
    await _ended(upstream)  # the upstream was closed (and so ended) before the exit


async def test_a_client_that_closes_its_end_of_stdout_mid_run_stops_serve_cleanly(
        tmp_path: Path) -> None:
    """A client that went away (it crashed, or dropped the pipe) while a run sent progress:
    the SDK's writer raised ``BrokenPipeError`` as a traceback on stderr and serve exited
    with 1; with the client's stdin still open it went on until that closed. Now it stops
    as when the client closes stdin: run stopped, upstreams closed, exit 0. (A plain
    ``Popen``: closing its stdout file closes the pipe, an asyncio process's does not.)"""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(_raw(tmp_path / "raw.log")), encoding="utf-8")
    errlog = tmp_path / "serve.stderr"
    with errlog.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(  # noqa: ASYNC220 (its stdout's close closes the pipe)
            [PY, "-m", "codemode.cli", "serve", "--executor", "inprocess", "--tools", TOOLS,
             "--config", str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=err, cwd=tmp_path,
            env={**os.environ, "CODEMODE_TEST_LOG": str(tmp_path / "tool.log")})
    assert proc.stdin is not None and proc.stdout is not None
    run = _run_code(1, "for i in range(6000):\n    print(i)\n    await tools.slow(seconds=0.01)")
    run["params"]["_meta"] = {"progressToken": "p"}
    try:
        for message in ({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw-client", "version": "0"}}},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"}, run):
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
        await _lines(tmp_path / "tool.log", "finished", count=3)
        (upstream,) = [int(line.split()[1]) for line in
                       (tmp_path / "raw.log").read_text(encoding="utf-8").splitlines()
                       if line.startswith("initialize")]
        proc.stdout.close()  # stdin stays open
        with anyio.fail_after(60):
            while True:
                if proc.poll() is not None:
                    break
                await anyio.sleep(0.02)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdin.close()
    said = errlog.read_text(encoding="utf-8")
    assert "Traceback" not in said
    assert "codemode serve: the client closed the connection (stdout: broken pipe)" in said
    assert (tmp_path / "tool.log").read_text(encoding="utf-8").count("finished") < 6000
    await _ended(upstream)  # the upstream was closed (and so ended) before the exit


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
async def test_a_signal_stops_the_http_server_with_a_run_in_flight(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    """uvicorn re-raised the signal once shut down, ending the process before the gateway
    closed its upstreams, and its shutdown waited for runs in flight however long they
    took; its own log handler printed tracebacks to stderr."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    errlog = tmp_path / "serve.stderr"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(_raw(tmp_path / "raw.log")), encoding="utf-8")
    with errlog.open("w", encoding="utf-8") as err:
        proc = await anyio.open_process(
            [PY, "-m", "codemode.cli", "serve", "--executor", "inprocess", "--tools", TOOLS,
             "--config", str(config), "--transport", "http", "--port", "0"],
            stderr=err, cwd=tmp_path,
            env={**os.environ, "CODEMODE_TEST_LOG": str(tmp_path / "tool.log")},
        )
    outcome: list[str] = []

    async def call(url: str) -> None:
        try:
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=300)) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                await client.call_tool("run_code", {"code": "await tools.slow(seconds=600)"})
            outcome.append("answered")
        except Exception as exc:  # the server went away under the request
            outcome.append(type(exc).__name__)

    try:
        with anyio.fail_after(60):
            while True:
                said = await anyio.Path(errlog).read_text(encoding="utf-8")
                if "serving MCP on http" in said:
                    break
                await anyio.sleep(0.02)
        url = said.split("serving MCP on ")[1].split()[0]
        async with anyio.create_task_group() as group:
            group.start_soon(call, url)
            await _lines(tmp_path / "tool.log", "started")
            proc.send_signal(signum)
            with anyio.fail_after(60):
                assert await proc.wait() == code
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert outcome != ["answered"]
    assert (tmp_path / "tool.log").read_text(encoding="utf-8").split() == [
        "started", "cancelled"]
    stderr = errlog.read_text(encoding="utf-8")
    assert f"codemode serve: stopped by {signum.name}" in stderr
    assert "Traceback" not in stderr


async def test_stderr_gets_one_status_line_per_warning_and_no_traceback(tmp_path: Path) -> None:
    """A stray stdout line of an upstream is one status line naming it (the SDK's parse
    failure printed a traceback), and the gateway's "upstream is down, reconnecting"
    shows."""
    proc, errlog = await _serve(tmp_path)
    try:
        await _send(proc, _run_code(1, "await tools.raw.garbage()"))
        assert "after the stray line" in await _receive(proc, 1)
        await _send(proc, _run_code(2, "await tools.raw.die()"))
        assert "closed the connection" in await _receive(proc, 2)
        with anyio.fail_after(60):
            while True:
                if "upstream raw is down" in await anyio.Path(errlog).read_text(encoding="utf-8"):
                    break
                await anyio.sleep(0.02)
    finally:
        assert proc.stdin is not None
        await proc.stdin.aclose()
        with anyio.fail_after(60):
            await proc.wait()
    stderr = errlog.read_text(encoding="utf-8")
    assert "Traceback" not in stderr
    assert ("codemode serve: upstream raw sent a line that is no JSON-RPC message: "
            "'") in stderr
    assert "codemode serve: upstream raw is down: lost: MCPError: Connection closed (its" \
        " process exited with code 3); reconnecting in 0.5 s" in stderr
    assert proc.returncode == 0
