"""The text of an exception raised by code a user wrote (a handler, a hook, a task's job).

``f"{type(exc).__name__}: {exc}"`` inside an ``except`` clause raises again when the
exception's ``__str__`` does (a ``ValueError`` carrying an object whose ``__str__`` raises),
and the call then failed as an internal error of the host instead of with its own text.
"""

from __future__ import annotations

from codemode.errors import ToolCallError

__all__ = ["failure_text"]


def failure_text(exc: BaseException) -> str:
    """``"TypeName: message"``; ``"TypeName: <unprintable TypeName>"`` when ``str(exc)``
    raises. Only ``Exception``s of ``__str__`` are swallowed: a cancellation raised in there
    still propagates."""
    name = type(exc).__name__
    try:
        # a nested call's failure names its tool (``str()`` of it is the failure alone)
        message = exc.described() if isinstance(exc, ToolCallError) else str(exc)
    except Exception:
        message = f"<unprintable {name}>"
    return f"{name}: {message}"
