"""JSON string literals decoded in short steps (for the host's bounded frame decoder).

``json.decoder.scanstring`` reads a whole string literal in one C call, holding the GIL:
on a worker thread that still freezes the host's event loop. A call's arguments of
16 million escaped quotes (32 MB of JSON, under the default argument cap) held it for
0.15-0.27 s per call, on both executors. :func:`scan_string` reads a long literal a
piece at a time, each piece at most ``PIECE`` characters, cut only between
escapes (a surrogate pair's two ``\\u`` escapes stay together), so the answers and
errors are the C scanner's.
"""

from __future__ import annotations

import json
import json.decoder
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PIECE", "scan_string"]

PIECE: Final = 1 << 18
"""Characters of a string literal one C call reads at most."""

_c_scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009 (untyped in typeshed)

_BODY: Final = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
"""A literal's body to its closing quote, from a point between escapes."""
_HIGH: Final = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW: Final = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def scan_string(text: str, end: int, strict: bool = True, *,
                scan: Callable[..., tuple[str, int]] = _c_scanstring) -> tuple[str, int]:
    """``json.decoder.scanstring(text, end, strict)``: the string whose opening quote is at
    ``end - 1`` and the index past its closing quote, a piece at a time when it is long
    (``scan``: the C scanner each piece goes to)."""
    quote = text.find('"', end, end + PIECE)
    if quote >= 0 and text.find("\\", end, quote) < 0:
        return scan(text, end, strict)  # short, no escape (the common case)
    parts = []
    start = end
    while True:
        window = text[start : start + PIECE]
        closing = _BODY.match(window) if '"' in window else None
        if closing is not None:
            stop = start + closing.end() - 1
            last = True
        elif len(window) < PIECE:
            raise _error("Unterminated string starting at", text, end - 1)
        else:
            stop = _cut(text, start, start + PIECE)
            last = False
        try:
            parts.append(scan(text[start:stop] + '"', 0, strict)[0])
        except json.JSONDecodeError as exc:
            if exc.msg.startswith("Unterminated"):
                raise _error("Unterminated string starting at", text, end - 1) from None
            raise _error(exc.msg, text, start + exc.pos) from None
        if last:
            return "".join(parts), stop + 1
        start = stop


def _cut(text: str, start: int, cut: int) -> int:
    """Where a full piece from ``start`` (no closing quote in it) may end, at ``cut`` or
    before: not inside an escape, not between the two escapes of a surrogate pair."""
    while True:
        slash = text.rfind("\\", max(start, cut - 12), cut)
        if slash < 0:
            return cut
        body = text[start : slash + 1]
        run = len(body) - len(body.rstrip("\\"))  # backslashes ending at ``slash``
        if run % 2 == 0:
            return cut  # the last backslash is itself escaped: nothing open
        if slash + 2 > cut or (text[slash + 1] == "u" and slash + 6 > cut):
            cut = slash  # an escape the cut would split
        elif _HIGH.fullmatch(text, slash, slash + 6) and _LOW.match(text, cut):
            cut = slash  # a high surrogate whose low one follows the cut
        else:
            return cut


def _error(message: str, text: str, position: int) -> json.JSONDecodeError:
    return json.JSONDecodeError(message, text, position)
