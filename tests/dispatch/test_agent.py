"""``AgentSession``: what tools inject reaches the harness's next request; disposal is safe."""

from __future__ import annotations

from typing import Any

import pytest

import codemode as cm

pytestmark = pytest.mark.anyio


def _notifier(seen: list[Any]) -> cm.Tool:
    async def notify(args: Any, ctx: cm.ExecContext) -> str:
        seen.append(ctx.session)
        if ctx.session is None:
            return "no session"
        kept = ctx.session.inject(args["text"], source={"kind": "tool", "tool": "notify"})
        return "kept" if kept else "dropped"

    return cm.define_tool(name="notify", parameters={"text": {"type": "string",
                                                              "required": True}},
                          execute=notify)


async def test_a_tool_injects_into_the_calling_session_and_the_harness_drains_it() -> None:
    reg = cm.ToolRegistry()
    seen: list[Any] = []
    reg.register(_notifier(seen))
    session = cm.AgentSession("main")
    events: list[Any] = []
    session.subscribe(events.append)
    result = await reg.execute(cm.ToolCall(call_id="c", name="notify",
                                           arguments={"text": "build finished"}),
                               session=session)
    assert result.text == "kept" and seen == [session]
    assert [e.type for e in events] == ["agent/inject"]
    [injection] = session.pending
    assert (injection.seq, injection.content, injection.source) == (
        1, "build finished", {"kind": "tool", "tool": "notify"})
    assert session.drain() == (injection,)
    assert session.pending == () and session.drain() == ()


async def test_without_a_session_ctx_session_is_none() -> None:
    reg = cm.ToolRegistry()
    seen: list[Any] = []
    reg.register(_notifier(seen))
    result = await reg.execute(cm.ToolCall(call_id="c", name="notify", arguments={"text": "x"}))
    assert result.text == "no session" and seen == [None]


async def test_a_disposed_session_drops_injections_without_raising() -> None:
    reg = cm.ToolRegistry()
    reg.register(_notifier([]))
    session = cm.AgentSession("main")
    events: list[Any] = []
    session.subscribe(events.append)
    cleaned: list[str] = []
    session.on_dispose(lambda: cleaned.append("task cancelled"))
    async with session:
        pass
    assert session.disposed and cleaned == ["task cancelled"]
    result = await reg.execute(cm.ToolCall(call_id="c", name="notify", arguments={"text": "x"}),
                               session=session)
    assert not result.is_error and result.text == "dropped"
    assert session.pending == () and [e.type for e in events] == ["agent/dispose"]
    late: list[str] = []
    session.on_dispose(lambda: late.append("ran at once"))
    assert late == ["ran at once"]


def test_inject_takes_text_only() -> None:
    session = cm.AgentSession()
    with pytest.raises(TypeError):
        session.inject({"not": "text"}, source={"kind": "tool"})  # type: ignore[arg-type]
    assert session.pending == ()
