"""``re`` for scripts, backed by the ``regex`` engine with a time budget.

Catastrophic patterns (``(a+)+$``) are not refused up front; instead every
match runs with ``timeout`` = what is left of the run's wall-clock budget, and
with the GIL released (``concurrent=True``) so an in-process run cannot
stall the host's threads. Running out trips the ``timeout`` limit.
"""

from __future__ import annotations

import itertools
import re as _stdlib_re
import time
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

import regex  # type: ignore[import-untyped]

try:  # the engine's own pattern parser (pure Python): sizes counted repeats exactly
    from regex import _regex_core as _core
except ImportError:  # another regex release: every pattern is bounded by its numbers
    _core = None

from codemode.errors import LimitExceeded
from codemode.sandbox.language.builtins import type_only
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import ATTRIBUTES, SPECIAL_METHODS, SelfGuarded, refuse
from codemode.sandbox.language.sizes import (
    RENDER_SIZERS,
    SLICE_SIZERS,
    charge_operations,
    ensure_size,
)
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["FACADE", "Pattern"]

_MATCH_TYPE: Final = type(regex.match("", ""))
SPECIAL_METHODS.setdefault((_MATCH_TYPE, "expand"), lambda m: lambda t: expand(m, t))


def _span_length(match: Any, group: Any) -> int:
    try:
        start, end = match.span(group)
    except (IndexError, TypeError):
        return 0  # the real call raises the proper error
    return max(int(end) - int(start), 0)


def _bind_group(match: Any) -> Callable[..., Any]:
    """``Match.group(*names)``: every name copies its text (``m.group(*[0] * 10**5)``)."""
    def group(*names: Any) -> Any:
        if len(names) > 1:
            ensure_size(sum(_PIECE + _span_length(match, g) for g in names), "Match.group()")
        return match.group(*names)
    return group


def _all_groups_size(match: Any) -> int:
    return sum(_PIECE + _span_length(match, g) for g in range(1, len(match.regs)))


