"""Fixtures for scripts, used the way a harness developer tests a script in CI."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from codemode import Deny, ExecContext
from codemode.testing import ToolFailure, assert_script_ok

if TYPE_CHECKING:
    from codemode import CodeMode, ToolRegistry
    from codemode.sandbox import Limits
    from codemode.testing import RunCode, ScriptedTools, ToolEvents

GET_ISSUE = {
    "type": "object",
    "properties": {"number": {"type": "integer", "description": "Issue number."}},
    "required": ["number"],
    "additionalProperties": False,
}

TRIAGE = """
import asyncio
issues = await tools.search_issues(query="label:bug")
details = await asyncio.gather(*[tools.get_issue(number=i["number"]) for i in issues["items"]])
{"open": sorted(d["title"] for d in details if d["state"] == "open")}
"""


@pytest.fixture
def issues(scripted_tools: ScriptedTools) -> ScriptedTools:
    scripted_tools.add("search_issues", parameters={"query": {"type": "string", "required": True}},
                       results=[{"items": [{"number": 1}, {"number": 2}]}])
    scripted_tools.add("get_issue", parameters=GET_ISSUE,
                       default=lambda args: {"title": f"bug {args['number']}",
                                             "state": "open" if args["number"] == 1 else "closed"})
    return scripted_tools


async def test_script_against_scripted_tools(issues: ScriptedTools, code_mode: CodeMode,
                                             tool_events: ToolEvents) -> None:
    result = await code_mode.run(TRIAGE)
    assert assert_script_ok(result) == {"open": ["bug 1"]}
    assert sorted(c.arguments["number"] for c in issues["get_issue"].calls) == [1, 2]
    tool_events.assert_called("search_issues", times=1, with_arguments={"query": "label:bug"})
    tool_events.assert_called("get_issue", times=2)
    tool_events.assert_complete()


async def test_run_code_nests_calls_under_its_token(issues: ScriptedTools, run_code: RunCode,
                                                    tool_events: ToolEvents) -> None:
    result = await run_code(TRIAGE, call_id="c7")
    assert not result.is_error, result.text
    assert result.text.startswith('value: {"open": ["bug 1"]}')
    nested = tool_events.assert_parent("c7:code:", tool_events.token_of("c7"))
    assert sorted(e.name for e in nested) == ["get_issue", "get_issue", "search_issues"]
    assert all(c.parent == tool_events.token_of("c7") for c in issues.calls())



@pytest.mark.parametrize("entry", ["code_mode", "run_code"])
async def test_the_kit_preflights_before_any_scripted_call(
        issues: ScriptedTools, tool_events: ToolEvents, request: pytest.FixtureRequest,
        entry: str) -> None:
    script = 'await tools.search_issues(query="x")\nawait tools.get_issue(numbr=1)'
    if entry == "code_mode":
        run = await request.getfixturevalue("code_mode").run(script)
        assert run.error is not None
        kind, line, message = run.error.type, run.error.line, run.error.message
    else:
        result = await request.getfixturevalue("run_code")(script, call_id="c1")
        assert result.is_error and result.meta is not None
        error = result.meta["error"]
        kind, line, message = error["type"], error["line"], error["message"]
    assert (kind, line) == ("PreflightError", 2)
    assert "tools.get_issue" in message and "numbr" in message
    assert issues.calls() == []
    assert [e.name for e in tool_events.events if e.type == "tool/call"] == (
        [] if entry == "code_mode" else ["run_code"])
    assert issues["search_issues"].remaining == 1


async def test_fakes_without_a_schema_take_any_keywords(scripted_tools: ScriptedTools,
                                                        code_mode: CodeMode) -> None:
    anything = scripted_tools.add("anything", default="ok")
    result = await code_mode.run('await tools.anything(query="q", limit=3)')
    assert assert_script_ok(result) == "ok"
    assert anything.last_call.arguments == {"query": "q", "limit": 3}


async def test_canned_failure_is_a_catchable_tool_call_error(
        scripted_tools: ScriptedTools, code_mode: CodeMode) -> None:
    scripted_tools.add("get_issue", parameters=GET_ISSUE,
                       results=[{"title": "ok"}, ToolFailure("issue 2 is gone")])
    result = await code_mode.run("""
out = []
for n in [1, 2]:
    try:
        out.append((await tools.get_issue(number=n))["title"])
    except ToolCallError as e:
        out.append(e.tool + ": " + e.message)
out
""")
    assert assert_script_ok(result) == ["ok", "get_issue: issue 2 is gone"]


async def test_policy_denies_calls_from_code(tool_registry: ToolRegistry,
                                             scripted_tools: ScriptedTools, code_mode: CodeMode,
                                             tool_events: ToolEvents) -> None:
    deleted = scripted_tools.add("delete_file", parameters={"path": {"type": "string"}},
                                 default={"deleted": True})

    @tool_registry.pre_execute
    def no_deletes(ctx: ExecContext) -> Deny | None:
        return Deny("read-only workspace") if ctx.name == "delete_file" else None

    # a call known before the run is refused by the policy preflight: nothing is dispatched
    refused = await code_mode.run('await tools.delete_file(path="a.txt")')
    assert refused.error is not None and refused.error.type == "PreflightError"
    assert "read-only workspace" in refused.error.message
    assert tool_events.results("delete_file") == []
    # one whose arguments are only known at run time is denied when it is made
    result = await code_mode.run('path = "".join(["a", ".txt"])\n'
                                 'await tools.delete_file(path=path)')
    assert result.error is not None and result.error.type == "ToolCallError"
    assert "read-only workspace" in result.error.message
    assert deleted.calls == []
    assert [e.error for e in tool_events.results("delete_file", is_error=True)] == [
        "call to 'delete_file' denied: read-only workspace"]


class TestLimitsOverride:
    """A conftest or class can override ``code_mode_limits`` for its tests."""

    @pytest.fixture
    def code_mode_limits(self) -> Limits:
        from codemode.sandbox import Limits

        return Limits(timeout=5.0, calls=2)

    async def test_call_limit_applies(self, scripted_tools: ScriptedTools,
                                      code_mode: CodeMode) -> None:
        scripted_tools.add("ping", default="pong")
        result = await code_mode.run("[await tools.ping() for _ in range(3)]")
        assert result.error is not None and result.error.limit == "calls"
        assert code_mode.limits.calls == 2


def test_prompt_and_check_work_in_sync_tests(issues: ScriptedTools, code_mode: CodeMode) -> None:
    assert "get_issue" in code_mode.prompt()
    problems = code_mode.check("await tools.get_isue(number=1)")
    assert problems and "get_issue" in problems[0].message
    issues.dispose()
    assert "get_issue" not in code_mode.prompt()


def test_assert_script_ok_shows_the_error(issues: ScriptedTools) -> None:
    from codemode.sandbox import ScriptError, ScriptResult

    failed = ScriptResult(error=ScriptError(type="ValueError", message="bad", line=3),
                          output="note\n")
    with pytest.raises(AssertionError, match=r"(?s)line 3: ValueError: bad.*output:\nnote"):
        assert_script_ok(failed)
