"""Resume: a fixed, resubmitted script does not repeat the side effects of the last run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm

if TYPE_CHECKING:
    from pathlib import Path

    from codemode.sandbox import Executor

FAILING = """\
await tools.send(to="ann")
await asyncio.gather(*[tools.send(to=who) for who in ["bob", "cy"]])
total = await tools.count()
1 / 0
"""
FIXED = """\
await tools.send(to="ann")
await asyncio.gather(*[tools.send(to=who) for who in ["bob", "cy"]])
total = await tools.count()
await tools.send(to="dee")
total
"""


def outbox_registry(sent: list[str], *, describe: str = "Send a message.") -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def send(args: Any) -> dict[str, str]:
        sent.append(args["to"])
        return {"sent": args["to"]}

    async def count(args: Any) -> int:
        return len(sent)

    reg.register(cm.define_tool(name="send", description=describe,
                                parameters={"to": {"type": "string", "required": True}},
                                execute=send))
    reg.register(cm.define_tool(name="count", execute=count, replay="always_live",
                                output_schema={"type": "integer"}))
    return reg


async def test_a_resubmitted_script_makes_each_write_once_gather_included(
        executor: Executor) -> None:
    sent: list[str] = []
    reg = outbox_registry(sent)
    mode = cm.CodeMode(reg, executor=executor)
    journal = cm.Journal()
    first = await mode.run(FAILING, journal=journal)
    assert first.error is not None and first.error.type == "ZeroDivisionError"
    assert sorted(sent) == ["ann", "bob", "cy"]
    events: list[cm.ToolEvent] = []
    reg.subscribe(events.append)
    second = await mode.run(FIXED, journal=journal)
    assert second.error is None, second.error
    assert sorted(sent) == ["ann", "bob", "cy", "dee"]  # each write happened exactly once
    assert isinstance(second, cm.RunResult)
    assert second.replayed == (0, 1, 2)
    assert second.value == 3  # count is always_live: it ran again and saw the three sends
    replayed = [e for e in events if e.replayed]
    assert sorted(e.type for e in replayed) == ["tool/call"] * 3 + ["tool/result"] * 3
    assert {e.name for e in replayed} == {"send"}
    live = [e for e in events if not e.replayed and e.type == "tool/call"]
    assert [e.name for e in live] == ["count", "send"]


async def test_run_code_through_the_registry_resumes_after_a_failure(executor: Executor) -> None:
    sent: list[str] = []
    reg = outbox_registry(sent)
    mode = cm.CodeMode(reg, executor=executor)
    reg.register(mode.as_tool(journal=cm.Journal()))
    first = await reg.execute(cm.ToolCall(call_id="t1", name="run_code",
                                          arguments={"code": FAILING}))
    assert first.is_error and "ZeroDivisionError" in first.text
    second = await reg.execute(cm.ToolCall(call_id="t2", name="run_code",
                                           arguments={"code": FIXED}))
    assert not second.is_error, second.text
    assert sorted(sent) == ["ann", "bob", "cy", "dee"]
    assert second.meta is not None and list(second.meta["replayed"]) == [0, 1, 2]
    assert "replayed from the journal (not run again): calls 1, 2, 3" in second.text
    third = await reg.execute(cm.ToolCall(call_id="t3", name="run_code",
                                          arguments={"code": FIXED}))
    assert not third.is_error  # the last run succeeded: a new script is a new intent
    assert sorted(sent) == ["ann", "ann", "bob", "bob", "cy", "cy", "dee", "dee"]
    assert "resume" in reg.get("run_code").spec.parameters["properties"]


async def test_the_journal_is_jsonl_and_resumes_from_the_file(tmp_path: Path) -> None:
    sent: list[str] = []
    path = tmp_path / "run.jsonl"
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(outbox_registry(sent), executor=executor)
        await mode.run(FAILING, journal=cm.Journal(path))
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert lines[0]["codemode_journal"] == 1 and len(lines[0]["registry"]) == 32
        assert lines[1]["arguments"] == {"to": "ann"}
        assert lines[-1] == {"end": {"failed": True}}
        reopened = cm.Journal(path)  # as another process would
        assert reopened.failed is True and len(reopened.entries) == 4
        result = await mode.run(FIXED, journal=reopened)
    assert result.error is None and sorted(sent) == ["ann", "bob", "cy", "dee"]


async def test_a_torn_last_line_keeps_the_entries_before_it(tmp_path: Path) -> None:
    sent: list[str] = []
    path = tmp_path / "run.jsonl"
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(outbox_registry(sent), executor=executor)
        await mode.run(FAILING, journal=cm.Journal(path))
        lines = path.read_text().splitlines()
        path.write_text("\n".join(lines[:2]) + "\n" + lines[2][:30])  # died mid-write
        journal = cm.Journal(path)
        assert [e.arguments for e in journal.entries] == ['{"to":"ann"}']
        sent.clear()
        await mode.run(FIXED, journal=journal)
    assert sorted(sent) == ["bob", "cy", "dee"]


async def test_a_changed_tool_is_never_replayed() -> None:
    sent: list[str] = []
    async with cm.InProcessExecutor() as executor:
        journal = cm.Journal()
        await cm.CodeMode(outbox_registry(sent), executor=executor).run(FAILING, journal=journal)
        changed = outbox_registry(sent, describe="Send a message, now with a receipt.")
        result = await cm.CodeMode(changed, executor=executor).run(FIXED, journal=journal)
    assert isinstance(result, cm.RunResult) and result.replayed == ()
    assert sorted(sent) == ["ann", "ann", "bob", "bob", "cy", "cy", "dee"]


async def test_the_first_different_call_and_everything_after_run_live() -> None:
    sent: list[str] = []
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(outbox_registry(sent), executor=executor)
        journal = cm.Journal()
        await mode.run('await tools.send(to="a")\nawait tools.send(to="b")\n'
                       'await tools.send(to="c")\n1 / 0', journal=journal)
        sent.clear()
        result = await mode.run('await tools.send(to="a")\nawait tools.send(to="x")\n'
                                'await tools.send(to="c")', journal=journal)
    assert isinstance(result, cm.RunResult) and result.replayed == (0,)
    assert sent == ["x", "c"]  # "c" matches a recorded call, but it comes after the change


async def test_a_failed_call_is_not_replayed_and_ends_the_replay() -> None:
    reg = cm.ToolRegistry()
    attempts: list[str] = []

    async def flaky(args: Any) -> str:
        attempts.append(args["key"])
        if len(attempts) == 2:
            raise RuntimeError("try again")
        return "ok"

    reg.register(cm.define_tool(name="put", parameters={"key": {"type": "string"}},
                                execute=flaky))
    script = 'await tools.put(key="a")\nawait tools.put(key="b")\nawait tools.put(key="c")'
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(reg, executor=executor)
        journal = cm.Journal()
        assert (await mode.run(script, journal=journal)).error is not None
        result = await mode.run(script, journal=journal)
    assert result.error is None and attempts == ["a", "b", "b", "c"]


@pytest.mark.parametrize(("resume", "expected"), [(None, 2), (True, 1), (False, 2)])
async def test_after_a_successful_run_resuming_is_asked_for(resume: bool | None,
                                                            expected: int) -> None:
    sent: list[str] = []
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(outbox_registry(sent), executor=executor)
        journal = cm.Journal()
        await mode.run('await tools.send(to="a")', journal=journal)
        assert journal.failed is False
        await mode.run('await tools.send(to="a")', journal=journal, resume=resume)
    assert len(sent) == expected


async def test_the_journal_is_bounded_and_what_it_dropped_runs_live(tmp_path: Path) -> None:
    sent: list[str] = []
    path = tmp_path / "run.jsonl"
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(outbox_registry(sent), executor=executor)
        journal = cm.Journal(path, max_entries=2)
        script = "".join(f'await tools.send(to="{n}")\n' for n in "abcd")
        await mode.run(script + "1 / 0", journal=journal)
        assert len(journal.entries) == 2 and len(path.read_text().splitlines()) == 4
        sent.clear()
        await mode.run(script, journal=journal)
    assert sent == ["c", "d"]
    small = cm.Journal(max_bytes=500)
    async with cm.InProcessExecutor() as executor:
        await cm.CodeMode(outbox_registry([]), executor=executor).run(script, journal=small)
    assert 0 < len(small.entries) < 4


def test_journal_options_are_checked() -> None:
    with pytest.raises(ValueError, match="positive"):
        cm.Journal(max_entries=0)
    with pytest.raises(cm.ToolDefinitionError, match="replay must be"):
        cm.define_tool(name="t", execute=lambda args: 1, replay="sometimes")  # type: ignore[arg-type]


async def test_a_cancelled_run_frees_its_journal_and_counts_as_failed() -> None:
    sent: list[str] = []
    reg = outbox_registry(sent)
    started = anyio.Event()

    async def hang(args: Any) -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    reg.register(cm.define_tool(name="hang", execute=hang))
    script = 'await tools.send(to="a")\nawait tools.hang()\n'
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(reg, executor=executor)
        journal = cm.Journal()
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: mode.run(script, journal=journal))
            await started.wait()
            tg.cancel_scope.cancel()
        assert journal.failed is True and len(sent) == 1
        result = await mode.run('await tools.send(to="a")', journal=journal)
    assert result.error is None and sent == ["a"]


async def test_a_gather_resumes_in_another_order(executor: Executor) -> None:
    sent: list[str] = []
    mode = cm.CodeMode(outbox_registry(sent), executor=executor)
    journal = cm.Journal()
    gather = 'await asyncio.gather(*[tools.send(to=who) for who in {}])\n'
    await mode.run(gather.format('["a", "b", "c"]') + "1 / 0", journal=journal)
    assert len(journal.entries) == 3  # fast handlers: maybe not in flight together
    result = await mode.run(gather.format('["c", "a", "b"]'), journal=journal)
    assert isinstance(result, cm.RunResult) and result.replayed == (0, 1, 2)
    assert sorted(sent) == ["a", "b", "c"]


async def test_a_sequential_call_ahead_of_its_place_is_not_replayed() -> None:
    """send(b) was recorded after count(): made first, nothing it skipped arrives while it
    waits (the script waits for it), so it and everything after run live."""
    sent: list[str] = []
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(outbox_registry(sent), executor=executor)
        journal = cm.Journal(reorder_wait=0.05)
        await mode.run('await tools.send(to="a")\nn = await tools.count()\n'
                       'await tools.send(to="b")\n1 / 0', journal=journal)
        sent.clear()
        result = await mode.run('await tools.send(to="b")\nawait tools.send(to="a")',
                                journal=journal)
    assert isinstance(result, cm.RunResult) and result.replayed == ()
    assert sent == ["b", "a"]
