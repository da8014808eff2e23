"""The in-process executor holds the host's loop thread and its script thread to one CPU
while runs are on (``executors/affinity.py``), and gives the loop thread its own affinity
back at the loop's turn after the last one; where the CPU cannot be told, or the thread
may use one CPU only, or ``share_cpu=False``, affinities are left as they are.

Affinities are read from the kernel: the loop thread's own (``sched_getaffinity(0)`` on
the thread that runs the host's loop and its tools), the script thread's from
``/proc/self/task/<tid>/status``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from codemode.sandbox import InProcessExecutor
from codemode.sandbox.executors import affinity

pytestmark = pytest.mark.anyio

CPUS = os.sched_getaffinity(0)
MANY_CPUS = len(CPUS) > 1


def _cpus_of(native_id: int) -> set[int]:
    """A thread's affinity, read from the kernel (Cpus_allowed_list: ``0-3,6``)."""
    status = Path(f"/proc/self/task/{native_id}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("Cpus_allowed_list:"))
    found: set[int] = set()
    for part in line.split(":", 1)[1].strip().split(","):
        first, _, last = part.partition("-")
        found.update(range(int(first), int(last or first) + 1))
    return found


class Seen:
    """What a tool saw of both threads' affinities while the run was on (the script
    threads are the ones started since this was made: other tests' executors may have
    left theirs)."""

    def __init__(self) -> None:
        self.loop: list[set[int]] = []
        self.script: list[set[int]] = []
        self._older = set(threading.enumerate())

    async def call_tool(self, path: str, args: dict[str, Any]) -> Any:
        # tools run on the host's loop thread; the script thread waits for this reply
        self.loop.append(os.sched_getaffinity(0))
        self.script.extend(_cpus_of(t.native_id or 0) for t in threading.enumerate()
                           if t.name == "codemode-sandbox-script" and t not in self._older)
        return 1


async def test_a_run_holds_both_threads_to_one_cpu_and_gives_it_back() -> None:
    # CI has two CPUs or more; on a one-CPU machine this is the left-alone path below
    before = os.sched_getaffinity(0)
    seen = Seen()
    async with InProcessExecutor() as executor:
        result = await executor.run("a = await tools.probe()\nb = await tools.probe()\na + b",
                                    call_tool=seen.call_tool, tool_paths=("probe",))
        assert result.error is None and result.value == 2
        assert len(seen.loop) == 2 and all(len(cpus) == 1 for cpus in seen.loop) == MANY_CPUS
        assert seen.script and all(cpus == seen.loop[0] for cpus in seen.script)
        assert seen.loop[0] <= before
        await anyio.lowlevel.checkpoint()  # the loop's next turn gives it back
        assert os.sched_getaffinity(0) == before  # the loop thread's own mask is back


async def test_concurrent_runs_share_the_hold_until_the_last_ends() -> None:
    before = os.sched_getaffinity(0)
    seen = Seen()
    async with InProcessExecutor() as executor:

        async def one(pause: float) -> None:
            result = await executor.run(
                f"import asyncio\nawait tools.probe()\nawait asyncio.sleep({pause})\n"
                "await tools.probe()", call_tool=seen.call_tool, tool_paths=("probe",))
            assert result.error is None, result.error

        async with anyio.create_task_group() as group:
            group.start_soon(one, 0.05)
            group.start_soon(one, 0.2)
        assert len(seen.loop) == 4 and len({frozenset(c) for c in seen.loop}) == 1
        assert len(seen.loop[0]) == 1 if MANY_CPUS else seen.loop[0] == before
        await anyio.lowlevel.checkpoint()
        assert os.sched_getaffinity(0) == before


async def test_a_failed_run_gives_the_cpu_back_too() -> None:
    before = os.sched_getaffinity(0)
    async with InProcessExecutor() as executor:
        result = await executor.run("1 / 0", call_tool=Seen().call_tool)
        assert result.error is not None and result.error.type == "ZeroDivisionError"
        await anyio.lowlevel.checkpoint()
        assert os.sched_getaffinity(0) == before


async def test_share_cpu_false_leaves_both_threads_alone() -> None:
    before = os.sched_getaffinity(0)
    seen = Seen()
    async with InProcessExecutor(share_cpu=False) as executor:
        result = await executor.run("await tools.probe()", call_tool=seen.call_tool,
                                    tool_paths=("probe",))
        assert result.error is None
        assert seen.loop == [before] and seen.script == [CPUS]


async def test_where_the_cpu_cannot_be_told_nothing_is_pinned(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(affinity, "current_cpu", lambda: None)
    before = os.sched_getaffinity(0)
    seen = Seen()
    async with InProcessExecutor() as executor:
        result = await executor.run("await tools.probe()", call_tool=seen.call_tool,
                                    tool_paths=("probe",))
        assert result.error is None
        assert seen.loop == [before] and seen.script == [CPUS]


async def test_a_loop_thread_on_one_cpu_already_is_left_as_it_is() -> None:
    before = os.sched_getaffinity(0)
    only = min(before)
    os.sched_setaffinity(0, {only})
    try:
        seen = Seen()
        async with InProcessExecutor() as executor:
            result = await executor.run("await tools.probe()", call_tool=seen.call_tool,
                                        tool_paths=("probe",))
            assert result.error is None
            assert seen.loop == [{only}]
            assert os.sched_getaffinity(0) == {only}
    finally:
        os.sched_setaffinity(0, before)


async def test_a_refused_affinity_call_leaves_the_run_unpinned(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pid: int, cpus: Any) -> None:
        raise PermissionError("not allowed here")

    monkeypatch.setattr(affinity.os, "sched_setaffinity", refuse)
    seen = Seen()
    async with InProcessExecutor() as executor:
        result = await executor.run("await tools.probe()\n2", call_tool=seen.call_tool,
                                    tool_paths=("probe",))
    assert result.error is None and result.value == 2
    assert seen.loop == [CPUS]


async def test_runs_one_after_another_keep_the_hold_until_the_loop_turns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Back-to-back runs in one task (no loop turn between them) pin the loop thread once
    and give it back once, and their script thread joins its CPU once: no
    ``sched_setaffinity`` call per run."""
    calls: list[int] = []
    real = os.sched_setaffinity

    def counted(pid: int, cpus: Any) -> None:
        calls.append(threading.get_ident())
        real(pid, cpus)

    before = os.sched_getaffinity(0)
    seen = Seen()
    async with InProcessExecutor() as executor:
        await executor.run("1", call_tool=seen.call_tool)  # its script thread starts
        await anyio.lowlevel.checkpoint()
        monkeypatch.setattr(affinity.os, "sched_setaffinity", counted)
        for _ in range(3):
            result = await executor.run("await tools.probe()", call_tool=seen.call_tool,
                                        tool_paths=("probe",))
            assert result.error is None
        held = calls.count(threading.get_ident())
        assert os.sched_getaffinity(0) == (seen.loop[0] if MANY_CPUS else before)
        await anyio.lowlevel.checkpoint()
        assert os.sched_getaffinity(0) == before
    assert held == (1 if MANY_CPUS else 0)  # pinned once, still held after the third run
    assert calls.count(threading.get_ident()) == (2 if MANY_CPUS else 0)
    # the script thread joins the loop thread's CPU once at most (none when the loop
    # thread was on the same CPU for the first run as for the one before)
    assert len(calls) - calls.count(threading.get_ident()) <= (1 if MANY_CPUS else 0)
    assert len({frozenset(cpus) for cpus in seen.loop}) == 1


def test_a_run_that_ends_after_its_loop_closed_gives_the_cpus_back_at_once() -> None:
    """A run unwound once its loop stopped for good (its coroutine closed) has no next
    turn to give the loop thread its CPUs back at: it does so at once, and raises nothing
    out of the run's ``finally``."""
    import asyncio

    before = os.sched_getaffinity(0)
    share = affinity.CpuShare()
    loop = asyncio.new_event_loop()
    loop.close()
    try:
        share.enter()
        share.leave(loop)
        assert os.sched_getaffinity(0) == before
    finally:
        os.sched_setaffinity(0, before)
