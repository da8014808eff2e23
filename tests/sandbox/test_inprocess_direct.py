"""The in-process executor's direct reply: a script thread with nothing else to run
blocks briefly for its call's reply and the host hands it over without waking the
script's loop; otherwise (other tasks ready, a timer due, a slow reply) the reply goes
through the loop. Either way the script sees the same thing.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from codemode.errors import ToolCallError
from codemode.sandbox import InProcessExecutor
from codemode.sandbox.executors.inprocess import DIRECT_WAIT

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def call_tool(path: str, args: dict[str, Any]) -> Any:
    if path == "slow":
        await anyio.sleep(DIRECT_WAIT * 4)  # past the direct wait: the loop takes it
    if path == "fail":
        raise ToolCallError(path, "no such record")
    return {"path": path, **args}


PATHS = ("fast", "slow", "fail")


async def test_fast_and_slow_replies_and_failures_reach_the_script() -> None:
    script = (
        "out = [await tools.fast(n=1), await tools.slow(n=2), await tools.fast(n=3)]\n"
        "try:\n"
        "    await tools.fail()\n"
        "except Exception as e:\n"
        "    out.append(str(e))\n"
        "out\n"
    )
    async with InProcessExecutor() as executor:
        result = await executor.run(script, call_tool=call_tool, tool_paths=PATHS)
    assert result.error is None, result.error
    assert result.value[:3] == [{"path": "fast", "n": 1}, {"path": "slow", "n": 2},
                                {"path": "fast", "n": 3}]
    assert "no such record" in result.value[3]
    assert [c.name for c in result.calls] == ["fast", "slow", "fast", "fail"]


async def test_other_script_tasks_run_while_a_call_waits() -> None:
    script = (
        "import asyncio\n"
        "seen = []\n"
        "async def ticker():\n"
        "    for i in range(3):\n"
        "        seen.append(i)\n"
        "        await asyncio.sleep(0)\n"
        "async def caller():\n"
        "    r = await tools.slow(n=1)\n"
        "    seen.append('reply')\n"
        "    return r\n"
        "r, _ = await asyncio.gather(caller(), ticker())\n"
        "[r['n'], seen]\n"
    )
    async with InProcessExecutor() as executor:
        result = await executor.run(script, call_tool=call_tool, tool_paths=PATHS)
    assert result.error is None, result.error
    assert result.value == [1, [0, 1, 2, "reply"]]


async def test_a_timer_due_before_the_reply_fires_on_time_for_the_script() -> None:
    script = (
        "import asyncio\n"
        "try:\n"
        "    await asyncio.wait_for(tools.slow(n=1), 0.001)\n"
        "    outcome = 'answered'\n"
        "except Exception as e:\n"
        "    outcome = type(e).__name__\n"
        "[outcome, await tools.fast(n=2)]\n"
    )
    async with InProcessExecutor() as executor:
        result = await executor.run(script, call_tool=call_tool, tool_paths=PATHS)
    assert result.error is None, result.error
    assert result.value == ["TimeoutError", {"path": "fast", "n": 2}]
