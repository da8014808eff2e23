from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from codemode import Deny, ExecContext, ToolCall, ToolRegistry, define_tool
from codemode.testing import ScriptedTools, ToolEvents

if TYPE_CHECKING:
    from collections.abc import Mapping


def fan_out_tool(registry: ToolRegistry) -> None:
    """A tool that dispatches nested calls the way ``run_code`` does (parent = its token)."""

    async def fan_out(args: Mapping[str, Any], ctx: ExecContext) -> list[Any]:
        ctx.progress({"started": len(args["numbers"])})
        out = []
        for n, number in enumerate(args["numbers"], start=1):
            result = await registry.execute(ToolCall(
                call_id=f"{ctx.call_id}:code:{n}", name="get_issue",
                arguments={"number": number, "tags": ["x"]}, parent=ctx.token))
            out.append(result.structured)
        return out

    registry.register(define_tool(
        name="fan_out", parameters={"numbers": {"type": "array", "required": True}},
        execute=fan_out))


async def run_fan_out(registry: ToolRegistry, numbers: list[int], call_id: str = "outer") -> Any:
    return await registry.execute(ToolCall(call_id=call_id, name="fan_out",
                                           arguments={"numbers": numbers}))


@pytest.fixture
def fan_out(tool_registry: ToolRegistry, scripted_tools: ScriptedTools) -> ToolRegistry:
    fan_out_tool(tool_registry)
    scripted_tools.add("get_issue", default=lambda args: {"n": args["number"]})
    return tool_registry


async def test_nested_calls_name_the_outer_token_as_parent(fan_out: ToolRegistry,
                                                           tool_events: ToolEvents) -> None:
    await run_fan_out(fan_out, [3, 4])
    outer = tool_events.token_of("outer")
    nested = tool_events.assert_parent("outer:code:", outer)
    assert [e.call_id for e in nested] == ["outer:code:1", "outer:code:2"]
    assert tool_events.children(outer) == nested
    assert tool_events.names() == ["fan_out", "get_issue", "get_issue"]
    tool_events.assert_complete()
    tool_events.assert_no_errors()


async def test_assert_parent_names_the_offending_calls(fan_out: ToolRegistry,
                                                       tool_events: ToolEvents) -> None:
    await run_fan_out(fan_out, [1], call_id="a")
    await run_fan_out(fan_out, [2], call_id="b")
    with pytest.raises(AssertionError, match=r"a:code:1 \(parent=") as info:
        tool_events.assert_parent("a:code:", tool_events.token_of("b"))
    assert "recorded events:" in str(info.value) and "call   fan_out id=a" in str(info.value)
    with pytest.raises(AssertionError, match="no call has a call_id starting with 'c:'"):
        tool_events.assert_parent("c:", tool_events.token_of("a"))


@pytest.mark.parametrize(("times", "with_arguments", "ok"), [
    (None, None, True),
    (2, None, True),
    (3, None, False),
    (1, {"number": 4}, True),
    (2, {"tags": ["x"]}, True),
    (None, {"number": 5}, False),
    (0, {"number": 5}, True),
])
async def test_assert_called(fan_out: ToolRegistry, tool_events: ToolEvents, times: int | None,
                             with_arguments: dict[str, Any] | None, ok: bool) -> None:
    await run_fan_out(fan_out, [3, 4])
    if ok:
        found = tool_events.assert_called("get_issue", times=times, with_arguments=with_arguments)
        assert all(e.type == "tool/call" and e.name == "get_issue" for e in found)
    else:
        with pytest.raises(AssertionError, match="'get_issue'"):
            tool_events.assert_called("get_issue", times=times, with_arguments=with_arguments)


async def test_results_updates_and_errors_are_filterable(
        tool_registry: ToolRegistry, fan_out: ToolRegistry, tool_events: ToolEvents) -> None:
    tool_registry.pre_execute(lambda ctx: Deny("no odd issues")
                              if ctx.name == "get_issue" and ctx.arguments["number"] % 2 else None)
    await run_fan_out(fan_out, [1, 2, 3])
    failed = tool_events.results(is_error=True)
    assert [e.call_id for e in failed] == ["outer:code:1", "outer:code:3"]
    assert all("no odd issues" in (e.error or "") for e in failed)
    assert [e.call_id for e in tool_events.results("get_issue", is_error=False)] == ["outer:code:2"]
    assert [e.data for e in tool_events.updates("fan_out")] == [{"started": 3}]
    assert tool_events.result_of("outer").is_error is False
    assert tool_events.arguments("get_issue")[0] == {"number": 1, "tags": ["x"]}
    with pytest.raises(AssertionError, match="2 call\\(s\\) failed"):
        tool_events.assert_no_errors()
    tool_events.assert_not_called("delete_file")
    with pytest.raises(AssertionError, match="expected none"):
        tool_events.assert_not_called("get_issue")


async def test_plain_recorder_without_pytest_fixtures() -> None:
    registry = ToolRegistry()
    ScriptedTools(registry).add("ping", default="pong")
    events = ToolEvents(registry)
    await registry.execute(ToolCall(call_id="1", name="ping"))
    events.close()
    await registry.execute(ToolCall(call_id="2", name="ping"))
    assert [(e.type, e.call_id) for e in events] == [("tool/call", "1"), ("tool/result", "1")]
    events.clear()
    assert len(events) == 0


async def test_max_in_flight_counts_overlap_from_event_order(
        tool_registry: ToolRegistry, scripted_tools: ScriptedTools,
        tool_events: ToolEvents) -> None:
    import anyio

    release = anyio.Event()

    async def wait(args: dict[str, Any]) -> str:
        await release.wait()
        return "done"

    scripted_tools.add("slow", default=wait)
    async with anyio.create_task_group() as tg:
        for n in range(3):
            tg.start_soon(tool_registry.execute, ToolCall(call_id=f"s{n}", name="slow"))
        await anyio.wait_all_tasks_blocked()
        release.set()
    await tool_registry.execute(ToolCall(call_id="after", name="slow"))
    assert tool_events.max_in_flight("slow") == 3
    assert tool_events.max_in_flight("other") == 0
    tool_events.assert_complete()
