"""``asyncio.create_task``, ``Semaphore`` and ``Lock`` in scripts: asyncio's behaviour,
tasks owned by the run (none runs after it), handles that answer only what they offer."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import codemode as cm
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Calls:
    def __init__(self) -> None:
        self.made: list[int] = []
        self.inside = 0
        self.most = 0


def _registry(calls: Calls) -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    @cm.tool
    async def slow(x: int) -> int:
        """Twice x, after a while."""
        calls.made.append(x)
        calls.inside += 1
        calls.most = max(calls.most, calls.inside)
        try:
            await anyio.sleep(0.05)
        finally:
            calls.inside -= 1
        return x * 2

    registry.register(slow)
    return registry


async def _run(script: str, calls: Calls, executor: Any = None, **limits: Any) -> Any:
    async with executor or InProcessExecutor() as ex:
        mode = cm.CodeMode(_registry(calls), executor=ex, limits=cm.Limits(timeout=10, **limits))
        return await mode.run(script)


IMPORT = "import asyncio\n"


@pytest.mark.parametrize(("script", "value"), [
    ("t1 = asyncio.create_task(tools.slow(x=1))\nt2 = asyncio.create_task(tools.slow(x=2))\n"
     "[await t2, await t1]", [4, 2]),
    ("t = asyncio.create_task(tools.slow(x=3))\nbefore = t.done()\nv = await t\n"
     "[before, t.done(), t.result(), v]", [False, True, 6, 6]),
    ("t = asyncio.ensure_future(tools.slow(x=1))\nawait t", 2),
    ("async def one(i):\n    return await tools.slow(x=i)\n"
     "ts = [asyncio.create_task(one(i)) for i in range(3)]\nawait asyncio.gather(*ts)", [0, 2, 4]),
    ("t = asyncio.create_task(tools.slow(x=1))\nt.cancel()\ntry:\n    await t\n"
     "except asyncio.CancelledError:\n    r = 'cancelled'\n[r, t.cancelled()]",
     ["cancelled", True]),
    ("async def bad():\n    raise ValueError('no')\nt = asyncio.create_task(bad())\n"
     "try:\n    await t\nexcept ValueError as e:\n    r = str(e)\nr", "no"),
    ("lock = asyncio.Lock()\nasync with lock:\n    inside = lock.locked()\n"
     "[inside, lock.locked()]", [True, False]),
    ("s = asyncio.Semaphore(2)\nawait s.acquire()\nawait s.acquire()\nfull = s.locked()\n"
     "s.release()\n[full, s.locked()]", [True, False]),
])
async def test_asyncio_as_asyncio_does(script: str, value: Any) -> None:
    run = await _run(IMPORT + script, Calls())
    assert run.error is None, run.error
    assert run.value == value


async def test_a_semaphore_bounds_concurrent_calls() -> None:
    calls = Calls()
    script = (IMPORT + "sem = asyncio.Semaphore(2)\nasync def one(i):\n    async with sem:\n"
              "        return await tools.slow(x=i)\n"
              "await asyncio.gather(*[one(i) for i in range(6)])")
    run = await _run(script, calls)
    assert run.error is None, run.error
    assert run.value == [0, 2, 4, 6, 8, 10]
    assert calls.most == 2
    assert sorted(calls.made) == list(range(6))


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_a_task_left_running_is_cancelled_with_the_run(kind: str) -> None:
    calls = Calls()
    script = (IMPORT + "async def forever():\n    i = 0\n    while True:\n"
              "        await tools.slow(x=i)\n        i += 1\n"
              "t = asyncio.create_task(forever())\nawait asyncio.sleep(0.2)\n'done'")
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    run = await _run(script, calls, executor)
    assert run.error is None, run.error
    assert run.value == "done"
    made = len(calls.made)
    assert made >= 1
    await anyio.sleep(0.4)  # several of its calls' time: none came after the run
    assert len(calls.made) == made
    assert calls.inside == 0


async def test_a_failed_task_nobody_awaited_stays_quiet(
        capfd: pytest.CaptureFixture[str]) -> None:
    script = (IMPORT + "async def bad():\n    raise ValueError('never seen')\n"
              "t = asyncio.create_task(bad())\nawait asyncio.sleep(0.05)\n'ok'")
    run = await _run(script, Calls())
    assert run.error is None and run.value == "ok"
    assert "never seen" not in capfd.readouterr().err


_EXITS = "async def stop():\n    await tools.slow(x=1)\n    {call}\n"
_STARTED = "t = asyncio.create_task(stop())\n"


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
@pytest.mark.parametrize(("call", "main", "error", "value"), [
    ("exit(3)", "await tools.slow(x=2)\nawait asyncio.sleep(5)\nprint('after')\n'done'",
     "the script exited with status 3", None),
    ("raise SystemExit('bye')", "await asyncio.sleep(5)\nprint('after')\n'done'", "bye", None),
    ("exit(3)", "try:\n    await asyncio.sleep(5)\nexcept:\n    pass\n"
     "await tools.slow(x=9)\n'done'", "the script exited with status 3", None),
    ("exit(0)", "await asyncio.sleep(5)\nprint('after')\n'done'", None, None),
    ("final_answer(7)", "await asyncio.sleep(5)\nprint('after')\n'done'", None, 7),
])
async def test_a_task_that_exits_ends_the_run_as_cpython_does(
        kind: str, call: str, main: str, error: str | None, value: Any) -> None:
    # CPython leaves the event loop on a task's SystemExit; before, a task nobody awaited
    # dropped it and the run went on to 'done' (or to its timeout).
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    calls = Calls()
    run = await _run(IMPORT + _EXITS.format(call=call) + _STARTED + main, calls, executor)
    assert "after" not in run.output
    assert 9 not in calls.made  # the main code's await after a caught stop is cancelled
    assert run.value == value
    if error is None:
        assert run.error is None, run.error
    else:
        assert run.error is not None and run.error.type == "SystemExit", run.error
        assert run.error.message == error and run.error.line == 4


@pytest.mark.parametrize(("script", "error", "message"), [
    ("t = asyncio.create_task(asyncio.sleep(0))\nt._task", "AttributeError", "private"),
    ("t = asyncio.create_task(asyncio.sleep(0))\nt.get_coro", "AttributeError",
     "no accessible attribute 'get_coro'"),
    ("s = asyncio.Semaphore(1)\ns._value", "AttributeError", "private"),
    ("asyncio.Semaphore(1).sandbox_getattr", "AttributeError", "no accessible attribute"),
    ("class S(asyncio.Semaphore):\n    pass", "TypeError", ""),
    ("asyncio.create_task(5)", "TypeError", "needs an awaitable"),
    ("asyncio.Semaphore(-1)", "ValueError", "must be an int"),
])
async def test_handles_answer_only_what_they_offer(script: str, error: str,
                                                   message: str) -> None:
    run = await _run(IMPORT + script, Calls())
    assert run.value is None
    assert run.error is not None and run.error.type == error, run.error
    assert message in run.error.message


async def test_tasks_are_sized_together() -> None:
    script = (IMPORT + "ts = []\nfor i in range(100000):\n"
              "    ts.append(asyncio.create_task(asyncio.sleep(0)))\nlen(ts)")
    run = await _run(script, Calls(), memory=64 * 1024 * 1024, operations=10**7)
    assert run.value is None
    assert run.error is not None and run.error.limit == "memory"
    assert "asyncio.create_task()" in run.error.message


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_no_tool_call_is_dispatched_after_a_caught_timeout(kind: str) -> None:
    # In-process the call reached the tool: the bare except kept the cancellation and
    # the call came before the script's next tick, the only place the deadline was seen.
    calls = Calls()
    script = (IMPORT + "try:\n    await asyncio.sleep(5)\nexcept:\n    pass\n"
              "await tools.slow(x=9)\n'done'")
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor as ex:
        mode = cm.CodeMode(_registry(calls), executor=ex, limits=cm.Limits(timeout=0.3))
        run = await mode.run(script)
    assert calls.made == []
    assert run.error is not None and run.error.limit == "timeout", run.error
