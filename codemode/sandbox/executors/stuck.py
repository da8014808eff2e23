"""A run ends at its limit even when a tool call in it never does.

When a run ends (its timeout, its caller cancelling it, the script finishing with calls
in flight), the executor asks its calls to stop (``CallBroker.stop_calls``), then
cancels them and waits for them to end. A ``call_tool`` that catches every cancellation
(``except CancelledError: continue``) was waited for forever: ``run()`` never
returned, not even to its caller's own cancellation. Both executors now wait at most
:data:`STUCK` seconds after the cancel, then leave such calls running (logged), end the
run as timed out with :func:`stuck_error`, and (the pool) retire the run's worker.
asyncio only: another backend's task group cannot leave a task behind.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from codemode.errors import LimitExceeded
from codemode.sandbox.runtime.result import ScriptError

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["STUCK", "describe", "log_abandoned", "stuck_error"]

STUCK: Final = 1.0
"""Seconds a run waits, after cancelling its calls, for calls that ignore the cancel."""

_LOG: Final = logging.getLogger("codemode.sandbox")


def describe(tools: Iterable[str]) -> str:
    """``tools.a, tools.b`` (at most five, then how many more): the calls left running."""
    names = sorted(set(tools))
    shown = ", ".join(f"tools.{name}" for name in names[:5]) or "a tool call"
    return shown if len(names) <= 5 else f"{shown} and {len(names) - 5} more"


def stuck_error(timeout: float, tools: Iterable[str]) -> ScriptError:
    """The run's error when calls were left running: a timeout that names them."""
    return ScriptError.for_limit(LimitExceeded(
        "timeout", timeout, f"the run was stopped but {describe(tools)} did not end when "
        "cancelled (its handler catches the cancellation); left running"))


def log_abandoned(run: str, tools: Iterable[str]) -> None:
    """Say (error level) that ``run`` ended without calls that ignored their cancel."""
    _LOG.error("run %s: %s ignored its cancellation; the run ended without it", run,
               describe(tools))
