"""``string`` for scripts: constants and ``capwords`` (no Formatter, no Template)."""

from __future__ import annotations

import string
from typing import Final

from . import Facade

__all__ = ["FACADE"]

FACADE: Final = Facade("string", {
    name: getattr(string, name) for name in (
        "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
        "octdigits", "punctuation", "printable", "whitespace", "capwords",
    )
})
