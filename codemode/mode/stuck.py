"""A run ends at its limit even when a tool call in it never does.

Every way a run ends (its timeout, its caller cancelling it, the script finishing with
calls in flight) goes through ``Bridge.stop_calls``: the calls' signals fire, ``grace``
seconds pass, the executor cancels what is left. A handler that catches every
cancellation (``except CancelledError: continue``) survived all of it, and the executor,
which joins the calls it started, waited for it: ``CodeMode.run`` never returned, on
either executor. :func:`unless_stuck` runs the executor's run in a task of its own and
stops waiting for it ``STUCK`` seconds after the calls' grace is over: the run ends as
timed out (its caller's cancellation, if that ended it), the call is left running, and
the error says so and is logged. Only on asyncio: elsewhere the run is awaited as before.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

import anyio

from codemode.errors import LimitExceeded
from codemode.sandbox.runtime.result import ScriptError, ScriptResult

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from codemode.mode.bridge import Bridge

__all__ = ["STUCK", "unless_stuck"]

STUCK: Final = 1.0
"""Seconds a run waits, after its calls' grace, for calls its executor cancelled to end."""

_LOG: Final = logging.getLogger("codemode.mode")


async def unless_stuck(run: Awaitable[ScriptResult], bridge: Bridge,
                       timeout: float) -> ScriptResult:  # noqa: ASYNC109
    """``await run`` (the executor's run with ``bridge`` as its tools), but no longer than
    ``STUCK`` seconds after the run's calls were stopped and their grace passed."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another library's loop (sniffio may be absent: not asked)
        return await run
    task = asyncio.ensure_future(run)
    task.add_done_callback(_retrieve)
    over = anyio.Event()
    task.add_done_callback(lambda _: over.set())
    bridge.on_stop = lambda: loop.call_later(bridge.run.grace + STUCK, over.set)
    try:
        await over.wait()
    except anyio.get_cancelled_exc_class():
        task.cancel()
        with anyio.CancelScope(shield=True):
            await over.wait()
        if not task.done():
            _abandon(bridge)
        raise
    if task.done():
        return task.result()
    _abandon(bridge)
    return ScriptResult(error=ScriptError.for_limit(LimitExceeded(
        "timeout", timeout, f"the run was stopped but {_calls(bridge)} did not end when "
        "cancelled (its handler catches the cancellation); left running")))


def _calls(bridge: Bridge) -> str:
    names = sorted(set(bridge.in_flight_tools()))
    shown = ", ".join(f"tools.{name}" for name in names[:5]) or "a tool call"
    return shown if len(names) <= 5 else f"{shown} and {len(names) - 5} more"


def _abandon(bridge: Bridge) -> None:
    _LOG.error("run %s: %s ignored its cancellation; the run ended without it",
               bridge.run.outer_id, _calls(bridge))


def _retrieve(task: asyncio.Task[ScriptResult]) -> None:
    """Mark the failure of a run nobody waits for any more as seen (asyncio logs it)."""
    if not task.cancelled():
        task.exception()
