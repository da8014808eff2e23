"""Tell an exception CPython lost at a run's memory cap from any other ``SystemError``.

CPython 3.11-3.13 (python/cpython#131173): while an exception leaves a frame whose
frame object something else still holds (the exception's own traceback), popping that
frame makes its caller's frame object (``take_ownership`` in ``Python/frame.c``). When
that allocation fails, as it does with the worker's address space at its ``RLIMIT_AS``
cap, CPython drops the exception it was carrying and clears the new ``MemoryError``
too, and the caller's next instruction finds an error with no exception set:
``SystemError: error return without exception set``. Seen in a pool worker on 3.13:
``await asyncio.wait([asyncio.sleep(0) for _ in range(200000)])`` at a 50-64 MiB
memory limit ended so in about half the runs, the lost exception a ``MemoryError``
raised under ``tracked.<locals>.call`` (gdb: the ``PyErr_Clear`` in
``take_ownership``, then ``ceval.c``'s ``error`` label in the caller).

The exception that was lost is the run's memory running out, so the worker reports the
memory limit for it. Only that exact message counts, and only when the address space
came within :data:`CAP_SLACK` of the cap; every other ``SystemError`` is reported as it
is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from codemode.errors import LimitExceeded
from codemode.sandbox.runtime.result import ScriptError

if TYPE_CHECKING:
    from codemode.sandbox.limits import Limits

__all__ = ["CAP_SLACK", "LOST_EXCEPTION", "lost_at_cap", "memory_error"]

LOST_EXCEPTION: Final = "error return without exception set"
"""What CPython's eval loop says when an instruction failed and no exception is set."""

CAP_SLACK: Final = 2 << 20
"""How near its cap the address space must have come (bytes). Under ``RLIMIT_AS`` a
small allocation fails only when less than a new mapping is left: a 1 MiB pymalloc
arena, or glibc's 1 MiB fallback when ``brk`` cannot grow; twice that is room to spare."""

_TAIL: Final = f"SystemError: {LOST_EXCEPTION}"


def lost_at_cap(error: ScriptError, *, peak: int | None, cap: int | None) -> bool:
    """True when ``error`` is CPython's lost exception and the worker's address space
    peaked (``peak``, ``VmPeak``) within :data:`CAP_SLACK` of the run's cap ``cap``.

    ``VmPeak`` is the process's, not the run's: a reused worker whose earlier run came
    as near its cap (without reaching a limit, or the pool would have retired it) counts
    too. Scripts cannot name ``SystemError`` (a class of their own by that name is shown
    as ``script.SystemError``), so the error comes from the interpreter."""
    return (error.type == "SystemError"
            and error.message == LOST_EXCEPTION and error.limit is None
            and peak is not None and cap is not None and peak + CAP_SLACK >= cap)


def memory_error(error: ScriptError, limits: Limits) -> ScriptError:
    """The memory limit reported where the lost exception surfaced (its line, its
    script frames)."""
    exceeded = LimitExceeded("memory", limits.memory, "out of memory")
    traceback = error.traceback
    if traceback.endswith(_TAIL):
        traceback = traceback[: -len(_TAIL)] + f"LimitExceeded: {exceeded}"
    return ScriptError.for_limit(exceeded, line=error.line, column=error.column,
                                 traceback=traceback)
