"""Gathers and tasks inside one another: what they hold of the host (tasks, cancel scopes)
is bounded for the whole run, so neither a wide tree of small gathers nor a deep chain of
them can crash a worker or wedge an in-process run when a limit stops it.

Both used to abort the worker ("Fatal Python error: ... Cannot recover from stack
overflow" / "... from MemoryErrors while normalizing exceptions", status -6): the tree ran
a 64 MiB worker out of address space inside anyio's and asyncio's code (every gather was
sized alone, two tasks each), the chain's cancellation recursed once per nested cancel
scope, past the interpreter's recursion limit, inside the event loop. In-process the chain
left its tasks running (the run did not stop and its thread was abandoned).
"""

from __future__ import annotations

from typing import Any

import pytest

import codemode as cm
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor
from codemode.sandbox.language.facades.asyncio_facade import MAX_NESTING

pytestmark = pytest.mark.anyio

KINDS = ["pool", "inprocess"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _no_tools(name: str, args: Any) -> Any:
    raise AssertionError(f"no tool expected, got {name}")


def _executor(kind: str) -> Any:
    return WorkerPoolExecutor(size=1) if kind == "pool" else InProcessExecutor()


async def _run_then_check(kind: str, script: str, limits: cm.Limits) -> Any:
    """Run ``script``, then a plain script on the same executor (it must still work)."""
    async with _executor(kind) as executor:
        result = await executor.run(script, call_tool=_no_tools, limits=limits)
        after = await executor.run("1 + 1", call_tool=_no_tools, limits=cm.Limits())
        assert after.error is None, after.error
        assert after.value == 2
    return result


TREE = """
import asyncio
async def f(n):
    if n == 0:
        return 1
    r = await asyncio.gather(f(n - 1), f(n - 1))
    return r[0] + r[1]
await f(15)
"""
"""The attack row "nested-gather-fanout": 2**15 leaves, two tasks per gather."""


@pytest.mark.parametrize("kind", KINDS)
async def test_a_tree_of_small_gathers_is_sized_as_a_whole(kind: str) -> None:
    # Time and operations are plenty: the memory limit answers, at a count of tasks (not
    # when the worker's address space runs out, wherever that happens).
    limits = cm.Limits(timeout=60, operations=10**8, memory=64 << 20, recursion=50,
                       concurrency=4)
    result = await _run_then_check(kind, TREE, limits)
    assert result.error is not None
    assert result.error.type == "LimitExceeded", result.error
    assert result.error.limit == "memory", result.error
    assert "asyncio.gather() would need" in result.error.message


CHAIN = """
import asyncio
built = []
async def f(n):
    if n == 0:
        built.append(1)
        await asyncio.sleep(1000)
    r = await asyncio.gather(f(n - 1))
    return r[0]
async def stop():
    while not built:
        await asyncio.sleep(0)
    raise ValueError('stop')
await asyncio.gather(f(DEPTH), stop())
"""
"""One gather inside another, 1200 deep; once the chain is complete, its sibling fails
and the top gather cancels the whole chain."""


@pytest.mark.parametrize("kind", KINDS)
async def test_a_deep_chain_of_gathers_trips_the_recursion_limit(kind: str) -> None:
    limits = cm.Limits(timeout=30, operations=10**8, memory=512 << 20, concurrency=4)
    result = await _run_then_check(kind, CHAIN.replace("DEPTH", "1200"), limits)
    assert result.error is not None
    assert result.error.type == "LimitExceeded", result.error
    assert result.error.limit == "recursion", result.error
    assert f"more than {MAX_NESTING} nested asyncio calls" in result.error.message


@pytest.mark.parametrize(("script", "where"), [
    ("async def f(n):\n    if n == 0:\n        return 0\n"
     "    return await asyncio.create_task(f(n - 1))\nawait f(100)", "asyncio.create_task()"),
    ("async def f(n):\n    if n == 0:\n        return 0\n"
     "    return await asyncio.wait_for(asyncio.gather(f(n - 1)), 100)\nawait f(100)",
     "asyncio."),
    ("async def f(n):\n    if n == 0:\n        return 0\n"
     "    async with asyncio.TaskGroup() as tg:\n        t = tg.create_task(f(n - 1))\n"
     "    return await t\nawait f(100)", "TaskGroup.create_task()"),
])
async def test_every_way_of_nesting_counts(script: str, where: str) -> None:
    # recursion=50: the run's own limit, below MAX_NESTING, is the one that applies.
    limits = cm.Limits(timeout=30, recursion=50)
    async with InProcessExecutor() as executor:
        result = await executor.run("import asyncio\n" + script, call_tool=_no_tools,
                                    limits=limits)
    assert result.error is not None
    assert result.error.limit == "recursion", result.error
    assert "more than 50 nested asyncio calls" in result.error.message
    assert where in result.error.message


@pytest.mark.parametrize("kind", KINDS)
async def test_nested_gathers_within_the_limits_still_work(kind: str) -> None:
    script = ("import asyncio\n"
              "async def tree(n):\n    if n == 0:\n        return 1\n"
              "    r = await asyncio.gather(tree(n - 1), tree(n - 1))\n"
              "    return r[0] + r[1]\n"
              "async def chain(n):\n    if n == 0:\n        return [0]\n"
              "    r = await asyncio.gather(chain(n - 1), asyncio.sleep(0, n))\n"
              "    return r[0] + [r[1]]\n"
              "async def bad(n):\n    if n == 0:\n        raise ValueError('deep')\n"
              "    return (await asyncio.gather(bad(n - 1)))[0]\n"
              "caught = await asyncio.gather(bad(20), asyncio.sleep(0, 'ok'),"
              " return_exceptions=True)\n"
              "[await tree(8), await chain(40), [type(caught[0]).__name__, caught[1]]]")
    async with _executor(kind) as executor:
        result = await executor.run(script, call_tool=_no_tools,
                                    limits=cm.Limits(timeout=30, recursion=50))
    assert result.error is None, result.error
    assert result.value == [256, list(range(41)), ["ValueError", "ok"]]
