"""Description text in its three places: wrapped docstrings, prompt lines, comments."""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "KEY_LIMIT",
    "TOOL_LIMIT",
    "TRUNCATED",
    "clean",
    "comment_text",
    "cut",
    "docstring",
    "escape_controls",
    "flat_text",
    "has_surrogate",
    "hide_surrogates",
    "prompt_text",
    "show_surrogates",
    "stand_in_block",
    "tool_text",
]

TOOL_LIMIT = 240
"""Characters of a tool's description kept in the prompt (the module keeps all of it)."""
KEY_LIMIT = 140
"""Characters of an argument's or key's description kept in the prompt."""
SLACK = 1.3
"""A description up to ``SLACK`` times its limit is kept whole: cutting a little saves little."""
TRUNCATED = " …"
"""Marker the prompt puts where it cut a description (its header says what it means)."""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\x85\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SPACES = re.compile(r"[\s\x00-\x1f\x7f]+")  # NUL and other C0 controls read as a space
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?= )|[。！？；]")


def clean(text: object) -> str:
    """A description as text (``None`` and non-strings count as absent)."""
    return text.strip() if isinstance(text, str) else ""


def encodable(text: str) -> str:
    """Replace lone surrogates (valid in JSON, not in UTF-8) so the text can be written."""
    return _SURROGATE.sub("\ufffd", text)


_BLOCK = 0x800
"""Lone surrogates: U+D800 to U+DFFF."""
_PRIVATE = range(0xF0000, 0x110000 - _BLOCK + 1, _BLOCK)
"""Blocks of the supplementary private-use planes that can stand in for them."""


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (valid in JSON, not in UTF-8)."""
    return _SURROGATE.search(text) is not None


def stand_in_block(texts: Iterable[str]) -> int | None:
    """First private-use block none of ``texts`` uses (``None`` if all are taken)."""
    used = {(ord(ch) - _PRIVATE.start) // _BLOCK for t in texts for ch in t if ord(ch) >= 0xF0000}
    return next((base for i, base in enumerate(_PRIVATE) if i not in used), None)


def hide_surrogates(text: str, block: int) -> str:
    """Swap lone surrogates for the private-use characters of ``block`` (UTF-8 writes those)."""
    return _SURROGATE.sub(lambda m: chr(ord(m.group()) - 0xD800 + block), text)


def show_surrogates(source: str, block: int) -> str:
    """Inverse of :func:`hide_surrogates` in generated source: ``\\udXXX`` escapes."""
    stood_in = re.compile(f"[{chr(block)}-{chr(block + _BLOCK - 1)}]")
    return stood_in.sub(lambda m: f"\\u{ord(m.group()) - block + 0xD800:04x}", source)


def one_line(text: str) -> str:
    """Collapse whitespace (and control characters) so a description fits on one line."""
    return _SPACES.sub(" ", text).strip()


def prompt_text(text: str, limit: int | None = None) -> str:
    """One-line description for the prompt, cut near ``limit`` (:data:`KEY_LIMIT`) with a marker.

    The cut falls after the last whole sentence that fits, else after the last whole word,
    when that keeps at least half of ``limit``: a model reads a clipped word as noise.
    """
    flat = flat_text(text)
    limit = KEY_LIMIT if limit is None else limit
    if len(flat) <= limit * SLACK:
        return flat
    return cut(flat, limit) + TRUNCATED


def flat_text(text: str) -> str:
    """A description on one line, writable as UTF-8, not cut."""
    return encodable(one_line(text))


def cut(flat: str, limit: int) -> str:
    """The head of ``flat`` (longer than ``limit``) that the prompt keeps, without a marker."""
    head = flat[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit // 2:
        head = head[: ends[-1]]
    elif flat[limit] != " ":
        space = head.rfind(" ")
        if space >= limit // 2:
            head = head[:space]
    return head.rstrip()


def tool_text(text: str) -> str:
    """A tool's own description cut near :data:`TOOL_LIMIT`, as if nothing were shared."""
    return prompt_text(text, TOOL_LIMIT)


def comment_text(text: str) -> str:
    """A trailing ``  # description`` for the prompt's type definitions."""
    flat = prompt_text(text)
    return f"  # {flat}" if flat else ""


def _control_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


def escape_controls(source: str) -> str:
    """Escape control, line-separator and surrogate characters inside generated string literals.

    Python accepts most of them raw in a string, but ``str.splitlines`` (and so line-based
    tools) breaks lines at ``\\x1c``, ``\\x85`` or ``\\u2028``, and a lone surrogate cannot be
    written as UTF-8. Only for source whose literals are not raw strings: the escape then
    stands for the same character.
    """
    return _CONTROL.sub(_control_escape, source)


def _docstring_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        # Python 3.13 cleans docstrings at compile time through UTF-8, so even an escaped
        # lone surrogate fails there; the docstring shows the escape as text instead.
        return f"\\\\u{code:04x}"
    return _control_escape(match)


def _escape(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return _CONTROL.sub(_docstring_escape, text)


def docstring(paragraphs: list[str], *, indent: str, width: int = 96) -> str:
    """A triple-quoted docstring, wrapped to ``width`` and safe for any description text."""
    body: list[str] = []
    for para in paragraphs:
        if body:
            body.append("")
        for line in para.splitlines() or [""]:
            wrapped = textwrap.wrap(
                _escape(line.rstrip()),
                width=max(width - len(indent), 40),
                subsequent_indent=_hanging(line),
                break_long_words=False,
                break_on_hyphens=False,
            )
            body.extend(wrapped or [""])
    while body and not body[-1]:
        body.pop()
    if not body:
        return ""
    last = body[-1]
    if last.endswith('"') and (len(last) - len(last[:-1].rstrip("\\"))) % 2:
        body[-1] = last[:-1] + '\\"'  # a bare quote before the closing ``"""`` would end it early
    if len(body) == 1 and len(body[0]) + len(indent) + 6 <= width:
        return f'{indent}"""{body[0]}"""'
    lines = [f'{indent}"""{body[0]}', *(f"{indent}{b}" if b else "" for b in body[1:])]
    return "\n".join([*lines, f'{indent}"""'])


def _hanging(line: str) -> str:
    lead = len(line) - len(line.lstrip())
    return " " * (lead + 4 if lead else 0)
