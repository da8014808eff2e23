"""What ``codemode serve`` passes between its clients and its upstreams besides results:
direct-call timeouts, upstream log messages and levels, ``tools/list_changed``, progress
naming.

The upstream is ``raw_server.py`` (plain JSON-RPC, no SDK: a tool that never answers, one
that logs, one whose name has a hyphen); clients are the official ``mcp`` SDK, in-process
against a ``GatewayServer`` or over stdio or HTTP against a ``codemode serve``
subprocess.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning

import codemode as cm
from codemode.integrations.gateway import Gateway, load_config
from codemode.integrations.server import GatewayServer
from codemode.sandbox import Limits
from tests.integrations.checkout import ENV
from tests.integrations.raw_peer import PY
from tests.integrations.raw_peer import raw_config as _raw

SDK_ERRORS = str(Path(__file__).resolve().parent / "sdk_errors_server.py")



@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"



def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _until(check: Any) -> None:
    """Wait (bounded) until ``check()`` is true: what it looks at arrives asynchronously."""
    with anyio.fail_after(60):
        while True:
            if check():
                return
            await anyio.sleep(0.02)


def _logged(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


# -- 1. direct calls of exposed upstream tools are bounded --------------------------------


async def test_a_direct_call_of_a_hung_upstream_tool_times_out_naming_it(tmp_path: Path) -> None:
    """A client's call of an upstream tool listed by ``expose_upstream`` had no limit: an
    upstream that never answered held it until the client gave up. It is bounded like a
    run (``Limits.timeout``, ``--timeout``), the upstream call is cancelled, and the
    connection keeps serving."""
    log = tmp_path / "raw.log"
    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(log)), executor=executor, limits=Limits(timeout=0.5)
    ) as gateway, Client(GatewayServer(gateway, expose_upstream=True).server) as client:
        with anyio.fail_after(30):
            hung = await client.call_tool("hang", {})
        assert hung.is_error
        assert _text(hung) == (
            "upstream MCP server 'raw' did not answer 'hang' within 0.5 s; the call was"
            " cancelled (codemode serve --timeout sets the limit)")
        await _until(lambda: any(line.startswith("cancelled ") for line in _logged(log)))
        after = await client.call_tool("ok", {})
        assert (after.is_error, _text(after)) == (False, "ok: fine")
        assert gateway.status()[0].state == "up"


async def test_the_direct_call_timeout_is_its_own_setting(tmp_path: Path) -> None:
    """``GatewayServer(call_timeout=...)`` overrides the run limit for direct calls."""
    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor
    ) as gateway:
        server = GatewayServer(gateway, expose_upstream=True, call_timeout=0.25)
        assert server.call_timeout == 0.25
        async with Client(server.server) as client:
            with anyio.fail_after(30):
                hung = await client.call_tool("hang", {})
        assert hung.is_error and "within 0.25 s" in _text(hung)
        assert GatewayServer(gateway).call_timeout == Limits().timeout  # the default: 30 s


# -- 2. upstream log messages reach the clients -------------------------------------------


async def test_upstream_log_messages_reach_the_client_at_its_level(tmp_path: Path) -> None:
    """Upstream ``notifications/message`` were dropped, and ``logging/setLevel`` was
    "method not found". Now the logging capability is declared, the client's level is
    respected (and passed on to the upstreams), and each message names its upstream."""
    log = tmp_path / "raw.log"
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(log)), executor=executor
    ) as gateway, Client(GatewayServer(gateway).server, mode="legacy",
                         logging_callback=on_log) as client:
        caps = client.server_capabilities
        assert caps.logging is not None
        await client.session.send_request(
            types.SetLevelRequest(params=types.SetLevelRequestParams(level="warning")),
            types.EmptyResult)
        await _until(lambda: "setLevel warning" in _logged(log))
        result = await client.call_tool("run_code", {"code": "await tools.raw.log()"})
        assert not result.is_error, _text(result)
        await _until(lambda: len(got) >= 2)
        assert [(p.level, p.logger, p.data) for p in got] == [
            ("warning", "raw.raw-logger", "warning from raw"),
            ("error", "raw.raw-logger", "error from raw"),
        ]


async def test_a_client_that_set_no_level_gets_every_upstream_message(tmp_path: Path) -> None:
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor
    ) as gateway, Client(GatewayServer(gateway).server, mode="legacy",
                         logging_callback=on_log) as client:
        result = await client.call_tool("run_code", {"code": "await tools.raw.log()"})
        assert not result.is_error, _text(result)
        await _until(lambda: len(got) >= 4)
        assert [p.level for p in got] == ["debug", "info", "warning", "error"]
        assert {p.logger for p in got} == {"raw.raw-logger"}


async def test_serve_over_stdio_forwards_upstream_logs_and_its_own_warnings(
    tmp_path: Path,
) -> None:
    """The same through a ``codemode serve`` subprocess; its own warnings (an upstream
    down and reconnecting) are log messages too, from the logger ``codemode``."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(_raw(tmp_path / "raw.log")), encoding="utf-8")
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    params = StdioServerParameters(
        command=PY, args=["-m", "codemode.cli", "serve", "--executor", "inprocess",
                          "--config", str(config)], cwd=str(tmp_path), env=ENV)
    with (tmp_path / "serve.stderr").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err), mode="legacy",
                          logging_callback=on_log) as client:
            await client.session.send_request(
                types.SetLevelRequest(params=types.SetLevelRequestParams(level="info")),
                types.EmptyResult)
            result = await client.call_tool("run_code", {"code": "await tools.raw.log()"})
            assert not result.is_error, _text(result)
            await _until(lambda: len(got) >= 3)
            assert [(p.level, p.logger) for p in got[:3]] == [
                ("info", "raw.raw-logger"), ("warning", "raw.raw-logger"),
                ("error", "raw.raw-logger")]
            died = await client.call_tool("run_code", {"code": "await tools.raw.die()"})
            assert died.is_error
            await _until(lambda: any(p.logger == "codemode" for p in got))
    said = next(p for p in got if p.logger == "codemode")
    assert said.level == "warning"
    assert isinstance(said.data, str) and said.data.startswith("upstream raw is down: ")


