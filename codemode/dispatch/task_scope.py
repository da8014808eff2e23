"""``ctx.tasks``: the task control plane as one call sees it (its owner, its signal).

Apart from ``tasks`` (the manager, its records and producers) because every call's
context holds one, and a host that starts no background task need not load the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from codemode.errors import TaskError

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemode.dispatch.agent import AgentSession
    from codemode.dispatch.signal import CancelSignal
    from codemode.dispatch.tasks import Producer, TaskManager, TaskStart, TaskStatus

__all__ = ["NO_TASKS", "TaskScope"]


@final
class TaskScope:
    """``ctx.tasks``: the control plane as one call sees it (its owner, its signal)."""

    __slots__ = ("_labels", "_manager", "_owner", "_signal")

    def __init__(self, manager: TaskManager | None, owner: AgentSession | None,
                 signal: CancelSignal | None = None,
                 labels: frozenset[str] = frozenset()) -> None:
        self._manager = manager
        self._owner = owner
        self._signal = signal
        self._labels = labels

    def _plane(self) -> TaskManager:
        if self._manager is None:
            raise TaskError("background tasks are not available: the host set no "
                            "registry.tasks (a running TaskManager)")
        return self._manager

    def start(self, *, kind: str, label: str, run: Callable[[TaskStart], Producer],
              notify: bool = True) -> str:
        """Start a task owned by this call's session; its id (``TaskError`` if refused)."""
        return self._plane().start(kind=kind, label=label, run=run, owner=self._owner,
                                   signal=self._signal, notify=notify, labels=self._labels)

    def status(self, task_id: str) -> TaskStatus:
        """One task's status."""
        return self._plane().status(task_id, self._owner)

    def list(self) -> tuple[TaskStatus, ...]:
        """This session's tasks."""
        return self._plane().list(self._owner)

    def read_output(self, task_id: str, limit: int = 4_000) -> str:
        """Consume up to ``limit`` characters of the task's new output."""
        return self._plane().read_output(task_id, self._owner, limit)

    def cancel(self, task_id: str) -> TaskStatus:
        """Cancel one task."""
        return self._plane().cancel(task_id, self._owner)


NO_TASKS = TaskScope(None, None)
"""``ctx.tasks`` when the host set up no task runtime: every method raises ``TaskError``."""
