"""A long ASCII text's ``title``/``swapcase``/``capitalize`` runs a chunk at a time
(``guards._case_in_chunks``): one call held the GIL 2.5-4.5 s for 10**8 characters (and
allocated 12 bytes a character). The texts made are those of one call, a ``title`` word
split across chunks included; the host-loop side is in test_attacks' STALLERS
(``case-mapping-*``)."""

from __future__ import annotations

import hashlib
import re
import textwrap
from typing import Any

import pytest

from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.language.facades.re_facade import _ESCAPE_CHUNK
from codemode.sandbox.language.guards import _CASE_CHUNK, _CHUNKED_PREDICATES, _REPLACE_CHUNK
from codemode.sandbox.language.render import _HOST_TEXT, _SCRUB_CHUNK, scrub
from codemode.sandbox.language.textsearch import SEARCH_CHUNK
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.runner import run_script

pytestmark = pytest.mark.anyio

PATTERN = "aB1 'cD"
"""Seven characters: with a prefix of 0-6 characters, a chunk boundary falls at each place
of the pattern (after a letter, a digit, a space, an apostrophe)."""

METHODS = ("title", "swapcase", "capitalize", "upper")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_chunked_case_mappings_make_the_text_of_one_call() -> None:
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    source = (f"import hashlib\nunit = {PATTERN!r} * ({2 * _CASE_CHUNK} // 7 + 9)\n"
              f"[[hashlib.sha256(getattr('x' * n + unit, m)().encode()).hexdigest() "
              f"for m in {METHODS!r}] for n in range(7)]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    unit = PATTERN * (2 * _CASE_CHUNK // 7 + 9)
    assert len(unit) > 2 * _CASE_CHUNK
    assert outcome.error is None, outcome.error
    assert outcome.value == [
        [hashlib.sha256(getattr("x" * n + unit, m)().encode()).hexdigest() for m in METHODS]
        for n in range(7)]



TAB_UNITS = ("a\tbc\t\n\r\t\t\txyz\t", "ab\tcde\t\tf")
"""Repeated past two chunks, with a prefix of 0-2 characters: tabs straddle the chunk
boundaries at several columns, after a line end (the first) or with none in the text."""


@pytest.mark.parametrize("tabsize", [-1, 0, 1, 3, 8])
async def test_chunked_expandtabs_makes_the_text_of_one_call(tabsize: int) -> None:
    """``expandtabs`` of a long text goes a chunk at a time (``guards._expand_in_chunks``:
    30 million tabs held the GIL 0.6 s in one call); a chunk carries the column on, so the
    tabs that straddle a boundary fill as one call fills them."""
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    source = (f"import hashlib\n"
              f"[hashlib.sha256(('x' * n + u * ({2 * _CASE_CHUNK} // len(u) + 9))"
              f".expandtabs({tabsize}).encode()).hexdigest() "
              f"for u in {TAB_UNITS!r} for n in range(3)]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    assert outcome.error is None, outcome.error
    assert outcome.value == [
        hashlib.sha256(("x" * n + u * (2 * _CASE_CHUNK // len(u) + 9))
                       .expandtabs(tabsize).encode()).hexdigest()
        for u in TAB_UNITS for n in range(3)]


REPLACES = (("aa", "c", -1), ("ab", "", -1), ("a", "xyz", 250_000), ("aaa", "Q", 7),
            ("b", "bb", 0), ("ba", "x", -5))
"""Matches that straddle a chunk boundary, overlapping candidates (``aa`` in ``aaa``), a
count that runs out in a later chunk, none, and a negative one (all)."""


async def test_chunked_replace_makes_the_text_of_one_call() -> None:
    """``str.replace`` of a long text goes a chunk at a time (``guards._replace_in_chunks``:
    a growing replace of 30 million characters held the GIL 0.63 s in one call)."""
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    text = "aab" * (_REPLACE_CHUNK // 2) + "a" * (_REPLACE_CHUNK + 1)
    source = (f"import hashlib\nx = 'aab' * {_REPLACE_CHUNK // 2} + 'a' * {_REPLACE_CHUNK + 1}\n"
              f"[hashlib.sha256(x.replace(*r).encode()).hexdigest() for r in {REPLACES!r}]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    assert len(text) > 2 * _REPLACE_CHUNK
    assert outcome.error is None, outcome.error
    assert outcome.value == [hashlib.sha256(text.replace(*r).encode()).hexdigest()
                             for r in REPLACES]


async def test_chunked_re_escape_makes_the_text_of_one_call() -> None:
    """``re.escape`` of a long text or bytes goes a chunk at a time (``re_facade.escape``:
    20 million characters held the GIL 0.84 s in one call)."""
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    unit = "a.b*c\\\u20ac \n"
    text = unit * 30_000
    source = (f"import hashlib, re\nx = {unit!r} * 30_000\n"
              "[hashlib.sha256(re.escape(x).encode()).hexdigest(),\n"
              " hashlib.sha256(re.escape(x.encode())).hexdigest()]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    assert len(text) > 4 * _ESCAPE_CHUNK
    assert outcome.error is None, outcome.error
    assert outcome.value == [hashlib.sha256(re.escape(text).encode()).hexdigest(),
                             hashlib.sha256(re.escape(text.encode())).hexdigest()]


DEDENT_LINES = ((" ", 70_000, "a"), (" ", 70_000, "\tb"), ("", 0, ""), (" \t ", 30_000, ""),
                (" ", 65_536, "\x0bc"), (" ", 69_999, "d"), (" ", 65_535, " e"))
"""Lines (blank, how many, text) with margins longer than ``textwrap_facade._WINDOW`` (a
window ending inside them, on their last character, one past it), lines of blanks only,
whitespace past the spaces and tabs."""


async def test_windowed_dedent_makes_the_text_of_textwrap() -> None:
    """``textwrap.dedent`` reads each line's margin a window at a time (one stdlib call
    held the GIL 2 s on a 40-million-character margin): the text is textwrap's."""
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    lines = [blank * n + text for blank, n, text in DEDENT_LINES]
    texts = ["\n".join(lines[i:] + lines[:i]) for i in range(len(lines))]
    source = (f"import hashlib, textwrap\nlines = [b * n + t for b, n, t in {DEDENT_LINES!r}]\n"
              "[hashlib.sha256(textwrap.dedent('\\n'.join(lines[i:] + lines[:i])).encode())"
              ".hexdigest() for i in range(len(lines))]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    assert outcome.error is None, outcome.error
    assert outcome.value == [hashlib.sha256(textwrap.dedent(t).encode()).hexdigest()
                             for t in texts]


PREDICATE_TEXTS = (
    "'a' * C + 'a' * C", "'a' * C + 'A'", "'A' + 'a' * (C - 1) + 'b' + 'a' * C",
    "'A' + 'a' * (C - 1) + 'B' + 'a' * C", "'Ab ' * C + 'Cd'", "'Ab' + ' ' * (2 * C)",
    "'1' * (2 * C) + 'a'", "'1' * (2 * C)", "'1' * (2 * C) + 'A'", "'A' * (C + 1) + '1'",
    "'A' * (C - 1) + 'a' + 'A' * C", "'a' * C + '1' + 'a' * C", "'_' + '1' * (2 * C)",
    "'1' + 'a' * (2 * C)", "'a' * (C - 1) + '\\u01c5' + 'a' * C", "' ' * (2 * C) + '\\t'",
    "'\\u0661' * (2 * C)", "'x' * C + '\\x00' + 'x' * C", "'\\u01c5' + '\\u01c5' * C")
"""Texts past a chunk (``C``) whose answers turn on a chunk boundary: a capital, a title
case letter, a digit or a NUL right at it, cased letters only past it, a title word
straddling it."""


async def test_chunked_predicates_answer_as_one_call() -> None:
    """``isalpha``/``islower``/``istitle``/``isidentifier`` … of a long text go a chunk at a
    time (``guards._predicate_in_chunks``: ``islower`` of 120 million characters held the GIL
    0.9 s in one call); the answers are one call's."""
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    methods = sorted(_CHUNKED_PREDICATES)
    source = (f"C = {_CASE_CHUNK}\n"
              f"[[getattr(x, m)() for m in {methods!r}] for x in [{', '.join(PREDICATE_TEXTS)}]]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    texts = [eval(text, {"C": _CASE_CHUNK}) for text in PREDICATE_TEXTS]
    assert outcome.error is None, outcome.error
    assert outcome.value == [[getattr(x, m)() for m in methods] for x in texts]
    assert {value for row in outcome.value for value in row} == {True, False}


SEARCHES = ("'ab'", "'ba'", "'aab'", "'abab'", "'b' * 3", "'aa'", "'a' * (2 * C)",
            "'ab', 5", "'ab', -C - 3", "'ab', 3, -3", "'ab', None, C + 1", "'ab', C - 1, C + 1",
            "'aa', 1", "'ab', 2 * C, 5")
"""Needles and bounds: matches across a window's boundary (``C``), overlapping candidates
(``aa`` in ``aaa``), a needle longer than a window, negative and None bounds, a span of
about one window, an empty one."""
SEARCH_TEXTS = ("'a' * (C - 1) + 'b' + 'a' * C + 'bb'", "'ab' * C + 'aab'",
                "'a' * (3 * C) + 'b'", "'bbb' + 'a' * (2 * C)")
BYTES_SEARCHES = ("b'ab'", "b'aab', 3", "b'ba', -C - 3", "b'a' * (2 * C)")


async def test_chunked_searches_answer_as_one_call() -> None:
    """``find``/``rfind``/``index``/``rindex``/``count``/``in``/``partition``/``split``/
    ``rsplit`` of a needle of two or more characters in a long text go a window at a time
    (``textsearch``: ``find`` of 120 million characters held the GIL 0.7 s in one call); the
    answers are one call's."""
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    def answers(x: str, *args: Any) -> list[Any]:
        out: list[Any] = [args[0] in x, *(list(map(len, p(args[0])))
                                          for p in (x.partition, x.rpartition)),
                          *(hashlib.sha256("|".join(split(args[0], n)).encode()).hexdigest()
                            for split in (x.split, x.rsplit) for n in (-1, 2))]
        for method in ("find", "rfind", "count", "index", "rindex"):
            try:
                out.append(getattr(x, method)(*args))
            except ValueError as exc:
                out.append(str(exc))
        return out

    source = (f"import hashlib\nC = {SEARCH_CHUNK}\n"
              "def answers(x, *args):\n"
              "    out = [args[0] in x, *(list(map(len, p(args[0])))\n"
              "                           for p in (x.partition, x.rpartition)),\n"
              "           *(hashlib.sha256('|'.join(split(args[0], n)).encode()).hexdigest()\n"
              "             for split in (x.split, x.rsplit) for n in (-1, 2))]\n"
              "    for method in ('find', 'rfind', 'count', 'index', 'rindex'):\n"
              "        try:\n            out.append(getattr(x, method)(*args))\n"
              "        except ValueError as exc:\n            out.append(str(exc))\n"
              "    return out\n"
              f"[[answers(x, {'), answers(x, '.join(SEARCHES)})] "
              f"for x in [{', '.join(SEARCH_TEXTS)}]]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    scope = {"C": SEARCH_CHUNK, "answers": answers}
    expected = [[eval(f"answers(x, {search})", {**scope, "x": eval(text, scope)})
                 for search in SEARCHES] for text in SEARCH_TEXTS]
    assert outcome.error is None, outcome.error
    assert outcome.value == expected
    assert {row[7] for rows in expected for row in rows} > {-1}


async def test_chunked_bytes_searches_answer_as_one_call() -> None:
    """``find``, ``count`` and ``in`` of bytes go a window at a time as text does."""
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    searches = ", ".join(f"({search},)" for search in BYTES_SEARCHES)
    source = (f"C = {SEARCH_CHUNK}\nx = b'a' * (C - 1) + b'b' + b'a' * C + b'bb'\n"
              f"[[x.find(*s), x.count(*s), s[0] in x] for s in [{searches}]]")
    outcome = await run_script(source, call=CallBroker(host, limits).answer_json,
                               tool_paths=[], limits=limits)
    scope: dict[str, Any] = {"C": SEARCH_CHUNK}
    x = b"a" * (SEARCH_CHUNK - 1) + b"b" + b"a" * SEARCH_CHUNK + b"bb"
    expected = []
    for search in BYTES_SEARCHES:
        args = eval(f"({search},)", scope)
        expected.append([x.find(*args), x.count(*args), args[0] in x])
    assert outcome.error is None, outcome.error
    assert outcome.value == expected


@pytest.mark.parametrize("shift", range(0, 40, 3))
def test_chunked_scrub_takes_out_what_one_pass_takes_out(shift: int) -> None:
    """``render.scrub`` of a long text goes a chunk at a time (one pass held the GIL 1.5-2.4 s
    on 10 million characters): host names straddling a chunk boundary go as in one pass."""
    names = " <function f at 0x7f00aabbccdd> bind.<locals>.split codemode.sandbox.guards.g regex.x"
    text = ("y" * (_SCRUB_CHUNK - shift) + names) * 3
    assert scrub(text) == _HOST_TEXT.sub(lambda m: "re." if m.lastgroup == "regex" else "", text)
    assert "0x7f" not in scrub(text) and "<locals>" not in scrub(text)
