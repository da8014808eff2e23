"""Execution modes: ``sequential`` calls never overlap another call, without deadlocking nesting.

Handlers log enter/exit and yield at checkpoints in between, so any overlap the
scheduler allows shows up in the log; nothing here measures time (``fail_after``
only turns a deadlock into a failure instead of a hang).
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

import codemode as cm

from .support import call

Log = list[tuple[str, str, str]]
HANG_GUARD = 10


def logging_handler(log: Log, mode: str, checkpoints: int = 3) -> Any:
    async def handler(args: Any, ctx: cm.ExecContext) -> str:
        log.append(("enter", ctx.call_id, mode))
        for _ in range(checkpoints):
            await anyio.lowlevel.checkpoint()
        log.append(("exit", ctx.call_id, mode))
        return mode

    return handler


def overlaps(log: Log) -> tuple[list[str], int]:
    """(violations involving a sequential call, most parallel calls seen at once)."""
    active: dict[str, str] = {}
    violations: list[str] = []
    most_parallel = 0
    for kind, call_id, mode in log:
        if kind == "exit":
            del active[call_id]
            continue
        if active and (mode == "sequential" or "sequential" in active.values()):
            violations.append(f"{call_id} ({mode}) entered while {sorted(active)} ran")
        active[call_id] = mode
        most_parallel = max(most_parallel, list(active.values()).count("parallel"))
    return violations, most_parallel


@pytest.fixture
def log() -> Log:
    return []


@pytest.fixture
def modes(registry: cm.ToolRegistry, log: Log) -> cm.ToolRegistry:
    registry.register(
        cm.define_tool(
            name="seq", execute=logging_handler(log, "sequential"), execution_mode="sequential"
        )
    )
    registry.register(cm.define_tool(name="par", execute=logging_handler(log, "parallel")))
    return registry


@pytest.mark.parametrize("pattern", ["SPPSPPPS", "PPPPSSSS", "SSSSPPPP", "PSPSPSPS"])
async def test_sequential_calls_never_overlap_other_calls(
    modes: cm.ToolRegistry, log: Log, pattern: str
) -> None:
    names = {"S": "seq", "P": "par"}
    results: list[cm.ToolResult] = []
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            for i, kind in enumerate(pattern * 3):

                async def one(name: str = names[kind], i: int = i) -> None:
                    results.append(
                        await modes.execute(cm.ToolCall(call_id=f"{name}{i}", name=name))
                    )

                tg.start_soon(one)
    violations, most_parallel = overlaps(log)
    assert violations == []
    assert most_parallel > 1, "parallel calls should overlap, or the check proves nothing"
    assert len(results) == len(pattern) * 3 and not any(r.is_error for r in results)
    assert len(log) == 2 * len(results)


async def test_parallel_calls_run_together(registry: cm.ToolRegistry) -> None:
    arrived = 0
    everyone = anyio.Event()

    async def barrier(args: Any, ctx: cm.ExecContext) -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 5:
            everyone.set()
        await everyone.wait()
        return "through"

    registry.register(cm.define_tool(name="b", execute=barrier))
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(registry.execute, call("b"))
    assert arrived == 5


async def test_sequential_child_of_a_running_parent_does_not_deadlock(
    registry: cm.ToolRegistry, log: Log
) -> None:
    async def parent(args: Any, ctx: cm.ExecContext) -> str:
        log.append(("enter", ctx.call_id, "sequential"))
        inner = await registry.execute(cm.ToolCall(call_id="child", name="seq", parent=ctx.token))
        grandchild_parent = ctx.token
        log.append(("exit", ctx.call_id, "sequential"))
        return f"{inner.text} via {grandchild_parent is ctx.token}"

    registry.register(
        cm.define_tool(
            name="seq", execute=logging_handler(log, "sequential"), execution_mode="sequential"
        )
    )
    registry.register(cm.define_tool(name="outer", execute=parent, execution_mode="sequential"))
    with anyio.fail_after(HANG_GUARD):
        result = await registry.execute(cm.ToolCall(call_id="top", name="outer"))
    assert result.text == "sequential via True"
    assert [entry[:2] for entry in log] == [
        ("enter", "top"),
        ("enter", "child"),
        ("exit", "child"),
        ("exit", "top"),
    ]


async def test_script_like_parent_runs_sequential_children_one_at_a_time(
    modes: cm.ToolRegistry, log: Log
) -> None:
    """Two ``run_code``-like parents fan out; sequential children take turns, no deadlock.

    Each parent waits on its sequential child while the other parent is running:
    counting a parent that waits on children as busy deadlocked the two scripts.
    """

    async def script(args: Any, ctx: cm.ExecContext) -> str:
        async with anyio.create_task_group() as tg:
            for i, name in enumerate(["seq", "par", "seq", "par", "par", "seq"]):
                tg.start_soon(
                    modes.execute,
                    cm.ToolCall(call_id=f"{ctx.call_id}.{name}{i}", name=name, parent=ctx.token),
                )
        return "script done"

    modes.register(cm.define_tool(name="script", execute=script))
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(modes.execute, call("script"))
            tg.start_soon(modes.execute, call("script"))
    violations, _ = overlaps(log)
    assert violations == []
    assert len(log) == 24
    assert modes.gate._running == {} and modes.gate._children == {}


async def test_grandchildren_of_a_sequential_call_are_admitted(
    registry: cm.ToolRegistry, log: Log
) -> None:
    async def middle(args: Any, ctx: cm.ExecContext) -> str:
        inner = await registry.execute(cm.ToolCall(call_id="leaf", name="par", parent=ctx.token))
        return inner.text

    async def top(args: Any, ctx: cm.ExecContext) -> str:
        return (
            await registry.execute(cm.ToolCall(call_id="middle", name="middle", parent=ctx.token))
        ).text

    registry.register(cm.define_tool(name="par", execute=logging_handler(log, "parallel")))
    registry.register(cm.define_tool(name="middle", execute=middle))
    registry.register(cm.define_tool(name="top", execute=top, execution_mode="sequential"))
    with anyio.fail_after(HANG_GUARD):
        assert (await registry.execute(call("top"))).text == "parallel"


async def test_a_call_cancelled_while_waiting_leaves_the_gate_clean(
    modes: cm.ToolRegistry, log: Log
) -> None:
    release = anyio.Event()
    entered = anyio.Event()

    async def holder(args: Any, ctx: cm.ExecContext) -> str:
        entered.set()
        await release.wait()
        return "held"

    modes.register(cm.define_tool(name="hold", execute=holder, execution_mode="sequential"))
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(modes.execute, call("hold"))
            await entered.wait()
            with anyio.CancelScope() as waiting:
                waiting.cancel()
                await modes.execute(call("par"))
            assert waiting.cancelled_caught
            assert log == []
            release.set()
        result = await modes.execute(call("seq"))
    assert result.text == "sequential"
    assert modes.gate._running == {} and modes.gate._waiters == 0
    assert modes.gate._sequential_running == 0


async def test_failing_and_cancelled_handlers_release_the_gate(modes: cm.ToolRegistry) -> None:
    async def boom(args: Any, ctx: cm.ExecContext) -> str:
        raise RuntimeError("x")

    modes.register(cm.define_tool(name="boom", execute=boom, execution_mode="sequential"))
    modes.wrap_execute(lambda ctx, nxt: nxt(ctx.with_deadline(0) if ctx.name == "seq" else ctx))
    with anyio.fail_after(HANG_GUARD):
        assert (await modes.execute(call("boom"))).is_error
        timed_out = await modes.execute(call("seq"))
        assert timed_out.error is not None and timed_out.error.kind == "timeout"
        assert (await modes.execute(call("par"))).text == "parallel"
    assert modes.gate._running == {} and modes.gate._sequential_running == 0
