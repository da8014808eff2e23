"""Background tasks: a tool starts long work, answers with a task id, and the work goes on.

``TaskManager`` is the control plane (one per host, ``async with``, set as
``registry.tasks``); ``ctx.tasks`` is a ``task_scope.TaskScope`` bound to the calling
agent session (the owner). A task's *producer* is the work itself, with the
contract the seed gives it: a synchronous ``cancel()``, ``done()`` that settles
after its clean-up and never raises, and an optional consuming
``read_output(limit)`` that formats bounded output. :func:`background` builds a
producer from an ``async def``. Once started, a task is cancelled by its own
signal (``task_cancel``, its owner's disposal, the manager closing), never by
the signal of the call that started it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, final, runtime_checkable

import anyio

from codemode.dispatch.failure import failure_text
from codemode.dispatch.signal import CancelSignal
from codemode.errors import TaskError

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from codemode.dispatch.agent import AgentSession

__all__ = [
    "OutputBuffer",
    "Producer",
    "TaskIO",
    "TaskManager",
    "TaskStart",
    "TaskState",
    "TaskStatus",
    "background",
]

TaskState = Literal["running", "completed", "failed", "cancelled"]
_NOTICE_CAP = 500


@runtime_checkable
class Producer(Protocol):
    """The running work of one task (see the module docstring for the contract)."""

    def cancel(self) -> None:
        """Ask the work to stop; returns at once (``done`` settles after clean-up)."""
        ...

    async def done(self) -> Any:
        """Wait until the work ended and its resources are released; returns a JSON
        summary (or None) and never raises."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskStart:
    """What a task's ``run`` gets: its identity, its own signal, a place to run work."""

    id: str
    """The task id the tool reports to the model."""
    kind: str
    """What sort of task (``count``, ``build`` …), for status views."""
    label: str
    """One line saying what it does."""
    signal: CancelSignal
    """The task's own signal (not the starting call's)."""
    spawn: Callable[[Callable[[], Awaitable[Any]]], None] = field(repr=False)
    """Run an ``async def`` in the control plane's task group."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskStatus:
    """A task as the control tools report it."""

    id: str
    """Task id."""
    kind: str
    """Task kind."""
    label: str
    """What it does."""
    state: TaskState
    """``running``, ``completed``, ``failed`` or ``cancelled``."""
    result: Any = None
    """The producer's summary, once ``completed``."""
    error: str | None = None
    """Why it ``failed`` (or the cancel reason)."""
    labels: frozenset[str] = frozenset()
    """The data-flow labels of the tool that started it: what reads its result or output
    reads them too (host-side; not in :meth:`to_json`)."""

    def to_json(self) -> dict[str, Any]:
        """The fields that are set, as JSON."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "label": self.label,
                               "state": self.state}
        if self.result is not None:
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out


@final
class OutputBuffer:
    """Bounded text output: keeps the newest ``max_chars``, counts what it dropped, and
    ``take()`` consumes from the front."""

    def __init__(self, max_chars: int = 64_000) -> None:
        if max_chars < 1:
            raise ValueError("max_chars must be at least 1")
        self.max_chars = max_chars
        self._text = ""
        self._dropped = 0

    def write(self, text: str) -> None:
        """Append ``text``; the oldest characters go once the buffer is full."""
        self._text += text
        over = len(self._text) - self.max_chars
        if over > 0:
            self._text = self._text[over:]
            self._dropped += over

    def take(self, limit: int) -> str:
        """Up to ``limit`` characters not read yet, after a note of any dropped ones."""
        head, self._text = self._text[:limit], self._text[limit:]
        if self._dropped:
            head = f"[{self._dropped} earlier characters dropped]\n" + head
            self._dropped = 0
        return head


@final
class TaskIO:
    """What a :func:`background` job gets: its signal and a bounded output stream."""

    __slots__ = ("_out", "id", "signal")

    def __init__(self, task_id: str, signal: CancelSignal, out: OutputBuffer) -> None:
        self.id = task_id
        self.signal = signal
        self._out = out

    def write(self, text: str) -> None:
        """Add to the task's output (``task_output`` reads it, bounded)."""
        self._out.write(str(text))


