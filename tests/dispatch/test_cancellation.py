"""Cancellation: cancelling the caller cancels the handler, and no work is left running."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

import codemode as cm

from .support import Events, call


class Worker:
    """A handler that starts background tasks, then records how everything ended."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.entered = 0
        self.ticks = 0
        self.ended: list[str] = []

    async def tick(self) -> None:
        try:
            while True:
                self.ticks += 1
                await anyio.lowlevel.checkpoint()
        finally:
            self.ended.append("background")

    async def __call__(self, args: Any, ctx: cm.ExecContext) -> str:
        self.entered += 1
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.tick)
                tg.start_soon(self.tick)
                self.started.set()
                await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.ended.append("handler saw cancellation")
            raise
        return "never"


async def assert_nothing_left_running(worker: Worker) -> None:
    ticks = worker.ticks
    for _ in range(10):
        await anyio.lowlevel.checkpoint()
    assert worker.ticks == ticks


async def test_cancelling_the_caller_cancels_the_handler(
    registry: cm.ToolRegistry, events: Events
) -> None:
    worker = Worker()
    registry.register(cm.define_tool(name="work", execute=worker))
    observed: list[cm.ToolResult] = []
    registry.on_result(observed.append)
    async with anyio.create_task_group() as tg:
        with anyio.CancelScope() as scope:
            tg.start_soon(registry.execute, call("work"))
            await worker.started.wait()
            tg.cancel_scope.cancel()
    assert not scope.cancelled_caught
    assert sorted(worker.ended) == ["background", "background", "handler saw cancellation"]
    await assert_nothing_left_running(worker)
    assert events.types() == ["tool/call", "tool/result"]
    assert events.all[1].is_error and events.all[1].error == "cancelled"
    assert observed == []
    assert registry.gate._running == {}


async def test_cancelling_a_parent_cancels_its_nested_calls(
    registry: cm.ToolRegistry, events: Events
) -> None:
    worker = Worker()
    registry.register(cm.define_tool(name="work", execute=worker))

    async def script(args: Any, ctx: cm.ExecContext) -> str:
        async with anyio.create_task_group() as tg:
            for i in range(2):
                tg.start_soon(
                    registry.execute,
                    cm.ToolCall(call_id=f"child{i}", name="work", parent=ctx.token),
                )
        return "never"

    registry.register(cm.define_tool(name="script", execute=script))
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(registry.execute, cm.ToolCall(call_id="top", name="script"))
            while worker.entered < 2:
                await anyio.lowlevel.checkpoint()
            scope.cancel()
    assert worker.ended.count("handler saw cancellation") == 2
    assert worker.ended.count("background") == 4
    await assert_nothing_left_running(worker)
    results = {e.call_id: e.error for e in events.of("tool/result")}
    assert results == {"top": "cancelled", "child0": "cancelled", "child1": "cancelled"}


async def test_a_call_cancelled_before_its_handler_never_runs(
    registry: cm.ToolRegistry, events: Events
) -> None:
    ran: list[str] = []
    registry.register(cm.define_tool(name="t", execute=lambda args: ran.append("ran")))

    async def slow_policy(ctx: cm.ExecContext) -> None:
        await anyio.sleep_forever()

    registry.pre_execute(slow_policy)
    with anyio.move_on_after(0):
        await registry.execute(call("t"))
    assert ran == []
    assert [(e.type, e.error) for e in events.all] == [
        ("tool/call", None),
        ("tool/result", "cancelled"),
    ]


@pytest.mark.parametrize("how", ["signal", "deadline"])
async def test_signal_and_deadline_stop_all_handler_work(
    registry: cm.ToolRegistry, events: Events, how: str
) -> None:
    worker = Worker()
    signal = cm.CancelSignal()
    registry.register(cm.define_tool(name="work", execute=worker))

    @registry.wrap_execute
    async def limit(ctx: cm.ExecContext, call_next: Any) -> Any:
        return await call_next(
            ctx.with_signal(signal) if how == "signal" else ctx.with_deadline(0.01)
        )

    results: list[cm.ToolResult] = []
    async with anyio.create_task_group() as tg:

        async def caller() -> None:
            results.append(await registry.execute(call("work")))

        tg.start_soon(caller)
        await worker.started.wait()
        if how == "signal":
            signal.cancel()
    [result] = results
    assert result.error is not None
    assert result.error.kind == ("cancelled" if how == "signal" else "timeout")
    assert sorted(worker.ended) == ["background", "background", "handler saw cancellation"]
    await assert_nothing_left_running(worker)
    assert events.all[-1].error == result.text


async def test_handler_may_poll_the_signal(registry: cm.ToolRegistry) -> None:
    signal = cm.CancelSignal()

    async def cooperative(args: Any, ctx: cm.ExecContext) -> str:
        assert ctx.signal is not None
        return f"cancelled={ctx.signal.cancelled}"

    registry.register(cm.define_tool(name="t", execute=cooperative))
    registry.wrap_execute(lambda ctx, call_next: call_next(ctx.with_signal(signal)))
    assert (await registry.execute(call("t"))).text == "cancelled=False"


async def test_signal_wait_returns_once_cancelled() -> None:
    signal = cm.CancelSignal()
    async with anyio.create_task_group() as tg:
        tg.start_soon(signal.wait)
        await anyio.lowlevel.checkpoint()
        signal.cancel("stop")
    assert signal.cancelled and signal.reason == "stop"
