"""InProcessExecutor: script code off the host loop, broker semantics, cancellation."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from codemode.errors import SandboxError, ToolCallError
from codemode.sandbox import Executor, InProcessExecutor, Limits
from tests.sandbox.host_ticks import host_ticks

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class Host:
    """Records calls, the thread each ran on, concurrency, and calls after run() returned."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.threads: set[int] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.closed = False
        self.late: list[str] = []
        self.shared = {"items": [1, 2]}
        self.met = anyio.Event()

    async def __call__(self, name: str, args: dict[str, Any]) -> Any:
        if self.closed:
            self.late.append(name)
        self.calls.append(name)
        self.threads.add(threading.get_ident())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if name == "slow":
                await anyio.sleep(float(args.get("s", 0.05)))
            if name == "fail":
                raise ToolCallError("fail", "nope")
            if name == "shared":
                return self.shared
            if name == "meet":  # until n calls were in flight at once (then for everyone)
                if self.in_flight >= int(args["n"]):
                    self.met.set()
                with anyio.fail_after(10):
                    await self.met.wait()
            return args
        finally:
            self.in_flight -= 1


PATHS = ("echo", "slow", "fail", "shared", "meet")


@pytest.fixture
async def executor() -> AsyncIterator[InProcessExecutor]:
    async with InProcessExecutor() as ex:
        yield ex


def test_implements_the_executor_protocol() -> None:
    assert isinstance(InProcessExecutor(), Executor)


async def test_runs_a_script_with_calls_and_trace(executor: InProcessExecutor) -> None:
    host = Host()
    result = await executor.run("a = await tools.echo(x=1)\nprint('got', a)\n[a['x'], 2]",
                                call_tool=host, tool_paths=PATHS)
    assert result.ok and result.value == [1, 2]
    assert result.output == "got {'x': 1}\n"
    assert [(c.index, c.name, c.arguments, c.ok) for c in result.calls] == [
        (0, "echo", {"x": 1}, True)]
    assert result.usage.calls == 1 and result.usage.time > 0


async def test_tool_calls_run_on_the_host_thread_script_does_not(
        executor: InProcessExecutor) -> None:
    host = Host()
    result = await executor.run("await tools.echo()\nawait tools.echo()",
                                call_tool=host, tool_paths=PATHS)
    assert result.ok
    assert host.threads == {threading.get_ident()}


async def test_host_loop_keeps_ticking_during_a_cpu_script(executor: InProcessExecutor) -> None:
    async with host_ticks() as ticks:
        result = await executor.run("while True:\n    pass", call_tool=Host(),
                                    limits=Limits(timeout=0.5, operations=10**12))
    assert result.error is not None and result.error.limit == "timeout"
    # it kept ticking; the stall bound itself is a benchmark number
    assert not ticks.starved, ticks


async def test_results_cross_as_json_copies(executor: InProcessExecutor) -> None:
    host = Host()
    result = await executor.run("s = await tools.shared()\ns['items'].append(3)\ns",
                                call_tool=host, tool_paths=PATHS)
    assert result.value == {"items": [1, 2, 3]}
    assert host.shared == {"items": [1, 2]}


async def test_concurrency_is_bounded_on_the_host(executor: InProcessExecutor) -> None:
    host = Host()
    result = await executor.run(
        "import asyncio\nawait asyncio.gather(*[tools.meet(n=3) for i in range(12)])",
        call_tool=host, tool_paths=PATHS, limits=Limits(concurrency=3))
    assert result.ok and len(result.value) == 12
    assert host.max_in_flight == 3


async def test_calls_limit_trips_and_is_reported(executor: InProcessExecutor) -> None:
    host = Host()
    result = await executor.run("for i in range(10):\n    await tools.echo(i=i)",
                                call_tool=host, tool_paths=PATHS, limits=Limits(calls=4))
    assert result.error is not None and result.error.limit == "calls"
    assert result.error.line == 2
    assert len(host.calls) == 4 and len(result.calls) == 4


