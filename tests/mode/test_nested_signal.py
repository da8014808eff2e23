"""A script's nested calls carry the run's signal, deadline and session, and report progress.

On both executors: a handler that watches its signal stops by itself (and its
clean-up, which needs the loop, completes) before the hard cancel; one that
ignores it is cancelled hard ``cancel_grace`` seconds later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm
from codemode.dispatch.agent import AgentSession

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


def _registry(log: list[Any], started: anyio.Event | None = None) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def look(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        log.append(("look", ctx.signal is not None, ctx.deadline, ctx.session))
        return {"ok": True}

    async def watcher(args: Any, ctx: cm.ExecContext) -> str:
        assert ctx.signal is not None
        if started is not None:
            started.set()
        try:
            await ctx.signal.wait()
            await anyio.sleep(0.02)  # clean-up that needs the loop: a hard cancel would cut it
            log.append(("stopped", ctx.signal.reason))
            return "stopped"
        except anyio.get_cancelled_exc_class():
            log.append(("hard-cancelled", None))
            raise

    async def stubborn(args: Any, ctx: cm.ExecContext) -> str:
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            log.append(("hard-cancelled", ctx.signal.cancelled if ctx.signal else None))
            raise
        return "never"

    async def pages(args: Any, ctx: cm.ExecContext) -> str:
        for page in range(3):
            ctx.on_update({"page": page})
        return "done"

    for name, fn in (("look", look), ("watcher", watcher), ("stubborn", stubborn),
                     ("pages", pages)):
        reg.register(cm.define_tool(name=name, parameters={}, execute=fn))
    return reg


async def test_nested_calls_get_the_runs_signal_deadline_and_session(executor: Executor) -> None:
    log: list[Any] = []
    reg = _registry(log)
    mode = cm.CodeMode(reg, executor=executor, limits=cm.Limits(timeout=5))
    session = AgentSession("a")
    before = anyio.current_time()
    result = await mode.run("await tools.look()", session=session)
    assert result.error is None
    [(_, has_signal, deadline, seen)] = log
    assert has_signal and seen is session
    assert deadline is not None and before + 5 <= deadline <= anyio.current_time() + 5 + 1.0


async def test_run_code_passes_its_signal_deadline_and_session(executor: Executor) -> None:
    log: list[Any] = []
    reg = _registry(log)
    mode = cm.CodeMode(reg, executor=executor, limits=cm.Limits(timeout=5))
    reg.register(mode.as_tool())
    session = AgentSession("a")
    outer = cm.CancelSignal()
    result = await reg.execute(cm.ToolCall(call_id="c", name="run_code",
                                           arguments={"code": "await tools.look()", "timeout": 2}),
                               session=session, signal=outer)
    assert not result.is_error, result.text
    [(_, has_signal, deadline, seen)] = log
    assert has_signal and seen is session
    assert deadline is not None and deadline <= anyio.current_time() + 2 + mode.cancel_grace


async def test_a_watching_handler_stops_before_the_hard_cancel(executor: Executor) -> None:
    log: list[Any] = []
    mode = cm.CodeMode(_registry(log), executor=executor, limits=cm.Limits(timeout=0.3))
    await mode.run("1")  # a worker is up, so the run's clock and the host's agree
    result = await mode.run("await tools.watcher()")
    assert result.error is not None and result.error.type == "LimitExceeded"
    assert log == [("stopped", "the run was cancelled or timed out")]


async def test_cancelling_the_caller_fires_nested_signals_first(executor: Executor) -> None:
    log: list[Any] = []
    started = anyio.Event()
    reg = _registry(log, started)
    mode = cm.CodeMode(reg, executor=executor, limits=cm.Limits(timeout=20))
    reg.register(mode.as_tool())
    outer = cm.CancelSignal()

    async def cancel_soon() -> None:
        await started.wait()
        outer.cancel("user pressed stop")

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_soon)
        result = await reg.execute(
            cm.ToolCall(call_id="c", name="run_code", arguments={"code": "await tools.watcher()"}),
            signal=outer)
    assert result.is_error
    assert log == [("stopped", "user pressed stop")]


async def test_a_handler_ignoring_its_signal_is_cancelled_after_the_grace(
        executor: Executor) -> None:
    log: list[Any] = []
    mode = cm.CodeMode(_registry(log), executor=executor, limits=cm.Limits(timeout=0.3))
    mode.cancel_grace = 0.5  # longer than the pool's start-up, so the run's end comes first
    await mode.run("1")  # a worker is up (the last test's timed-out one is being replaced)
    result = await mode.run("await tools.stubborn()")
    assert result.error is not None and result.error.type == "LimitExceeded"
    assert log == [("hard-cancelled", True)]


async def test_nested_progress_reaches_the_run_and_run_code(executor: Executor) -> None:
    log: list[Any] = []
    reg = _registry(log)
    mode = cm.CodeMode(reg, executor=executor)
    updates: list[Any] = []
    result = await mode.run("await tools.pages()", on_update=updates.append, call_id="r")
    assert result.value == "done"
    assert updates == [{"call_id": "r:code:1", "tool": "pages", "update": {"page": n}}
                       for n in range(3)]

    reg.register(mode.as_tool())
    events: list[cm.ToolEvent] = []
    reg.subscribe(events.append)
    direct: list[Any] = []
    outer = await reg.execute(cm.ToolCall(call_id="rc", name="run_code",
                                          arguments={"code": "await tools.pages()"}),
                              on_update=direct.append)
    assert not outer.is_error
    assert direct == [{"call_id": "rc:code:1", "tool": "pages", "update": {"page": n}}
                      for n in range(3)]
    progress = [(e.name, e.data) for e in events if e.type == "tool/update"]
    assert progress == [event for n in range(3) for event in (
        ("pages", {"page": n}),
        ("run_code", {"call_id": "rc:code:1", "tool": "pages", "update": {"page": n}}))]


async def test_a_sync_nested_handler_sees_the_signal_and_deadline(executor: Executor) -> None:
    seen: list[Any] = []
    reg = cm.ToolRegistry()
    reg.register(cm.define_tool(name="peek", parameters={}, execute=lambda args, ctx: seen.append(
        (ctx.signal is not None and not ctx.signal.cancelled, ctx.deadline is not None)) or 1))
    mode = cm.CodeMode(reg, executor=executor)
    result = await mode.run("await tools.peek()")
    assert result.error is None and seen == [(True, True)]


async def test_without_a_grace_the_runs_end_cancels_at_once(executor: Executor) -> None:
    log: list[Any] = []
    mode = cm.CodeMode(_registry(log), executor=executor, limits=cm.Limits(timeout=0.3))
    mode.cancel_grace = 0
    await mode.run("1")
    result = await mode.run("await tools.watcher()")
    # cut by its deadline (the run's, as the host computed it) or by the run's timeout:
    # either way hard, with no window to stop by itself
    assert result.error is not None and result.error.type in ("LimitExceeded", "ToolCallError")
    assert log == [("hard-cancelled", None)]


async def test_a_graceful_signal_lets_a_direct_call_answer() -> None:
    log: list[Any] = []
    reg = _registry(log)
    signal = cm.CancelSignal(grace=5)

    async def stop_soon() -> None:
        await anyio.sleep(0.01)
        signal.cancel("stop")

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_soon)
        result = await reg.execute(cm.ToolCall(call_id="w", name="watcher"), signal=signal)
    assert not result.is_error and result.text == "stopped" and log == [("stopped", "stop")]
    hard = cm.CancelSignal()
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: stop_hard(hard))
        cut = await reg.execute(cm.ToolCall(call_id="s", name="stubborn"), signal=hard)
    assert cut.is_error and cut.error is not None and cut.error.kind == "cancelled"
    assert log[-1] == ("hard-cancelled", True)


async def stop_hard(signal: cm.CancelSignal) -> None:
    await anyio.sleep(0.01)
    signal.cancel("now")
