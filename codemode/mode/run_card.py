"""The editor cards of ``run_code``: the script while it runs, its outcome when it ends.

Both are pure functions of the call's arguments and of what the ``tool/result`` event
persists (the model-visible text and ``meta``), so a replayed session log renders them
as the live view did. The cards of the calls the script made sit under this one
(:func:`~codemode.dispatch.cards.render_session` nests them by parent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from codemode.dispatch.cards import GenericCard

if TYPE_CHECKING:
    from codemode.dispatch.cards import CardResult

__all__ = ["present_run_call", "present_run_result"]


def present_run_call(args: Mapping[str, Any]) -> GenericCard:
    """The pending card: the script itself, as an ``execute`` card."""
    code = str(args["code"])
    lines = len(code.splitlines()) or 1
    return GenericCard(title=f"Run a script ({lines} line{'s' if lines != 1 else ''})",
                       kind="execute", content=code)


def present_run_result(args: Mapping[str, Any], result: CardResult) -> GenericCard:
    """The finished card: what the model read (value or error, output, calls) under a
    title naming the outcome and the nested calls."""
    meta = result.meta or {}
    error = meta.get("error")
    if not result.is_error:
        title = "Script finished"
    elif isinstance(error, Mapping) and error.get("type"):
        where = f" at line {error['line']}" if error.get("line") else ""
        title = f"Script failed: {error['type']}{where}"
    else:
        title = "Script failed"
    body = result.text or result.error or ""
    return GenericCard(title=f"{title} · {_calls(meta)}", kind="execute", content=body)


def _calls(meta: Mapping[str, Any]) -> str:
    """``3 calls (1 failed, 2 replayed)``: the nested calls in a few words."""
    calls = meta.get("calls")
    count = len(calls) if isinstance(calls, list | tuple) else 0
    if not count:
        return "no tool calls"
    assert isinstance(calls, list | tuple)
    failed = sum(1 for call in calls if isinstance(call, Mapping) and call.get("ok") is False)
    replayed = meta.get("replayed")
    notes = [f"{failed} failed"] if failed else []
    if isinstance(replayed, list | tuple) and replayed:
        notes.append(f"{len(replayed)} replayed")
    tail = f" ({', '.join(notes)})" if notes else ""
    return f"{count} tool call{'s' if count != 1 else ''}{tail}"
