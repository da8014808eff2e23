"""Red-team findings on this round's additions, each held:

- ``str.format``'s ``!r``/``!s``/``!a`` show no host address or name (as f-strings);
- a task started while the run cancels its tasks is cancelled too: nothing is left
  pending on the script's loop, holding memory or writing to stderr later;
- ``textwrap.wrap`` sizes the text before it splits it;
- the trace counts a big int by its digits (``broker.TRACE_ARGUMENTS``).
"""

from __future__ import annotations

import gc
from typing import Any

import anyio
import pytest

import codemode as cm
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor
from codemode.sandbox.executors.broker import NOT_KEPT, TRACE_ARGUMENTS, _traced

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _run(script: str, executor: Any = None, registry: cm.ToolRegistry | None = None,
               **limits: Any) -> Any:
    async with executor or InProcessExecutor() as ex:
        mode = cm.CodeMode(registry or cm.ToolRegistry(), executor=ex,
                           limits=cm.Limits(**limits) if limits else None)
        return await mode.run(script)


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_format_conversions_show_no_host_address(kind: str) -> None:
    script = ("import asyncio, json\nclass A:\n    pass\n"
              "[f'{A()!r}', '{0!r}'.format(A()), '{0!s}'.format(A()), '{0!a}'.format([A()]),\n"
              " '{0!r}'.format(asyncio.sleep), '{0!r}'.format(json.dumps),\n"
              " '{0!r}'.format([].append), '{0!r}'.format({}.get), '{!r}'.format(1.5)]\n")
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    run = await _run(script, executor)
    assert run.error is None, run.error
    texts = run.value
    assert all("0x" not in text for text in texts), texts
    assert all("/" not in text for text in texts), texts  # no module paths either
    assert texts[0] == texts[1] == texts[2]
    assert texts[-1] == "1.5"


async def test_a_task_started_while_tasks_are_cancelled_is_cancelled_too(
        capfd: pytest.CaptureFixture[str]) -> None:
    calls: list[str] = []
    registry = cm.ToolRegistry()

    @cm.tool
    async def note(text: str) -> str:
        """Record a note."""
        calls.append(text)
        return text

    registry.register(note)
    script = ("import asyncio\nasync def late():\n    await asyncio.sleep(0.2)\n"
              "    await tools.note(text='late')\n"
              "async def swallow():\n    try:\n        await asyncio.sleep(100)\n"
              "    except asyncio.CancelledError:\n        asyncio.create_task(late())\n"
              "        await asyncio.sleep(0)\n"
              "t = asyncio.create_task(swallow())\nawait asyncio.sleep(0.01)\n'done'\n")
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(registry, executor=executor)
        for _ in range(3):
            run = await mode.run(script)
            assert run.error is None, run.error
            assert run.value == "done"
        await anyio.sleep(0.5)  # past the late tasks' sleep: none of them called
        assert calls == []
    gc.collect()
    assert "Task was destroyed" not in capfd.readouterr().err


async def test_textwrap_is_sized_before_it_splits() -> None:
    run = await _run("import textwrap\nt = 'ab ' * 3000000\nlen(textwrap.wrap(t, width=1))",
                     memory=64 * 1024 * 1024)
    assert run.value is None
    assert run.error is not None and run.error.limit == "memory"
    assert "textwrap.wrap()" in run.error.message


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_the_trace_counts_big_ints_by_their_digits(kind: str) -> None:
    registry = cm.ToolRegistry()

    async def echo(args: Any, ctx: cm.ExecContext) -> int:
        return len(args["data"])

    registry.register(cm.define_tool(name="echo", execute=echo, parameters={
        "type": "object", "properties": {"data": {"type": "array"}}, "required": ["data"]}))
    script = "big = 10 ** 1000\nawait tools.echo(data=[big] * 100)\n"
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    run = await _run(script, executor, registry)
    assert run.error is None, run.error
    assert run.value == 100
    (record,) = run.calls
    assert list(record.arguments) == [NOT_KEPT]  # ~100 kB of digits, not 800 bytes


@pytest.mark.parametrize(("arguments", "kept"), [
    ({"i": 1}, True),
    ({"a": 1.5, "b": None, "c": True, "d": "x" * 2000}, True),
    ({"k" * (TRACE_ARGUMENTS + 1): 1}, False),  # a key past the limit, through **kwargs
    ({"a": "x" * (TRACE_ARGUMENTS + 1)}, False),
    ({"a": 10 ** 30_000}, True),  # 30,001 digits
    ({"a": [10 ** 30_000] * 3}, False),
    ({f"k{i}": i for i in range(40)}, True),  # past the flat check, walked: small
])
def test_what_the_trace_keeps(arguments: dict[str, Any], kept: bool) -> None:
    traced = _traced(arguments)
    assert (traced is arguments) is kept
    if not kept:
        assert list(traced) == [NOT_KEPT]
