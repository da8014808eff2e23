"""Resume when the calls come in another order: a group matches as a multiset, and a call
past the current group is replayed only when the new run proves it concurrent."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

import codemode as cm
from codemode.mode.journal import canonical

if TYPE_CHECKING:
    from pathlib import Path

    from codemode.sandbox import Executor

SEQUENTIAL = """\
await tools.send(to="ann")
await tools.note(text="sent ann")
await tools.send(to="bob")
"""
GATHER = """\
await asyncio.gather(tools.send(to="ann"), tools.note(text="sent ann"), tools.send(to="bob"))
"""
REORDERED = """\
await asyncio.gather(tools.send(to="bob"), tools.send(to="ann"), tools.note(text="sent ann"))
"""


def world() -> tuple[cm.ToolRegistry, list[str]]:
    """Two tools with side effects the tests count."""
    done: list[str] = []
    reg = cm.ToolRegistry()

    async def send(args: Any) -> dict[str, str]:
        done.append(f"send {args['to']}")
        return {"sent": args["to"]}

    async def note(args: Any) -> str:
        done.append(f"note {args['text']}")
        return "noted"

    reg.register(cm.define_tool(name="send", execute=send,
                                parameters={"to": {"type": "string", "required": True}}))
    reg.register(cm.define_tool(name="note", execute=note,
                                parameters={"text": {"type": "string", "required": True}}))
    return reg, done


def groups(journal: cm.Journal) -> list[list[str]]:
    """The journal's calls, grouped as the next run will match them."""
    out: list[list[str]] = []
    last: int | None = None
    for entry in journal.entries:
        call = f"{entry.tool} {json.loads(entry.arguments)}"
        if out and entry.group == last:
            out[-1].append(call)
        else:
            out.append([call])
        last = entry.group
    return out


async def test_sequential_calls_resumed_as_a_reordered_gather_run_once(
        executor: Executor) -> None:
    reg, done = world()
    mode = cm.CodeMode(reg, executor=executor)
    journal = cm.Journal()
    first = await mode.run(SEQUENTIAL + "1 / 0", journal=journal)
    assert first.error is not None and len(groups(journal)) == 3  # recorded one by one
    second = await mode.run(REORDERED + '"done"', journal=journal)
    assert second.error is None, second.error
    assert isinstance(second, cm.RunResult) and second.replayed == (0, 1, 2)
    assert sorted(done) == ["note sent ann", "send ann", "send bob"]  # each exactly once
    # proven concurrent: the next run finds them as one group, a multiset
    assert [sorted(group) for group in groups(journal)] == [
        ["note {'text': 'sent ann'}", "send {'to': 'ann'}", "send {'to': 'bob'}"]]


async def test_a_gather_resumed_reordered_and_then_sequential_runs_once(
        executor: Executor) -> None:
    reg, done = world()
    mode = cm.CodeMode(reg, executor=executor)
    journal = cm.Journal()
    await mode.run(GATHER + "1 / 0", journal=journal)
    reordered = await mode.run(REORDERED + "1 / 0", journal=journal)
    assert isinstance(reordered, cm.RunResult) and reordered.replayed == (0, 1, 2)
    back = await mode.run(SEQUENTIAL + '"done"', journal=journal)
    assert back.error is None, back.error
    assert isinstance(back, cm.RunResult) and back.replayed == (0, 1, 2)
    assert sorted(done) == ["note sent ann", "send ann", "send bob"]


async def test_run_code_resumes_a_reordered_gather(executor: Executor) -> None:
    reg, done = world()
    mode = cm.CodeMode(reg, executor=executor)
    reg.register(mode.as_tool(journal=cm.Journal()))
    first = await reg.execute(cm.ToolCall(call_id="r1", name="run_code",
                                          arguments={"code": SEQUENTIAL + "1 / 0"}))
    assert first.is_error
    second = await reg.execute(cm.ToolCall(call_id="r2", name="run_code",
                                           arguments={"code": REORDERED + '"done"'}))
    assert not second.is_error, second.text
    assert second.meta is not None and list(second.meta["replayed"]) == [0, 1, 2]
    assert sorted(done) == ["note sent ann", "send ann", "send bob"]


async def test_sequential_calls_in_another_order_run_live() -> None:
    """Nothing arrives while the first is held (the script waits for it): not proven."""
    reg, done = world()
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(reg, executor=executor)
        journal = cm.Journal(reorder_wait=0.05)
        await mode.run(SEQUENTIAL + "1 / 0", journal=journal)
        done.clear()
        swapped = ('await tools.send(to="bob")\nawait tools.note(text="sent ann")\n'
                   'await tools.send(to="ann")\n')
        result = await mode.run(swapped, journal=journal)
    assert isinstance(result, cm.RunResult) and result.replayed == ()
    assert done == ["send bob", "note sent ann", "send ann"]


def recorded(path: Path, calls: list[tuple[str, str]]) -> cm.Journal:
    """A failed run's journal with each call in a group of its own (recorded one by one)."""
    lines = [{"codemode_journal": 1, "registry": "r"}]
    lines += [{"seq": n, "group": n, "tool": tool, "digest": "d", "ok": True,
               "arguments": {"to": to}, "content": [], "structured": {"sent": to},
               "error": None} for n, (tool, to) in enumerate(calls)]
    lines.append({"end": {"failed": True}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return cm.Journal(path, reorder_wait=5.0)


async def test_held_calls_are_released_by_the_calls_they_skipped(tmp_path: Path) -> None:
    journal = recorded(tmp_path / "j.jsonl", [("send", "a"), ("send", "b"), ("send", "c")])
    resume = journal.begin("r")
    answered: dict[str, int | None] = {}

    async def call(to: str) -> None:
        _, _, entry = await resume.start("send", "d", canonical({"to": to}), False)
        answered[to] = None if entry is None else entry.seq

    async with anyio.create_task_group() as tg:  # arrive last-first, as a reversed gather
        for to in "cba":
            tg.start_soon(call, to)
            await anyio.lowlevel.checkpoint()
    assert answered == {"a": 0, "b": 1, "c": 2}
    assert resume.replayed == (0, 1, 2)


async def test_a_hold_that_is_not_proven_ends_the_replay(tmp_path: Path) -> None:
    journal = recorded(tmp_path / "j.jsonl", [("send", "a"), ("send", "b")])
    journal.reorder_wait = 0.01
    resume = journal.begin("r")
    _, _, held = await resume.start("send", "d", '{"to":"b"}', False)
    _, _, after = await resume.start("send", "d", '{"to":"a"}', False)
    assert held is None and after is None and resume.replayed == ()
