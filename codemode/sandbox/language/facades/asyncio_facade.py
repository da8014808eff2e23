"""``asyncio`` for scripts: ``gather``, ``sleep`` and ``wait_for`` only.

Implemented on anyio task groups (so the library keeps one async idiom), with
asyncio's observable behaviour: ``gather`` returns a list in argument order and
raises the first failure (not an ExceptionGroup) after cancelling the rest, or
returns exceptions in place with ``return_exceptions=True``.
"""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any, Final

import anyio

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.meter import Tripped
from codemode.sandbox.language.sizes import ensure_size
from codemode.sandbox.language.state import ScriptCoroutine, counted, host_raised, tracked

if TYPE_CHECKING:
    from collections.abc import Awaitable

__all__ = ["FACADE", "TASK_BYTES"]

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


FACADE: Final = Facade("asyncio", {"gather": tracked(gather), "sleep": tracked(sleep),
                                   "wait_for": tracked(wait_for),
                                   "TimeoutError": TimeoutError})
