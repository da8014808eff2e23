"""How an in-process run ends on the host: a run that ended by itself is not aborted
(the abort's hop woke the script thread once more for nothing), and a script thread that
never comes back is still cut at ``timeout + stop_grace`` by the host's one timer
(``_Watcher``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from codemode.sandbox import InProcessExecutor, Limits
from codemode.sandbox.executors import inprocess
from codemode.sandbox.runtime.result import RunOutcome
from codemode.sandbox.runtime.runner import RunControl

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def aborts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The reasons every ``RunControl.abort`` was called with."""
    seen: list[str] = []
    original = RunControl.abort

    def abort(self: RunControl, reason: str = "the run was cancelled") -> None:
        seen.append(reason)
        original(self, reason)

    monkeypatch.setattr(RunControl, "abort", abort)
    return seen


async def call_tool(path: str, args: dict[str, Any]) -> Any:
    return {"path": path, **args}


@pytest.mark.parametrize("script", [
    "n = 7\n{'n': n}\n",
    "x = await tools.echo(n=1)\nx\n",
    "1 / 0\n",
])
async def test_a_run_that_ended_by_itself_is_not_aborted(script: str,
                                                         aborts: list[str]) -> None:
    async with InProcessExecutor() as executor:
        # back to back, as a host runs them: the host used to resume before the job's
        # future was done, more often than not
        results = [await executor.run(script, call_tool=call_tool, tool_paths=("echo",))
                   for _ in range(30)]
    assert aborts == []
    assert all(result.error is None or result.error.type == "ZeroDivisionError"
               for result in results)


async def test_a_script_thread_stuck_past_timeout_and_grace_is_cut(
        aborts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    async def stuck(*args: Any, **kwargs: Any) -> RunOutcome:
        # one long C call on the script thread: no tick, no await the runner stops at
        time.sleep(1.0)  # noqa: ASYNC251
        return RunOutcome(value="finished")

    monkeypatch.setattr(inprocess, "run_script", stuck)
    async with InProcessExecutor(stop_grace=0.05) as executor:
        result = await executor.run("x\n", call_tool=call_tool, limits=Limits(timeout=0.1))
    assert result.error is not None and result.error.limit == "timeout"
    assert result.value is None
    assert aborts == ["the run was stopped by the host"]
