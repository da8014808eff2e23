"""``final_answer(x)`` ends the run with ``x`` from anywhere, a gathered coroutine too."""

from __future__ import annotations

import pytest

import codemode as cm

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


GATHERED = "import asyncio\nasync def f(x):\n    final_answer(x)\n"


@pytest.mark.parametrize(("script", "value"), [
    (GATHERED + "await asyncio.gather(f(5))\n", 5),
    (GATHERED + "await asyncio.gather(asyncio.sleep(0), f([1, 2]))\n'not reached'\n", [1, 2]),
    (GATHERED + "async def g():\n    await asyncio.gather(f('inner'))\n"
     "await asyncio.gather(g())\n", "inner"),
    (GATHERED + "await asyncio.wait_for(f(7), 5)\n", 7),
])
async def test_final_answer_in_a_gathered_coroutine_is_the_result(script: str,
                                                                  value: object) -> None:
    async with cm.InProcessExecutor() as executor:
        run = await cm.CodeMode(cm.ToolRegistry(), executor=executor).run(script)
    assert run.error is None, run.error
    assert run.value == value


async def test_a_gathered_failure_is_still_the_scripts_error() -> None:
    script = ("import asyncio\nasync def f():\n    raise ValueError('bad')\n"
              "await asyncio.gather(f())\n")
    async with cm.InProcessExecutor() as executor:
        run = await cm.CodeMode(cm.ToolRegistry(), executor=executor).run(script)
    assert run.value is None
    assert run.error is not None and run.error.type == "ValueError"
    assert run.error.message == "bad"
