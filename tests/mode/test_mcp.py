"""MCP servers' tools registered in a registry and called from scripts (live, over stdio)."""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import codemode as cm
from codemode.integrations.mcp import register_mcp_tools

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


@pytest.fixture(scope="module")
async def time_session() -> AsyncIterator[ClientSession]:
    """One live mcp-server-time for the module (each start imports the ``mcp`` SDK: ~2 s CPU).
    Sharing it is sound: the server keeps no state between calls, and every test registers
    its tools into a registry of its own."""
    async with AsyncExitStack() as stack:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"]
        )
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


async def test_script_calls_a_live_mcp_server_through_the_pipeline(
    time_session: ClientSession,
) -> None:
    registry = cm.ToolRegistry()
    server = await register_mcp_tools(registry, time_session, namespace="time")
    assert set(server.names) == {"get_current_time", "convert_time"}
    events: list[cm.ToolEvent] = []
    registry.subscribe(events.append)
    async with cm.CodeMode(registry, executor=cm.InProcessExecutor()) as mode:
        assert "time.get_current_time" in mode.sdk().names.tools
        run = await mode.run(
            "now = await tools.time.get_current_time(timezone='UTC')\n"
            "try:\n"
            "    await tools.time.get_current_time(timezone='Mars/Base')\n"
            "    bad = None\n"
            "except ToolCallError as e:\n"
            "    bad = e.message\n"
            "[now['timezone'], now['day_of_week'] in ('Monday', 'Tuesday', 'Wednesday',\n"
            "  'Thursday', 'Friday', 'Saturday', 'Sunday'), bad]"
        )
    assert run.ok, run.error
    zone, weekday_ok, bad = run.value
    assert zone == "UTC" and weekday_ok
    assert "Mars/Base" in bad
    results = [e for e in events if e.type == "tool/result"]
    assert [(e.name, e.is_error) for e in results] == [
        ("get_current_time", False),
        ("get_current_time", True),
    ]


async def test_invalid_arguments_never_reach_the_server(time_session: ClientSession) -> None:
    registry = cm.ToolRegistry()
    await register_mcp_tools(registry, time_session, namespace="time")
    result = await registry.execute(
        cm.ToolCall(call_id="c", name="get_current_time", arguments={"timezone": 5})
    )
    assert result.is_error and result.error is not None
    assert result.error.kind == "invalid_arguments" and result.error.path == "$.timezone"


async def test_dispose_removes_every_tool_of_the_server(time_session: ClientSession) -> None:
    registry = cm.ToolRegistry()
    server = await register_mcp_tools(registry, time_session, namespace="time")
    server.dispose()
    assert registry.specs() == ()


async def test_registration_is_all_or_nothing(time_session: ClientSession) -> None:
    registry = cm.ToolRegistry()

    async def clash(args: Any) -> str:
        return "local"

    registry.register(cm.define_tool(name="convert_time", execute=clash))
    with pytest.raises(cm.DuplicateToolError):
        await register_mcp_tools(registry, time_session, namespace="time")
    assert [s.name for s in registry.specs()] == ["convert_time"]
    prefixed = await register_mcp_tools(registry, time_session, namespace="time", prefix="t_")
    assert set(prefixed.names) == {"t_get_current_time", "t_convert_time"}