def _bind_all_groups(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``groups()``/``groupdict()``: nested groups copy the same text once per group."""
    def bind(match: Any) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if len(match.regs) > 2:
                ensure_size(_all_groups_size(match), f"Match.{method}()")
            return getattr(match, method)(*args, **kwargs)
        return call
    return bind


def _slice_size(match: Any, key: slice) -> int:
    groups = range(len(match.regs))[key]
    return sum(_PIECE + _span_length(match, g) for g in groups)


SLICE_SIZERS.setdefault(_MATCH_TYPE, _slice_size)
SPECIAL_METHODS.setdefault((_MATCH_TYPE, "group"), _bind_group)
SPECIAL_METHODS.setdefault((_MATCH_TYPE, "groups"), _bind_all_groups("groups"))
SPECIAL_METHODS.setdefault((_MATCH_TYPE, "groupdict"), _bind_all_groups("groupdict"))
ATTRIBUTES.setdefault(_MATCH_TYPE, frozenset({
    "group", "groups", "groupdict", "start", "end", "span", "string", "pos", "endpos",
    "lastindex", "lastgroup", "expand",
}))

ATTRIBUTES.setdefault(regex.error, frozenset({"args", "msg", "pattern", "pos", "lineno",
                                               "colno"}))

_FLAGS: Final = {"IGNORECASE": regex.IGNORECASE, "I": regex.IGNORECASE,
                 "MULTILINE": regex.MULTILINE, "M": regex.MULTILINE,
                 "DOTALL": regex.DOTALL, "S": regex.DOTALL, "VERBOSE": regex.VERBOSE,
                 "X": regex.VERBOSE, "ASCII": regex.ASCII, "A": regex.ASCII,
                 "UNICODE": regex.UNICODE, "U": regex.UNICODE,
                 "NOFLAG": 0}  # 3.11: no flag, ``flags = re.NOFLAG`` then ``flags |= re.I``


def _budget() -> float:
    run = current_run()
    run.meter.check()
    left = run.meter.deadline - time.monotonic()
    if left <= 0:
        run.meter.trip(LimitExceeded("timeout", run.limits.timeout, "the run took too long"))
    return left


def _timed(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, timeout=_budget(), concurrent=True, **kwargs)
    except TimeoutError:
        run = current_run()
        run.meter.trip(LimitExceeded("timeout", run.limits.timeout,
                                     "a regular expression ran out of time"))


MAX_PATTERN_EXPANSION: Final = 100_000
"""Largest pattern size after expanding counted repeats (``(?:a{50}){50}`` is 2500)."""

MAX_PATTERN_LENGTH: Final = 20_000
"""Longest pattern text. The engine parses a pattern in Python, uncharged and deaf to the
run's clock: up to ~7.5 µs a character (classes under ``re.I``, groups), so 100,000
characters held a run ~0.75 s past its deadline, beyond the executor's stop grace."""

_GROUP_REF: Final = regex.compile(r"\\(?:g<[^>]*>|\d{1,2})")
_NUMBER: Final = regex.compile(r"\d+")
_SPACE: Final = regex.compile(r"\s+")
_COMMENTS: Final = regex.compile(r"#[^\n]*|\(\?#[^)]*\)")
_REPEATS: Final = tuple(getattr(_core, name) for name in (
    "GreedyRepeat", "LazyRepeat", "PossessiveRepeat") if hasattr(_core, name))
"""The parser's repeat nodes (none where ``_regex_core`` is missing or renamed them)."""


_GRAPHEME_NODES: Final = 5
"""Nodes one ``\\X`` counts as: the engine compiles it to ~1.3 kB where a character takes
~250 bytes (``\\X{99000}``, 99,001 nodes as counted before, took 124 MiB in one compile
call, twice a 64 MiB limit, before the run's memory check saw it)."""

_HEAVY: Final = tuple(getattr(_core, name) for name in ("Grapheme",) if hasattr(_core, name))


class _Unknown(Exception):
    """The pattern's structure could not be read (see :func:`_expansion`)."""


def _tree_size(node: Any, limit: int, depth: int = 0) -> int:
    """Nodes of a parsed pattern with every counted repeat multiplied out."""
    if depth > 500:
        raise _Unknown
    if isinstance(node, _REPEATS):
        low, high = node.min_count, node.max_count
        times = max(int(low or 0), int(high if high is not None else 0), 1)
        inner = _tree_size(node.subpattern, limit, depth + 1)
        return min(inner * times, limit + 1)
    total = _GRAPHEME_NODES if isinstance(node, _HEAVY) else 1
    children = getattr(node, "__dict__", None) or {}
    for value in children.values():
        items = value if isinstance(value, list | tuple) else (value,)
        for item in items:
            if isinstance(item, _core.RegexBase):
                total += _tree_size(item, limit, depth + 1)
                if total > limit:
                    return total
    return total


def _parsed(pattern: str | bytes, flags: int) -> Any:
    """The pattern as the engine's own parser reads it (the same parse ``regex.compile``
    makes: verbose whitespace and comments, ``[^])]``, a comment between a group and its
    count, ``{1 000}`` under ``(?x)`` …)."""
    global_flags = flags
    for _ in range(8):
        source = _core.Source(pattern)
        info = _core.Info(global_flags, source.char_type, {})
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        try:
            return _core._parse_pattern(source, info)
        except _core._UnscopedFlagSet:
            global_flags = info.global_flags
    raise _Unknown


def _parsed_size(pattern: str | bytes, flags: int, limit: int) -> int:
    """The expansion as the engine's own parser reads the pattern."""
    return _tree_size(_parsed(pattern, flags), limit)


_FUZZY_HINT: Final = regex.compile(r"\{[^}]*[deis]")
"""Text a fuzzy constraint needs (``x{e<=2}``, ``(?:ab){i}``, ``a{1i+2d<4}``): only
patterns with it are parsed for one."""

_FUZZY: Final = getattr(_core, "Fuzzy", None)


def _has_fuzzy(node: Any, depth: int = 0) -> bool:
    if depth > 500:
        raise _Unknown
    if _FUZZY is not None and isinstance(node, _FUZZY):
        return True
    for value in (getattr(node, "__dict__", None) or {}).values():
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, _core.RegexBase) and _has_fuzzy(item, depth + 1):
                return True
    return False


def _refuse_fuzzy(pattern: str | bytes, flags: int) -> None:
    """Refuse the engine's fuzzy matching (``re`` reads ``x{i}`` as the text ``x{i}``).

    Its search ran past the time budget it was given: ``re.search(r'x{i}', 'ab' *
    200_000)`` returned ~0.5-1.3 s after its timeout (``(?e)``: 1.26 s), GIL released but
    a core busy after a run's deadline (in-process, after the run ended: the run did not
    stop in time). A pattern the parse cannot read is refused when it has the text."""
    text = pattern if isinstance(pattern, str) else pattern.decode("latin-1")
    if _FUZZY_HINT.search(text) is None:
        return
    try:
        fuzzy = _core is None or _FUZZY is None or _has_fuzzy(_parsed(pattern, flags))
    except _core.error:
        raise
    except (_Unknown, RecursionError, AttributeError, TypeError, ValueError):
        fuzzy = True
    if fuzzy:
        raise regex.error("fuzzy matching ({e<=n} and the like) is not supported in the "
                          "sandbox's re")


