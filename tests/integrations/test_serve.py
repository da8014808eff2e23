"""``codemode serve`` end to end: the official ``mcp`` client against the real server
(a subprocess, over stdio and streamable HTTP on loopback), with real upstream servers
(mcp-server-time, mcp-server-git on a temporary repository, and a small official-SDK
server whose tool list changes). Every process a test needs is started by it and stopped
by leaving its context."""

from __future__ import annotations

import json
import os
import signal
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

from tests.integrations.checkout import ENV

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

HERE = Path(__file__).resolve().parent
TOOLS = f"{HERE / 'serve_tools.py'}:registry"
PY = sys.executable


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _time(*, pidfile: Path | None = None) -> dict[str, Any]:
    if pidfile is None:
        return {"command": PY, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    boot = (
        "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid()));"
        " os.execv(sys.executable, [sys.executable, '-m', 'mcp_server_time',"
        " '--local-timezone', 'UTC'])"
    )
    return {"command": PY, "args": ["-c", boot, str(pidfile)]}


def _config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def _serve_args(config: Path | None, *extra: str) -> list[str]:
    args = ["-m", "codemode.cli", "serve", "--executor", "inprocess", "--tools", TOOLS]
    if config is not None:
        args += ["--config", str(config)]
    return [*args, *extra]


@asynccontextmanager
async def stdio_gateway(
    tmp_path: Path, config: Path | None, *extra: str, mode: str = "auto", **client: Any
) -> AsyncIterator[tuple[Client, Path]]:
    """The official client with ``codemode serve`` spawned over stdio; yields it and the
    file the server's stderr goes to."""
    errlog = tmp_path / "serve.stderr"
    params = StdioServerParameters(
        command=PY, args=_serve_args(config, *extra),
        env={**ENV, "CODEMODE_TEST_LOG": str(tmp_path / "tool.log")}, cwd=str(tmp_path),
    )
    with errlog.open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err), mode=mode, **client) as c:  # type: ignore[arg-type]
            yield c, errlog


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_stdio_script_chains_two_upstreams_with_progress(
    tmp_path: Path, repo: Path
) -> None:
    config = _config(tmp_path, {
        "time": _time(),
        "git": {"command": PY, "args": ["-m", "mcp_server_git", "--repository", str(repo)]},
        "broken": {"command": str(tmp_path / "no-such-server")},
    })
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with stdio_gateway(tmp_path, config) as (client, errlog):
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["run_code", "search_tools", "describe_tools"]
        description = listed.tools[0].description or ""
        assert "[time]" in description and "[git]" in description  # the SDK, not a pointer
        assert "system prompt" not in description and "git_log" in description
        script = (
            f"now = await tools.time.get_current_time(timezone='UTC')\n"
            "print('between the calls')\n"
            f"log = await tools.git.git_log(repo_path={str(repo)!r}, max_count=1)\n"
            "{'zone': now['timezone'], 'first': 'first notes' in str(log)}\n"
        )
        result = await client.call_tool("run_code", {"code": script},
                                        progress_callback=on_progress)
        assert not result.is_error, _text(result)
        assert _text(result).startswith('value: {"zone": "UTC", "first": true}')
        assert progress[0] == "call 1: time.get_current_time started"
        assert progress[1].startswith("call 1: time.get_current_time ok")
        # printed output arrives while the run goes, in order with the calls
        assert progress[2:4] == ["output: between the calls\n", "call 2: git.git_log started"]
        stderr = errlog.read_text(encoding="utf-8")
    assert "upstream time: up, 2 tools" in stderr
    assert "upstream git: up" in stderr
    # "; retrying": after a why that ends in a parenthesis, " (retrying ...)" doubled them
    missing = str(tmp_path / "no-such-server")
    assert (f"upstream broken: FAILED: FileNotFoundError: [Errno 2] No such file or directory:"
            f" {missing!r}; retrying with backoff\n") in stderr


