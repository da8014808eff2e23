"""``asyncio`` for scripts: ``gather``, ``sleep``, ``wait_for``, ``create_task``,
``Semaphore``, ``Lock``, ``Event`` and ``Queue`` (and ``TimeoutError``,
``CancelledError``: catching the latter is no more than a bare ``except:``, which the
runner already survives).

``gather`` is implemented on anyio task groups (so the library keeps one async idiom),
with asyncio's observable behaviour: it returns a list in argument order and raises the
first failure (not an ExceptionGroup) after cancelling the rest, or returns exceptions
in place with ``return_exceptions=True``. ``create_task`` is asyncio's own (a script's
side always runs on an asyncio loop) and the task belongs to the run: the script holds a
:class:`Task` handle that answers only ``done``/``cancel``/``cancelled``/``result`` and
its name, and a task still running when the script ends is cancelled with it
(``RunState.tasks``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
from contextvars import ContextVar
from functools import partial
from types import MethodType
from typing import TYPE_CHECKING, Any, ClassVar, Final

import anyio

from codemode.errors import LimitExceeded
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.functools_facade import Partial
from codemode.sandbox.language.guards import SelfGuarded, refuse
from codemode.sandbox.language.meter import ScriptStop, Tripped
from codemode.sandbox.language.sizes import ensure_size
from codemode.sandbox.language.state import (
    CoroutineLike,
    ScriptCoroutine,
    counted,
    current_run,
    host_raised,
    is_async_script_function,
    tracked,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Generator, Sequence

__all__ = ["FACADE", "MAX_NESTING", "TASK_BYTES", "BoundedSemaphore", "Lock", "Queue",
           "Semaphore", "Task", "TaskGroup", "Timeout"]

TASK_BYTES: Final = 4096
"""Host memory one gathered awaitable costs (task, coroutine wrapper, cancel scope)."""

MAX_NESTING: Final = 128
"""Most levels of gathers, tasks and ``wait_for`` calls one inside another (a ``gather``
in a coroutine a ``gather`` runs …) a run may open, whatever ``Limits.recursion`` says.