def _bound(text: str, limit: int) -> int:
    """An upper bound on any reading of ``text``: its length times every number in it
    (as written, and with whitespace and comments taken out, which verbose mode skips
    even inside a count), each ``\\X`` weighed as its nodes."""
    size = len(text) + (_GRAPHEME_NODES - 2) * text.count("\\X")
    for variant in (_SPACE.sub("", text), _SPACE.sub("", _COMMENTS.sub("", text))):
        for number in _NUMBER.findall(variant):
            size *= max(int(number.lstrip("0")[:9] or 0), 1)
            if size > limit:
                return size
    return size


def _expansion(pattern: str | bytes, flags: int = 0,
               limit: int = MAX_PATTERN_EXPANSION) -> int:
    """Pattern size with counted repeats ``{n,m}`` multiplied out through nested groups.

    Read off the pattern as ``regex`` parses it (a scan of the text was misled by
    classes such as ``[^])]``, verbose whitespace and comments: ``(?:a{1000}[^])]){3000}``
    compiled to 830 MB); a pattern that parse cannot read is bounded by its numbers."""
    text = pattern if isinstance(pattern, str) else pattern.decode("latin-1")
    bound = _bound(text, limit)
    if bound <= limit:
        return bound  # no reading can be bigger: the (Python, untimed) parse is skipped
    if _core is None or not _REPEATS:
        return bound
    try:
        return _parsed_size(pattern, flags, limit)
    except _core.error:
        raise
    except (_Unknown, RecursionError, AttributeError, TypeError, ValueError):
        return _bound(text, limit)


_ALLOWED_FLAGS: Final = (regex.IGNORECASE | regex.MULTILINE | regex.DOTALL | regex.VERBOSE
                         | regex.ASCII | regex.UNICODE)


_RUN_PATTERNS: Final = 256
"""Patterns one run keeps compiled (``re.search(p, line)`` in a loop compiles ``p`` once).
The engine's own cache is not used: it kept 500 patterns of any size for every later run
(one of 15 MB each), and they outlived the run that compiled them."""

_PURGE_EVERY: Final = 256
"""The engine notes the text of every pattern it compiles, cached or not, until its cache
is full: the notes are dropped every this many compiles."""

_COMPILES: Final = itertools.count(1)


def _too_big(size: int) -> NoReturn:
    current_run().too_big("a regular expression this large (counted repeats expanded)", size)


def _compiled(pattern: Any, flags: int) -> Any:
    if not isinstance(flags, int) or flags & ~_ALLOWED_FLAGS:
        raise ValueError("unsupported regular expression flags; use re.I, re.M, re.S, re.X, "
                         "re.A or re.U")
    if isinstance(pattern, Pattern):
        return pattern.compiled
    if not isinstance(pattern, str | bytes):
        raise TypeError("pattern must be a string")
    # Refused before the (Python, untimed) expansion scan and the compile.
    if len(pattern) > MAX_PATTERN_LENGTH:
        run = current_run()
        run.meter.trip(LimitExceeded("memory", run.limits.memory, (
            f"a regular expression of {len(pattern)} characters"
            f" (at most {MAX_PATTERN_LENGTH} are parsed)")))
    cache = current_run().extras.setdefault("re.patterns", {})
    key = (type(pattern), pattern, flags)
    found = cache.get(key)
    if found is not None:
        return found
    size = _expansion(pattern, flags)
    if size > MAX_PATTERN_EXPANSION:
        _too_big(size)
    _refuse_fuzzy(pattern, flags)
    compiled = regex.compile(pattern, flags, cache_pattern=False)
    if next(_COMPILES) % _PURGE_EVERY == 0:
        regex.purge()
    if len(cache) >= _RUN_PATTERNS:
        cache.clear()
    cache[key] = compiled
    return compiled


_PIECE: Final = 64
"""Bytes one piece of a ``findall``/``split`` result costs besides its text."""


