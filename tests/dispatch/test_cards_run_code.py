"""``run_code``'s own cards: the script while it runs, the outcome after, its nested calls
under it, live and replayed from a session log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

SCRIPT = """\
for who in ["ann", "bob"]:
    await tools.send(to=who)
print("sent two")
"done"
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def outbox() -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def send(args: Any) -> str:
        if args["to"] == "nobody":
            raise ValueError("no such person")
        return f"sent to {args['to']}"

    reg.register(cm.define_tool(
        name="send", execute=send, parameters={"to": {"type": "string", "required": True}},
        present_call=lambda args: cm.GenericCard(title=f"Send to {args['to']}", kind="other"),
        present_result=lambda args, result: cm.GenericCard(
            title=f"{'Failed' if result.is_error else 'Sent'}: {args['to']}")))
    return reg


async def run_code(reg: cm.ToolRegistry, code: str, call_id: str,
                   events: list[cm.ToolEvent], journal: cm.Journal | None = None) -> cm.ToolResult:
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(reg, executor=executor)
        reg.register(mode.as_tool(journal=journal), replace=True)
        stop = reg.subscribe(events.append)
        try:
            return await reg.execute(cm.ToolCall(call_id=call_id, name="run_code",
                                                 arguments={"code": code}))
        finally:
            stop()


def test_the_pending_card_is_the_script() -> None:
    tool = cm.CodeMode(outbox()).as_tool()
    card = cm.present_call(tool, {"code": SCRIPT, "timeout": 5})
    assert card is not None and card.to_json() == {
        "card": "generic", "title": "Run a script (4 lines)", "kind": "execute",
        "content": SCRIPT}
    one = cm.present_call(tool, {"code": "1"})
    assert one is not None and one.title == "Run a script (1 line)"


@pytest.mark.parametrize("args", [{"script": "1"}, {"code": ""}, {"code": 1}, "1", None])
def test_malformed_arguments_fall_back(args: Any) -> None:
    tool = cm.CodeMode(outbox()).as_tool()
    assert cm.present_call(tool, args) is None
    assert cm.present_result(tool, args, cm.CardResult(is_error=True, error="x")) is None
    assert cm.fallback_card("run_code", args).to_json()["title"] == "run_code"


async def test_the_finished_card_shows_value_output_and_calls_with_the_calls_under_it() -> None:
    reg = outbox()
    events: list[cm.ToolEvent] = []
    result = await run_code(reg, SCRIPT, "r1", events)
    assert not result.is_error, result.text
    [node] = cm.render_session(events, reg.get)
    assert node.to_json() == {
        "call_id": "r1", "name": "run_code",
        "call": {"card": "generic", "title": "Run a script (4 lines)", "kind": "execute",
                 "content": SCRIPT},
        "result": {"card": "generic", "title": "Script finished · 2 tool calls",
                   "kind": "execute",
                   "content": 'value: "done"\noutput:\nsent two\n'
                              "calls: 2 tool call(s): send ×2"},
        "children": [
            {"call_id": "r1:code:1", "name": "send",
             "call": {"card": "generic", "title": "Send to ann", "kind": "other"},
             "result": {"card": "generic", "title": "Sent: ann"}},
            {"call_id": "r1:code:2", "name": "send",
             "call": {"card": "generic", "title": "Send to bob", "kind": "other"},
             "result": {"card": "generic", "title": "Sent: bob"}},
        ],
    }


async def test_a_failed_script_names_the_error_and_the_failed_call() -> None:
    reg = outbox()
    events: list[cm.ToolEvent] = []
    script = 'await tools.send(to="ann")\nawait tools.send(to="nobody")\n'
    result = await run_code(reg, script, "r2", events)
    assert result.is_error
    [node] = cm.render_session(events, reg.get)
    assert node.result is not None and node.result.to_json() == {
        "card": "generic", "kind": "execute",
        "title": "Script failed: ToolCallError at line 2 · 2 tool calls (1 failed)",
        "content": "error: ToolCallError at line 2: send: ValueError: no such person\n"
                   "calls: 2 tool call(s): send ×2; 1 failed"}
    assert [child.result.to_json()["title"] for child in node.children
            if child.result is not None] == ["Sent: ann", "Failed: nobody"]


async def test_a_logged_session_with_run_code_re_renders_identically(tmp_path: Path) -> None:
    reg = outbox()
    path = tmp_path / "session.jsonl"
    journal = cm.Journal()
    events: list[cm.ToolEvent] = []
    with cm.JsonlSessionLog(path) as log:
        stop = reg.subscribe(log)
        await run_code(reg, SCRIPT + "1 / 0\n", "r3", events, journal)
        await run_code(reg, SCRIPT, "r4", events, journal)  # both sends from the journal
        await run_code(reg, "await tools.send(to=1)", "r5", events)  # refused: bad argument
        stop()
    live = [node.to_json() for node in cm.render_session(events, reg.get)]
    replayed = [node.to_json() for node in cm.render_session(cm.read_session(path), reg.get)]
    assert replayed == live
    assert [node["result"]["title"] for node in live] == [
        "Script failed: ZeroDivisionError at line 5 · 2 tool calls",
        "Script finished · 2 tool calls (2 replayed)",
        "Script failed: PreflightError at line 1 · no tool calls"]
    # the replayed calls are two cards, not one (they share the journal's token)
    assert [child["call"]["title"] for child in live[1]["children"]] == [
        "Send to ann", "Send to bob"]