async def test_http_needs_the_token_and_serves_discovery(tmp_path: Path) -> None:
    config = _config(tmp_path, {"time": _time()})
    errlog = tmp_path / "serve.stderr"
    with errlog.open("w", encoding="utf-8") as err:
        proc = await anyio.open_process(
            [PY, *_serve_args(config, "--transport", "http", "--port", "0", "--token", "s3cret")],
            stderr=err, cwd=tmp_path,
        )
        try:
            url = await _announced_url(errlog)
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            probe = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            async with httpx2.AsyncClient() as raw:
                for headers in ({}, {"Authorization": "Bearer wrong"}):
                    refused = await raw.post(url, json=probe, headers=headers)
                    assert refused.status_code == 401, refused.text
                    assert "bearer token" in refused.text
            async with httpx2.AsyncClient(
                headers={"Authorization": "Bearer s3cret"}, timeout=httpx2.Timeout(30, read=300)
            ) as http, Client(streamable_http_client(url, http_client=http)) as client:
                listed = await client.list_tools()
                assert {t.name for t in listed.tools} == {
                    "run_code", "search_tools", "describe_tools"}
                found = await client.call_tool("search_tools", {"query": "convert a time zone"})
                assert not found.is_error
                assert found.structured_content is not None
                assert found.structured_content["matches"][0]["tool"] == "time.convert_time"
                shown = await client.call_tool("describe_tools", {"names": ["time.convert_time"]})
                assert "source_timezone: str" in _text(shown)
                run = await client.call_tool("run_code", {"code": (
                    "hits = await tools.search(query='what time is it now')\n"
                    "first = hits['matches'][0]['tool']\n"
                    "[first, (await tools.time.get_current_time(timezone='UTC'))['timezone']]"
                )})
                assert _text(run).startswith('value: ["time.get_current_time", "UTC"]'), _text(run)
        finally:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()


async def _announced_url(errlog: Path) -> str:
    with anyio.fail_after(60):
        while True:
            for line in (await anyio.Path(errlog).read_text(encoding="utf-8")).splitlines():
                if "serving MCP on http" in line:
                    return line.rsplit(" ", 1)[1]
            await anyio.sleep(0.05)


@pytest.mark.parametrize("executor", ["inprocess", "pool"])
async def test_cancelled_request_cancels_the_run_and_its_nested_call(
    tmp_path: Path, executor: str
) -> None:
    started = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        if message == "call 1: slow started":
            started.set()

    log = tmp_path / "tool.log"
    async with stdio_gateway(tmp_path, None, "--executor", executor) as (client, _):
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await client.call_tool("run_code", {"code": "await tools.slow(seconds=600)"},
                                       progress_callback=on_progress)

            group.start_soon(call)
            await started.wait()
            group.cancel_scope.cancel()  # the client sends notifications/cancelled
        with anyio.fail_after(30):  # the tool's process writes the log: poll it
            while True:
                lines = (await anyio.Path(log).read_text(encoding="utf-8")).split()
                if "cancelled" in lines:
                    break
                await anyio.sleep(0.05)
        assert lines == ["started", "cancelled"]
        after = await client.call_tool("run_code", {"code": "await tools.shout(text='still here')"})
        assert _text(after).startswith('value: "STILL HERE"')


async def test_upstream_killed_mid_session_fails_clearly_then_comes_back(tmp_path: Path) -> None:
    pidfile = tmp_path / "time.pid"
    config = _config(tmp_path, {"time": _time(pidfile=pidfile)})
    script = {"code": "(await tools.time.get_current_time(timezone='UTC'))['timezone']"}
    async with stdio_gateway(tmp_path, config) as (client, _):
        first = await client.call_tool("run_code", script)
        assert _text(first).startswith('value: "UTC"')
        old = int(pidfile.read_text(encoding="utf-8"))
        os.kill(old, signal.SIGKILL)
        failed = await client.call_tool("run_code", script)
        assert failed.is_error
        assert "upstream MCP server 'time'" in _text(failed)
        assert "reconnecting" in _text(failed)
        with anyio.fail_after(60):
            while True:
                again = await client.call_tool("run_code", script)
                if not again.is_error:
                    break
                assert "upstream MCP server 'time'" in _text(again)
                await anyio.sleep(0.1)
        assert _text(again).startswith('value: "UTC"')
        assert int(pidfile.read_text(encoding="utf-8")) != old


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_upstream_list_changed_reaches_the_client(tmp_path: Path, mode: str) -> None:
    config = _config(tmp_path, {
        "changing": {"command": PY, "args": [str(HERE / "changing_server.py")]}})
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with stdio_gateway(tmp_path, config, mode=mode, message_handler=on_message) as (
        client, _
    ):
        before = await client.list_tools()
        assert "echo_two" not in (before.tools[0].description or "")
        grow = {"code": "await tools.changing.grow(name='echo_two')"}
        if mode == "legacy":
            assert not (await client.call_tool("run_code", grow)).is_error
            with anyio.fail_after(30):
                await changed.wait()
        else:
            async with client.listen(tools_list_changed=True) as events:
                assert not (await client.call_tool("run_code", grow)).is_error
                with anyio.fail_after(30):
                    async for _event in events:
                        break
        after = await client.list_tools()
        assert "echo_two" in (after.tools[0].description or "")
        echo = await client.call_tool(
            "run_code", {"code": "await tools.changing.echo_two(text='hi')"})
        assert _text(echo).startswith('value: "echo_two: hi"'), _text(echo)


