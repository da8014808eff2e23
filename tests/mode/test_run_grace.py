"""The run, not a task per call, stops its nested calls: signals first, the hard cancel
``cancel_grace`` seconds later (``Bridge.stop_calls`` through the executor's broker).

Cases the run-level mechanism adds to ``test_nested_signal.py``: many calls in flight
at once under ``gather``, a threaded sync handler that watches its signal from its
thread, a call the script itself gives up on (``asyncio.wait_for``), and calls that end
normally leaving nothing behind.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm
from codemode.mode.bridge import Bridge, RunSummary
from codemode.mode.ledger import RunLedger
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


def _registry(log: list[Any]) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def watcher(args: Any, ctx: cm.ExecContext) -> str:
        assert ctx.signal is not None
        try:
            await ctx.signal.wait()
            await anyio.sleep(0.02)  # clean-up that needs the loop: a hard cancel would cut it
            log.append(("stopped", args["n"], ctx.signal.reason))
            return "stopped"
        except anyio.get_cancelled_exc_class():
            log.append(("hard-cancelled", args["n"], None))
            raise

    def polling(args: Any, ctx: cm.ExecContext) -> str:
        assert ctx.signal is not None
        log.append(("thread", threading.current_thread() is not threading.main_thread()))
        for _ in range(2000):  # 10 s at most: the signal comes at the run's 0.3 s timeout
            if ctx.signal.cancelled:
                log.append(("noticed", ctx.signal.reason))
                return "stopped"
            time.sleep(0.005)
        log.append(("never noticed", None))
        return "never"

    async def quick(args: Any, ctx: cm.ExecContext) -> int:
        return 1

    integer = {"type": "object", "properties": {"n": {"type": "integer"}}}
    reg.register(cm.define_tool(name="watcher", parameters=integer, execute=watcher))
    reg.register(cm.define_tool(name="polling", parameters={}, execute=polling, threaded=True))
    reg.register(cm.define_tool(name="quick", parameters={}, execute=quick))
    return reg


async def test_every_call_in_flight_under_gather_gets_its_signal_first(
        executor: Executor) -> None:
    log: list[Any] = []
    mode = cm.CodeMode(_registry(log), executor=executor,
                       limits=cm.Limits(timeout=0.3, concurrency=8))
    await mode.run("1")  # a worker is up, so the run's clock and the host's agree
    result = await mode.run(
        "import asyncio\nawait asyncio.gather(*[tools.watcher(n=i) for i in range(6)])")
    assert result.error is not None and result.error.type == "LimitExceeded"
    assert sorted(log) == [("stopped", n, "the run was cancelled or timed out")
                           for n in range(6)]


async def test_a_threaded_sync_handler_watching_its_signal_stops_by_itself(
        executor: Executor) -> None:
    log: list[Any] = []
    mode = cm.CodeMode(_registry(log), executor=executor, limits=cm.Limits(timeout=0.3))
    await mode.run("1")
    result = await mode.run("await tools.polling()")
    assert result.error is not None and result.error.type == "LimitExceeded"
    assert log == [("thread", True), ("noticed", "the run was cancelled or timed out")]


async def test_a_call_the_script_gives_up_on_is_signalled_before_it_is_cut(
        executor: Executor) -> None:
    log: list[Any] = []
    mode = cm.CodeMode(_registry(log), executor=executor, limits=cm.Limits(timeout=5))
    script = (
        "import asyncio\n"
        "try:\n"
        "    await asyncio.wait_for(tools.watcher(n=1), 0.1)\n"
        "except Exception as e:\n"
        "    gave_up = type(e).__name__\n"
        "gave_up\n"
    )
    result = await mode.run(script)
    assert result.error is None, result.error
    assert result.value == "TimeoutError"
    # The pool's worker tells the host (signal, then cut); in-process the script's give-up
    # does not reach the host, and the run's end stops the call the same way.
    assert log == [("stopped", 1, "the run was cancelled or timed out")]


async def test_calls_that_ended_leave_nothing_for_the_run_to_stop(executor: Executor) -> None:
    reg = _registry([])
    mode = cm.CodeMode(reg, executor=executor)
    sdk, specs = mode._current()
    run = RunSummary(outer_id="r", token=cm.Token(), agent=None, signal=cm.CancelSignal(),
                     deadline=anyio.current_time() + 5, grace=1.0)
    bridge = Bridge(reg, sdk, specs, run, ledger=RunLedger(reg))
    result = await executor.run("[await tools.quick() for _ in range(3)]", call_tool=bridge,
                                tool_paths=tuple(sdk.names.tools))
    assert result.error is None and result.value == [1, 1, 1]
    assert bridge.in_flight == 0
    await bridge.stop_calls()  # nothing left to stop: the run's own signal is untouched
    assert not run.signal.cancelled


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
@pytest.mark.parametrize("ends", ["timeout", "caller"])
async def test_a_call_that_ignores_its_cancellation_does_not_hold_the_run(
        kind: str, ends: str, caplog: pytest.LogCaptureFixture) -> None:
    # The executor joined the call: CodeMode.run never returned, on either executor.
    release, started, returned = anyio.Event(), anyio.Event(), anyio.Event()
    log: list[str] = []

    async def stubborn(args: Any, ctx: cm.ExecContext) -> str:
        log.append("started")
        started.set()
        give_up = time.monotonic() + 20  # a hang guard: the run should be over long before
        while not release.is_set() and time.monotonic() < give_up:
            try:
                await anyio.sleep(0.05)
            except anyio.get_cancelled_exc_class():
                if "swallowed" not in log:
                    log.append("swallowed")
        log.append("returned")
        returned.set()
        return "late"

    reg = cm.ToolRegistry()
    reg.register(cm.define_tool(name="stubborn", parameters={}, execute=stubborn))
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor:
        mode = cm.CodeMode(reg, executor=executor, limits=cm.Limits(timeout=0.3))
        mode.cancel_grace = 0.1
        with anyio.fail_after(30):  # a hang guard, far past timeout + grace + STUCK
            if ends == "timeout":
                result = await mode.run("await tools.stubborn()")
                assert result.error is not None and result.error.limit == "timeout"
                assert "tools.stubborn did not end when cancelled" in result.error.message
            else:
                with anyio.CancelScope() as scope:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(mode.run, "await tools.stubborn()\n'never'")
                        await started.wait()
                        scope.cancel()
                assert scope.cancelled_caught
        assert log == ["started", "swallowed"]
        assert any("tools.stubborn ignored its cancellation" in record.getMessage()
                   for record in caplog.records)
        with anyio.fail_after(30):  # the next run goes ahead (the pool has one place)
            assert (await mode.run("1 + 1")).value == 2
        assert not returned.is_set()  # while the call is still running
        release.set()
        with anyio.fail_after(30):
            await returned.wait()


class _Joining:
    """A third-party executor that joins the calls it started (no ``ends_stuck_calls``):
    CodeMode's own guard (``mode/stuck.py``) is what ends its run."""

    async def run(self, source: str, *, call_tool: Any, tool_paths: Any = (),
                  limits: cm.Limits | None = None, on_output: Any = None) -> cm.ScriptResult:
        assert limits is not None
        async with anyio.create_task_group() as tg:
            tg.start_soon(call_tool, "stubborn", {})
            await anyio.sleep(limits.timeout)
            await call_tool.stop_calls()  # signals first, as codemode's executors do
            tg.cancel_scope.cancel()
        return cm.ScriptResult(value="joined")

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> _Joining:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