def _check_pieces(compiled: Any, string: Any, what: str) -> None:
    """``findall``/``split`` build one object per match and group in one C call: on big
    inputs count the matches first (charged, timed) and size the result before building it.

    Each match contributes a piece per group plus one; all groups of one match lie inside
    it, and matches do not overlap, so the text copied is at most ``groups + 1`` times the
    input.
    """
    if not isinstance(string, str | bytes):
        return
    per_match = (compiled.groups + 1) * _PIECE
    text = (compiled.groups + 1) * len(string)
    share = current_run().limits.memory // 4
    if (len(string) + 1) * per_match + text <= min(share, 1 << 22):
        return
    matches = sum(map(bool, counted(_timed(compiled.finditer, string))))
    ensure_size((matches + 1) * per_match + text, what)


_REPEATED: Final = regex.compile(r"(?:\)|\\X|\\\d+|\\[gk]<[^>]*>)\s*[*+{]")
"""A repeated group, grapheme or backreference (``(a)*``, ``(?:ab)*``, ``\\X*``,
``(ab)\\1*``: ~50 bytes a character): the engine keeps a backtracking entry and each
group's capture history for every iteration. An escaped parenthesis or one in a class
reads as a group too, erring on the safe side."""

_CALLS: Final = regex.compile(r"\(\?(?:R|[+-]?\d|&|P>)")
"""A call into a group (``a(?R)?``, ``(a(?1)?)``): a frame for every level."""

_STATE_BYTES: Final = 160
"""Bytes the engine keeps per character a repeated group consumes, besides each group's
share (measured: ~136 without a group, ~190 with one)."""

_CALL_STATE_BYTES: Final = 448
"""Bytes per character of a recursive pattern (``(a(?1)?)`` measured ~420)."""

_GROUP_STATE_BYTES: Final = 64
"""Bytes per character for each capture group (ten nested groups measured ~780 in all)."""

_STATE_FAST_OK: Final = 1 << 16
"""Estimates below this are never looked at (the pattern is not scanned)."""


def _found(finder: Any, text: str) -> bool:
    """``finder`` matches ``text`` as written or with comments taken out (``(a) # c``
    then ``*`` under ``re.X``)."""
    return any(finder.search(variant) is not None
               for variant in (text, _COMMENTS.sub("", text)))


def _check_state(compiled: Any, string: Any) -> None:
    """Size the state one match keeps, in C and untracked, before it runs.

    The engine grows that state within one call and frees it only with the match (a
    ``Match`` keeps each group's capture history): ``re.match(r'(?:(a)|(b))*', 'ab' *
    10**6)`` grew an in-process host by 363 MB under a 64 MiB limit before the run's
    memory check saw it (570 MB, then the engine's MemoryError, at three times that)."""
    if not isinstance(string, str | bytes):
        return
    per_group = _GROUP_STATE_BYTES * compiled.groups
    if len(string) * (_STATE_BYTES + per_group) <= _STATE_FAST_OK:
        return
    pattern = compiled.pattern
    text = pattern if isinstance(pattern, str) else pattern.decode("latin-1")
    if _found(_CALLS, text):
        ensure_size(len(string) * (_CALL_STATE_BYTES + per_group), _STATE_WHAT)
    elif _found(_REPEATED, text):
        ensure_size(len(string) * (_STATE_BYTES + per_group), _STATE_WHAT)


_STATE_WHAT: Final = "a regular expression's match state"


def _group_span_max(match: Any) -> int:
    return max(len(g) for g in (match.group(0), *match.groups(match.group(0)[:0])))


_TEMPLATE_PIECE: Final = 256
"""Longest template text handed to the engine at once: it keeps every template it expanded
(500 of them, shared by all runs), so a run's 10 MB templates outlived it."""

_TOKEN: Final = (r"\\(?:g<[^>\\]{0,200}>?|x[0-9A-Fa-f]{0,2}|u[0-9A-Fa-f]{0,4}"
                 r"|U[0-9A-Fa-f]{0,8}|N(?:\{[^}\\]{0,200}\}?)?|[0-9]{1,3}|.)?|[^\\]+")
_TOKENS: Final = {str: regex.compile(_TOKEN, regex.DOTALL),
                  bytes: regex.compile(_TOKEN.encode(), regex.DOTALL)}
"""A template's escapes (each as long as the engine could read it) and literal runs: the
engine reads an escape within its token, so cutting between tokens keeps the meaning (a
group name or character name past 200 characters is cut, and refused)."""


