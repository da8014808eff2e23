from __future__ import annotations

from typing import Any

import pytest

from codemode import ToolCall, ToolRegistry, ToolResult
from codemode.testing import ScriptedTools, ToolFailure

GET_ISSUE = {
    "type": "object",
    "properties": {"number": {"type": "integer"}, "labels": {"type": "array"}},
    "required": ["number"],
    "additionalProperties": False,
}


async def call(registry: ToolRegistry, name: str, call_id: str = "c1",
               **arguments: Any) -> ToolResult:
    return await registry.execute(ToolCall(call_id=call_id, name=name, arguments=arguments))


async def test_results_are_served_in_order_and_calls_recorded(
        tool_registry: ToolRegistry, scripted_tools: ScriptedTools) -> None:
    issue = scripted_tools.add("get_issue", parameters=GET_ISSUE,
                               results=[{"n": 1}, "plain text"])
    first = await call(tool_registry, "get_issue", "a", number=1, labels=["bug"])
    second = await call(tool_registry, "get_issue", "b", number=2)
    assert (first.structured, first.is_error) == ({"n": 1}, False)
    assert (second.text, second.structured) == ("plain text", None)
    assert [(c.call_id, c.arguments) for c in issue.calls] == [
        ("a", {"number": 1, "labels": ["bug"]}), ("b", {"number": 2})]
    assert issue.calls[0].arguments["labels"].append("mutable") is None  # a detached plain copy
    assert issue.remaining == 0
    assert issue.last_call.call_id == "b"


@pytest.mark.parametrize(("canned", "text", "kind"), [
    (ToolFailure("issue 7 is gone"), "issue 7 is gone", "handler_error"),
    (ValueError("bad number"), "ValueError: bad number", "handler_error"),
    (lambda args: ToolFailure(f"no issue {args['number']}"), "no issue 7", "handler_error"),
])
async def test_canned_failures_become_error_results(
        tool_registry: ToolRegistry, scripted_tools: ScriptedTools, canned: Any, text: str,
        kind: str) -> None:
    scripted_tools.add("get_issue", parameters=GET_ISSUE, results=[canned])
    result = await call(tool_registry, "get_issue", number=7)
    assert result.is_error
    assert result.text == text
    assert result.error is not None and result.error.kind == kind


async def test_failure_meta_stays_host_side(tool_registry: ToolRegistry,
                                            scripted_tools: ScriptedTools) -> None:
    scripted_tools.add("get_issue", results=[ToolFailure("rate limited", meta={"retry": 3})])
    result = await call(tool_registry, "get_issue")
    assert (result.is_error, result.text, result.meta) == (True, "rate limited", {"retry": 3})


async def test_callables_compute_results_from_arguments(
        tool_registry: ToolRegistry, scripted_tools: ScriptedTools) -> None:
    async def later(args: dict[str, Any]) -> dict[str, Any]:
        return {"async": args["number"] * 10}

    scripted_tools.add("get_issue", parameters=GET_ISSUE,
                       results=[lambda args: {"sync": args["number"]}, later])
    assert (await call(tool_registry, "get_issue", number=2)).structured == {"sync": 2}
    assert (await call(tool_registry, "get_issue", number=3)).structured == {"async": 30}


async def test_default_answers_after_the_queue(tool_registry: ToolRegistry,
                                               scripted_tools: ScriptedTools) -> None:
    tool = scripted_tools.add("ping", results=["first"], default="again")
    texts = [(await call(tool_registry, "ping")).text for _ in range(3)]
    assert texts == ["first", "again", "again"]
    assert tool.dry_calls == []


async def test_push_queues_more_results(tool_registry: ToolRegistry,
                                        scripted_tools: ScriptedTools) -> None:
    scripted_tools.add("ping").push("a", "b")
    assert [(await call(tool_registry, "ping")).text for _ in range(2)] == ["a", "b"]


