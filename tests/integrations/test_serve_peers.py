"""``codemode serve`` with more real MCP peers: the OpenAI Agents SDK's ``MCPServerStdio``
(its own session handling and strict-schema conversion) and the official SDK's client on a
2026-07-28 connection (no ``logging/setLevel``: logs are opted in per request)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import anyio
import pytest
from mcp import Client, types

import codemode as cm
from codemode.integrations.gateway import Gateway, load_config
from codemode.integrations.server import GatewayServer
from tests.integrations.checkout import ENV
from tests.integrations.raw_peer import PY
from tests.integrations.raw_peer import raw_config as _raw

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"



async def test_openai_agents_mcp_server_stdio_lists_and_runs(tmp_path: Path) -> None:
    from agents import Agent
    from agents.mcp import MCPServerStdio, MCPUtil
    from agents.run_context import RunContextWrapper

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(_raw(tmp_path / "raw.log")), encoding="utf-8")
    args = ["-m", "codemode.cli", "serve", "--executor", "inprocess", "--config", str(config)]
    params = {"command": PY, "args": args, "cwd": str(tmp_path), "env": ENV}
    async with MCPServerStdio(params=params, client_session_timeout_seconds=60) as server:
        assert [t.name for t in await server.list_tools()] == [
            "run_code", "search_tools", "describe_tools"]
        agent = Agent(name="coder", mcp_servers=[server])
        tools = await MCPUtil.get_all_function_tools(
            [server], convert_schemas_to_strict=True, run_context=RunContextWrapper(None),
            agent=agent)
        # the schemas survive the conversion to OpenAI's strict mode
        assert [(t.name, t.strict_json_schema) for t in tools] == [
            ("run_code", True), ("search_tools", True), ("describe_tools", True)]
        result = await server.call_tool(
            "run_code", {"code": "await tools.raw.long_running()\nawait tools.raw.ok()"})
        assert not result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert text == ('value: "ok: fine"\n'
                        "calls: 2 tool call(s): raw.long_running ×1, raw.ok ×1")


async def test_a_2026_client_gets_the_upstream_logs_of_its_request(tmp_path: Path) -> None:
    """On 2026-07-28 connections a request opts in to log messages (``_meta``, the client's
    ``log_level``); those logged while it runs ride its stream, at that level and above."""
    got: list[types.LoggingMessageNotificationParams] = []
    two = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)
        if len(got) == 2:
            two.set()

    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(_raw(tmp_path / "raw.log")), executor=executor
    ) as gateway:
        server = GatewayServer(gateway).server
        async with Client(server, log_level="warning", logging_callback=on_log) as client:
            assert client.session.protocol_version == "2026-07-28"  # type: ignore[attr-defined]
            result = await client.call_tool("run_code", {"code": "await tools.raw.log()"})
            assert not result.is_error
            with anyio.fail_after(60):
                await two.wait()
    # debug and info, logged first, were left out
    assert [(p.level, p.logger, p.data) for p in got] == [
        ("warning", "raw.raw-logger", "warning from raw"),
        ("error", "raw.raw-logger", "error from raw"),
    ]
