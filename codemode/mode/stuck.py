"""A run ends at its limit even when a tool call in it never does, on any executor.

Every way a run ends (its timeout, its caller cancelling it, the script finishing with
calls in flight) goes through ``Bridge.stop_calls``: the calls' signals fire, ``grace``
seconds pass, the executor cancels what is left. A handler that catches every
cancellation (``except CancelledError: continue``) survived all of it, and an executor
that joins the calls it started waited for it. codemode's own executors bound that wait
themselves (``sandbox/executors/stuck.py``); for any other, :func:`unless_stuck` runs the
executor's run in a task of its own and stops waiting for it ``STUCK`` seconds after the
calls' grace is over: the run ends as timed out (its caller's cancellation, if that
ended it), the call is left running, and the error says so and is logged. Only on
asyncio: elsewhere the run is awaited as before.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import anyio

from codemode.sandbox.executors.stuck import STUCK, log_abandoned, stuck_error
from codemode.sandbox.runtime.result import ScriptResult

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from codemode.mode.bridge import Bridge

__all__ = ["STUCK", "unless_stuck"]


async def unless_stuck(run: Awaitable[ScriptResult], bridge: Bridge,
                       timeout: float, executor: object) -> ScriptResult:  # noqa: ASYNC109
    """``await run`` (``executor``'s run with ``bridge`` as its tools), but no longer than
    ``STUCK`` seconds after the run's calls were stopped and their grace passed. An
    executor that ends such runs itself (``ends_stuck_calls``: both of codemode's, which
    also retire the run's worker) is awaited as it is."""
    if getattr(executor, "ends_stuck_calls", False) is True:
        return await run
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
    return ScriptResult(error=stuck_error(timeout, bridge.in_flight_tools()))


def _abandon(bridge: Bridge) -> None:
    log_abandoned(bridge.run.outer_id, bridge.in_flight_tools())


def _retrieve(task: asyncio.Task[ScriptResult]) -> None:
    """Mark the failure of a run nobody waits for any more as seen (asyncio logs it)."""
    if not task.cancelled():
        task.exception()
