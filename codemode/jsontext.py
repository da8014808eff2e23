"""JSON text of big values, built in short steps (for a worker thread of the host).

The C encoder is one call for the whole value, and it holds the GIL throughout: on a
worker thread that still freezes the host's event loop. A 50-million-character string
is ~0.3 s of escaping; 3,000 integers of 4,000 digits are 0.6 s of decimal conversion
(quadratic in the digits). :class:`JsonSteps` spells a value as the C encoder would,
but in pieces of at most about a megabyte or a thousand items, so the GIL passes between
them; with a ``cap`` it stops as soon as the text passes it instead of building all of
it. The frames to and from sandbox workers, the size of a run's result and a heavy tool
result's text all go through here. This module imports nothing of ours: every layer may
use it.
"""

from __future__ import annotations

import json
import json.encoder
import json.scanner
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["STRING_CHUNK", "JsonSteps", "TextTooLong", "compact_encoder", "dumps_in_steps",
           "int_cost", "is_small", "loads", "small_flat", "small_scalars"]

STRING_CHUNK: Final = 1 << 20
"""Characters of a string escaped per step."""
_SLICE: Final = 1024
_SHORTCUT_DEPTH: Final = 32
"""Below this depth a value is not re-scanned by :func:`is_small` (each scan walks up to
4096 nodes, so re-scanning every level of a deep chain was quadratic: 12 s for a value
nested 100,000 deep); ``json.dumps`` would fail on such depth anyway."""
_SCALARS: Final = frozenset({float, bool, type(None)})
_EMPTY_OK: Final = frozenset({list, tuple, dict})
_SMALL_INT: Final = 1 << 1024
"""Integers below this magnitude (about 308 digits) take well under a microsecond to spell."""
_NODES: Final = 512
_CHARS: Final = 32 * 1024
""":func:`is_small`'s budgets: values and characters."""
_EXACT_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def int_cost(value: int) -> int:
    """About how many microseconds spelling ``value`` in decimal takes: CPython's
    conversion is quadratic in the digits (4,000 digits: ~200 µs)."""
    return (value.bit_length() >> 10) ** 2 + 1


class TextTooLong(Exception):
    """The text passed the ``cap`` it was built under."""


def is_small(value: Any, nodes: int = _NODES, chars: int = _CHARS) -> bool:
    """True when ``value`` surely encodes quickly (few nodes, short strings, no huge
    integers): encode it at once; otherwise in steps. Stops at the budget."""
    stack = [value]
    while stack:
        item = stack.pop()
        nodes -= 1
        if nodes < 0:
            return False
        if isinstance(item, str):
            chars -= len(item)
            if chars < 0:
                return False
        elif type(item) is int:
            if not -_SMALL_INT < item < _SMALL_INT:
                nodes -= int_cost(item)
                if nodes < 0:
                    return False
        elif isinstance(item, dict):
            if len(item) > nodes:
                return False
            for key, member in item.items():
                stack.append(key)
                stack.append(member)
        elif isinstance(item, list | tuple):
            if len(item) > nodes:
                return False
            stack.extend(item)
    return True


def small_flat(mapping: dict[str, Any]) -> bool | None:
    """None when one of ``mapping``'s values is not an exact JSON scalar (str, int, float,
    bool, None) or a key is not exactly a string; else ``is_small(mapping)``, told in one pass over
    the items (a tool call's keyword arguments, on every call: a third of
    :func:`is_small`'s cost there)."""
    nodes = _NODES - 1 - 2 * len(mapping)
    chars = _CHARS
    for key, value in mapping.items():
        kind = type(value)
        if kind not in _EXACT_SCALARS:
            return None
        if type(key) is not str:
            return None
        chars -= len(key)
        if kind is str:
            chars -= len(value)
        elif kind is int and not -_SMALL_INT < value < _SMALL_INT:
            nodes -= int_cost(value)
    return nodes >= 0 and chars >= 0


def _flat(items: list[Any] | tuple[Any, ...]) -> bool:
    """True when every item is a scalar (no huge integer), a short string or an empty
    container (a quick look, one step per item, before a slice goes to the C encoder
    whole)."""
    for item in items:
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is int:
            if not -_SMALL_INT < item < _SMALL_INT:
                return False
        elif kind is str:
            if len(item) > 4096:
                return False
        elif kind not in _EMPTY_OK or item:
            return False
    return True


_c_ascii: Any = json.encoder.encode_basestring_ascii
_c_text: Any = json.encoder.encode_basestring


