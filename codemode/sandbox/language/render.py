"""Charge the cost of turning a value into text before C code does it.

``str(x)``, ``repr``, ``print``, f-strings, ``%``, ``json.dumps`` and the
result encoding walk containers in C. Shared references make that walk far
larger than the memory the value occupies (``a = [0]*1000; b = [a]*1000;
str([b]*50)`` visits 50 million items), so before rendering a container the
sandbox counts the items the walk will visit (memoised per container, so the
count itself costs only the unique containers) and charges them to the
operation budget.
"""

from __future__ import annotations

import re
from collections import deque
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.state import CURRENT_RUN, current_run

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FLAT_SMALL", "RENDER_CHILDREN", "charge_render", "check_unicode_error",
           "render_cost", "scrub", "scrub_each", "scrubbed_args"]

_LEAVES: Final = (str, bytes, int, float, bool, type(None), complex)
_CONTAINERS: Final[tuple[Any, ...]] = (list, tuple, dict, set, frozenset, deque,
                                       type({}.keys()), type({}.values()), type({}.items()))
"""What renders its items (a dict view too: 2,000 reprs of a 20,000-item view took 8.6 s
for 2,000 operations as leaves)."""
RENDER_CHILDREN: dict[type, Callable[[Any], Any]] = {}
"""Type -> the values its ``repr`` shows, each in full (``ChainMap({...}, {...})``): sized
(``sizes``) and charged as a container's items, the object visited once (in itself it
renders as ``...``); facades register here. Charged as one leaf, 2,000 reprs of a
namespace of 20,000 values (a ChainMap of a 20,000-key dict) took 11-12 s for 2,000
operations."""
_MAX_DEPTH: Final = 400
FLAT_SMALL: Final = 64
"""A dict of at most this many keys whose values are all exact scalars costs nothing to
render (a tool call's keyword arguments, usually): :func:`charge_render` returns at once."""
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


_FREE_BITS: Final = 1024
_DIGITS_SQUARED: Final = 3072
"""CPython writes an int of k decimal digits in time quadratic in k: about k² / 3072
operations of ~50 ns (4300 digits, its cap, ~220 µs); under 1024 bits (308 digits), one."""


_UNICODE_ERRORS: Final = frozenset({UnicodeDecodeError, UnicodeEncodeError,
                                    UnicodeTranslateError})


def check_unicode_error(error: Any) -> None:
    """Refuse to render a unicode error whose one bad character or byte lies before its
    object.

    For ``end == start + 1`` CPython's ``str()`` shows ``object[start]`` (3.11-3.13.0,
    gh-123378): a ``UnicodeDecodeError`` reads the byte unchecked, so
    ``UnicodeDecodeError('utf-8', b'ab', -n, 1 - n, '')`` made ``str()``, ``print`` or an
    f-string show the host's memory n bytes before the bytes, one byte a string (or
    segfault the host for a far one); the encode and translate errors returned the text
    with an IndexError still set, which the host's next C call raised as a SystemError
    naming its own functions. A script can only build one (the classes take no script
    subclass, their attributes no writes), and only C renders it: every route to that
    text comes through here."""
    if type(error) in _UNICODE_ERRORS and error.end == error.start + 1 and error.start < 0:
        raise ValueError(f"a {type(error).__name__} whose bad position is {error.start} "
                         "(before its object) cannot be turned into text")


