"""A run prepares a long new script (parse, dialect plan, preflight, compile) on a worker
thread, so the host's event loop keeps serving its other tasks; a short one in place.
Either way the problems, the prepared source and the result are the same."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

import codemode as cm
from codemode.mode.code_mode import OFF_LOOP_SOURCE
from codemode.sandbox import InProcessExecutor


def _registry() -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    async def double(args: dict[str, Any], ctx: cm.ExecContext) -> int:
        return int(args["n"]) * 2

    registry.register(cm.define_tool(name="double", execute=double, parameters={
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
    return registry


def _long(tail: str) -> str:
    body = "\n".join(f"v{i} = [j * {i % 7} for j in range(3)]" for i in range(120))
    source = f"{body}\n{tail}\n"
    assert len(source) > OFF_LOOP_SOURCE
    return source


class _Watch:
    """Wraps a CodeMode's ``_prepare_new``: records the thread it ran on and, before it
    returns, waits for the loop to set ``loop_ran`` (it can only when it is free)."""

    def __init__(self, mode: cm.CodeMode, monkeypatch: pytest.MonkeyPatch) -> None:
        self.threads: list[int] = []
        self.loop_ran = threading.Event()
        self.saw_loop: list[bool] = []
        original = mode._prepare_new

        def watched(*args: Any) -> Any:
            self.threads.append(threading.get_ident())
            if threading.get_ident() != self.loop_thread:
                self.saw_loop.append(self.loop_ran.wait(timeout=10))
            return original(*args)

        self.loop_thread = threading.get_ident()
        monkeypatch.setattr(mode, "_prepare_new", watched)


async def test_a_long_new_script_is_prepared_while_the_loop_serves_other_tasks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async with cm.CodeMode(_registry(), executor=InProcessExecutor()) as mode:
        watch = _Watch(mode, monkeypatch)

        async def other_task() -> None:
            await anyio.sleep(0.01)
            watch.loop_ran.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(other_task)
            result = await mode.run(_long("await tools.double(n=v3[1] + 20)"))
        assert result.error is None and result.value == 2 * (3 + 20)
        assert watch.threads and watch.threads[0] != watch.loop_thread
        assert watch.saw_loop == [True]


async def test_a_short_script_is_prepared_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    async with cm.CodeMode(_registry(), executor=InProcessExecutor()) as mode:
        watch = _Watch(mode, monkeypatch)
        result = await mode.run("await tools.double(n=4)")
        assert result.value == 8
        assert watch.threads == [watch.loop_thread]


@pytest.mark.parametrize("tail", [
    "await tools.nope(n=1)",  # unknown tool
    "await tools.double(n='x')",  # a literal that fails its schema
    "def (",  # a syntax error
    "v0.__class__",  # refused by the sandbox policy at compile
], ids=["unknown-tool", "bad-literal", "syntax", "policy"])
async def test_the_thread_finds_the_same_problems_as_check(tail: str) -> None:
    source = _long(tail)
    async with cm.CodeMode(_registry(), executor=InProcessExecutor()) as checked, \
            cm.CodeMode(_registry(), executor=InProcessExecutor()) as ran:
        problems = checked.check(source)
        result = await ran.run(source)
        assert problems
        assert result.error is not None and result.error.type == "PreflightError"
        assert result.error.message == "the script was not run:\n" + "\n".join(
            map(str, problems))
        assert ran.check(source) == problems  # the run's answer was cached as check's
