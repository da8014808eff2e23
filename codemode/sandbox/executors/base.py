"""The one interface every script executor implements.

Two implementations give identical results for the same script (timings
aside): ``InProcessExecutor`` (trusted code, tests) and ``WorkerPoolExecutor``
(the default: pre-started worker processes with rlimits and a wall-clock kill).
Callers depend on this protocol, never on an implementation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from types import TracebackType

    from codemode.sandbox.executors.broker import CallTool
    from codemode.sandbox.limits import Limits
    from codemode.sandbox.runtime.result import ScriptResult

__all__ = ["Executor"]


@runtime_checkable
class Executor(Protocol):
    """Runs one model-written script per ``run()`` call; usable as ``async with``."""

    async def run(
        self,
        source: str,
        *,
        call_tool: CallTool,
        tool_paths: Collection[str] = (),
        limits: Limits | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> ScriptResult:
        """Run ``source``; tool calls go to ``call_tool``; never raises for script failures.

        Cancelling the awaiting task stops the script and its in-flight calls, and
        no ``call_tool`` invocation starts after this returns. An executor whose runs
        end even when a call ignores its cancellation (``stuck.py``) says so with a
        class attribute ``ends_stuck_calls = True``; ``CodeMode`` guards the others.
        ``on_output`` (on the host's loop, must not block) receives printed text while
        the run is going, in order with the calls; the pieces add up to at most
        ``limits.output`` bytes.
        """
        ...

    async def aclose(self) -> None:
        """Release what the executor holds (worker processes, threads)."""
        ...

    async def __aenter__(self) -> Self:
        """Enter ``async with``; returns the executor."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Leave ``async with``: ``aclose()``."""
        ...
