"""InProcessExecutor's call path on an asyncio host: one hop each way (issue #18).

The host tasks a script's calls start run in the host's context (its context
variables, not the script's run state), in the order the script sent them, and
none starts once the run is over.
"""

from __future__ import annotations

import contextvars
from typing import Any

import anyio

from codemode.sandbox import InProcessExecutor, Limits
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