def _leaf_cost(node: Any) -> int:
    """Operations one rendering of the leaf ``node`` costs: ``str([10**4299] * 13000)``
    is one C call that held the GIL 3 s."""
    if isinstance(node, int) and (bits := int.bit_length(node)) > _FREE_BITS:
        return 1 + (bits * 30103 // 100000) ** 2 // _DIGITS_SQUARED
    if type(node) in _UNICODE_ERRORS:
        check_unicode_error(node)  # ``"%s" % (error,)`` renders it with str()
    return 1


_ARGS: Final[Any] = BaseException.__dict__["args"].__get__
"""The C field ``args`` of an exception: a script class may shadow the name."""


def _shown(node: Any) -> Any:
    """The values a C render of ``node`` shows, each in full (an exception its ``args``, a
    slice its bounds, a facade's object its ``RENDER_CHILDREN``); None for a leaf. As one
    leaf, 2,000 reprs of ``ValueError(list(range(20000)))`` took 3-6 s for 2,000
    operations."""
    kind = type(node)
    children = RENDER_CHILDREN.get(kind)
    if children is not None:
        return children(node)
    if kind is slice:
        return (node.start, node.stop, node.step)
    if isinstance(node, BaseException) and kind not in _UNICODE_ERRORS:
        return _ARGS(node)  # a unicode error is checked as a leaf (``check_unicode_error``)
    return None


class _TooCostly(Exception):
    pass


def render_cost(obj: Any, budget: int) -> int:
    """Operations a C-level render of ``obj`` costs: an item each, more for a long int
    (> ``budget`` means "at least that")."""
    if isinstance(obj, _LEAVES) or (not isinstance(obj, _CONTAINERS) and _shown(obj) is None):
        return 1
    memo: dict[int, int] = {}
    total = 0

    def visit(node: Any, depth: int) -> int:
        nonlocal total
        shown = None if isinstance(node, _CONTAINERS) else _shown(node)
        if shown is None and not isinstance(node, _CONTAINERS):
            cost = _leaf_cost(node)
            total += cost
            return cost
        key = id(node)
        known = memo.get(key)
        if known is not None:
            total += known
            if total > budget:
                raise _TooCostly
            return known
        if depth > _MAX_DEPTH:
            raise RecursionError("maximum recursion depth exceeded while rendering an object")
        memo[key] = 1  # a cycle renders as "[...]"
        children = shown if shown is not None else (
            node.items() if isinstance(node, dict) else node)
        cost = 1
        for child in children:
            if isinstance(child, tuple) and isinstance(node, dict):
                cost += visit(child[0], depth + 1) + visit(child[1], depth + 1)
            else:
                cost += visit(child, depth + 1)
        memo[key] = cost
        return cost

    try:
        return visit(obj, 0)
    except _TooCostly:
        return budget + 1


def charge_render(obj: Any) -> None:
    """Charge rendering ``obj`` to the current run (trips ``operations`` when over budget)."""
    if isinstance(obj, _LEAVES) or (not isinstance(obj, _CONTAINERS) and _shown(obj) is None):
        if isinstance(obj, int) and int.bit_length(obj) > _FREE_BITS:
            # ``print(*[10**4299] * 13000)``: a host loop of 3 s between two ticks
            deque(islice(current_run().meter.ticker, _leaf_cost(obj)), maxlen=0)
        elif type(obj) in _UNICODE_ERRORS:
            check_unicode_error(obj)
        return
    if type(obj) is dict and len(obj) <= FLAT_SMALL and all(
            type(value) in _SCALARS for value in obj.values()):
        return  # e.g. a tool call's keyword arguments: nothing to amplify
    run = current_run()
    meter = run.meter
    left = meter.operations - meter.used
    cost = render_cost(obj, left)
    deque(islice(meter.ticker, cost), maxlen=0)


_HOST_TEXT: Final = re.compile(
    r"(?P<address> at 0x[0-9a-fA-F]{4,16}(?=>))"
    r"|(?P<locals>(?:\b[A-Za-z_]\w*\.<locals>\.)+)"
    r"|(?P<host>\bcodemode\.(?:sandbox|errors|mode|dispatch)(?:\.\w+)*\.(?=\w))"
    r"|(?P<regex>\b(?:regex\._regex_core|_regex|regex)\.(?=\w))")
"""What a repr or an error message shows of the host: memory addresses (``<function f at
0x7f…>``), host qualnames (``bind.<locals>.split``), host module paths
(``codemode.sandbox.language.guards.``) and the regex engine's internal modules.

A qualname starts at a word boundary: without the ``\b`` the engine tried it at every
character of a word, each try reading the rest of the word, so one word of 60,000 letters
in a printed list (with ``regex`` anywhere in it) held the GIL 7-14 s (quadratic)."""

_HOST_MARKS: Final = (" at 0x", "<locals>", "codemode.", "regex")


def _host_replacement(match: re.Match[str]) -> str:
    return "re." if match.lastgroup == "regex" else ""


_SCRUB_CHUNK: Final = 1 << 16
"""Characters of a text the pattern scans in one C call (~0.1 µs a character: it tries
four alternatives at each; a 10-million-character text held the GIL 1.5-2.4 s)."""

_SCRUB_UNIT: Final = 64
"""Characters of a chunk scanned per operation charged."""

_SCRUB_REACH: Final = 1 << 12
"""Characters a match starting in a chunk may extend past it: far more than any host name,
address or module path (a longer one is the script's own text)."""


def scrub(text: str) -> str:
    """``text`` (a repr, ``str()`` of an object, an error message) with what it would show
    of the host taken out: scripts see stable, address-free names (``<function f>``,
    ``<class 're.Match'>``, ``sorted() argument after ** …``). A long text goes a chunk at
    a time (each search bounded, ``\b`` still reading the character before it)."""
    if not any(mark in text for mark in _HOST_MARKS):
        return text
    if len(text) <= _SCRUB_CHUNK:
        return _HOST_TEXT.sub(_host_replacement, text)
    run = CURRENT_RUN.get(None)
    meter = None if run is None or run.meter.ended else run.meter
    parts: list[str] = []
    pos = 0
    while pos < len(text):
        if meter is not None:  # in a run: charged, and its deadline checked between chunks
            deque(islice(meter.ticker, _SCRUB_CHUNK // _SCRUB_UNIT), maxlen=0)
        end = pos + _SCRUB_CHUNK
        for match in _HOST_TEXT.finditer(text, pos, end + _SCRUB_REACH):
            if match.start() >= end:
                break
            parts += (text[pos:match.start()], _host_replacement(match))
            pos = match.end()
        if pos < end:
            parts.append(text[pos:end])
            pos = end
    return "".join(parts)


def scrubbed_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """An exception's ``args`` as a script reads them (C code puts reprs in messages:
    ``"<function f at 0x…> is not in list"``)."""
    return tuple(scrub_each(args)) if len(args) != 1 or type(args[0]) is str else args


def scrub_each(items: tuple[Any, ...] | list[Any]) -> list[Any]:
    """``items`` with each text scrubbed, as one read of an exception's ``args`` or
    ``__notes__``: in a run, one operation per ``WIDE_ITEMS`` items and per text, and one
    per ``_SCRUB_UNIT`` characters of a text, so the run's clock is checked between texts.
    Uncharged, 2,000 texts of 60,000 characters took 7.6 s of CPU for one read of
    ``e.args`` (a pool's worker and an in-process run 'did not stop in time')."""
    run = CURRENT_RUN.get(None)
    meter = None if run is None or run.meter.ended else run.meter
    if meter is not None:
        deque(islice(meter.ticker, len(items) // WIDE_ITEMS), maxlen=0)
    out: list[Any] = []
    for item in items:
        if type(item) is str:
            if meter is not None:
                deque(islice(meter.ticker, 1 + len(item) // _SCRUB_UNIT), maxlen=0)
            item = scrub(item)
        out.append(item)
    return out


WIDE_ITEMS: Final = 64
"""Items of :func:`scrub_each` that cost one operation to walk."""
