"""``asyncio`` for scripts: ``gather``, ``sleep``, ``wait_for``, ``create_task``,
``Semaphore`` and ``Lock`` (and ``TimeoutError``, ``CancelledError``: catching the latter
is no more than a bare ``except:``, which the runner already survives).

``gather`` is implemented on anyio task groups (so the library keeps one async idiom),
with asyncio's observable behaviour: it returns a list in argument order and raises the
first failure (not an ExceptionGroup) after cancelling the rest, or returns exceptions
in place with ``return_exceptions=True``. ``create_task`` is asyncio's own (a script's
side always runs on an asyncio loop) and the task belongs to the run: the script holds a
:class:`Task` handle that answers only ``done``/``cancel``/``cancelled``/``result``, and
a task still running when the script ends is cancelled with it (``RunState.tasks``).
"""

from __future__ import annotations

import asyncio
import inspect
import math
from typing import TYPE_CHECKING, Any, Final

import anyio

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, refuse
from codemode.sandbox.language.meter import Tripped
from codemode.sandbox.language.sizes import ensure_size
from codemode.sandbox.language.state import (
    ScriptCoroutine,
    counted,
    current_run,
    host_raised,
    tracked,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Generator

__all__ = ["FACADE", "TASK_BYTES", "Lock", "Semaphore", "Task"]

TASK_BYTES: Final = 4096
"""Host memory one gathered awaitable costs (task, coroutine wrapper, cancel scope)."""


async def gather(*aws: Awaitable[Any], return_exceptions: bool = False) -> list[Any]:
    """Run awaitables concurrently; results in argument order."""
    for aw in aws:
        if not inspect.isawaitable(aw):
            raise TypeError(f"asyncio.gather() arguments must be awaitables, "
                            f"got {type(aw).__name__}")
    # Each task costs about TASK_BYTES of host memory that no script code allocates
    # (10**5 awaitables grew an in-process host by 1.5 GB); in a worker the allocations
    # fail inside the event loop, where a MemoryError is fatal. Size them first.
    ensure_size(len(aws) * TASK_BYTES, "asyncio.gather()")
    results: list[Any] = [None] * len(aws)
    started = [False] * len(aws)
    failures: list[BaseException] = []

    async def one(index: int, aw: Awaitable[Any]) -> None:
        started[index] = True
        try:
            results[index] = await aw
        except Exception as exc:
            if return_exceptions:
                results[index] = exc
            else:
                failures.append(exc)
                tg.cancel_scope.cancel()
        except Tripped as exc:
            failures.append(exc)
            tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            if tg.cancel_scope.cancel_called or anyio.current_effective_deadline() == -math.inf:
                raise  # a real cancellation: the gather's own, or a scope around it
            # Nobody cancelled it: the script raised a cancellation it had kept (a bare
            # except: in a suspended async generator); the task group would take it for
            # its own and drop every result.
            failures.append(RuntimeError("a cancellation was raised again after the code "
                                         "it cancelled had ended (a bare except: kept it)"))
            tg.cancel_scope.cancel()

    try:
        async with anyio.create_task_group() as tg:
            # Counted: host code starts the tasks without script ticks; the ticks let the
            # deadline and the aggregate memory check run in between.
            for index, aw in counted(enumerate(aws)):
                tg.start_soon(one, index, aw)
    finally:
        for index, aw in enumerate(aws):
            if not started[index] and isinstance(aw, ScriptCoroutine):
                aw.close()
    if failures:
        raise failures[0]
    return results


async def sleep(delay: float, result: Any = None) -> Any:
    """Sleep without blocking other tasks (bounded by the run's timeout)."""
    await anyio.sleep(max(0.0, float(delay)))
    return result


async def wait_for(aw: Awaitable[Any], timeout: float | None) -> Any:  # noqa: ASYNC109
    """Await with a time limit; raises TimeoutError when it expires."""
    if timeout is None:
        return await aw
    seconds = max(0.0, float(timeout))
    try:
        with anyio.fail_after(seconds):
            return await aw
    except TimeoutError:
        raise host_raised(TimeoutError(
            f"asyncio.wait_for() timed out after {seconds:g} s (the awaited call was "
            "cancelled); give it a longer timeout, or catch TimeoutError to go on "
            "without it")) from None


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Mark a finished task's failure as seen: one the script never awaited is not
    logged by asyncio later, outside the run."""
    if not task.cancelled():
        task.exception()


class Task(SelfGuarded):
    """What ``asyncio.create_task`` gives a script: await it for the result (or its
    exception); ``done()``, ``cancelled()``, ``cancel()`` and ``result()`` as asyncio's."""

    __slots__ = ("_task",)

    _NAMES: Final = frozenset({"done", "cancelled", "cancel", "result"})

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self._task = task

    def __await__(self) -> Generator[Any, None, Any]:
        return self._task.__await__()

    def __repr__(self) -> str:
        state = "done" if self._task.done() else "pending"
        return f"<Task {state}>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in self._NAMES:
            raise refuse(self, name)
        return getattr(self._task, name)


def create_task(aw: Awaitable[Any], *, name: str | None = None) -> Task:
    """Start ``aw`` now, concurrently with the script; the run owns the task."""
    if not inspect.isawaitable(aw):
        raise TypeError(f"asyncio.create_task() needs an awaitable, got {type(aw).__name__}")
    run = current_run()
    if run.ended:
        raise GeneratorExit  # script code still going after its run: it stops here
    # Each task costs host memory no script code allocates (see ``gather``): the run's
    # tasks together are sized, not one at a time.
    ensure_size((len(run.tasks) + 1) * TASK_BYTES, "asyncio.create_task()")

    async def main() -> Any:
        return await aw

    task = asyncio.get_running_loop().create_task(main())
    task.add_done_callback(_retrieve)
    run.tasks.append(task)
    return Task(task)


class Semaphore(SelfGuarded):
    """``asyncio.Semaphore``: ``async with sem:`` (or ``await sem.acquire()`` …
    ``sem.release()``) lets at most ``value`` holders in at once."""

    __slots__ = ("_lock",)

    _NAMES: Final = frozenset({"acquire", "release", "locked"})

    def __init__(self, value: int = 1) -> None:
        if type(value) is not int or value < 0:
            raise ValueError("Semaphore initial value must be an int >= 0")
        self._lock = asyncio.Semaphore(value)

    async def __aenter__(self) -> None:
        await self._lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {'locked' if self._lock.locked() else 'unlocked'}>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in self._NAMES:
            raise refuse(self, name)
        if name == "acquire":
            return tracked(self._acquire)
        return getattr(self._lock, name)

    async def _acquire(self) -> bool:
        return await self._lock.acquire()


class Lock(Semaphore):
    """``asyncio.Lock``: a semaphore of one."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(1)


FACADE: Final = Facade("asyncio", {"gather": tracked(gather), "sleep": tracked(sleep),
                                   "wait_for": tracked(wait_for),
                                   "create_task": create_task, "ensure_future": create_task,
                                   "Semaphore": Semaphore, "Lock": Lock,
                                   "TimeoutError": TimeoutError,
                                   "CancelledError": asyncio.CancelledError})