Every level is a task or an anyio cancel scope inside the one before, and anyio delivers
a cancellation (a failure in a ``gather``, the run's timeout) by recursing over nested
scopes, one Python frame per scope (a ``gather`` opens two): a script's frames are split
between tasks there, so the ``recursion`` limit, which counts the frames of one stack,
never saw the chain. Past the interpreter's recursion limit the cancellation raised
RecursionError inside the event loop (tasks left running: the run did not stop) and in a
worker the interpreter then aborted ("Cannot recover from stack overflow"). 128 levels
are at most 256 frames of cancellation, on top of a stack within ``2 * recursion``."""

_NESTING: Final[ContextVar[int]] = ContextVar("codemode_asyncio_nesting", default=0)
"""How many levels (see ``MAX_NESTING``) the running task is inside of."""


def _nest(what: str) -> int:
    """The nesting level one more ``what`` opens here; trips ``recursion`` past the limit
    (``Limits.recursion``, at most ``MAX_NESTING``)."""
    level = _NESTING.get() + 1
    run = current_run()
    limit = min(run.limits.recursion, MAX_NESTING)
    if level > limit:
        run.meter.trip(LimitExceeded(
            "recursion", run.limits.recursion,
            f"more than {limit} nested asyncio calls (gather, tasks, wait_for) one inside "
            f"another, at {what}"))
    return level


def _admit(aws: Sequence[Any], what: str, *, tasks: bool = True) -> int:
    """The nesting level of the tasks ``what`` starts for ``aws`` (``tasks=False``: of
    the block it awaits them in), sized with the run's other tasks, all together: every
    ``gather`` going on (nested ones too) and every task the script started (see
    ``gather``). A limit tripped here closes ``aws``: none of them ever runs, and none is
    left to warn "never awaited" later."""
    try:
        level = _nest(what)
        if tasks:
            run = current_run()
            ensure_size((run.gathered + len(run.tasks) + len(aws)) * TASK_BYTES, what)
    except BaseException:
        for aw in aws:
            if isinstance(aw, ScriptCoroutine):
                aw.close()
        raise
    return level


async def gather(*aws: Awaitable[Any], return_exceptions: bool = False) -> list[Any]:
    """Run awaitables concurrently; results in argument order."""
    for aw in aws:
        if not inspect.isawaitable(aw):
            raise TypeError(f"asyncio.gather() arguments must be awaitables, "
                            f"got {type(aw).__name__}")
    # Each task costs about TASK_BYTES of host memory that no script code allocates
    # (10**5 awaitables grew an in-process host by 1.5 GB); in a worker the allocations
    # fail inside the event loop, where a MemoryError is fatal. Size them first, with
    # every other gather's tasks: a gather of two in each of two coroutines … (a binary
    # tree 15 deep) holds tens of thousands of tasks, none of them in a big gather, and
    # ran a 64 MiB worker out of address space in anyio's and asyncio's code, which
    # aborted the interpreter ("Cannot recover from MemoryErrors while normalizing
    # exceptions", "Cannot recover from stack overflow").
    level = _admit(aws, "asyncio.gather()")
    run = current_run()
    results: list[Any] = [None] * len(aws)
    started = [False] * len(aws)
    failures: list[BaseException] = []

    async def one(index: int, aw: Awaitable[Any]) -> None:
        started[index] = True
        _NESTING.set(level)  # this task's own context (a copy of the gather's)
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
            if isinstance(aw, Task) and aw.task.cancelled():
                # a task the script cancelled (workers stopped after ``q.join()``): its
                # outcome, as CPython's gather gives it
                if return_exceptions:
                    results[index] = asyncio.CancelledError()
                else:
                    failures.append(asyncio.CancelledError())
                    tg.cancel_scope.cancel()
                return
            # Nobody cancelled it: the script raised a cancellation it had kept (a bare
            # except: in a suspended async generator); the task group would take it for
            # its own and drop every result.
            failures.append(RuntimeError("a cancellation was raised again after the code "
                                         "it cancelled had ended (a bare except: kept it)"))
            tg.cancel_scope.cancel()

    run.gathered += len(aws)
    try:
        async with anyio.create_task_group() as tg:
            # Counted: host code starts the tasks without script ticks; the ticks let the
            # deadline and the aggregate memory check run in between.
            for index, aw in counted(enumerate(aws)):
                tg.start_soon(one, index, aw)
    finally:
        run.gathered -= len(aws)
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
    token = _NESTING.set(_admit((aw,), "asyncio.wait_for()", tasks=False))
    try:
        with anyio.fail_after(seconds):
            return await aw
    except TimeoutError:
        raise host_raised(TimeoutError(
            f"asyncio.wait_for() timed out after {seconds:g} s (the awaited call was "
            "cancelled); give it a longer timeout, or catch TimeoutError to go on "
            "without it")) from None
    finally:
        _NESTING.reset(token)


def _close_unstarted(aw: ScriptCoroutine, task: asyncio.Task[Any]) -> None:
    """A task cancelled before its first step never awaited ``aw``: the coroutine is closed
    now (it never ran: no script code runs). Left to the collector, it warned 'coroutine
    ... was never awaited' on the host's stderr when a reference cycle held it (the
    wrapper's own close raced the coroutine's finalizer)."""
    if task.cancelled():
        aw.close()


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Mark a finished task's failure as seen: one the script never awaited is not
    logged by asyncio later, outside the run."""
    if not task.cancelled():
        task.exception()


class Task(SelfGuarded):
    """What ``asyncio.create_task`` gives a script: await it for the result (or its
    exception); ``done()``, ``cancelled()``, ``cancel()`` and ``result()`` as asyncio's;
    ``get_name()``/``set_name()`` the name the script gave it (or ``Task-N``, N counting
    the run's own tasks: asyncio's counts every run's)."""

    __slots__ = ("_name", "_task")

    _NAMES: Final = frozenset({"done", "cancelled", "cancel", "result", "exception",
                               "get_name", "set_name"})

    def __init__(self, task: asyncio.Task[Any], name: str | None = None) -> None:
        self._task = task
        self._name = f"Task-{len(current_run().tasks)}" if name is None else _task_name(name)

    def get_name(self) -> str:
        """The task's name."""
        return self._name

    def set_name(self, value: object) -> None:
        """Rename the task."""
        self._name = _task_name(value)

    @property
    def task(self) -> asyncio.Task[Any]:
        """The asyncio task (host side only: scripts read ``_NAMES``)."""
        return self._task

    def __await__(self) -> Generator[Any, None, Any]:
        current_run()  # after the run: its leftover code stops here, it does not wait
        if asyncio.current_task() is self._task:
            # asyncio's own error names the task by its repr: the host's file paths and
            # line numbers, and the loop's task counter (how many tasks other runs made).
            raise RuntimeError("Task cannot await on itself")
        return self._task.__await__()

    def __repr__(self) -> str:
        state = "done" if self._task.done() else "pending"
        return f"<Task {state}>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in self._NAMES:
            raise refuse(self, name)
        if name in ("get_name", "set_name"):
            return getattr(self, name)
        return getattr(self._task, name)


def _task_name(name: object) -> str:
    """A task name as asyncio keeps it: text (a number as its digits)."""
    if isinstance(name, bool) or not isinstance(name, str | int):
        raise TypeError("a task name is text in the sandbox")
    return str(name)


def _own(aws: list[Any], what: str) -> list[asyncio.Task[Any]]:
    """Start each awaitable of ``aws`` as a task the run owns (checked and sized first,
    all together with the run's other tasks: see ``gather``)."""
    for aw in aws:
        if not inspect.isawaitable(aw):
            raise TypeError(f"{what} needs awaitables, got {type(aw).__name__}")
    run = current_run()
    if run.ended:
        raise GeneratorExit  # script code still going after its run: it stops here
    level = _admit(aws, what)
    loop = asyncio.get_running_loop()
    started = []
    for aw in counted(aws):
        run.unawaited.pop(id(aw), None)  # a tool call: the task owns it (cancel() is the script's)
        task = loop.create_task(_await(aw, level))
        task.add_done_callback(_retrieve)
        if isinstance(aw, ScriptCoroutine):
            task.add_done_callback(partial(_close_unstarted, aw))
        run.tasks.append(task)
        started.append(task)
    return started


async def _await(aw: Awaitable[Any], level: int) -> Any:
    _NESTING.set(level)  # the task's own context: tasks it starts are one level deeper
    try:
        return await aw
    except ScriptStop as stop:  # exit()/final_answer() in a task: the run ends there
        current_run().stop(stop)
        raise


def iscoroutine(obj: Any) -> bool:
    """``asyncio.iscoroutine``: the script's coroutines and un-awaited tool calls (CPython's
    coroutines both); also what the awaiting rewrite asks of ``x.get(...)`` when the
    script's own ``get`` was made async."""
    return isinstance(obj, CoroutineLike)


def iscoroutinefunction(func: Any) -> bool:
    """``asyncio.iscoroutinefunction``: the script's ``async def``s (and the methods and
    partials made of them; a function the dialects made async is one) and this module's
    ``sleep``, ``wait_for`` and ``wait``; a tool is not one (a bare tool name is a plain
    function for a smolagents script). Also what the awaiting rewrite asks of ``x.get``
    when the script's own ``get`` was made async: a dict's ``get`` is not one, so a
    coroutine it hands back is left as it is."""
    if type(func) is Partial:  # partials of partials are flattened
        func = func.sandbox_getattr("func")
    if isinstance(func, MethodType):
        func = func.__func__
    return is_async_script_function(func) or any(func is f for f in _COROUTINE_FUNCTIONS)


def create_task(aw: Awaitable[Any], *, name: str | None = None) -> Task:
    """Start ``aw`` now, concurrently with the script; the run owns the task."""
    if not inspect.isawaitable(aw):
        raise TypeError(f"asyncio.create_task() needs an awaitable, got {type(aw).__name__}")
    return Task(_own([aw], "asyncio.create_task()")[0], name)


FIRST_COMPLETED: Final = asyncio.FIRST_COMPLETED
FIRST_EXCEPTION: Final = asyncio.FIRST_EXCEPTION
ALL_COMPLETED: Final = asyncio.ALL_COMPLETED


def _handles(aws: Any, what: str) -> list[Task]:
    """The script's tasks for ``aws``: its own :class:`Task` handles as they are, any other
    awaitable (a tool call, a coroutine) started as a new task of the run."""
    if isinstance(aws, Task) or inspect.isawaitable(aws):
        raise TypeError(f"expect an iterable of tasks, not {_one(aws)}: pass a list, e.g. "
                        f"{what}([task])")
    items = list(counted(aws))
    others = [aw for aw in items if not isinstance(aw, Task)]
    fresh = iter(_own(others, f"{what}()"))
    return [aw if isinstance(aw, Task) else Task(next(fresh)) for aw in items]


def _one(aw: Any) -> str:
    return "a Task" if isinstance(aw, Task) else "one awaitable"


async def wait(aws: Any, *, timeout: float | None = None,  # noqa: ASYNC109
               return_when: str = ALL_COMPLETED) -> tuple[set[Task], set[Task]]:
    """``(done, pending)``: sets of the script's tasks, once ``return_when`` is met or
    ``timeout`` seconds passed (the pending ones keep running). Awaitables that are not
    tasks yet (tool calls) are started as tasks, as Python before 3.11 did."""
    if return_when not in (FIRST_COMPLETED, FIRST_EXCEPTION, ALL_COMPLETED):
        raise ValueError(f"Invalid return_when value: {return_when}")
    handles = _handles(aws, "asyncio.wait")
    if not handles:
        raise ValueError("Set of Tasks/Futures is empty.")
    by_task = {handle.task: handle for handle in handles}
    seconds = None if timeout is None else max(0.0, float(timeout))
    done, pending = await asyncio.wait(set(by_task), timeout=seconds,
                                       return_when=return_when)
    return {by_task[t] for t in done}, {by_task[t] for t in pending}


class _AsCompleted(SelfGuarded):
    """What ``asyncio.as_completed`` gives a script: an iterator of awaitables, each
    giving the next result (or raising the next failure) in the order they finish."""

    __slots__ = ("_deadline", "_finished", "_left", "_ready", "_seconds")

    def __init__(self, tasks: list[asyncio.Task[Any]], timeout: float | None) -> None:
        self._finished: list[asyncio.Task[Any]] = []
        self._ready = anyio.Event()
        self._left = len(tasks)
        loop = asyncio.get_running_loop()
        self._seconds = timeout
        self._deadline = None if timeout is None else loop.time() + timeout
        for task in tasks:
            task.add_done_callback(self._on_done)

    def _on_done(self, task: asyncio.Task[Any]) -> None:
        self._finished.append(task)
        self._ready.set()

    def __iter__(self) -> _AsCompleted:
        return self

    def __next__(self) -> ScriptCoroutine:
        if self._left <= 0:
            raise StopIteration
        self._left -= 1
        return ScriptCoroutine(self._next())

    def __repr__(self) -> str:
        return "<as_completed iterator>"

    async def _next(self) -> Any:
        current_run()
        while not self._finished:
            self._ready = anyio.Event()
            left = None if self._deadline is None else (
                self._deadline - asyncio.get_running_loop().time())
            try:
                with anyio.fail_after(left) if left is not None else _no_limit():
                    await self._ready.wait()
            except TimeoutError:
                raise host_raised(TimeoutError(
                    f"asyncio.as_completed() timed out after {self._seconds:g} s (the "
                    "awaitables not finished yet keep running)")) from None
        return self._finished.pop(0).result()


@contextlib.contextmanager
def _no_limit() -> Generator[None, None, None]:
    yield


def as_completed(aws: Any, *, timeout: float | None = None) -> _AsCompleted:
    """Start every awaitable of ``aws`` now; iterate to await their results in the
    order they finish (``for f in asyncio.as_completed(calls): r = await f``)."""
    if isinstance(aws, Task) or inspect.isawaitable(aws):
        raise TypeError(f"expect an iterable of futures, not {_one(aws)}: pass a list, e.g. "
                        "asyncio.as_completed([call])")
    items = list(counted(aws))
    tasks = [aw.task if isinstance(aw, Task) else None for aw in items]
    fresh = iter(_own([aw for aw in items if not isinstance(aw, Task)],
                      "asyncio.as_completed()"))
    seconds = None if timeout is None else max(0.0, float(timeout))
    return _AsCompleted([t if t is not None else next(fresh) for t in tasks], seconds)


class TaskGroup(SelfGuarded):
    """``async with asyncio.TaskGroup() as tg: tg.create_task(...)``: asyncio's own task
    group (the block waits for every task; the first failure cancels the others and
    the block raises an ``ExceptionGroup`` of the failures), whose tasks the run owns."""

    __slots__ = ("_failed", "_group")

    _NAMES: Final = frozenset({"create_task"})

    def __init__(self) -> None:
        self._group = asyncio.TaskGroup()
        self._failed = False

    async def __aenter__(self) -> TaskGroup:
        run = current_run()
        await self._group.__aenter__()
        run.cancellers[id(self)] = self
        return self

    def cancelled_its_task(self) -> bool:
        """A task of the group failed while it was open: asyncio cancelled its enterer."""
        return self._failed

    def _note_failure(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._failed = True

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        current_run().cancellers.pop(id(self), None)
        try:
            await self._group.__aexit__(kind, error, traceback)
        except BaseExceptionGroup as group:
            if isinstance(group, ExceptionGroup):
                raise
            # A limit tripped (or the run stopped) in a task or in the block: the run's
            # own signal goes on as itself, never as a group a script could hold.
            stop = _first_stop(group)
            if stop is None:
                raise
            raise stop from None

    def __repr__(self) -> str:
        return "<TaskGroup>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in self._NAMES:
            raise refuse(self, name)
        return self._create_task

    def _create_task(self, aw: Awaitable[Any], *, name: str | None = None) -> Task:
        if not inspect.isawaitable(aw):
            raise TypeError(f"TaskGroup.create_task() needs an awaitable, got "
                            f"{type(aw).__name__}")
        run = current_run()
        run.unawaited.pop(id(aw), None)  # a tool call: the group owns it, or refuses it here
        level = _admit((aw,), "TaskGroup.create_task()")
        coro = _await(aw, level)
        try:
            task = self._group.create_task(coro)
        except BaseException:
            # Not entered yet, or finished: asyncio (3.11) leaves the coroutine to warn
            # "never awaited" on the host's stderr later, from a finalizer.
            coro.close()
            if isinstance(aw, ScriptCoroutine):
                aw.close()
            raise
        task.add_done_callback(_retrieve)
        if isinstance(aw, ScriptCoroutine):
            task.add_done_callback(partial(_close_unstarted, aw))
        task.add_done_callback(self._note_failure)
        run.tasks.append(task)
        return Task(task, name)


def _first_stop(group: BaseExceptionGroup[Any]) -> BaseException | None:
    """The first error of ``group`` that is no Exception (a limit, a stop), never looking
    inside an ``ExceptionGroup``: it holds Exceptions only, and a script's may hold one big
    group a thousand times (100 million leaves: seconds of the script thread after the run
    ended as too long)."""
    error: BaseException
    for error in group.exceptions:
        if isinstance(error, Exception):
            continue
        if isinstance(error, BaseExceptionGroup):
            found = _first_stop(error)
            if found is not None:
                return found
        else:
            stop: BaseException = error
            return stop
    return None


class Timeout(SelfGuarded):
    """``async with asyncio.timeout(seconds):`` (``None``: no limit): the block is
    cancelled when the time is up and raises ``TimeoutError``."""

    __slots__ = ("_seconds", "_timeout")

    _NAMES: Final = frozenset({"expired", "when", "reschedule"})

    def __init__(self, delay: float | None) -> None:
        self._seconds = None if delay is None else max(0.0, float(delay))
        loop = asyncio.get_running_loop()
        self._timeout = asyncio.timeout_at(
            None if self._seconds is None else loop.time() + self._seconds)

    async def __aenter__(self) -> Timeout:
        run = current_run()
        await self._timeout.__aenter__()
        run.cancellers[id(self)] = self
        return self

    def cancelled_its_task(self) -> bool:
        """The time is up: asyncio cancelled the task that entered the block."""
        return self._timeout.expired()

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        current_run().cancellers.pop(id(self), None)
        try:
            await self._timeout.__aexit__(kind, error, traceback)
        except TimeoutError:
            if not self._timeout.expired():
                raise
            raise host_raised(TimeoutError(
                f"asyncio.timeout() expired after {self._seconds or 0:g} s (the block was "
                "cancelled); give it a longer timeout, or catch TimeoutError to go on "
                "without it")) from None

    def __repr__(self) -> str:
        return f"<Timeout {'expired' if self._timeout.expired() else 'active'}>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in self._NAMES:
            raise refuse(self, name)
        if name == "reschedule":
            return self._reschedule
        return getattr(self._timeout, name)

    def _reschedule(self, when: float | None) -> None:
        """``reschedule(when)`` with ``when`` a float (or None): asyncio keeps it in the
        event loop's timer heap, which compares it with every other timer, in loop code
        and after the run, so a script object there would run its ``__lt__`` there."""
        self._timeout.reschedule(None if when is None else float(when))


def timeout(delay: float | None) -> Timeout:
    """``asyncio.timeout(seconds)`` as an ``async with`` block."""
    return Timeout(delay)


class Semaphore(SelfGuarded):
    """``asyncio.Semaphore``: ``async with sem:`` (or ``await sem.acquire()`` …
    ``sem.release()``) lets at most ``value`` holders in at once."""

    __slots__ = ("_lock",)

    _NAMES: Final = frozenset({"acquire", "release", "locked"})
    _KIND: ClassVar[type[asyncio.Semaphore]] = asyncio.Semaphore

    def __init__(self, value: int = 1) -> None:
        if type(value) is not int or value < 0:
            raise ValueError("Semaphore initial value must be an int >= 0")
        self._lock = self._KIND(value)

    async def __aenter__(self) -> None:
        current_run()
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


class BoundedSemaphore(Semaphore):
    """``asyncio.BoundedSemaphore``: a semaphore whose ``release()`` beyond its starting
    value raises CPython's ValueError."""

    __slots__ = ()

    _KIND = asyncio.BoundedSemaphore


class Lock(Semaphore):
    """``asyncio.Lock``: a semaphore of one."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(1)


class _RunOwned(SelfGuarded):
    """An asyncio object of the script's that belongs to the run that made it: its
    ``_NAMES`` answer in that run only, those of ``_WAITS`` awaited under the run."""

    __slots__ = ("_run",)

    _NAMES: ClassVar[frozenset[str]]
    _WAITS: ClassVar[frozenset[str]]

    def __init__(self) -> None:
        self._run = current_run()

    def sandbox_getattr(self, name: str) -> Any:
        if name not in self._NAMES:
            raise refuse(self, name)
        if current_run() is not self._run:
            raise TypeError(f"this asyncio.{type(self).__name__} belongs to another run")
        member = self.member(name)
        return tracked(member) if name in self._WAITS else member

    def member(self, name: str) -> Any:
        """The asyncio object's own ``name`` (one of ``_NAMES``)."""
        raise NotImplementedError


class Event(_RunOwned):
    """``asyncio.Event``: ``await ev.wait()`` until another task calls ``ev.set()``
    (``is_set()``, ``clear()``), anyio's underneath (a cleared event is a new one: its
    waiters were all released when it was set)."""

    __slots__ = ("_event",)

    _NAMES: ClassVar[frozenset[str]] = frozenset({"set", "clear", "is_set", "wait"})
    _WAITS: ClassVar[frozenset[str]] = frozenset({"wait"})

    def __init__(self) -> None:
        super().__init__()
        self._event = anyio.Event()

    def __repr__(self) -> str:
        return f"<Event {'set' if self._event.is_set() else 'unset'}>"

    def member(self, name: str) -> Any:
        return self._clear if name == "clear" else getattr(self._event, name)

    def _clear(self) -> None:
        if self._event.is_set():
            self._event = anyio.Event()


class Queue(_RunOwned):
    """``asyncio.Queue(maxsize=0)``: a producer/consumer queue of the script's values
    (workers ``await q.get()`` … ``q.task_done()``, ``await q.join()``), asyncio's own
    underneath; each instance belongs to the run that made it."""

    __slots__ = ("_queue",)

    _NAMES: ClassVar[frozenset[str]] = frozenset({
        "put", "get", "put_nowait", "get_nowait", "empty", "full", "qsize", "task_done",
        "join", "maxsize"})
    _WAITS: ClassVar[frozenset[str]] = frozenset({"put", "get", "join"})

    def __init__(self, maxsize: int = 0) -> None:
        if type(maxsize) is not int:
            raise TypeError("Queue maxsize must be an int")
        super().__init__()
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize)

    def __repr__(self) -> str:
        return f"<Queue maxsize={self._queue.maxsize} qsize={self._queue.qsize()}>"

    def member(self, name: str) -> Any:
        return getattr(self._queue, name)


_COROUTINE_FUNCTIONS: Final = (tracked(sleep), tracked(wait_for), tracked(wait))
"""This module's coroutine functions as scripts hold them."""

FACADE: Final = Facade("asyncio", {"gather": tracked(gather), "sleep": _COROUTINE_FUNCTIONS[0],
                                   "wait_for": _COROUTINE_FUNCTIONS[1],
                                   "wait": _COROUTINE_FUNCTIONS[2],
                                   "as_completed": as_completed, "TaskGroup": TaskGroup,
                                   "timeout": timeout, "FIRST_COMPLETED": FIRST_COMPLETED,
                                   "FIRST_EXCEPTION": FIRST_EXCEPTION,
                                   "ALL_COMPLETED": ALL_COMPLETED,
                                   "create_task": create_task, "ensure_future": create_task,
                                   "iscoroutine": iscoroutine,
                                   "iscoroutinefunction": iscoroutinefunction,
                                   "Semaphore": Semaphore, "Lock": Lock, "Queue": Queue,
                                   "BoundedSemaphore": BoundedSemaphore,
                                   "Event": Event,
                                   "QueueEmpty": asyncio.QueueEmpty,
                                   "QueueFull": asyncio.QueueFull,
                                   "TimeoutError": TimeoutError,
                                   "CancelledError": asyncio.CancelledError})
