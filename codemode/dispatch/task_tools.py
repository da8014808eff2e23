"""The generic control tools of background tasks: status, output, cancel, for every kind.

They act through ``ctx.tasks``, so an agent sees only the tasks its own session
started, whether it calls them directly or from a script.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codemode.dispatch.cards import CardResult, GenericCard
from codemode.dispatch.content import Envelope
from codemode.dispatch.tool import Tool, define_tool

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from codemode.dispatch.context import ExecContext
    from codemode.dispatch.tasks import TaskStatus

__all__ = ["MAX_READ", "task_tools"]

MAX_READ = 20_000
"""The most output characters one ``task_output`` call returns."""

_ID = {"type": "string", "minLength": 1, "maxLength": 64, "description": "The task id."}


def _status_card(args: Mapping[str, Any]) -> GenericCard:
    task = args.get("id")
    return GenericCard(title=f"Task status: {task}" if task else "Task status: all tasks",
                       kind="other")


def _output_card(args: Mapping[str, Any]) -> GenericCard:
    return GenericCard(title=f"Task output: {args['id']}", kind="read")


def _cancel_card(args: Mapping[str, Any]) -> GenericCard:
    return GenericCard(title=f"Cancel task {args['id']}", kind="other")


def _text_result(title: str) -> Any:
    def present(args: Mapping[str, Any], result: CardResult) -> GenericCard:
        return GenericCard(title=title.format(**args), content=result.error or result.text)

    return present


def _labelled(value: dict[str, Any], tasks: Iterable[TaskStatus]) -> Any:
    """``value``, with the data-flow labels of the tools that started ``tasks`` in its
    ``meta["labels"]`` (label -> where from): a run reading a task's result or output
    carries what the starting tool's own result would have (``CodeMode``'s ledger reads
    them), so a secret cannot be laundered through a background task."""
    labels = {label: f"task {task.id}" for task in tasks for label in sorted(task.labels)}
    return Envelope(value, meta={"labels": labels}) if labels else value


def task_tools(*, prefix: str = "task_") -> tuple[Tool, Tool, Tool]:
    """``<prefix>status``, ``<prefix>output`` and ``<prefix>cancel``; register them next to
    any tool that starts tasks (and set ``registry.tasks``)."""

    async def status(args: Mapping[str, Any], ctx: ExecContext) -> Any:
        task = args.get("id")
        if task is None:
            listed = ctx.tasks.list()
            return _labelled({"tasks": [s.to_json() for s in listed]}, listed)
        found = ctx.tasks.status(task)
        return _labelled(found.to_json(), (found,))

    async def output(args: Mapping[str, Any], ctx: ExecContext) -> Any:
        limit = int(args.get("max_chars", 4_000))
        status_ = ctx.tasks.status(args["id"])
        text = ctx.tasks.read_output(args["id"], limit)
        return _labelled({"id": status_.id, "state": status_.state, "output": text},
                         (status_,))

    async def cancel(args: Mapping[str, Any], ctx: ExecContext) -> Any:
        ctx.tasks.cancel(args["id"])
        return {"id": args["id"], "cancel_requested": True}

    return (
        define_tool(
            name=f"{prefix}status",
            description="The state of a background task (running, completed, failed, "
            "cancelled) and its result; without `id`, every task this agent started.",
            parameters={"type": "object", "properties": {"id": _ID},
                        "additionalProperties": False},
            execute=status,
            present_call=_status_card,
        ),
        define_tool(
            name=f"{prefix}output",
            description="New output of a background task since the last read (consumed: "
            "each character is returned once), at most `max_chars` characters.",
            parameters={"type": "object", "properties": {
                "id": _ID,
                "max_chars": {"type": "integer", "minimum": 1, "maximum": MAX_READ,
                              "default": 4_000},
            }, "required": ["id"], "additionalProperties": False},
            execute=output,
            present_call=_output_card,
            present_result=_text_result("Task output: {id}"),
        ),
        define_tool(
            name=f"{prefix}cancel",
            description="Cancel a background task; `task_status` shows `cancelled` once it "
            "has stopped and cleaned up.",
            parameters={"type": "object", "properties": {"id": _ID}, "required": ["id"],
                        "additionalProperties": False},
            execute=cancel,
            present_call=_cancel_card,
        ),
    )
