"""``pprint`` for scripts: ``pprint``/``pp`` write through the script's ``print`` (the run's
bounded output), ``pformat`` returns the text.

The text is CPython's own ``pprint.pformat``, rendered as ``repr`` is in the sandbox:
charged by what it walks, sized before it is built (the indentation is counted, each
nesting level indents every line below it), and scrubbed of host addresses. No
``stream=``: a script has no files.
"""

from __future__ import annotations

import pprint as _pprint
from typing import Any, Final

from codemode.sandbox.language.builtins import PLAIN, print_
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.render import charge_render, scrub
from codemode.sandbox.language.sizes import (
    OBJECT_SHARE,
    charge_operations,
    ensure_size,
    render_size,
)
from codemode.sandbox.language.state import current_run

__all__ = ["FACADE"]

_BYTES_PER_OPERATION: Final = 4
"""Text pprint makes per operation charged."""

_MAX_INDENT: Final = 64
"""The widest indentation step (CPython takes any; a huge one only builds blank space)."""


def _int(name: str, value: Any, low: int) -> int:
    if type(value) is not int:
        raise TypeError(f"{name} must be an integer")
    if value < low:
        raise ValueError(f"{name} must be >= {low}")
    return value


def pformat(obj: Any, indent: int = 1, width: int = 80, depth: int | None = None, *,
            compact: bool = False, sort_dicts: bool = True,
            underscore_numbers: bool = False) -> str:
    """The pretty-printed text of ``obj``."""
    step = _int("indent", indent, 0)
    if step > _MAX_INDENT:
        raise ValueError(f"indent must be at most {_MAX_INDENT} in the sandbox")
    _int("width", width, 1)
    if depth is not None:
        _int("depth", depth, 1)
    charge_render(obj)
    share = current_run().limits.memory // OBJECT_SHARE
    # Every line is at most one rendered item, indented by its nesting (at most the
    # rendered size again per step of indentation).
    size = render_size(obj, share)
    ensure_size(size * (2 + step), "pprint.pformat()")
    # pprint walks in Python what ``repr`` walks in C, a few times over (it measures each
    # part before it chooses a layout): charged by the text it makes.
    charge_operations(size // _BYTES_PER_OPERATION)
    stream = _Sized()
    _pprint.PrettyPrinter(indent=step, width=width, depth=depth,
                          stream=stream,  # type: ignore[arg-type]  # only write() is used
                          compact=compact, sort_dicts=sort_dicts,
                          underscore_numbers=underscore_numbers).pprint(obj)
    if stream.parts and stream.parts[-1] == "\n":  # pprint() ends the text with one
        stream.parts.pop()
    text = "".join(stream.parts)
    return text if type(obj) in PLAIN else scrub(text)


_CHECK_STEP: Final = 1 << 16
_PIECE_BYTES: Final = 64
"""Host memory one written piece costs besides its text (its str object, its list slot)."""


class _Sized:
    """The stream ``PrettyPrinter`` writes to, sized and charged as the text grows: a
    string split over lines is indented once per line, by every level it is nested in
    (``'a ' * 2000`` fifty lists deep, ``indent=64, width=1``: 6.4 MB of text; 100,000
    pairs grew an in-process host by 980 MB before), which no size of the value foretells."""

    __slots__ = ("charged", "next_check", "parts", "size")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.charged = 0
        self.next_check = _CHECK_STEP

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text) + _PIECE_BYTES
        if self.size > self.next_check:
            ensure_size(self.size, "pprint.pformat()")
            charge_operations((self.size - self.charged) // _BYTES_PER_OPERATION)
            self.charged = self.size
            self.next_check = self.size + _CHECK_STEP


def pprint(obj: Any, stream: Any = None, indent: int = 1, width: int = 80,
           depth: int | None = None, *, compact: bool = False, sort_dicts: bool = True,
           underscore_numbers: bool = False) -> None:
    """Print the pretty-printed text of ``obj`` to the script's output."""
    if stream is not None:
        raise TypeError("pprint(stream=...) is not available in the sandbox (it prints "
                        "to the script's output; use pformat() for the text)")
    print_(pformat(obj, indent, width, depth, compact=compact, sort_dicts=sort_dicts,
                   underscore_numbers=underscore_numbers))


def pp(obj: Any, *args: Any, sort_dicts: bool = False, **kwargs: Any) -> None:
    """``pprint`` with the dicts in their own order."""
    pprint(obj, *args, sort_dicts=sort_dicts, **kwargs)


FACADE: Final = Facade("pprint", {"pprint": pprint, "pformat": pformat, "pp": pp})