def expand(match: Any, template: Any) -> Any:
    """``Match.expand`` with the result size checked first; a long template is expanded a
    few tokens at a time (see :data:`_TEMPLATE_PIECE`), each token charged and each
    piece sized before it is made."""
    if not isinstance(template, str | bytes):
        return match.expand(template)  # the engine's own TypeError
    span = _group_span_max(match)
    if len(template) <= _TEMPLATE_PIECE:
        _check_expansion(0, template, span)
        return match.expand(template)
    pieces = []
    produced = start = end = 0

    for token in counted(_TOKENS[type(template)].finditer(template, concurrent=True)):
        if token.end() - start > _TEMPLATE_PIECE:
            if end > start:
                _check_expansion(produced, template[start:end], span)
                pieces.append(match.expand(template[start:end]))
                produced += len(pieces[-1])
                start = end
            if token.end() - start > _TEMPLATE_PIECE:  # a long literal run: as it is
                ensure_size(produced + token.end() - start, "Match.expand()")
                pieces.append(template[start:token.end()])
                produced += len(pieces[-1])
                start = token.end()
        end = token.end()
    if end > start:
        _check_expansion(produced, template[start:end], span)
        pieces.append(match.expand(template[start:end]))
    return template[:0].join(pieces)


def _check_expansion(produced: int, template: str | bytes, span: int) -> None:
    text = template if isinstance(template, str) else template.decode("latin-1")
    refs = len(_GROUP_REF.findall(text))
    ensure_size(produced + len(template) + refs * span, "Match.expand()")


def _sized_sub(compiled: Any, repl: Any, string: Any, count: int) -> tuple[Any, int]:
    """``subn`` whose output is measured match by match (``re.sub('', big, s)`` amplifies)."""
    run = current_run()
    room = run.limits.memory - (len(string) if isinstance(string, str | bytes) else 0)
    meter = run.meter
    produced = 0

    def piece_for(match: Any) -> Any:
        nonlocal produced
        # one operation a match: ``re.sub('', 'ab', 'x' * 4 * 10**6)`` made 4 million
        # pieces (5 s of CPU) under a 100,000-operation budget, past the deadline
        next(meter.ticker)
        if callable(repl):
            piece = repl(match)
        elif isinstance(repl, str | bytes) and ("\\" in repl if isinstance(repl, str)
                                                else b"\\" in repl):
            piece = expand(match, repl)
        else:
            piece = repl
        produced += len(piece) if isinstance(piece, str | bytes) else 0
        if produced > room:
            ensure_size(produced + len(string), "re.sub()")
        return piece

    _check_state(compiled, string)
    result: tuple[Any, int] = _timed(compiled.subn, piece_for, string, count)
    return result


@final
class Pattern(SelfGuarded):
    """A compiled pattern; every method runs with the run's time budget."""

    __slots__ = ("compiled",)

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled

    def __repr__(self) -> str:
        return f"re.compile({self.compiled.pattern!r})"

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("pattern", "flags", "groups"):
            return getattr(self.compiled, name)
        if name == "groupindex":
            return dict(self.compiled.groupindex)
        if name in _METHODS:
            return _pattern_method(self.compiled, name)
        raise refuse(self, name)


RENDER_SIZERS.setdefault(_MATCH_TYPE, lambda match: 64 + _span_length(match, 0))
RENDER_SIZERS.setdefault(Pattern, lambda pattern: 16 + len(pattern.compiled.pattern))


_METHODS: Final = frozenset({"search", "match", "fullmatch", "findall", "finditer", "sub",
                             "subn", "split"})


def _pattern_method(compiled: Any, name: str) -> Callable[..., Any]:
    """``Pattern.<name>`` with the stdlib ``re.Pattern`` signature only: ``regex`` adds
    keywords such as ``overlapped=True`` (a match at every position: ``findall`` on 10**5
    characters builds 5 GB of text) that no size check here accounts for."""
    method = getattr(compiled, name)

    def sub(repl: Any, string: Any, count: int = 0) -> Any:
        return _sized_sub(compiled, repl, string, count)[0]

    def subn(repl: Any, string: Any, count: int = 0) -> Any:
        return _sized_sub(compiled, repl, string, count)

    def split(string: Any, maxsplit: int = 0) -> Any:
        return _pieces(compiled, name, string, maxsplit)

    def finditer(string: Any, pos: Any = None, endpos: Any = None) -> Any:
        _check_state(compiled, string)
        return counted(_timed(method, string, pos, endpos))

    def findall(string: Any, pos: Any = None, endpos: Any = None) -> Any:
        return _pieces(compiled, name, string, pos, endpos)

    def search(string: Any, pos: Any = None, endpos: Any = None) -> Any:
        _check_state(compiled, string)
        return _timed(method, string, pos, endpos)

    methods: dict[str, Callable[..., Any]] = {"sub": sub, "subn": subn, "split": split,
                                              "finditer": finditer, "findall": findall}
    chosen = methods.get(name, search)
    chosen.__name__ = name
    chosen.__qualname__ = f"Pattern.{name}"
    return chosen


