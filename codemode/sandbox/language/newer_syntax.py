"""What a script's SyntaxError says, with the fix when it is syntax of a newer Python.

A model that writes 3.12's ``type Price = float`` or ``def first[T](...)`` for a host
on 3.11 gets CPython's bare "invalid syntax"; the message names the 3.11 spelling.
"""

from __future__ import annotations

import re
import sys
from typing import Final

__all__ = ["syntax_message"]

_NEWER: Final = (
    (re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*(\[[^\]]*\])?\s*="),
     "type statements need Python 3.12 (this is {version}): write `Price = float`, or "
     "`Price: TypeAlias = float`"),
    (re.compile(r"^\s*(async\s+def|def|class)\s+[A-Za-z_]\w*\s*\["),
     "type parameters (`def f[T]`, `class Box[T]`) need Python 3.12 (this is {version}): "
     "write `T = TypeVar('T')` at the top, `def f(x: T) -> T:` and `class Box(Generic[T]):`"),
)


def syntax_message(exc: SyntaxError) -> str:
    """``SyntaxError: <CPython's message>``, and what to write instead when the line is
    3.12 syntax on an older Python."""
    message = f"SyntaxError: {exc.msg}"
    if sys.version_info >= (3, 12) or not exc.text:
        return message
    for pattern, hint in _NEWER:
        if pattern.match(exc.text):
            version = f"{sys.version_info[0]}.{sys.version_info[1]}"
            return f"{message}; {hint.format(version=version)}"
    return message
