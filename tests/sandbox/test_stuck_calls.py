"""A ``call_tool`` that ignores its cancellation does not hold an executor's run
(``executors/stuck.py``): used directly, without ``CodeMode``, both executors waited for
it forever, not even their caller's cancellation returned. Now the run ends ``STUCK``
seconds after the cut as timed out, naming the call, the call is left running (logged),
the pool retires the run's worker and frees its place, and the next run goes ahead."""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import pytest

from codemode.sandbox import Executor, InProcessExecutor, Limits, WorkerPoolExecutor
from codemode.sandbox.executors.stuck import STUCK

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Stubborn:
    """``call_tool``: ``stubborn`` catches every cancellation until released; anything
    else answers at once."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started = anyio.Event()
        self.returned = anyio.Event()
        self.cancels = 0

    async def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        if name != "stubborn":
            return arguments.get("n", 0) + 1
        self.started.set()
        give_up = time.monotonic() + 30  # a hang guard: the test releases it long before
        while not self.release.is_set() and time.monotonic() < give_up:
            try:
                await anyio.sleep(0.05)
            except anyio.get_cancelled_exc_class():
                self.cancels += 1
        self.returned.set()
        return "late"


def _executor(kind: str) -> Executor:
    return InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)


def _workers(executor: Executor) -> set[int]:
    """The pool's worker processes (idle ones: between runs, all of them)."""
    assert isinstance(executor, WorkerPoolExecutor)
    return {worker.process.pid for worker in executor._idle}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped between the open and the read
        return False


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
@pytest.mark.parametrize("ends", ["timeout", "caller", "script-done"])
async def test_a_call_that_ignores_its_cancellation_does_not_hold_the_run(
        kind: str, ends: str, caplog: pytest.LogCaptureFixture) -> None:
    tool = Stubborn()
    scripts = {"timeout": "await tools.stubborn()",
               "caller": "await tools.stubborn()\n'never'",
               # the script ends with the call in flight (a task it never awaited)
               "script-done": "import asyncio\nt = asyncio.create_task(tools.stubborn())\n"
                              "await asyncio.sleep(0.2)\n'done'"}
    async with _executor(kind) as executor:
        before = set()
        if isinstance(executor, WorkerPoolExecutor):
            await executor.start()
            before = _workers(executor)
        with anyio.fail_after(20):  # a hang guard, far past timeout + grace + STUCK
            started = time.monotonic()
            if ends == "caller":
                with anyio.CancelScope() as scope:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(lambda: executor.run(
                            scripts[ends], call_tool=tool, tool_paths=("stubborn", "echo"),
                            limits=Limits(timeout=10)))
                        await tool.started.wait()
                        scope.cancel()
                assert scope.cancelled_caught
            else:
                result = await executor.run(scripts[ends], call_tool=tool,
                                            tool_paths=("stubborn", "echo"),
                                            limits=Limits(timeout=0.5))
                assert result.error is not None and result.error.limit == "timeout"
                assert "tools.stubborn did not end when cancelled" in result.error.message
                assert result.value is None
            took = time.monotonic() - started
        assert took >= STUCK  # it waited for the call that long, then went on without it
        assert tool.cancels >= 1 and not tool.returned.is_set()  # left running
        assert any("tools.stubborn ignored its cancellation" in record.getMessage()
                   and record.levelno == logging.ERROR for record in caplog.records)
        if isinstance(executor, WorkerPoolExecutor):  # its worker was retired, not reused
            (pid,) = before
            assert pid not in _workers(executor)
            with anyio.fail_after(10):
                while _alive(pid):  # noqa: ASYNC110 (a killed process, nothing to await)
                    await anyio.sleep(0.01)
        # the next run goes ahead while the call is still stuck (the pool has one place)
        with anyio.fail_after(30):
            following = await executor.run("await tools.echo(n=1)", call_tool=tool,
                                           tool_paths=("stubborn", "echo"),
                                           limits=Limits(timeout=10))
        assert following.error is None and following.value == 2
        assert not tool.returned.is_set()
        tool.release.set()
        with anyio.fail_after(10):
            await tool.returned.wait()
