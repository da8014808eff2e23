"""``json`` for scripts: loads/dumps on plain data, no files and no ``cls=``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.render import charge_render
from codemode.sandbox.language.sizes import (
    charge_operations,
    check_render,
    ensure_size,
    json_text_size,
    json_unicode_size,
    render_size,
)
from codemode.sandbox.language.state import current_run

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FACADE", "UNCHARGED_TEXT"]

_MAX_INDENT: Final = 16
_CHECK_EVERY: Final = 1 << 16
UNCHARGED_TEXT: Final = _CHECK_EVERY
"""Characters of text the facade's ``loads`` parses as plain ``json.loads`` does: nothing
charged, nothing size-checked (its result depends on the text alone)."""
_NODE_BYTES: Final = 64
_PARSED: Final = frozenset({dict, list, int, float, bool, type(None)})
"""What a tool's JSON data is in a script: ``json.loads`` hands it back unchanged."""
_FREE_DIGITS: Final = 256
_DIGITS_SQUARED: Final = 8192
"""CPython turns a k-digit text into an int in time quadratic in k: about k² / 8192
operations (4300 digits, its cap, ~85 µs; shorter than 256, a few operations)."""


def loads(s: str | bytes, *, object_hook: Any = None, parse_float: Any = None,
          parse_int: Any = None, parse_constant: Any = None,
          object_pairs_hook: Any = None) -> Any:
    """Parse JSON text (the objects it would build are size-checked first). The hooks are
    the script's own callables (or its builtins): script code is charged as it runs.

    Data a tool already answered parsed (a dict, list, number, bool or None) is returned
    as it is: scripts written for hosts whose tools answer JSON text (Anthropic's
    programmatic tool calling) wrap every result in ``json.loads``."""
    if type(s) in _PARSED and object_hook is object_pairs_hook is None and (
            parse_float is parse_int is parse_constant is None):
        return s
    if isinstance(s, str | bytes) and len(s) > _CHECK_EVERY:
        text = s.decode("utf-8", "replace") if isinstance(s, bytes) else s
        nodes = text.count("{") + text.count("[") + text.count(",")
        ensure_size(nodes * _NODE_BYTES, "json.loads()")
        # one operation a value after a container's first, before the one C call that
        # builds them all (nesting alone is the recursion limit's): a million of them took
        # ~1 s uncharged (a prelude line of a million inputs, read with this loads, ended
        # 'did not stop in time' at 3 s under 100,000 operations)
        charge_operations(text.count(","))
        parse_int = _charged_int(int if parse_int is None else parse_int)
        parse_float = _ticked_float(float if parse_float is None else parse_float)
    return json.loads(s, object_hook=object_hook, parse_float=parse_float,
                      parse_int=parse_int, parse_constant=parse_constant,
                      object_pairs_hook=object_pairs_hook)


def _charged_int(parse: Any) -> Callable[[str], Any]:
    """``parse_int`` charging each long integer's conversion before it runs: one
    ``json.loads`` of 15,000 integers of 4300 digits held the GIL 1.7 s, uncharged."""
    def convert(text: str) -> Any:
        if len(text) > _FREE_DIGITS:
            charge_operations(len(text) ** 2 // _DIGITS_SQUARED)
        return parse(text)
    return convert


def _ticked_float(parse: Any) -> Callable[[str], Any]:
    """``parse_float`` ticking the run's meter per number (its clock read), in a Python
    frame: CPython converts each in ~1 µs inside the parse's one C call, which nothing
    stopped (2 million: 2.4 s in plain CPython)."""
    ticker = current_run().meter.ticker

    def convert(text: str) -> Any:
        next(ticker)
        return parse(text)
    return convert


def _sized_default(default: Any, text: Callable[[Any], int]) -> Any:
    """``default=`` results are rendered too, once per reference: size them as they come
    (``json.dumps([o] * 1000, default=lambda v: big)``), their strings with the escapes
    ``json.dumps`` writes (``text``: twelve characters for one past the BMP)."""
    produced = 0
    share = current_run().limits.memory // 4

    def sized(value: Any) -> Any:
        nonlocal produced
        result = default(value)
        produced += render_size(result, share, text)
        if produced > _CHECK_EVERY:
            ensure_size(produced, "json.dumps()")
        return result
    return sized


def dumps(obj: Any, *, indent: int | str | None = None, sort_keys: bool = False,
          separators: tuple[str, str] | None = None, ensure_ascii: bool = True,
          default: Any = None, allow_nan: bool = True, skipkeys: bool = False) -> str:
    """Serialize to JSON text (indent and separators are bounded)."""
    if isinstance(indent, int) and not 0 <= indent <= _MAX_INDENT:
        raise ValueError(f"indent must be between 0 and {_MAX_INDENT}")
    if isinstance(indent, str) and len(indent) > _MAX_INDENT:
        raise ValueError(f"indent strings are limited to {_MAX_INDENT} characters")
    if separators is not None:
        # Checked as strings: ``str()`` of a script value could be huge (``[s] * 1000``).
        if not (isinstance(separators, tuple | list) and len(separators) == 2
                and all(type(part) is str for part in separators)):
            raise TypeError("separators must be a pair of strings")
        if len(separators[0]) + len(separators[1]) > _MAX_INDENT:
            raise ValueError(f"separators are limited to {_MAX_INDENT} characters")
    text = json_text_size if ensure_ascii else json_unicode_size
    charge_render(obj)
    check_render(obj, "json.dumps()", text)
    if default is not None:
        default = _sized_default(default, text)
    if indent is None:
        return json.dumps(obj, sort_keys=sort_keys, separators=separators,
                          ensure_ascii=ensure_ascii, default=default, allow_nan=allow_nan,
                          skipkeys=skipkeys)
    # Indentation multiplies the text by the nesting depth: encode piecewise and stop
    # once the output passes the memory limit.
    encoder = json.JSONEncoder(indent=indent, sort_keys=sort_keys, separators=separators,
                               ensure_ascii=ensure_ascii, default=default,
                               allow_nan=allow_nan, skipkeys=skipkeys)
    chunks: list[str] = []
    size = 0
    for chunk in encoder.iterencode(obj):
        size += len(chunk)
        if size > _CHECK_EVERY:
            ensure_size(size, "json.dumps()")
        chunks.append(chunk)
    return "".join(chunks)


FACADE: Final = Facade("json", {"loads": loads, "dumps": dumps,
                                "JSONDecodeError": json.JSONDecodeError})
