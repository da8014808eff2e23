"""sniffio's current-library variable, for code that runs asyncio callbacks or a loop of
its own inside a host that may run another library.

anyio asks sniffio which library runs (when sniffio is installed), and sniffio reads a
context variable first: a callback or task inherits the context it was made in, so code
on an asyncio loop made from a trio host's context would be taken for trio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextvars import ContextVar

__all__ = ["library_var"]


def library_var() -> ContextVar[str | None] | None:
    """sniffio's current-library variable, or None when sniffio is not installed (then
    anyio takes a running asyncio loop as asyncio)."""
    try:
        from sniffio import current_async_library_cvar
    except ImportError:
        return None
    return current_async_library_cvar