async def test_expose_upstream_lists_upstream_tools_next_to_run_code(tmp_path: Path) -> None:
    config = _config(tmp_path, {"time": _time()})
    async with stdio_gateway(tmp_path, config, "--expose-upstream") as (client, _):
        names = [t.name for t in (await client.list_tools()).tools]
        assert names[:3] == ["run_code", "search_tools", "describe_tools"]
        assert {"get_current_time", "convert_time", "slow", "snapshot", "shout"} <= set(names)
        direct = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert direct.structured_content is not None
        assert direct.structured_content["timezone"] == "UTC"
        picture = await client.call_tool("run_code", {"code": "await tools.snapshot(label='x')"})
        kinds = [b.type for b in picture.content]
        assert kinds == ["text", "image"]
        assert isinstance(picture.content[1], types.ImageContent)
        assert picture.content[1].mime_type == "image/png"


async def test_http_upstream_with_headers_through_connect(tmp_path: Path) -> None:
    """A ``url`` upstream: a ``codemode serve --transport http`` (token-protected, upstream
    tools exposed) reached by ``codemode.mcp.connect`` with the token in ``headers``."""
    import codemode as cm
    import codemode.mcp

    config = _config(tmp_path, {"time": _time()})
    errlog = tmp_path / "serve.stderr"
    with errlog.open("w", encoding="utf-8") as err:
        proc = await anyio.open_process(
            [PY, *_serve_args(config, "--transport", "http", "--port", "0", "--token", "tok",
                              "--expose-upstream")],
            stderr=err, cwd=tmp_path,
        )
        try:
            url = await _announced_url(errlog)
            wrong = {"mcpServers": {"inner": {"url": url, "headers": {"Authorization": "x"}}}}
            with pytest.raises(ConnectionError, match="inner"):
                async with codemode.mcp.connect(wrong, executor=cm.InProcessExecutor()):
                    pass
            right = {"mcpServers": {"inner": {"url": url,
                                              "headers": {"Authorization": "Bearer tok"}}}}
            async with codemode.mcp.connect(right, executor=cm.InProcessExecutor()) as gateway:
                (status,) = gateway.status()
                assert status.state == "up"
                assert status.renamed == (  # the gateway's own names were taken
                    "inner_describe_tools", "inner_run_code", "inner_search_tools")
                run = await gateway.mode.run(
                    "(await tools.inner.get_current_time(timezone='UTC'))['timezone']")
                assert run.ok, run.error
                assert run.value == "UTC"
        finally:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()


async def test_an_http_upstreams_large_result_arrives(tmp_path: Path) -> None:
    """A result past the MCP SDK's 1 MiB SSE event limit (its default) failed the call
    ("Server-sent event exceeded the 1048576 byte limit"): an HTTP upstream's event may be
    as large as a stdio upstream's line."""
    import codemode as cm
    import codemode.mcp

    errlog = tmp_path / "serve.stderr"
    with errlog.open("w", encoding="utf-8") as err:
        proc = await anyio.open_process(
            [PY, *_serve_args(None, "--transport", "http", "--port", "0",
                              "--expose-upstream")],
            stderr=err, cwd=tmp_path,
        )
        try:
            url = await _announced_url(errlog)
            servers = {"mcpServers": {"inner": {"url": url}}}
            async with codemode.mcp.connect(servers, executor=cm.InProcessExecutor()) as gateway:
                run = await gateway.mode.run(
                    "r = await tools.inner.shout(text='y' * 2_000_000)\n[len(r), r[:3]]",
                    limits=cm.Limits(result=16 << 20))
                assert run.ok, run.error
                assert run.value == [2_000_000, "YYY"]
        finally:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()