Job = Callable[[TaskIO], Awaitable[Any]]


@final
class _JobProducer:
    """A producer running one ``async def`` in the control plane's task group."""

    def __init__(self, start: TaskStart, job: Job, max_output: int) -> None:
        self._scope = anyio.CancelScope()
        self._finished = anyio.Event()
        self._out = OutputBuffer(max_output)
        self._io = TaskIO(start.id, start.signal, self._out)
        self._job = job
        self._outcome: Any = None
        start.spawn(self._main)

    async def _main(self) -> None:
        try:
            with self._scope:
                self._outcome = {"result": await self._job(self._io)}
            if self._scope.cancelled_caught:
                self._outcome = {"cancelled": True}
        except Exception as exc:
            self._outcome = {"error": failure_text(exc)}
        finally:
            self._finished.set()

    def cancel(self) -> None:
        self._scope.cancel()

    async def done(self) -> Any:
        await self._finished.wait()
        return self._outcome

    def read_output(self, limit: int) -> str:
        return self._out.take(limit)


def background(job: Job, *, max_output: int = 64_000) -> Callable[[TaskStart], Producer]:
    """A task ``run`` from ``async def job(io: TaskIO) -> summary``: the job runs in the
    control plane, ``io.write()`` feeds bounded output, cancelling cancels the job."""
    if max_output < 1:
        raise ValueError("max_output must be at least 1")

    def run(start: TaskStart) -> Producer:
        return _JobProducer(start, job, max_output)

    return run


@final
class _Task:
    __slots__ = ("finished", "id", "kind", "label", "notify", "owner", "producer", "release",
                 "signal", "status")

    def __init__(self, task_id: str, kind: str, label: str, owner: AgentSession,
                 notify: bool, labels: frozenset[str]) -> None:
        self.id = task_id
        self.kind = kind
        self.label = label
        self.owner = owner
        self.notify = notify
        self.signal = CancelSignal()
        self.producer: Producer | None = None
        self.finished = anyio.Event()
        self.status = TaskStatus(id=task_id, kind=kind, label=label, state="running",
                                 labels=labels)
        self.release: Callable[[], None] = lambda: None


