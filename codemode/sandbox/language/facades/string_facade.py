"""``string`` for scripts: constants and ``capwords`` (no Formatter, no Template)."""

from __future__ import annotations

import string
from typing import Final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import check_split

__all__ = ["FACADE"]

def capwords(s: str, sep: str | None = None) -> str:
    """Capitalise each word (the split is sized first, like ``str.split``)."""
    if isinstance(s, str):
        check_split(s, sep, -1, "string.capwords()")
    return string.capwords(s, sep)


FACADE: Final = Facade("string", {
    **{name: getattr(string, name) for name in (
        "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
        "octdigits", "punctuation", "printable", "whitespace",
    )},
    "capwords": capwords,
})
