"""The run's end without leftovers: a script that left nothing to close (no task still
running, no generator, coroutine or async generator) is closed without the shielded
cancel scope, which only matters where closing can suspend. The outcome is the same
either way, and a script that left something still gets the shielded close.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from codemode.sandbox import Limits
from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.language.state import RunState
from codemode.sandbox.runtime.runner import RunControl, run_script

if TYPE_CHECKING:
    from codemode.sandbox.runtime.result import RunOutcome

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def echo(path: str, args: dict[str, Any]) -> Any:
    return {"path": path, **args}


async def run(script: str) -> RunOutcome:
    broker = CallBroker(echo, Limits(), ("echo",))
    return await run_script(script, call=broker.answer_json, tool_paths=("echo",),
                            limits=Limits(), control=RunControl())


SCRIPTS = {
    "plain": ("n = 7\nprint(n)\n{'n': n}\n", False),
    "a call": ("x = await tools.echo(n=1)\nx\n", False),
    "an error": ("1 / 0\n", False),
    "a comprehension": ("[i * i for i in range(5)]\n", False),
    "a finished task": ("import asyncio\nasync def f():\n    return 2\n"
                        "t = asyncio.create_task(f())\nawait t\n", False),
    "a task still running": ("import asyncio\nasync def f():\n    await asyncio.sleep(10)\n"
                             "t = asyncio.create_task(f())\n1\n", True),
    "a generator": ("def g():\n    yield 1\n    yield 2\nit = g()\nnext(it)\n", True),
    "an async generator": ("async def g():\n    yield 1\n    yield 2\n"
                           "it = g()\nawait it.__anext__()\n", True),
}


@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_the_end_without_leftovers_gives_what_the_shielded_end_gives(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    script, leaves = SCRIPTS[name]
    seen: list[bool] = []
    left_open = RunState.left_open

    def spy(self: RunState) -> bool:
        seen.append(left_open(self))
        return seen[-1]

    monkeypatch.setattr(RunState, "left_open", spy)
    natural = await run(script)
    monkeypatch.setattr(RunState, "left_open", lambda self: True)
    shielded = await run(script)
    assert natural == shielded
    assert seen == [leaves]
