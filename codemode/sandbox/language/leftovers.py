"""Script generators that survived their close, held so that CPython never resumes them.

A generator whose ``finally`` (or ``except GeneratorExit``) yields again survives
``close()``/``aclose()``: CPython raises "generator ignored GeneratorExit" and leaves it
suspended at that ``yield``; an async generator is also marked closed, so CPython never
hands it to the async-generator finalizer hook. When its last reference goes, CPython
closes it once more, on the spot, in whichever thread dropped it: its ``except`` and
``finally`` code ran after the run had returned (in-process: in the host's thread, at its
next garbage collection). Python has no way to discard a suspended frame without resuming
it (``frame.clear()`` closes the generator on 3.11/3.12 and refuses on 3.13), so such a
generator is referenced from here for the life of the process: never deallocated, its code
never runs again. The list holds one reference nothing releases, not even the interpreter's
shutdown (which clears module globals, and would close them then, on the host's way out).
Only what a script deliberately made immortal stays (a worker's memory
limit recycles a worker that piles them up); a generator its close finished is not held.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
from typing import Any, Final

__all__ = ["close_async_generator", "hold_if_suspended"]

_HELD: Final[list[Any]] = []
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_HELD))


def hold_if_suspended(obj: Any) -> None:
    """After the run closed ``obj`` (a generator or async generator): hold it if it is still
    suspended, so it is never deallocated with a frame left to resume."""
    if inspect.isasyncgen(obj):
        frame = obj.ag_frame
    elif inspect.isgenerator(obj):
        frame = obj.gi_frame
    else:
        return
    if frame is not None:
        _HELD.append(obj)


async def close_async_generator(agen: Any) -> None:
    """Close ``agen`` while the run is live as ``aclose()`` does (``GeneratorExit`` thrown
    in), but without marking it closed: ``aclose()`` does, and a closed async generator can
    never be closed again (``aclose``/``athrow`` are no-ops on it), so one whose handler
    yielded once stayed suspended, held for the process's life with all it referenced.
    One that yields here is closed again after the run's end, where a handler's first
    tick ends it."""
    with contextlib.suppress(StopAsyncIteration, GeneratorExit):
        await agen.athrow(GeneratorExit)
