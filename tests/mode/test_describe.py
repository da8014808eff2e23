"""``describe_tools``: the whole text the prompt cut, one call away."""

from __future__ import annotations

from typing import Any

import pytest

import codemode as cm
from sdk_gen._text import TOOL_LIMIT, TRUNCATED

LONG = " ".join(f"Sentence {n} explains one more detail of the search." for n in range(30))


def _noop(args: Any) -> str:
    return "ok"


@pytest.fixture
def mode() -> cm.CodeMode:
    registry = cm.ToolRegistry()
    registry.register(
        cm.define_tool(
            name="search-issues",
            description=LONG,
            parameters={
                "type": "object",
                "properties": {"from": {"type": "integer", "description": "Offset."}},
            },
            output_schema={"type": "object", "properties": {"total": {"type": "integer"}}},
            execute=_noop,
        )
    )
    registry.register(
        cm.define_tool(name="get_issue", namespace="github", description="One.", execute=_noop)
    )
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor())
    registry.register(mode.as_tool())
    registry.register(mode.describe_tool())
    return mode


async def describe(mode: cm.CodeMode, *tools: str) -> cm.ToolResult:
    call = cm.ToolCall(call_id="d1", name="describe_tools", arguments={"tools": list(tools)})
    return await mode.registry.execute(call)


async def test_returns_the_whole_description_the_prompt_cut(mode: cm.CodeMode) -> None:
    assert len(LONG) > TOOL_LIMIT
    assert f"search_issues: {LONG[:40]}" in mode.prompt()
    assert LONG not in mode.prompt() and TRUNCATED in mode.prompt()
    result = await describe(mode, "search_issues")
    assert not result.is_error, result.text
    [entry] = result.structured
    assert entry["tool"] == "search_issues" and entry["name"] == "search-issues"
    assert entry["description"] == LONG
    offset = {"type": "integer", "description": "Offset."}
    assert entry["parameters"]["properties"]["from"] == offset
    assert entry["python_arguments"] == {"from_": "from"}
    assert entry["output_schema"]["properties"] == {"total": {"type": "integer"}}


@pytest.mark.parametrize(
    ("asked", "tools"),
    [
        (["github.get_issue"], ["github.get_issue"]),
        (["get_issue"], ["github.get_issue"]),
        (["search-issues", "search_issues"], ["search_issues"]),
        (["get_issue", "get_issue"], ["github.get_issue"]),
    ],
    ids=["sdk-path", "wire-name", "both-spellings-once", "repeats-once"],
)
async def test_finds_tools_by_sdk_path_or_wire_name(
    mode: cm.CodeMode, asked: list[str], tools: list[str]
) -> None:
    result = await describe(mode, *asked)
    assert not result.is_error, result.text
    assert [entry["tool"] for entry in result.structured] == tools


async def test_unknown_names_fail_the_call_and_are_all_listed(mode: cm.CodeMode) -> None:
    result = await describe(mode, "search_issues", "nope", "run_code")
    assert result.is_error
    assert "'nope'" in result.text and "'run_code'" in result.text
    assert LONG not in result.text


async def test_is_not_callable_from_scripts(mode: cm.CodeMode) -> None:
    assert "describe_tools" not in mode.sdk().names.tools
    run = await mode.run("await tools.describe_tools(tools=['search_issues'])")
    assert run.error is not None and run.error.type == "PreflightError"


def test_prompt_points_at_the_tool_only_once_it_is_registered() -> None:
    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="ping", description="Ping.", execute=_noop))
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor())
    assert "describe_tools" not in mode.prompt()
    tool = mode.describe_tool()
    assert "describe_tools" not in mode.prompt()
    handle = registry.register(tool)
    assert "call the `describe_tools` tool" in mode.prompt()
    assert mode.prompt().index("describe_tools") < mode.prompt().index("\nping: Ping.")
    handle.dispose()
    assert "describe_tools" not in mode.prompt()
