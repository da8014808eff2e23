"""Python's AST built and compiled again when another thread's conversion spoiled it.

CPython 3.11 and 3.12 count the depth of the AST they convert (source to ``ast`` objects
and back) in interpreter-wide state: a conversion that lets another thread run midway (a
collection running a finaliser switches threads) while that thread converts too leaves the
count off, and the first to finish raises ``SystemError: AST constructor recursion depth
mismatch`` (gh-106905), whatever its source. A host parses on its loop thread and, for
long scripts, off it; the in-process executor compiles on its script threads; other
libraries (pytest rewriting an assertion, or every module of a package that ships a
pytest plugin, as it imports them: a facade first imported on a script thread) convert
on theirs. A lock would not do: a long
script's parse off the loop would hold the loop's next parse for its whole length. The
conversion is pure, so one that failed so is made again.

What CPython warns about while converting a script stays out of the host
(:mod:`~codemode.sandbox.language.script_warnings`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Final, TypeVar

from codemode.sandbox.language import script_warnings
from codemode.sandbox.language.meter import SCRIPT_FILENAME

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["converted", "parse_tree"]

_MISMATCH: Final = "recursion depth mismatch"
_ATTEMPTS: Final = 3

_T = TypeVar("_T")

script_warnings.silence()


def converted(convert: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``convert(*args, **kwargs)`` (``ast.parse``, ``compile``), made again (up to
    ``_ATTEMPTS`` times in all) when another thread's conversion made CPython's depth
    count mismatch."""
    script_warnings.silence()
    for _ in range(_ATTEMPTS - 1):
        try:
            return convert(*args, **kwargs)
        except SystemError as exc:
            if _MISMATCH not in str(exc):
                raise
    return convert(*args, **kwargs)


def parse_tree(source: str, filename: str = SCRIPT_FILENAME, mode: str = "exec") -> Any:
    """``ast.parse(source, filename, mode)`` (see the module docstring)."""
    return converted(ast.parse, source, filename, mode)