def compile(pattern: Any, flags: int = 0) -> Pattern:
    """Compile a pattern."""
    return Pattern(_compiled(pattern, flags))


def search(pattern: Any, string: Any, flags: int = 0) -> Any:
    """First match anywhere, or None."""
    return _matched(_compiled(pattern, flags), "search", string)


def match(pattern: Any, string: Any, flags: int = 0) -> Any:
    """Match at the start, or None."""
    return _matched(_compiled(pattern, flags), "match", string)


def fullmatch(pattern: Any, string: Any, flags: int = 0) -> Any:
    """Match the whole string, or None."""
    return _matched(_compiled(pattern, flags), "fullmatch", string)


def _matched(compiled: Any, method: str, string: Any) -> Any:
    _check_state(compiled, string)
    return _timed(getattr(compiled, method), string)


def _pieces(compiled: Any, method: str, string: Any, *args: Any, **kwargs: Any) -> Any:
    _check_state(compiled, string)
    _check_pieces(compiled, string, f"re.{method}()")
    return list(_timed(getattr(compiled, method), string, *args, **kwargs))


def findall(pattern: Any, string: Any, flags: int = 0) -> list[Any]:
    """All matches as strings/tuples."""
    return _pieces(_compiled(pattern, flags), "findall", string)  # type: ignore[no-any-return]


def finditer(pattern: Any, string: Any, flags: int = 0) -> Iterator[Any]:
    """Iterator over match objects (counted)."""
    compiled = _compiled(pattern, flags)
    _check_state(compiled, string)
    return counted(_timed(compiled.finditer, string))


def sub(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
    """Replace matches."""
    return _sized_sub(_compiled(pattern, flags), repl, string, count)[0]


def subn(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
    """Replace matches; also return the count."""
    return _sized_sub(_compiled(pattern, flags), repl, string, count)


def split(pattern: Any, string: Any, maxsplit: int = 0, flags: int = 0) -> list[Any]:
    """Split by matches."""
    return _pieces(_compiled(pattern, flags), "split", string, maxsplit)  # type: ignore[no-any-return]


_ESCAPE_CHUNK: Final = 1 << 16
"""Characters the stdlib's ``re.escape`` (one ``str.translate`` through a dict, ~40 ns a
character) is given in one call: 20 million held the GIL 0.84 s, as one operation."""

_ESCAPED: Final = 8
"""Characters of an escape charged as one operation (``str.translate``'s rate)."""


def escape(pattern: Any) -> Any:
    """Escape special characters (``regex.escape`` loops in Python per character, without
    operation ticks; the stdlib's ``str.translate`` version runs in C and is equivalent).
    Each character escapes alone, so a long text goes a chunk at a time, charged."""
    if not isinstance(pattern, str | bytes):
        return _stdlib_re.escape(pattern)
    ensure_size(2 * len(pattern), "re.escape()")
    parts: list[Any] = []
    for start in range(0, len(pattern), _ESCAPE_CHUNK):
        piece: Any = pattern[start:start + _ESCAPE_CHUNK]
        charge_operations(len(piece) // _ESCAPED)
        parts.append(_stdlib_re.escape(piece))
    return pattern[:0].join(parts)


FACADE: Final = Facade("re", {
    "compile": compile, "search": search, "match": match, "fullmatch": fullmatch,
    "findall": findall, "finditer": finditer, "sub": sub, "subn": subn, "split": split,
    "escape": escape, "error": regex.error, **_FLAGS,
    # For isinstance() only: a Pattern comes from compile(), a Match from a search.
    "Pattern": type_only(Pattern, "re", "Pattern"), "Match": type_only(_MATCH_TYPE, "re", "Match"),
})