async def test_a_level_goes_with_the_http_client_that_set_it(tmp_path: Path) -> None:
    """Every HTTP session that ever connected stayed a peer (its session held for as long
    as serve ran), so the upstreams kept logging at the lowest level any client had asked
    for, also once that client was gone (here ``debug``, though the one left asked for
    ``error``)."""
    log = tmp_path / "raw.log"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(_raw(log)), encoding="utf-8")
    errlog = tmp_path / "serve.stderr"
    with errlog.open("w", encoding="utf-8") as err:
        proc = await anyio.open_process(
            [PY, "-m", "codemode.cli", "serve", "--executor", "inprocess", "--config",
             str(config), "--transport", "http", "--port", "0"],
            stderr=err, cwd=tmp_path, env={**os.environ, **ENV})
    try:
        await _until(lambda: "serving MCP on http" in errlog.read_text(encoding="utf-8"))
        url = errlog.read_text(encoding="utf-8").split("serving MCP on ")[1].split()[0]
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(url, http_client=http), mode="legacy") as stays:  # type: ignore[arg-type]
            async with Client(streamable_http_client(url, http_client=http),  # type: ignore[arg-type]
                               mode="legacy") as leaves:
                with pytest.warns(MCPDeprecationWarning):  # gone in 2026-07-28
                    await leaves.set_logging_level("debug")
                    await stays.set_logging_level("error")
            await _until(lambda: "setLevel error" in _logged(log))
            listed = await stays.list_tools()  # the one left is served as before
            assert listed.tools[0].name == "run_code"
        assert [line for line in _logged(log) if line.startswith("setLevel")] == [
            "setLevel debug", "setLevel error"]
    finally:
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


# -- 3. tools/list_changed only to clients that listed ------------------------------------


async def test_list_changed_goes_only_to_clients_that_listed_tools(tmp_path: Path) -> None:
    """Every handshake-era client got ``notifications/tools/list_changed`` whenever an
    upstream went down or came back, whether it had listed tools or not (and whether the
    list had changed or not)."""
    changes: dict[str, int] = {"listed": 0, "silent": 0}

    def counter(who: str) -> Any:
        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                changes[who] += 1
        return on_message

    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor, backoff=(0.05, 0.05)
    ) as gateway:
        server = GatewayServer(gateway)
        if True:
            # the silent client initializes first: it would be told first
            async with Client(server.server, mode="legacy",
                              message_handler=counter("silent")) as silent, Client(
                    server.server, mode="legacy", message_handler=counter("listed")) as listed:
                await listed.list_tools()
                died = await silent.call_tool("run_code", {"code": "await tools.raw.die()"})
                assert died.is_error
                await _until(lambda: gateway.status()[0].restarts == 1
                             and gateway.status()[0].state == "up")
                # a real change: a new tool
                @cm.tool
                def added() -> str:
                    """A tool registered late."""
                    return "here"

                gateway.registry.register(added)
                gateway.changed()
                await _until(lambda: changes["listed"] == 1)
                assert changes == {"listed": 1, "silent": 0}
                assert "added" in ((await listed.list_tools()).tools[0].description or "")


# -- 4. progress names the tool as the script does ----------------------------------------


