"""Background tasks: checks before start, their own signal, bounded output, owner clean-up,
completion notices; and the example `count_primes` tool driven from a script end to end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm
from examples import background

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


@pytest.fixture
async def plane() -> AsyncIterator[cm.TaskManager]:
    async with cm.TaskManager() as manager:
        yield manager


class Work:
    """A producer that records what the manager did to it (no resources of its own)."""

    def __init__(self, start: cm.TaskStart) -> None:
        self.start = start
        self.cancelled = 0
        self.released = False
        self._end = anyio.Event()
        self.outcome: Any = {"result": "finished"}

    def cancel(self) -> None:
        self.cancelled += 1
        self.outcome = {"cancelled": True}
        self.finish()

    def finish(self) -> None:
        self.released = True
        self._end.set()

    async def done(self) -> Any:
        await self._end.wait()
        return self.outcome


def _starter(made: list[Work]) -> Any:
    def run(start: cm.TaskStart) -> Work:
        work = Work(start)
        made.append(work)
        return work

    return run


async def _settle(plane: cm.TaskManager, task: str, owner: cm.AgentSession) -> cm.TaskStatus:
    with anyio.fail_after(5):
        return await plane.wait(task, owner)


async def test_a_task_runs_to_completion_and_notifies_its_owner(plane: cm.TaskManager) -> None:
    made: list[Work] = []
    owner = cm.AgentSession("a")
    task = plane.start(kind="k", label="one job", run=_starter(made), owner=owner)
    assert plane.status(task, owner).state == "running"
    made[0].finish()
    status = await _settle(plane, task, owner)
    assert status.to_json() == {"id": task, "kind": "k", "label": "one job",
                                "state": "completed", "result": "finished"}
    [notice] = owner.drain()
    assert notice.content == f'Background task {task} (k: one job) completed: "finished"'
    assert notice.source == {"kind": "task", "task": task, "task_kind": "k"}
    assert owner.drain() == ()


@pytest.mark.parametrize("problem", ["no owner", "disposed owner", "cancelled call",
                                     "no manager"])
async def test_refused_tasks_never_start_their_run(plane: cm.TaskManager, problem: str) -> None:
    made: list[Work] = []
    owner: cm.AgentSession | None = cm.AgentSession("a")
    signal = cm.CancelSignal()
    manager: cm.TaskManager = plane
    if problem == "no owner":
        owner = None
    elif problem == "disposed owner":
        assert owner is not None
        owner.dispose()
    elif problem == "cancelled call":
        signal.cancel("user stop")
    else:
        manager = cm.TaskManager()  # never entered
    with pytest.raises(cm.TaskError):
        manager.start(kind="k", label="x", run=_starter(made), owner=owner, signal=signal)
    assert made == []
    assert plane.list(owner) == ()


async def test_the_starting_calls_signal_does_not_cancel_a_started_task(
        plane: cm.TaskManager) -> None:
    made: list[Work] = []
    owner = cm.AgentSession("a")
    call_signal = cm.CancelSignal()
    task = plane.start(kind="k", label="x", run=_starter(made), owner=owner, signal=call_signal)
    call_signal.cancel("the call ended")
    await anyio.sleep(0.01)
    assert made[0].cancelled == 0 and plane.status(task, owner).state == "running"
    assert made[0].start.signal is not call_signal
    plane.cancel(task, owner, "stop it")
    status = await _settle(plane, task, owner)
    assert (status.state, status.error, made[0].cancelled) == ("cancelled", "stop it", 1)


async def test_disposing_the_owner_cancels_its_tasks_only(plane: cm.TaskManager) -> None:
    made: list[Work] = []
    owner, other = cm.AgentSession("a"), cm.AgentSession("b")
    mine = plane.start(kind="k", label="mine", run=_starter(made), owner=owner)
    theirs = plane.start(kind="k", label="theirs", run=_starter(made), owner=other)
    owner.dispose()
    status = await _settle(plane, mine, owner)
    assert status.state == "cancelled" and made[0].released
    assert owner.drain() == ()  # a disposed session keeps no notice
    assert plane.status(theirs, other).state == "running" and made[1].cancelled == 0
    with pytest.raises(cm.TaskError, match="no task"):
        plane.status(theirs, owner)  # the session fence


async def test_closing_the_manager_cancels_and_waits_for_every_task() -> None:
    made: list[Work] = []
    owner = cm.AgentSession("a")
    async with cm.TaskManager() as manager:
        task = manager.start(kind="k", label="x", run=_starter(made), owner=owner)
    assert made[0].released and manager.status(task, owner).state == "cancelled"
    assert not manager.running


async def test_a_producer_whose_done_raises_fails_the_task_not_the_host(
        plane: cm.TaskManager) -> None:
    owner = cm.AgentSession("a")

    class Broken:
        def cancel(self) -> None:
            raise RuntimeError("cannot cancel")

        async def done(self) -> Any:
            raise ValueError("lost track")

    task = plane.start(kind="k", label="x", run=lambda start: Broken(), owner=owner)
    status = await _settle(plane, task, owner)
    assert (status.state, status.error) == ("failed", "done() raised ValueError: lost track")


async def test_background_output_is_bounded_and_consumed(plane: cm.TaskManager) -> None:
    owner = cm.AgentSession("a")
    release = anyio.Event()

    async def job(io: cm.TaskIO) -> int:
        for n in range(10):
            io.write(f"line {n}\n")
        await release.wait()
        return 10

    task = plane.start(kind="k", label="x", run=cm.background(job, max_output=28), owner=owner)
    await anyio.sleep(0.01)
    assert plane.read_output(task, owner, 14) == (
        "[42 earlier characters dropped]\nline 6\nline 7\n")
    assert plane.read_output(task, owner, 100) == "line 8\nline 9\n"
    assert plane.read_output(task, owner, 100) == ""
    release.set()
    assert (await _settle(plane, task, owner)).result == 10


async def test_a_failing_job_reports_failed(plane: cm.TaskManager) -> None:
    owner = cm.AgentSession("a")

    async def job(io: cm.TaskIO) -> None:
        raise OSError("disk full")

    task = plane.start(kind="k", label="x", run=cm.background(job), owner=owner)
    status = await _settle(plane, task, owner)
    assert (status.state, status.error) == ("failed", "OSError: disk full")
    assert owner.drain()[0].content == f"Background task {task} (k: x) failed: OSError: disk full"


async def test_tools_reach_tasks_through_ctx_and_are_refused_without_a_runtime() -> None:
    reg = background.build_registry()
    call = cm.ToolCall(call_id="c", name="count_primes", arguments={"limit": 100})
    result = await reg.execute(call)  # no session, no registry.tasks
    assert result.is_error and "no registry.tasks" in result.text
    async with cm.TaskManager() as manager:
        reg.tasks = manager
        result = await reg.execute(call)
        assert result.is_error and "live agent session" in result.text
        assert manager.list(None) == ()


async def test_count_primes_from_a_script_end_to_end() -> None:
    """Start from a script, poll, read bounded output, cancel another, clean up, notice."""
    reg = background.build_registry(pause=0.002)
    async with cm.TaskManager() as manager, cm.InProcessExecutor() as executor:
        reg.tasks = manager
        mode = cm.CodeMode(reg, executor=executor, limits=cm.Limits(timeout=20))
        session = cm.AgentSession("main")
        script = """