async def test_codemode_ends_a_stuck_run_of_an_executor_that_does_not(
        caplog: pytest.LogCaptureFixture) -> None:
    release, returned = anyio.Event(), anyio.Event()

    async def stubborn(args: Any, ctx: cm.ExecContext) -> str:
        give_up = time.monotonic() + 20
        while not release.is_set() and time.monotonic() < give_up:
            with contextlib.suppress(anyio.get_cancelled_exc_class()):
                await anyio.sleep(0.05)
        returned.set()
        return "late"

    reg = cm.ToolRegistry()
    reg.register(cm.define_tool(name="stubborn", parameters={}, execute=stubborn))
    executor = _Joining()
    assert not hasattr(executor, "ends_stuck_calls")
    mode = cm.CodeMode(reg, executor=executor, limits=cm.Limits(timeout=0.3))
    mode.cancel_grace = 0.1
    with anyio.fail_after(20):
        result = await mode.run("await tools.stubborn()")
    assert result.error is not None and result.error.limit == "timeout"
    assert "tools.stubborn did not end when cancelled" in result.error.message
    assert not returned.is_set()
    assert any("tools.stubborn ignored its cancellation" in record.getMessage()
               for record in caplog.records)
    release.set()
    with anyio.fail_after(10):
        await returned.wait()