async def test_progress_names_an_upstream_tool_as_the_script_calls_it(tmp_path: Path) -> None:
    """Progress said ``long-running`` (the wire name) for ``tools.raw.long_running``."""
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    relayed: list[tuple[float, float | None, str | None]] = []

    async def on_direct(progress: float, total: float | None, message: str | None) -> None:
        relayed.append((progress, total, message))

    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor
    ) as gateway, Client(GatewayServer(gateway, expose_upstream=True).server) as client:
        result = await client.call_tool(
            "run_code", {"code": "await tools.raw.long_running()"}, progress_callback=on_progress)
        direct = await client.call_tool("long-running", {}, progress_callback=on_direct)
    assert not result.is_error, _text(result)
    assert messages[:3] == [
        "call 1: raw.long_running started",
        "call 1: raw.long_running reports 1/2: half way",
        "call 1: raw.long_running reports 2/2",
    ]
    assert messages[3].startswith("call 1: raw.long_running ok in ")
    # a direct call (--expose-upstream) relays the upstream's own progress as it sent it
    # (before: none reached the client)
    assert not direct.is_error, _text(direct)
    assert relayed == [(1, 2, "half way"), (2, 2, None)]


# -- 5. a failed call reaches the client as the upstream answered it ----------------------


async def test_an_upstream_errors_details_reach_the_script_and_the_client(
        tmp_path: Path) -> None:
    """An ``isError`` result's ``structuredContent`` (the error's details as data) was
    dropped: a script read only the texts and a direct call relayed only the content; so was
    an object an upstream gave without an output schema (MCP allows both)."""
    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor
    ) as gateway, Client(GatewayServer(gateway, expose_upstream=True).server) as client:
        run = await client.call_tool("run_code", {"code": (
            "try:\n    await tools.raw.refused()\n"
            "except ToolCallError as e:\n    r = e.message\nr")})
        refused = await client.call_tool("refused", {})
        data = await client.call_tool("data", {})
        # an output schema, a text answer: the client raised RuntimeError, content unread
        typed = await client.call_tool("typed_text", {})
        script = await gateway.mode.run("await tools.raw.typed_text()")
    assert _text(run).startswith(
        'value: "quota exceeded\\nretry after 30 s\\n{\\"code\\":429,\\"retryAfter\\":30}"')
    assert refused.is_error
    assert [_text(refused), refused.structured_content] == [
        "quota exceeded\nretry after 30 s", {"code": 429, "retryAfter": 30}]
    assert [data.is_error, _text(data), data.structured_content] == [False, "n is 1", {"n": 1}]
    assert typed.is_error
    assert _text(typed) == (
        "typed_text: fine\n'typed_text' declares an output schema but answered without"
        " structured content (MCP requires it): the text above is all it sent")
    assert script.value == "typed_text: fine"


async def test_an_sdk_upstreams_failures_reach_the_script_as_it_sent_them() -> None:
    """The MCP SDK answers a crash (any exception but its ``ToolError``) with only
    ``Error executing tool <name>`` (the exception stays in the upstream's log, on serve's
    stderr): that text, and a ``ToolError``'s whole text, are what the script reads."""
    config = {"mcpServers": {"failing": {"command": PY, "args": [SDK_ERRORS]}}}
    async with cm.InProcessExecutor() as executor, Gateway(
            load_config(config), executor=executor) as gateway:
        run = await gateway.mode.run(
            "said = []\n"
            "for call in (tools.failing.crash, tools.failing.refuse):\n"
            "    try:\n        await call(table='users')\n"
            "    except ToolCallError as e:\n        said.append(e.message)\n"
            "said")
    assert run.value == ["Error executing tool crash",
                         "Error executing tool refuse: no access to users (read-only)"]


# -- 6. a run that ends stops its upstream calls at once ----------------------------------


async def test_a_run_that_ends_cancels_its_upstream_call_without_waiting(
        tmp_path: Path) -> None:
    """The MCP handler did not watch its signal: a run that timed out (or was cancelled)
    waited the whole grace a handler has to stop by itself (1 s by default) before the
    upstream was sent ``notifications/cancelled``. With a grace of 10 minutes the run
    still ends at its timeout and the upstream is told."""
    log = tmp_path / "raw.log"
    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(log)), executor=executor, limits=Limits(timeout=0.3)
    ) as gateway:
        gateway.mode.cancel_grace = 600.0
        with anyio.fail_after(60):
            run = await gateway.mode.run("await tools.raw.hang()")
            await _until(lambda: any(line.startswith("cancelled ") for line in _logged(log)))
        assert run.error is not None and run.error.limit == "timeout", run.error
        after = await gateway.mode.run("await tools.raw.ok()")
        assert after.value == "ok: fine"
