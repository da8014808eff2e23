"""``page.items`` read without a call, where ``page`` is a dict with a key ``items``.

Paginated tools answer ``{"items": [...], "total": 3}``; a model used to result objects
writes ``for x in page.items:``, which in Python reaches the dict method and fails far
from the cause ("'builtin_function_or_method' object is not iterable"). The policy sends
every *uncalled* read of ``items``, ``keys`` or ``values`` (``DATA_KEY_NAMES``) here; a call
(``page.items()``) is the method, as in Python.

:func:`data_key` (the dialects) answers the key's value: the script could read it as
``page["items"]`` anyway, so nothing new is reachable. :func:`data_key_strict` (strict
hosts, and runs without a prelude) says to write ``page["items"]``. Anything else goes to
``guarded_getattr`` unchanged.
"""

from __future__ import annotations

from typing import Any

from codemode.sandbox.language.guards import guarded_getattr

__all__ = ["data_key", "data_key_strict"]


def data_key(obj: Any, name: str) -> Any:
    """``obj.name`` not called: a plain dict's key ``name`` if it has one, else the attribute."""
    if type(obj) is dict and name in obj:
        return obj[name]
    return guarded_getattr(obj, name)


def data_key_strict(obj: Any, name: str) -> Any:
    """``obj.name`` not called: the attribute; refused with the fix where the dict has a key
    ``name`` (the method would only fail later, without saying why)."""
    if type(obj) is dict and name in obj:
        raise AttributeError(
            f"`.{name}` without a call is the dict method {name}(), but this dict has a key "
            f"{name!r}: read the key with [{name!r}] (or call the method: .{name}())")
    return guarded_getattr(obj, name)
