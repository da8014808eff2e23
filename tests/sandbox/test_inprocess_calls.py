"""InProcessExecutor's call path on an asyncio host: one hop each way (issue #18).

The host tasks a script's calls start run in the host's context (its context
variables, not the script's run state), in the order the script sent them, and
none starts once the run is over.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from typing import Any

import anyio

from codemode.sandbox import InProcessExecutor, Limits
from codemode.sandbox.executors import inprocess as inprocess_module
from codemode.sandbox.language.state import CURRENT_RUN

REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="unset")


async def test_tools_run_in_the_hosts_context_not_the_scripts() -> None:
    seen: list[tuple[str, bool]] = []

    async def call_tool(name: str, args: dict[str, Any]) -> Any:
        seen.append((REQUEST.get(), CURRENT_RUN.get(None) is None))
        return args

    REQUEST.set("host request 7")
    async with InProcessExecutor() as executor:
        result = await executor.run("await tools.echo(i=1)\nawait tools.echo(i=2)",
                                    call_tool=call_tool, tool_paths=("echo",))
    assert result.ok and result.value == {"i": 2}
    assert seen == [("host request 7", True)] * 2


async def test_output_and_calls_reach_the_host_in_script_order() -> None:
    events: list[str] = []

    async def call_tool(name: str, args: dict[str, Any]) -> Any:
        events.append(f"[call {args['i']}]")
        return args

    script = "for i in range(3):\n    print('out', i)\n    await tools.echo(i=i)\nprint('end')"
    async with InProcessExecutor() as executor:
        result = await executor.run(script, call_tool=call_tool, tool_paths=("echo",),
                                    on_output=events.append)
    assert result.ok
    assert "".join(events) == "out 0\n[call 0]out 1\n[call 1]out 2\n[call 2]end\n"


async def test_concurrent_calls_start_in_order_and_all_finish_before_the_run_returns() -> None:
    started: list[int] = []
    finished: list[int] = []

    async def call_tool(name: str, args: dict[str, Any]) -> Any:
        started.append(args["i"])
        await anyio.sleep(0.01 * (3 - args["i"]))
        finished.append(args["i"])
        return args["i"]

    script = "await asyncio.gather(*[tools.echo(i=i) for i in range(4)])"
    async with InProcessExecutor() as executor:
        result = await executor.run(script, call_tool=call_tool, tool_paths=("echo",))
    assert result.ok and result.value == [0, 1, 2, 3]
    assert started == [0, 1, 2, 3] and sorted(finished) == [0, 1, 2, 3]


async def test_a_call_cut_off_by_the_timeout_is_stopped_on_the_host() -> None:
    entered = anyio.Event()
    left: list[str] = []

    async def call_tool(name: str, args: dict[str, Any]) -> Any:
        entered.set()
        try:
            await anyio.sleep(30)
        finally:
            left.append("stopped")
        return args

    async with InProcessExecutor() as executor:
        result = await executor.run("await tools.slow()", call_tool=call_tool,
                                    tool_paths=("slow",), limits=Limits(timeout=0.3))
    assert entered.is_set()
    assert result.error is not None and result.error.limit == "timeout"
    assert left == ["stopped"]  # the host task was cancelled before run() returned


async def test_a_call_starts_at_once_though_the_next_is_queued_meanwhile() -> None:
    # The script thread may queue its next call's start on the host loop while the host
    # creates the task of the one before (here: queued by create_task itself, before the
    # step). That call's first step still runs at once, before the queued one: 3.11 ran
    # it a turn later, after the next call's eager start, and the calls were answered
    # out of the order the script sent them (seen once in CI, a gather's replies reversed).
    loop = asyncio.get_running_loop()
    order: list[str] = []
    started: list[asyncio.Task[None]] = []

    async def call() -> None:
        order.append("first call's step")

    create_task = loop.create_task

    def racing(coro: Any) -> asyncio.Task[None]:
        loop.call_soon(order.append, "next call's start")
        return create_task(coro)

    def start() -> None:  # on the host loop, as InProcessExecutor's start callback
        loop.create_task = racing  # type: ignore[method-assign]
        try:
            started.append(inprocess_module._eager_task(loop, call()))
        finally:
            del loop.create_task
        order.append("returned")

    loop.call_soon(start)
    while "returned" not in order:  # noqa: ASYNC110 (a loop callback appends)
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    # (3.12+ starts the task eagerly without create_task: nothing races, nothing queued)
    assert order[:2] == ["first call's step", "returned"]
    assert order[2:] == ([] if sys.version_info >= (3, 12) else ["next call's start"])
    assert started[0].done()
