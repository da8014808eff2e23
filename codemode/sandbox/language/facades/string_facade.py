"""``string`` for scripts: constants, ``capwords`` and ``Template`` (no ``Formatter``).

``Template`` is a sandbox class with the stdlib's pattern (``$name``, ``${name}``,
``$$``): each value is turned into text by the script's ``str`` (charged and sized like
``str(x)``), and the result's size is checked piece by piece before it is joined, so a
template naming one huge value a thousand times trips the memory limit instead of
building it. It cannot be subclassed (no custom ``delimiter`` or ``pattern``).
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.builtins import StrType
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, check_split, refuse
from codemode.sandbox.language.sizes import ensure_size
from codemode.sandbox.language.state import counted

if TYPE_CHECKING:
    import re

__all__ = ["FACADE", "Template"]

_PATTERN: Final[re.Pattern[str]] = string.Template.pattern


def capwords(s: str, sep: str | None = None) -> str:
    """Capitalise each word (the split is sized first, like ``str.split``)."""
    if isinstance(s, str):
        check_split(s, sep, -1, "string.capwords()")
    return string.capwords(s, sep)


_NOTHING: Final = object()
_TEXT: Final[Any] = StrType


def _text(value: Any) -> str:
    """``str(value)`` as the script's ``str`` makes it (charged, sized, scrubbed)."""
    text: str = _TEXT(value)
    return text


@final
class Template(SelfGuarded):
    """``string.Template(text)``: ``substitute``, ``safe_substitute``, ``get_identifiers``,
    ``is_valid`` and ``template``."""

    __slots__ = ("_template",)

    def __init__(self, template: str) -> None:
        if type(template) is not str:
            raise TypeError(f"Template() takes a str, not {type(template).__name__!r}")
        self._template = template

    def __repr__(self) -> str:
        return "<string.Template object>"

    def sandbox_getattr(self, name: str) -> Any:
        if name == "template":
            return self._template
        if name == "delimiter":
            return "$"
        if name in ("substitute", "safe_substitute", "get_identifiers", "is_valid"):
            return getattr(self, name)
        raise refuse(self, name)

    def _invalid(self, start: int) -> ValueError:
        prefix = self._template[:start]
        check_split(prefix, None, -1, "Template.substitute()", lines=True)
        lines = prefix.splitlines(keepends=True)
        if not lines:
            return ValueError("Invalid placeholder in string: line 1, col 1")
        column = start - len("".join(lines[:-1]))
        return ValueError(f"Invalid placeholder in string: line {len(lines)}, col {column}")

    def _render(self, mapping: Any, keywords: dict[str, Any], safe: bool) -> str:
        template = self._template
        pieces: list[str] = []
        size = pos = 0
        for match in counted(_PATTERN.finditer(template)):
            named = match.group("named") or match.group("braced")
            if named is not None:
                value = keywords.get(named, _NOTHING)
                if value is _NOTHING:
                    if mapping is None:
                        if not safe:
                            raise KeyError(named)
                        value = _NOTHING
                    else:
                        try:
                            value = mapping[named]
                        except KeyError:
                            if not safe:
                                raise
                piece = match.group() if value is _NOTHING else _text(value)
                if type(piece) is not str:  # a str subclass's text, as '%s' % x takes it
                    piece = str.__str__(piece)
            elif match.group("escaped") is not None:
                piece = "$"
            elif safe:
                piece = match.group()
            else:
                raise self._invalid(match.start("invalid"))
            gap = template[pos:match.start()]
            size += len(gap) + len(piece)
            ensure_size(size * 4, "Template.substitute()")
            pieces += (gap, piece)
            pos = match.end()
        pieces.append(template[pos:])
        return "".join(pieces)

    def substitute(self, mapping: Any = None, /, **kws: Any) -> str:
        """The template with each ``$name`` replaced by ``str(value)``; a name with no
        value is a ``KeyError``, a ``$`` before no name a ``ValueError``."""
        return self._render(mapping, kws, safe=False)

    def safe_substitute(self, mapping: Any = None, /, **kws: Any) -> str:
        """As ``substitute``, leaving a placeholder with no value (and a stray ``$``) as
        it is."""
        return self._render(mapping, kws, safe=True)

    def get_identifiers(self) -> list[str]:
        """The names of the valid placeholders, each once, in order."""
        found: dict[str, None] = {}
        for match in counted(_PATTERN.finditer(self._template)):
            named = match.group("named") or match.group("braced")
            if named is not None:
                found[named] = None
        return list(found)

    def is_valid(self) -> bool:
        """Whether every ``$`` starts a placeholder or ``$$``."""
        return all(match.group("invalid") is None
                   for match in counted(_PATTERN.finditer(self._template)))


FACADE: Final = Facade("string", {
    **{name: getattr(string, name) for name in (
        "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
        "octdigits", "punctuation", "printable", "whitespace",
    )},
    "capwords": capwords,
    "Template": Template,
})