@final
class TaskManager:
    """The control plane of background tasks: ids, the task group they run in, their
    status, and their clean-up with their owner and with the manager itself."""

    def __init__(self, *, max_tasks: int = 64) -> None:
        self.max_tasks = max_tasks
        """Running tasks at most (a start beyond it is refused)."""
        self._tg: TaskGroup | None = None
        self._closing = False
        self._tasks: dict[str, _Task] = {}
        self._ids = itertools.count(1)

    @property
    def running(self) -> bool:
        """Whether the manager accepts new tasks (entered and not closing)."""
        return self._tg is not None and not self._closing

    async def __aenter__(self) -> TaskManager:
        if self._tg is not None:
            raise RuntimeError("a TaskManager can be entered once")
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing = True
        tg = self._tg
        with anyio.CancelScope(shield=True):
            for task in tuple(self._tasks.values()):
                task.signal.cancel("the task manager closed")
            for task in tuple(self._tasks.values()):
                await task.finished.wait()
        if tg is not None:
            await tg.__aexit__(None, None, None)

    def start(self, *, kind: str, label: str, run: Callable[[TaskStart], Producer],
              owner: AgentSession | None, signal: CancelSignal | None = None,
              notify: bool = True, labels: Iterable[str] = ()) -> str:
        """Start a task for ``owner``; checks come first, so ``run`` never starts for a
        refused task. ``labels``: the data-flow labels its result and output carry (those
        of the tool that starts it). Raises ``TaskError``."""
        if not self.running or self._tg is None:
            raise TaskError("background tasks are not available: no running task manager")
        if owner is None or owner.disposed:
            raise TaskError("background tasks need a live agent session as their owner")
        if signal is not None and signal.cancelled:
            raise TaskError("the call was cancelled before its task started")
        if sum(t.status.state == "running" for t in self._tasks.values()) >= self.max_tasks:
            raise TaskError(f"too many running tasks (at most {self.max_tasks})")
        task = _Task(f"task-{next(self._ids)}", kind, label, owner, notify,
                     frozenset(labels))
        tg = self._tg

        def spawn(fn: Callable[[], Awaitable[Any]]) -> None:
            async def body() -> None:
                await fn()

            tg.start_soon(body)

        start = TaskStart(id=task.id, kind=kind, label=label, signal=task.signal, spawn=spawn)
        producer = run(start)
        if not isinstance(producer, Producer):
            raise TaskError(f"task run for {kind!r} returned {type(producer).__name__}, "
                            "not a producer (cancel() and done())")
        task.producer = producer
        self._tasks[task.id] = task
        task.release = owner.on_dispose(lambda: task.signal.cancel("its owner was disposed"))
        self._tg.start_soon(self._supervise, task)
        return task.id

    async def _supervise(self, task: _Task) -> None:
        producer = task.producer
        assert producer is not None
        outcome: Any = None
        error: str | None = None
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:

                async def on_signal() -> None:
                    await task.signal.wait()
                    try:
                        producer.cancel()
                    except Exception as exc:
                        nonlocal error
                        error = f"cancel() raised {failure_text(exc)}"

                tg.start_soon(on_signal)
                try:
                    outcome = await producer.done()
                except Exception as exc:
                    error = f"done() raised {failure_text(exc)}"
                tg.cancel_scope.cancel()
        task.status = _final_status(task, outcome, error)
        task.release()
        task.finished.set()
        if task.notify:
            task.owner.inject(_notice(task.status),
                              source={"kind": "task", "task": task.id, "task_kind": task.kind})

    def _owned(self, task_id: str, owner: AgentSession | None) -> _Task:
        task = self._tasks.get(task_id)
        if task is None or task.owner is not owner:
            raise TaskError(f"no task {task_id!r} for this agent")
        return task

    def status(self, task_id: str, owner: AgentSession | None) -> TaskStatus:
        """The status of one of ``owner``'s tasks."""
        return self._owned(task_id, owner).status

    def list(self, owner: AgentSession | None) -> tuple[TaskStatus, ...]:
        """Every task ``owner`` started, oldest first."""
        return tuple(t.status for t in self._tasks.values() if t.owner is owner)

    def read_output(self, task_id: str, owner: AgentSession | None, limit: int) -> str:
        """Consume up to ``limit`` characters of new output ("" for producers without)."""
        task = self._owned(task_id, owner)
        read = getattr(task.producer, "read_output", None)
        return "" if read is None else str(read(limit))

    def cancel(self, task_id: str, owner: AgentSession | None,
               reason: str = "cancelled by request") -> TaskStatus:
        """Fire the task's own signal; the status turns ``cancelled`` once it settled."""
        task = self._owned(task_id, owner)
        task.signal.cancel(reason)
        return task.status

    async def wait(self, task_id: str, owner: AgentSession | None) -> TaskStatus:
        """Wait until the task settled; its final status."""
        task = self._owned(task_id, owner)
        await task.finished.wait()
        return task.status


def _final_status(task: _Task, outcome: Any, error: str | None) -> TaskStatus:
    base: dict[str, Any] = {"id": task.id, "kind": task.kind, "label": task.label,
                            "labels": task.status.labels}
    if isinstance(outcome, dict) and "error" in outcome and error is None:
        error = str(outcome["error"])
    if error is not None and not task.signal.cancelled:
        return TaskStatus(**base, state="failed", error=error)
    if task.signal.cancelled or (isinstance(outcome, dict) and outcome.get("cancelled")):
        return TaskStatus(**base, state="cancelled", error=task.signal.reason)
    result = outcome.get("result") if isinstance(outcome, dict) and "result" in outcome \
        else outcome
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError):
        result = repr(result)
    return TaskStatus(**base, state="completed", result=result)


def _notice(status: TaskStatus) -> str:
    text = f"Background task {status.id} ({status.kind}: {status.label}) {status.state}"
    if status.result is not None:
        text += ": " + json.dumps(status.result, ensure_ascii=False)
    elif status.error is not None:
        text += f": {status.error}"
    return text if len(text) <= _NOTICE_CAP else text[:_NOTICE_CAP] + "…"