class JsonSteps:
    """JSON text in pieces, each from one short C call; raises :class:`TextTooLong` past
    ``cap`` as soon as it is passed.

    ``ascii``: ``\\u`` escapes for every non-ASCII character (otherwise the characters
    as they are); ``compact``: ``,`` and ``:`` without spaces (otherwise ``json.dumps``'
    default ``, `` and ``: ``); ``allow_nan``: NaN and the infinities spelled as Python
    does (otherwise ValueError); ``keep``: keep the pieces (``text()``), otherwise only
    count them; ``utf8``: count the size in UTF-8 bytes (otherwise in characters).
    """

    def __init__(self, *, ascii: bool, compact: bool, allow_nan: bool = False,
                 keep: bool = True, utf8: bool = False, cap: int | None = None) -> None:
        self.chunks: list[str] = []
        self.size = 0
        self._keep = keep
        self._utf8 = utf8
        self._cap = cap
        self._dumps: Callable[[Any], str] = json.JSONEncoder(
            ensure_ascii=ascii, allow_nan=allow_nan,
            separators=(",", ":") if compact else (", ", ": ")).encode
        self._escape: Callable[[str], str] = _c_ascii if ascii else _c_text
        self._comma = "," if compact else ", "
        self._open: set[int] = set()
        """Containers being spelled (as the C encoder's markers: a cycle is a ValueError)."""

    def text(self) -> str:
        """The JSON text (with ``keep``)."""
        return "".join(self.chunks)

    def add(self, text: str) -> None:
        self.size += len(text.encode("utf-8", "replace")) if self._utf8 else len(text)
        if self._keep:
            self.chunks.append(text)
        if self._cap is not None and self.size > self._cap:
            raise TextTooLong()

    def _string(self, value: str) -> None:
        if len(value) <= STRING_CHUNK:
            self.add(self._escape(value))
            return
        self.add('"')
        for i in range(0, len(value), STRING_CHUNK):  # a code point never splits
            self.add(self._escape(value[i : i + STRING_CHUNK])[1:-1])
        self.add('"')

    def value(self, value: Any, depth: int = 0) -> None:
        """Append ``value``'s JSON text."""
        if depth < _SHORTCUT_DEPTH and is_small(value, 4096, STRING_CHUNK):
            self.add(self._dumps(value))
        elif isinstance(value, str):
            if self._cap is not None and len(value) > self._cap:  # a byte a character at least
                raise TextTooLong()
            self._string(value)
        elif isinstance(value, list | tuple | dict):
            key = id(value)
            if key in self._open:
                raise ValueError("Circular reference detected")
            self._open.add(key)
            try:
                self._container(value, depth)
            finally:
                self._open.discard(key)
        else:
            self.add(self._dumps(value))

    def _container(self, value: Any, depth: int) -> None:
        cap = self._cap
        if isinstance(value, list | tuple):
            if cap is not None and 2 * len(value) > cap + 1:  # a value and a comma each
                raise TextTooLong()
            self.add("[")
            first = True
            for i in range(0, len(value), _SLICE):
                piece = value[i : i + _SLICE]
                if _flat(piece) or (depth < _SHORTCUT_DEPTH
                                    and is_small(piece, 4 * _SLICE, STRING_CHUNK)):
                    self.add(("" if first else self._comma) + self._dumps(list(piece))[1:-1])
                    first = False
                    continue
                for item in piece:
                    if not first:
                        self.add(self._comma)
                    first = False
                    self.value(item, depth + 1)
            self.add("]")
        elif isinstance(value, dict):
            if cap is not None and 5 * len(value) > cap + 1:  # "":0, at least
                raise TextTooLong()
            self.add("{")
            for n, (key, member) in enumerate(value.items()):
                pair = self._dumps({key: 0})  # the key exactly as json spells it
                self.add((self._comma if n else "") + pair[1 : pair.rindex("0")])
                self.value(member, depth + 1)
            self.add("}")


def dumps_in_steps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))``,
    in steps (for a worker thread: the host loop runs between them)."""
    steps = JsonSteps(ascii=False, compact=True)
    steps.value(value)
    return steps.text()


def compact_encoder(*, ascii: bool, allow_nan: bool,
                    separators: tuple[str, str] = (",", ":")) -> Callable[[Any], str]:
    """``json.JSONEncoder(separators=separators, ensure_ascii=ascii,
    allow_nan=allow_nan).encode``, with the same text and errors, for the per-call path
    (compact unless told otherwise: a script's tool arguments keep ``json.dumps``' spacing).

    ``encode`` builds a C encoder, a circularity table and a closure on every call (0.7 µs
    of 0.9 for a small integer). Here the C encoder is built once, without the table: its
    recursion guard stops a value that holds itself, and only then is the value encoded
    again the usual way, which raises what ``encode`` raises (``Circular reference
    detected``, or the same ``RecursionError`` for one merely nested too deep)."""
    encoder = json.JSONEncoder(separators=separators, ensure_ascii=ascii, allow_nan=allow_nan)
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the usual way
        return encoder.encode
    spell = _c_ascii if ascii else _c_text
    comma, colon = separators
    chunks = make(None, encoder.default, spell, None, colon, comma, False, False, allow_nan)

    def encode(value: Any) -> str:
        if type(value) is str:
            return str(spell(value))
        try:
            return "".join(chunks(value, 0))
        except RecursionError:
            return encoder.encode(value)

    return encode


_DECODER: Final = json.JSONDecoder()
_SCAN: Final[Any] = getattr(json.scanner, "c_make_scanner", None)
_scan_once: Final[Any] = None if _SCAN is None else _SCAN(_DECODER)


def loads(text: str) -> Any:
    """``json.loads(text)``, with the same values and errors, for the per-call path: a text
    that is exactly one value goes straight to the C scanner (``loads`` adds a Python
    layer, two regular-expression matches for the whitespace around the value and a
    re-check: half of its cost for a small object). Anything else (whitespace around
    the value, no value, more after it) is decoded again the usual way, which raises what
    ``loads`` raises."""
    if _scan_once is not None and type(text) is str:
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
    return json.loads(text)


def small_scalars(values: Iterable[Any], text: int, integer: int) -> bool:
    """Whether every one of ``values`` is a string of at most ``text`` characters, an
    integer strictly between ``-integer`` and ``integer``, a float, a bool or None (exact
    types): a call's usual arguments and result, told without a walk."""
    for item in values:
        kind = type(item)
        if kind is str:
            if len(item) > text:
                return False
        elif kind is int:
            if not -integer < item < integer:
                return False
        elif kind is not float and kind is not bool and item is not None:
            return False
    return True
