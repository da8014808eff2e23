"""Keep what a script's own generators raise while CPython finalizes them off the host.

A script generator dropped while suspended (``it = None`` inside a ``try``) is closed by
CPython on the spot. When its ``finally`` raises, or it yields again (``generator
ignored GeneratorExit``), CPython can raise that nowhere and hands it to
``sys.unraisablehook``, whose default prints a traceback on the host's stderr: in the
in-process executor that is the host's own stream. The hook installed here drops those
(the object is a generator, coroutine or async generator compiled from a script) and
passes every other unraisable exception to the hook it wraps, so a host's own hook and
the default behaviour for host code stay as they were.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import Any, Final, final

from codemode.sandbox.language.meter import SCRIPT_FILENAME

__all__ = ["install", "is_script_object"]

_LOCK: Final = threading.Lock()


def is_script_object(obj: object) -> bool:
    """A generator, coroutine or async generator whose code a script's source compiled to."""
    code: Any
    if isinstance(obj, types.GeneratorType):
        code = obj.gi_code
    elif isinstance(obj, types.CoroutineType):
        code = obj.cr_code
    elif isinstance(obj, types.AsyncGeneratorType):
        code = obj.ag_code
    else:
        return False
    return type(code) is types.CodeType and code.co_filename == SCRIPT_FILENAME


@final
class _ScriptFilter:
    """``sys.unraisablehook`` that swallows script finalizer errors, else defers."""

    __slots__ = ("wrapped",)

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def __call__(self, unraisable: Any) -> None:
        if is_script_object(getattr(unraisable, "object", None)):
            return
        self.wrapped(unraisable)


def install() -> None:
    """Make sure the current ``sys.unraisablehook`` filters script objects (idempotent;
    called as each run starts, so a hook a host set since then gets wrapped too)."""
    if type(sys.unraisablehook) is _ScriptFilter:
        return
    with _LOCK:
        current = sys.unraisablehook
        if type(current) is not _ScriptFilter:
            sys.unraisablehook = _ScriptFilter(current)
