"""``html`` for scripts: ``escape`` and ``unescape``, sized and charged before they run.

``escape`` is five ``str.replace`` passes in C (its result up to six times its input:
``"`` becomes ``&quot;``); ``unescape`` calls a Python function for every ``&`` in the
text, without operation ticks, so each one is charged first.
"""

from __future__ import annotations

import html
from typing import Final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import charge_operations, ensure_size

__all__ = ["FACADE"]

_SCAN_CHARS: Final = 32
"""Characters a C pass over the text handles per operation (one per pass)."""
_REFERENCE_STEPS: Final = 4
"""Operations per ``&`` that ``unescape`` answers with a Python call (~1 µs each)."""
_PIECE: Final = 64
"""Bytes of a replaced piece ``re.sub`` keeps until it joins the result."""


def _text(s: object, what: str) -> str:
    if type(s) is not str:
        raise TypeError(f"html.{what}() takes a str, not {type(s).__name__!r}")
    return s


def escape(s: str, quote: bool = True) -> str:
    """``&``, ``<`` and ``>`` (and with ``quote``, ``"`` and ``'``) as character
    references."""
    text = _text(s, "escape")
    extra = 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))
    if quote:
        extra += 5 * text.count('"') + 5 * text.count("'")
    ensure_size((len(text) + extra) * 4, f"html.escape() of {len(text)} characters")
    charge_operations(len(text) * (7 if quote else 5) // _SCAN_CHARS)
    return html.escape(text, bool(quote))


def unescape(s: str) -> str:
    """The text of named and numeric character references (``&gt;``, ``&#62;``,
    ``&#x3e;``), as HTML 5 reads them."""
    text = _text(s, "unescape")
    references = text.count("&")
    if references:
        ensure_size(len(text) * 4 + references * _PIECE,
                    f"html.unescape() of {len(text)} characters")
        charge_operations(references * _REFERENCE_STEPS + len(text) // _SCAN_CHARS)
    return html.unescape(text)


FACADE: Final = Facade("html", {"escape": escape, "unescape": unescape})