started = await tools.count_primes(limit=20000)
slow = await tools.count_primes(limit=9000000)
task = started["task"]
status = await tools.task_status(id=task)
while status["state"] == "running":
    await asyncio.sleep(0.01)
    status = await tools.task_status(id=task)
out = await tools.task_output(id=task, max_chars=80)
rest = await tools.task_output(id=task, max_chars=20000)
await tools.task_cancel(id=slow["task"])
{"status": status, "first": out["output"], "rest": rest["output"], "slow": slow["task"]}
"""
        result = await mode.run(script, session=session)
        assert result.error is None, result.error
        value = result.value
        expected = background.primes_below(20000)
        assert value["status"] == {"id": "task-1", "kind": "count_primes",
                                   "label": "primes below 20,000", "state": "completed",
                                   "result": {"limit": 20000, "primes": expected}}
        stops = [min(start + background.CHUNK, 20000)
                 for start in range(2, 20000, background.CHUNK)]
        lines = "".join(f"checked {stop - 1:,}: {background.primes_below(stop):,} primes so far\n"
                        for stop in stops)
        assert (value["first"], value["rest"]) == (lines[:80], lines[80:])  # each char once
        slow = value["slow"]
        final = await manager.wait(slow, session)
        assert final.state == "cancelled"
        notices = [n.content for n in session.drain()]
        assert notices[0] == ("Background task task-1 (count_primes: primes below 20,000) "
                              f'completed: {{"limit": 20000, "primes": {expected}}}')
        assert notices[1].startswith("Background task task-2 (count_primes: primes below "
                                     "9,000,000) cancelled")
        again = await mode.run('await tools.count_primes(limit=9000000)', session=session)
        assert again.error is None
        running = again.value["task"]
        session.dispose()  # owner clean-up
        assert (await manager.wait(running, session)).state == "cancelled"
        assert session.drain() == ()
