"""Python's AST built and compiled again when another thread's conversion spoiled it.

CPython 3.11 and 3.12 count the depth of the AST they convert (source to ``ast`` objects
and back) in interpreter-wide state: a conversion that lets another thread run midway (a
collection running a finaliser switches threads) while that thread converts too leaves the
count off, and the first to finish raises ``SystemError: AST constructor recursion depth
mismatch`` (gh-106905), whatever its source. A host parses on its loop thread and, for
long scripts, off it; the in-process executor compiles on its script threads; other
libraries (pytest rewriting an assertion) convert on theirs. A lock would not do: a long
script's parse off the loop would hold the loop's next parse for its whole length. The
conversion is pure, so one that failed so is made again.

Warnings about a script (an invalid escape, ``x is 1``, ``~True`` folded as a constant, a
deprecated operation a script frame runs) are the model's, never the host's: importing this
module puts one ``ignore`` filter first for the script's file, its module name and the
conversions here, so they neither print to the host's stderr (every run, once per
occurrence: 14,000 ``is`` comparisons wrote 1 MB and took ~1 s) nor turn into errors in a
host run with ``-W error``. A filter, not ``catch_warnings``: that swaps the process-wide
list and is not thread-safe (the in-process executor compiles on its script threads).
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import TYPE_CHECKING, Any, Final, TypeVar

from codemode.sandbox.language.meter import SCRIPT_FILENAME, SCRIPT_MODULE

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["converted", "parse_tree"]

_MISMATCH: Final = "recursion depth mismatch"
_ATTEMPTS: Final = 3

_T = TypeVar("_T")

warnings.filterwarnings(
    "ignore", module="|".join(re.escape(name) + r"\Z"
                              for name in (SCRIPT_FILENAME, SCRIPT_MODULE, __name__)))


def converted(convert: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``convert(*args, **kwargs)`` (``ast.parse``, ``compile``), made again (up to
    ``_ATTEMPTS`` times in all) when another thread's conversion made CPython's depth
    count mismatch."""
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
