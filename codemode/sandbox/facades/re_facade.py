"""``re`` for scripts, backed by the ``regex`` engine with a time budget.

Catastrophic patterns (``(a+)+$``) are not refused up front; instead every
match runs with ``timeout`` = what is left of the run's wall-clock budget, and
with the GIL released (``concurrent=True``) so an in-process run cannot
stall the host's threads. Running out trips the ``timeout`` limit.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final, final

import regex  # type: ignore[import-untyped]

from codemode.errors import LimitExceeded
from codemode.sandbox.guards import ATTRIBUTES, SelfGuarded, refuse
from codemode.sandbox.state import counted, current_run

from . import Facade

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["FACADE", "Pattern"]

_MATCH_TYPE: Final = type(regex.match("", ""))
ATTRIBUTES.setdefault(_MATCH_TYPE, frozenset({
    "group", "groups", "groupdict", "start", "end", "span", "string", "pos", "endpos",
    "lastindex", "lastgroup", "expand",
}))

ATTRIBUTES.setdefault(regex.error, frozenset({"args", "msg", "pattern", "pos", "lineno",
                                               "colno"}))

_FLAGS: Final = {"IGNORECASE": regex.IGNORECASE, "I": regex.IGNORECASE,
                 "MULTILINE": regex.MULTILINE, "M": regex.MULTILINE,
                 "DOTALL": regex.DOTALL, "S": regex.DOTALL, "VERBOSE": regex.VERBOSE,
                 "X": regex.VERBOSE, "ASCII": regex.ASCII, "A": regex.ASCII,
                 "UNICODE": regex.UNICODE, "U": regex.UNICODE}


def _budget() -> float:
    run = current_run()
    run.meter.check()
    left = run.meter.deadline - time.monotonic()
    if left <= 0:
        run.meter.trip(LimitExceeded("timeout", run.limits.timeout, "the run took too long"))
    return left


def _timed(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, timeout=_budget(), concurrent=True, **kwargs)
    except TimeoutError:
        run = current_run()
        run.meter.trip(LimitExceeded("timeout", run.limits.timeout,
                                     "a regular expression ran out of time"))


def _compiled(pattern: Any, flags: int) -> Any:
    if isinstance(pattern, Pattern):
        return pattern.compiled
    if not isinstance(pattern, str | bytes):
        raise TypeError("pattern must be a string")
    return regex.compile(pattern, flags)


@final
class Pattern(SelfGuarded):
    """A compiled pattern; every method runs with the run's time budget."""

    __slots__ = ("compiled",)

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled

    def __repr__(self) -> str:
        return f"re.compile({self.compiled.pattern!r})"

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("pattern", "flags", "groups"):
            return getattr(self.compiled, name)
        if name == "groupindex":
            return dict(self.compiled.groupindex)
        if name in _METHODS:
            method = getattr(self.compiled, name)
            if name == "finditer":
                return lambda *a, **k: counted(_timed(method, *a, **k))
            return lambda *a, **k: _timed(method, *a, **k)
        raise refuse(self, name)


_METHODS: Final = frozenset({"search", "match", "fullmatch", "findall", "finditer", "sub",
                             "subn", "split"})


def compile(pattern: Any, flags: int = 0) -> Pattern:
    """Compile a pattern."""
    return Pattern(_compiled(pattern, flags))


def search(pattern: Any, string: Any, flags: int = 0) -> Any:
    """First match anywhere, or None."""
    return _timed(_compiled(pattern, flags).search, string)


def match(pattern: Any, string: Any, flags: int = 0) -> Any:
    """Match at the start, or None."""
    return _timed(_compiled(pattern, flags).match, string)


def fullmatch(pattern: Any, string: Any, flags: int = 0) -> Any:
    """Match the whole string, or None."""
    return _timed(_compiled(pattern, flags).fullmatch, string)


def findall(pattern: Any, string: Any, flags: int = 0) -> list[Any]:
    """All matches as strings/tuples."""
    return list(_timed(_compiled(pattern, flags).findall, string))


def finditer(pattern: Any, string: Any, flags: int = 0) -> Iterator[Any]:
    """Iterator over match objects (counted)."""
    return counted(_timed(_compiled(pattern, flags).finditer, string))


def sub(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
    """Replace matches."""
    return _timed(_compiled(pattern, flags).sub, repl, string, count)


def subn(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
    """Replace matches; also return the count."""
    return _timed(_compiled(pattern, flags).subn, repl, string, count)


def split(pattern: Any, string: Any, maxsplit: int = 0, flags: int = 0) -> list[Any]:
    """Split by matches."""
    return list(_timed(_compiled(pattern, flags).split, string, maxsplit))


FACADE: Final = Facade("re", {
    "compile": compile, "search": search, "match": match, "fullmatch": fullmatch,
    "findall": findall, "finditer": finditer, "sub": sub, "subn": subn, "split": split,
    "escape": regex.escape, "error": regex.error, **_FLAGS,
})
