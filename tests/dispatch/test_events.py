"""Events: one ``tool/call`` and one ``tool/result`` per dispatch, progress between, JSONL log."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm

from .support import Events, call

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def tools(registry: cm.ToolRegistry) -> cm.ToolRegistry:
    async def ok(args: Any, ctx: cm.ExecContext) -> Any:
        return cm.Envelope("fine", meta={"rows": 2})

    async def boom(args: Any, ctx: cm.ExecContext) -> Any:
        raise ValueError("broken")

    async def chatty(args: Any, ctx: cm.ExecContext) -> str:
        for step in range(3):
            ctx.progress({"step": step})
        ctx.progress({1, 2})
        return "done"

    registry.register(cm.define_tool(name="ok", parameters={"n": {"type": "integer"}}, execute=ok))
    registry.register(cm.define_tool(name="boom", execute=boom))
    registry.register(cm.define_tool(name="chatty", execute=chatty))
    registry.pre_execute(lambda ctx: cm.Deny("nope") if ctx.agent == "intruder" else None)
    return registry


@pytest.mark.parametrize(
    ("name", "arguments", "agent", "error"),
    [
        ("ok", {"n": 1}, None, None),
        ("boom", {}, None, "ValueError: broken"),
        ("ok", {"n": "x"}, None, "invalid arguments for 'ok': $.n: 'x' is not of type 'integer'"),
        ("ok", {}, "intruder", "call to 'ok' denied: nope"),
        ("okk", {}, None, "unknown tool 'okk'; did you mean 'ok'?"),
    ],
)
async def test_each_call_emits_one_call_and_one_result_event(
    tools: cm.ToolRegistry,
    events: Events,
    name: str,
    arguments: dict[str, Any],
    agent: str | None,
    error: str | None,
) -> None:
    parent = cm.Token()
    the_call = call(name, arguments, parent=parent, agent=agent)
    result = await tools.execute(the_call)
    assert events.types() == ["tool/call", "tool/result"]
    started, finished = events.all
    for event in (started, finished):
        assert (event.call_id, event.name, event.agent) == (the_call.call_id, name, agent)
        assert event.parent == str(parent)
    assert started.token == finished.token and started.token != str(parent)
    assert started.arguments == arguments
    assert finished.is_error is (error is not None) is result.is_error
    assert finished.error == error
    assert finished.duration is not None and finished.duration > 0
    assert started.time <= finished.time


async def test_result_event_carries_meta(tools: cm.ToolRegistry, events: Events) -> None:
    result = await tools.execute(call("ok", {"n": 1}))
    assert events.of("tool/result")[0].meta == {"rows": 2} == result.meta
    assert events.of("tool/call")[0].parent is None


async def test_progress_events_come_between_call_and_result(
    tools: cm.ToolRegistry, events: Events
) -> None:
    result = await tools.execute(call("chatty"))
    assert events.types() == ["tool/call"] + ["tool/update"] * 4 + ["tool/result"]
    progress = events.of("tool/update")
    assert [p.data for p in progress[:3]] == [{"step": 0}, {"step": 1}, {"step": 2}]
    assert progress[3].data == repr({1, 2})
    assert {p.token for p in progress} == {events.all[0].token}
    assert result.text == "done" and result.structured is None


async def test_progress_without_subscribers_is_a_no_op(tools: cm.ToolRegistry) -> None:
    assert (await tools.execute(call("chatty"))).text == "done"


async def test_nested_calls_name_their_parent_token(
    registry: cm.ToolRegistry, events: Events
) -> None:
    async def leaf(args: Any, ctx: cm.ExecContext) -> str:
        return "leaf"

    async def parent(args: Any, ctx: cm.ExecContext) -> str:
        inner = await registry.execute(cm.ToolCall(call_id="child", name="leaf", parent=ctx.token))
        return f"parent of {inner.text}"

    registry.register(cm.define_tool(name="leaf", execute=leaf))
    registry.register(cm.define_tool(name="parent", execute=parent))
    result = await registry.execute(cm.ToolCall(call_id="top", name="parent"))
    assert result.text == "parent of leaf"
    assert [(e.type, e.call_id) for e in events.all] == [
        ("tool/call", "top"),
        ("tool/call", "child"),
        ("tool/result", "child"),
        ("tool/result", "top"),
    ]
    top, child = events.all[0], events.all[1]
    assert top.parent is None
    assert child.parent == top.token


async def test_hook_crash_still_emits_one_result_event(
    tools: cm.ToolRegistry, events: Events
) -> None:
    def crash(result: cm.ToolResult) -> None:
        raise RuntimeError("observer bug")

    tools.on_result(crash)
    with pytest.raises(RuntimeError, match=r"^observer bug$"):
        await tools.execute(call("ok", {"n": 1}))
    assert events.types() == ["tool/call", "tool/result"]
    assert events.all[1].is_error
    assert events.all[1].error == "internal error: RuntimeError: observer bug"


async def test_non_json_arguments_are_logged_as_text(
    tools: cm.ToolRegistry, events: Events
) -> None:
    await tools.execute(call("ok", {"n": {1}}))
    assert events.all[0].arguments == repr({"n": {1}})


async def test_unsubscribed_subscribers_see_nothing_more(tools: cm.ToolRegistry) -> None:
    seen = Events()
    unsubscribe = tools.subscribe(seen)
    await tools.execute(call("ok", {"n": 1}))
    unsubscribe()
    await tools.execute(call("ok", {"n": 1}))
    assert len(seen.all) == 2


def test_event_to_json_keeps_set_fields() -> None:
    event = cm.ToolEvent(
        type="tool/result",
        call_id="c",
        name="t",
        token="k",
        parent=None,
        agent=None,
        time=1.0,
        is_error=False,
        duration=0.5,
    )
    assert event.to_json() == {
        "type": "tool/result",
        "call_id": "c",
        "name": "t",
        "token": "k",
        "time": 1.0,
        "is_error": False,
        "duration": 0.5,
    }


async def test_jsonl_session_log_writes_parseable_lines(
    tools: cm.ToolRegistry, tmp_path: Path
) -> None:
    path = tmp_path / "session.jsonl"
    with cm.JsonlSessionLog(path) as log:
        tools.subscribe(log)
        await tools.execute(call("ok", {"n": 1}, agent="tester"))
        await tools.execute(call("chatty"))
        await tools.execute(call("boom"))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["type"] for line in lines] == [
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/update",
        "tool/update",
        "tool/update",
        "tool/update",
        "tool/result",
        "tool/call",
        "tool/result",
    ]
    assert lines[0]["arguments"] == {"n": 1} and lines[0]["agent"] == "tester"
    assert lines[1]["meta"] == {"rows": 2} and lines[1]["is_error"] is False
    assert lines[3]["data"] == {"step": 0}
    assert lines[-1]["error"] == "ValueError: broken"
    with pytest.raises(ValueError, match="closed"):
        log(
            cm.ToolEvent(
                type="tool/call",
                call_id="c",
                name="t",
                token="k",
                parent=None,
                agent=None,
                time=0.0,
            )
        )


async def test_jsonl_session_log_appends(tmp_path: Path, tools: cm.ToolRegistry) -> None:
    path = tmp_path / "session.jsonl"
    for _ in range(2):
        log = cm.JsonlSessionLog(path)
        unsubscribe = tools.subscribe(log)
        await tools.execute(call("ok", {"n": 1}))
        unsubscribe()
        log.close()
        log.close()
    assert len(path.read_text(encoding="utf-8").splitlines()) == 4
