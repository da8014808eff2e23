"""``textwrap`` for scripts: the stdlib's Python loops, charged and sized before they run.

``wrap``/``fill``/``shorten`` loop in Python over every chunk (word or space run) and
every line they make, with no operation ticks, and break a long word by copying the
rest of it once per line (``fill('a' * 10**5, width=1)`` copies 5 GB); ``expandtabs``
and the indents multiply the text. So the chunks, lines and copies are bounded from
counts taken at C speed (whitespace, hyphens, the longest word) and charged, and the
text they build is sized, before the stdlib runs. ``dedent`` and ``indent`` are charged
per line and character, and ``dedent`` strips the margin without the ``re`` cache (a
margin of a million spaces would stay compiled in the host).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import charge_operations, ensure_size

__all__ = ["FACADE"]

_OPTIONS: Final = frozenset({
    "initial_indent", "subsequent_indent", "expand_tabs", "replace_whitespace",
    "fix_sentence_endings", "break_long_words", "drop_whitespace", "break_on_hyphens",
    "tabsize", "max_lines", "placeholder"})
_WHITESPACE: Final = "\t\n\x0b\x0c\r "
"""What textwrap splits on (ASCII whitespace only)."""
_SPACE_RUNS: Final = re.compile(r"[\t\n\x0b\x0c\r ]+")
_LINE_BREAKS: Final = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
                       "\u2029")
"""Where ``str.splitlines`` breaks (``\\r\\n`` counts twice: an upper bound)."""

_STEP: Final = 16
"""Operations per Python step of the stdlib loops (one chunk, one line: ~1 µs)."""
_OBJECT: Final = 64
"""Bytes of one small str object and its list slot."""
_COPY_BYTES: Final = 512
"""Bytes copied per operation when a long word is broken."""


def _text(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"textwrap.{what}() expects a str, not {type(text).__name__!r}")
    return text


def _options(width: Any, kwargs: dict[str, Any], what: str) -> dict[str, Any]:
    unknown = kwargs.keys() - _OPTIONS
    if unknown:
        raise TypeError(f"textwrap.{what}() got an unexpected keyword argument "
                        f"{sorted(unknown)[0]!r}")
    if type(width) is not int:
        raise TypeError(f"textwrap.{what}(): width must be an int")
    for name in ("initial_indent", "subsequent_indent", "placeholder"):
        if name in kwargs and not isinstance(kwargs[name], str):
            raise TypeError(f"textwrap.{what}(): {name} must be a str")
    if "tabsize" in kwargs and type(kwargs["tabsize"]) is not int:
        raise TypeError(f"textwrap.{what}(): tabsize must be an int")
    max_lines = kwargs.get("max_lines")
    if max_lines is not None and type(max_lines) is not int:
        raise TypeError(f"textwrap.{what}(): max_lines must be an int or None")
    return kwargs


def _charge_wrap(text: str, width: int, options: dict[str, Any], what: str) -> None:
    """Charge and size wrapping ``text`` before the stdlib's loop runs."""
    size = len(text)
    if options.get("expand_tabs", True):
        size += text.count("\t") * max(0, options.get("tabsize", 8))
        ensure_size(size, f"textwrap.{what}() expanding tabs")
    spaces = sum(map(text.count, _WHITESPACE))
    chunks = 2 * (spaces + text.count("-")) + 1
    indent = max(len(options.get("initial_indent", "")),
                 len(options.get("subsequent_indent", "")))
    room = max(1, width - indent)
    lines = min(2 * size // room + 2, size + 1)  # every line holds a character of text
    if type(options.get("max_lines")) is int:
        lines = min(lines, max(1, options["max_lines"]))
    # sized (and charged) before the split below, which is one C call over all the text
    ensure_size(2 * size + chunks * _OBJECT + lines * (_OBJECT + indent) + len(
        options.get("placeholder", "")), f"textwrap.{what}() of {len(text)} characters")
    charge_operations((chunks + lines) * _STEP)
    if options.get("break_long_words", True) and size > room:
        longest = max(map(len, _SPACE_RUNS.split(text)))
        if longest > room:
            # each piece of a long word copies the rest
            charge_operations(longest * size // (2 * room) // _COPY_BYTES)


def wrap(text: str, width: int = 70, **kwargs: Any) -> list[str]:
    """The lines of ``text`` wrapped at ``width`` (the TextWrapper options as keywords)."""
    options = _options(width, kwargs, "wrap")
    _charge_wrap(_text(text, "wrap"), width, options, "wrap")
    return textwrap.wrap(text, width, **options)


def fill(text: str, width: int = 70, **kwargs: Any) -> str:
    """``'\\n'.join(wrap(text, width, ...))``."""
    options = _options(width, kwargs, "fill")
    _charge_wrap(_text(text, "fill"), width, options, "fill")
    return textwrap.fill(text, width, **options)


def shorten(text: str, width: int, **kwargs: Any) -> str:
    """``text`` with its whitespace collapsed, cut to ``width`` with a placeholder."""
    options = _options(width, kwargs, "shorten")
    if "max_lines" in options:
        raise TypeError("textwrap.shorten() got an unexpected keyword argument 'max_lines'")
    text = _text(text, "shorten")
    ensure_size(len(text) * _OBJECT // 2, f"textwrap.shorten() of {len(text)} characters")
    charge_operations(len(text) // _STEP)
    collapsed = " ".join(text.strip().split())
    _charge_wrap(collapsed, width, {**options, "max_lines": 1}, "shorten")
    return textwrap.shorten(collapsed, width, **options)


_WINDOW: Final = 1 << 16
"""Characters one ``lstrip(" \t")`` is given: it looks each character up in its argument
(~20 ns a character: 40 million spaces held the GIL 0.8 s in one call)."""


def _indent_size(line: str) -> int:
    """Characters of spaces and tabs that start ``line``, a window at a time, each charged
    (a long margin is stopped at the deadline or the budget, not after it)."""
    if len(line) == len(line.lstrip()):  # no leading whitespace (memory speed)
        return 0
    start = 0
    while start < len(line):
        piece = line[start:start + _WINDOW]
        charge_operations(len(piece) // _STEP)  # the deadline is checked between windows
        kept = len(piece.lstrip(" \t"))
        start += len(piece) - kept
        if kept:
            break
    return start


def dedent(text: str) -> str:
    """``text`` with the whitespace common to the start of every line removed (as
    ``textwrap.dedent``).

    A line at a time with C string methods, where the stdlib runs two regular expressions
    over the whole text: each backtracks over every line's leading spaces in one C call
    (~25-35 ns a character: a 20-million-character text held the GIL 0.7 s, one line of 40
    million spaces 2 s). A line of spaces and tabs only becomes empty and sets no margin,
    as there."""
    text = _text(text, "dedent")
    lines = text.count("\n") + 1
    ensure_size(len(text) + lines * _OBJECT, f"textwrap.dedent() of {lines} lines")
    charge_operations(lines * _STEP + len(text) // 4)  # a Python step per line (~1-2 µs)
    rows = text.split("\n")
    margin: str | None = None
    for number, line in enumerate(rows):
        size = _indent_size(line)
        if size == len(line):
            rows[number] = ""
            continue
        indent = line[:size]
        if margin is None:
            margin = indent
        elif indent.startswith(margin):
            pass
        elif margin.startswith(indent):
            margin = indent
        else:
            for i, (x, y) in enumerate(zip(margin, indent, strict=False)):
                if x != y:
                    margin = margin[:i]
                    break
    if margin:
        cut = len(margin)
        rows = [line[cut:] if line.startswith(margin) else line for line in rows]
    return "\n".join(rows)


def indent(text: str, prefix: str, predicate: Any = None) -> str:
    """``prefix`` added to the start of the selected lines (default: those that are not
    only whitespace)."""
    text = _text(text, "indent")
    if not isinstance(prefix, str):
        raise TypeError("textwrap.indent(): prefix must be a str")
    lines = sum(map(text.count, _LINE_BREAKS)) + 1
    ensure_size(len(text) + lines * (len(prefix) + _OBJECT),
                f"textwrap.indent() of {lines} lines")
    charge_operations(lines * 4)
    if predicate is None:
        return textwrap.indent(text, prefix)
    return textwrap.indent(text, prefix, predicate)


FACADE: Final = Facade("textwrap", {
    "wrap": wrap, "fill": fill, "shorten": shorten, "dedent": dedent, "indent": indent,
})
