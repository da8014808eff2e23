"""The reply format between a run and the host-side broker that answers its calls.

A reply is plain JSON: ``{"ok": value}``, ``{"error": {tool, message, path}}`` or
``{"limit": {limit, value, detail}}``. The broker builds failures with
:func:`failure_reply`; the script side turns any reply back into a value or an
exception with :func:`decode_reply`. Both executors use the same two steps.
"""

from __future__ import annotations

from typing import Any, Final

from codemode.errors import LimitExceeded, ToolCallError

__all__ = ["RUN_ENDED", "decode_reply", "failure_reply"]

RUN_ENDED: Final = "the run has ended; no further tool calls are delivered"
"""What a call made after its run ended is refused with."""


def failure_reply(exc: LimitExceeded | ToolCallError) -> dict[str, Any]:
    """Host side: the reply a refused or failed call sends back."""
    if isinstance(exc, LimitExceeded):
        return {"limit": {"limit": exc.limit, "value": exc.value, "detail": exc.detail}}
    return {"error": {"tool": exc.tool, "message": exc.message, "path": exc.path}}


def decode_reply(reply: dict[str, Any]) -> Any:
    """Script side: turn a broker reply into the call's value, or raise what the script sees."""
    if "ok" in reply:
        return reply["ok"]
    if "limit" in reply:
        info = reply["limit"]
        raise LimitExceeded(str(info["limit"]), info["value"], str(info.get("detail", "")))
    info = reply["error"]
    path = info.get("path")
    raise ToolCallError(str(info["tool"]), str(info["message"]),
                        None if path is None else str(path))