async def test_a_dry_queue_fails_the_call_and_check() -> None:
    registry = ToolRegistry()
    kit = ScriptedTools(registry)
    kit.add("get_issue", results=[{"n": 1}])
    await call(registry, "get_issue", "c1")
    result = await call(registry, "get_issue", "c2", number=2)
    assert result.is_error
    assert "scripted tool 'get_issue' has no result left for call #2" in result.text
    assert "call_id 'c2'" in result.text and "1 result(s) were scripted" in result.text
    assert [c.call_id for c in kit.dry_calls] == ["c2"]
    with pytest.raises(AssertionError, match="scripted tools ran dry"):
        kit.check()


async def test_invalid_arguments_never_reach_the_fake(tool_registry: ToolRegistry,
                                                      scripted_tools: ScriptedTools) -> None:
    tool = scripted_tools.add("get_issue", parameters=GET_ISSUE, results=[{"n": 1}])
    result = await call(tool_registry, "get_issue", number="seven")
    assert result.error is not None
    assert (result.error.kind, result.error.path) == ("invalid_arguments", "$.number")
    assert tool.calls == [] and tool.remaining == 1


async def test_calls_across_tools_keep_arrival_order(tool_registry: ToolRegistry,
                                                     scripted_tools: ScriptedTools) -> None:
    scripted_tools.add("a", default=1)
    scripted_tools.add("b", default=2)
    for name in ("a", "b", "a"):
        await call(tool_registry, name)
    assert [(c.name, c.sequence) for c in scripted_tools.calls()] == [("a", 1), ("b", 2), ("a", 3)]
    assert len(scripted_tools.calls("a")) == 2
    assert scripted_tools.calls(where=lambda c: c.sequence > 1)[0].name == "b"


def test_assert_consumed_reports_unused_results(scripted_tools: ScriptedTools) -> None:
    scripted_tools.add("a", results=[1, 2])
    with pytest.raises(AssertionError, match="a: 2 left"):
        scripted_tools.assert_consumed()


def test_dispose_unregisters_every_fake(tool_registry: ToolRegistry,
                                        scripted_tools: ScriptedTools) -> None:
    scripted_tools.add("a")
    scripted_tools.add("b", visible_in_code=False)
    assert [s.name for s in tool_registry.specs()] == ["a", "b"]
    assert tool_registry.get("b").spec.visible_in_code is False
    scripted_tools.dispose()
    assert len(tool_registry) == 0


def test_unknown_fake_lists_the_added_ones(scripted_tools: ScriptedTools) -> None:
    scripted_tools.add("a")
    with pytest.raises(KeyError, match=r"no scripted tool 'b'; added: \['a'\]"):
        scripted_tools["b"]


async def test_fake_copies_a_real_tools_spec(tool_registry: ToolRegistry,
                                             scripted_tools: ScriptedTools) -> None:
    from codemode import tool

    @tool(output_schema={"type": "object", "properties": {"title": {"type": "string"}}})
    def get_issue(number: int) -> dict[str, Any]:
        """Fetch one issue.

        Args:
            number: Issue number.
        """
        raise AssertionError("the real handler must not run")

    fake = scripted_tools.fake(get_issue, results=[{"title": "canned"}])
    assert tool_registry.get("get_issue").spec == get_issue.spec
    bad = await call(tool_registry, "get_issue", number="x")
    assert bad.error is not None and bad.error.path == "$.number"
    good = await call(tool_registry, "get_issue", number=4)
    assert good.structured == {"title": "canned"}
    assert fake.last_call.arguments == {"number": 4}


async def test_fake_can_shadow_a_registered_tool(tool_registry: ToolRegistry,
                                                 scripted_tools: ScriptedTools) -> None:
    real = scripted_tools.add("ping", default="real")
    scripted_tools.fake(real.registration.tool, default="fake", replace=True)
    assert (await call(tool_registry, "ping")).text == "fake"


def test_fake_keeps_an_empty_description_and_the_execution_mode(
        tool_registry: ToolRegistry, scripted_tools: ScriptedTools) -> None:
    from codemode import define_tool

    real = define_tool(name="flush", description="", execute=lambda args: "real",
                       execution_mode="sequential")
    scripted_tools.fake(real, results=["canned"])
    registered = tool_registry.get("flush")
    assert registered.spec == real.spec
    assert registered.execution_mode == "sequential"