async def test_failed_call_is_traced(executor: InProcessExecutor) -> None:
    result = await executor.run("try:\n    await tools.fail()\nexcept ToolCallError:\n    1",
                                call_tool=Host(), tool_paths=PATHS)
    assert [(c.ok, c.error) for c in result.calls] == [(False, "nope")]


async def test_cancelling_run_stops_script_and_calls(executor: InProcessExecutor) -> None:
    host = Host()
    second = anyio.Event()

    async def call_tool(name: str, args: dict[str, Any]) -> Any:
        if len(host.calls) == 1:
            second.set()
        return await host(name, args)

    async with anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(
            executor.run, "while True:\n    await tools.slow(s=0.05)", call_tool=call_tool,
            tool_paths=PATHS))
        with anyio.fail_after(20):
            await second.wait()
        tg.cancel_scope.cancel()
    host.closed = True
    calls = len(host.calls)
    again = await executor.run("await tools.echo(v=1)", call_tool=Host(), tool_paths=PATHS)
    assert again.value == {"v": 1}  # a later run on the same script thread: the barrier
    assert host.late == []
    assert len(host.calls) == calls == 2


async def test_timeout_during_a_slow_call_points_at_the_await(
        executor: InProcessExecutor) -> None:
    host = Host()
    result = await executor.run("x = 1\nawait tools.slow(s=5)", call_tool=host,
                                tool_paths=PATHS, limits=Limits(timeout=0.2))
    assert result.error is not None and result.error.limit == "timeout"
    assert result.error.line == 2
    assert [c.error for c in result.calls] == ["cancelled"]


async def test_runs_concurrently_on_one_executor(executor: InProcessExecutor) -> None:
    results: list[Any] = []

    async def one(i: int) -> None:
        result = await executor.run(f"await tools.slow(s=0.05)\n{i}", call_tool=Host(),
                                    tool_paths=PATHS)
        results.append(result.value)

    async with anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(one, i)
    assert sorted(results) == [0, 1, 2, 3]


async def test_closed_executor_refuses_runs() -> None:
    executor = InProcessExecutor()
    await executor.aclose()
    host = Host()
    with pytest.raises(SandboxError, match=r"^the executor is closed$"):
        await executor.run("await tools.echo()", call_tool=host, tool_paths=PATHS)
    assert host.calls == []


def _script_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "codemode-sandbox-script"}


async def test_spawn_starts_the_script_thread_the_first_run_uses() -> None:
    before = _script_threads()
    executor = InProcessExecutor()
    executor.spawn()
    executor.spawn()  # an idle thread waits already: no second one
    spawned = _script_threads() - before
    assert len(spawned) == 1
    result = await executor.run("await tools.echo(x=1)\n2", call_tool=Host(), tool_paths=PATHS)
    assert result.ok and result.value == 2
    assert _script_threads() - before == spawned  # the run took it, started none
    await executor.aclose()
    (thread,) = spawned
    thread.join(5)
    assert not thread.is_alive()


async def test_spawn_on_a_closed_executor_starts_nothing() -> None:
    executor = InProcessExecutor()
    await executor.aclose()
    before = _script_threads()
    executor.spawn()
    assert _script_threads() - before == set()


_PRELOAD_CHECK = """\
import sys, time
from codemode.sandbox import InProcessExecutor
names = {f"codemode.sandbox.language.facades.{m}_facade" for m in ("asyncio", "json")}
assert not names & set(sys.modules), "loaded before the spawn"
executor = InProcessExecutor()
executor.spawn()
deadline = time.monotonic() + 20
while not names <= set(sys.modules):
    assert time.monotonic() < deadline, "never preloaded"
    time.sleep(0.01)
print("preloaded")
"""


def test_a_spawned_script_thread_preloads_the_facades_a_first_run_loads() -> None:
    done = subprocess.run([sys.executable, "-c", _PRELOAD_CHECK], capture_output=True,
                          text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "preloaded\n", "")
