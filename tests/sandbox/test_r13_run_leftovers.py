"""Round 13: nothing of a run stays in the host after it.

A script task that catches every cancellation does not outlive its run.

``RunState._cancel_tasks`` cancelled the run's tasks and waited; a task that caught the
cancellation and awaited again was then dropped from the run's list, left pending on the
loop after the run returned: its frame (and everything it referenced) stayed in the host
run after run (in-process: 12 MB more per run here), and it woke up later, inside
another run's time. The run now keeps it and cancels it once more after it ended, when
its code stops at its first tick or await.

The enum and dataclasses facades kept each class's members and fields in a
``WeakKeyDictionary`` whose values held the class (a member is an instance of it; a
``default_factory`` closure can hold it), so the entry was never dropped: every enum class
and such a dataclass, and all the data on them, stayed in the host run after run."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

import codemode as cm
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _no_tools(name: str, arguments: Any) -> Any:
    raise AssertionError(f"no tool is called here, got {name}")


SCRIPTS = {
    "sleep": """
import asyncio
async def stubborn():
    while True:
        try:
            await asyncio.sleep(1000)
        except asyncio.CancelledError:
            pass
t = asyncio.create_task(stubborn())
await asyncio.sleep(0)
'done'
""",
    "bare-except-awaits-a-task": """
import asyncio
async def other():
    await asyncio.sleep(1000)
async def stubborn():
    o = asyncio.create_task(other())
    while True:
        try:
            await o
        except:
            pass
t = asyncio.create_task(stubborn())
await asyncio.sleep(0)
'done'
""",
    "semaphore": """
import asyncio
sem = asyncio.Semaphore(0)
async def stubborn():
    while True:
        try:
            async with sem:
                pass
        except:
            pass
t = asyncio.create_task(stubborn())
await asyncio.sleep(0)
'done'
""",
}


SHORT = cm.Limits(timeout=0.3)


def _done_or_timed_out(run: Any) -> None:
    """The script's value, or its timeout: a bare ``except:`` that loops on its own
    cancellation spends the run's time (and catches the timeout's trip once)."""
    if run.error is None:
        assert run.value == "done"
    else:
        assert run.error.limit == "timeout", run.error


def _script_tasks() -> list[asyncio.Task[Any]]:
    gc.collect()
    return [task for task in gc.get_objects()
            if isinstance(task, asyncio.Task) and not task.done()
            and "asyncio_facade" in repr(task.get_coro())]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
async def test_a_task_that_catches_its_cancellation_ends_with_the_run(name: str) -> None:
    async with InProcessExecutor() as executor:
        for _ in range(3):
            run = await executor.run(SCRIPTS[name], limits=SHORT, call_tool=_no_tools)
            _done_or_timed_out(run)
        assert _script_tasks() == []


@pytest.mark.parametrize("name", sorted(SCRIPTS))
async def test_a_pool_worker_keeps_no_task_of_an_ended_run(name: str) -> None:
    async with WorkerPoolExecutor(size=1) as executor:
        run = await executor.run(SCRIPTS[name], limits=SHORT, call_tool=_no_tools)
        _done_or_timed_out(run)
        after = await executor.run(
            "import asyncio\nawait asyncio.sleep(0.05)\n1 + 1", limits=cm.Limits(timeout=2),
            call_tool=_no_tools)
        assert after.error is None and after.value == 2


CLASS_SCRIPTS = {
    "enum": """
from enum import Enum
class LeakProbe(Enum):
    A = tuple(range(1000))
    B = 2
len(LeakProbe.A.value)
""",
    "int-enum": """
from enum import IntEnum
class LeakProbe(IntEnum):
    A = 1
LeakProbe.A + 1
""",
    "dataclass-factory-closure": """
import dataclasses
def build():
    holder = []
    f = dataclasses.field(default_factory=lambda: holder[0])
    @dataclasses.dataclass
    class LeakProbe:
        x = f
    holder.append(LeakProbe)
    LeakProbe.data = list(range(1000))
    return LeakProbe
P = build()
len(P().x.data)
""",
}


def _probes() -> list[type]:
    gc.collect()
    return [obj for obj in gc.get_objects()
            if isinstance(obj, type) and obj.__name__ == "LeakProbe"]


@pytest.mark.parametrize("name", sorted(CLASS_SCRIPTS))
async def test_a_script_class_does_not_outlive_its_run(name: str) -> None:
    async with InProcessExecutor() as executor:
        for _ in range(3):
            run = await executor.run(CLASS_SCRIPTS[name], limits=cm.Limits(timeout=5),
                                     call_tool=_no_tools)
            assert run.error is None, run.error
        assert _probes() == []


async def test_enum_and_dataclass_still_answer_after_the_move() -> None:
    script = """
import dataclasses
from enum import Enum, IntEnum
class C(Enum):
    R = 1
    G = 2
class I(IntEnum):
    A = 1
@dataclasses.dataclass
class B:
    x = dataclasses.field(default=1)
@dataclasses.dataclass
class D(B):
    y = dataclasses.field(default=2)
class Plain(D):
    pass
[C(2).name, C['R'].value, len(C), [m.name for m in C], I.A in I, C.R in C,
 [f.name for f in dataclasses.fields(D)], dataclasses.is_dataclass(D()),
 dataclasses.is_dataclass(Plain), dataclasses.asdict(D(5))]
"""
    async with InProcessExecutor() as executor:
        run = await executor.run(script, limits=cm.Limits(timeout=5), call_tool=_no_tools)
    assert run.error is None, run.error
    assert run.value == ["G", 1, 2, ["R", "G"], True, True, ["x", "y"], True, False,
                         {"x": 5, "y": 2}]
