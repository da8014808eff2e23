"""JSON text in steps: the same text as one ``json.dumps`` call, never one long C call.

The host's loop waits for any single C call a worker thread makes (it holds the GIL), so
what matters besides the text being right is that no piece of it spells much: a long
string goes in ~1 MiB slices, each huge integer in a call of its own, a long list a slice
of items at a time.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import pytest

from codemode.dispatch.content import content_of
from codemode.jsontext import (
    STRING_CHUNK,
    JsonSteps,
    TextTooLong,
    compact_encoder,
    dumps_in_steps,
    is_small,
    loads,
    small_flat,
)

if TYPE_CHECKING:
    from collections.abc import Callable

VALUES: list[Any] = [
    {"a": 1, "b": [1.5, None, True, "x"], "c": {}},
    ["é" * (STRING_CHUNK + 17)],
    "\ud83d\ude00 emoji and \\ quotes \" " * 40_000,
    [10**4000 + i for i in range(40)],
    [-(10**3000), 2**1024, -(2**1024), 7],
    list(range(5000)),
    [{"k": i, "v": [i] * 3} for i in range(3000)],
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key", "s": "str"},
    {"deep": [[[[["x" * 5000]]]]] * 700},
    [[]] * 3000 + [{}] * 3000,
]

MODES = [
    pytest.param({"ascii": True, "compact": True},
                 {"ensure_ascii": True, "separators": (",", ":"), "allow_nan": False},
                 id="frames"),
    pytest.param({"ascii": False, "compact": True},
                 {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False},
                 id="compact-text"),
    pytest.param({"ascii": False, "compact": False, "allow_nan": True},
                 {"ensure_ascii": False, "allow_nan": True}, id="dumps-default-spacing"),
]


@pytest.mark.parametrize(("steps_options", "dumps_options"), MODES)
@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_text_is_what_json_dumps_writes(value: Any, steps_options: dict[str, Any],
                                            dumps_options: dict[str, Any]) -> None:
    steps = JsonSteps(**steps_options)
    steps.value(value)
    assert steps.text() == json.dumps(value, **dumps_options)


def test_counting_only_keeps_nothing_and_counts_utf8_bytes() -> None:
    value = {"t": "é" * 1000, "n": [1, 2]}
    steps = JsonSteps(ascii=False, compact=False, allow_nan=True, keep=False, utf8=True)
    steps.value(value)
    assert steps.chunks == []
    assert steps.size == len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _pieces(value: Any) -> list[str]:
    steps = JsonSteps(ascii=False, compact=True)
    steps.value(value)
    return steps.chunks


def test_each_huge_integer_is_spelled_in_a_call_of_its_own() -> None:
    """3,000 integers of 4,000 digits were one C call of 0.6 s."""
    value = [10**4000 + i for i in range(300)]
    pieces = _pieces(value)
    assert max(len(piece) for piece in pieces) < 4100
    assert "".join(pieces) == json.dumps(value, separators=(",", ":"))


def test_a_long_string_is_escaped_a_slice_at_a_time() -> None:
    value = {"text": "é\n" * (3 * STRING_CHUNK)}
    pieces = _pieces(value)
    assert max(len(piece) for piece in pieces) <= 2 * STRING_CHUNK + 2  # "\n" is two chars
    assert len(pieces) >= 6


def test_a_long_list_goes_a_slice_of_items_at_a_time() -> None:
    value = list(range(100_000))
    pieces = _pieces(value)
    assert len(pieces) >= 90
    assert max(len(piece) for piece in pieces) < 10_000


@pytest.mark.parametrize("make", [
    pytest.param(lambda: "é" * (40 * STRING_CHUNK), id="long-text"),
    pytest.param(lambda: ["x" * 600] * 60_000, id="many-texts"),
    pytest.param(lambda: {"k": "x" * (40 * STRING_CHUNK)}, id="long-text-in-a-dict"),
    pytest.param(lambda: list(range(10_000_000)), id="ten-million-ints"),
    pytest.param(lambda: [10**4000] * 20_000, id="long-ints"),
])
def test_the_cap_stops_the_text_as_soon_as_it_is_passed(make: Callable[[], Any]) -> None:
    """Each of these is tens of megabytes of text; the cap is passed within a piece. (Built
    in the test: a parameter lives in every xdist worker for the whole run, and ten million
    references there made every full garbage collection of the worker ~0.3 s slower.)"""
    cap = 2 * STRING_CHUNK
    steps = JsonSteps(ascii=True, compact=True, cap=cap)
    with pytest.raises(TextTooLong):
        steps.value(make())
    assert steps.size < cap + 6 * STRING_CHUNK + 16


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_not_a_number_is_refused_unless_allowed(bad: float) -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        dumps_in_steps({"x": [bad] * 3000})
    steps = JsonSteps(ascii=False, compact=False, allow_nan=True)
    steps.value([bad])
    assert steps.text() == json.dumps([bad])


@pytest.mark.parametrize(("value", "small"), [
    ({"a": [1, 2, 3]}, True),
    ([2**1000] * 100, True),
    ([10**4000] * 10, False),  # ten are ~2 ms of spelling: not "at once"
    ("x" * 40_000, False),
    (list(range(600)), False),
])
def test_is_small_weighs_items_strings_and_huge_integers(value: Any, small: bool) -> None:
    assert is_small(value) is small


def test_a_heavy_results_text_in_steps_is_the_same_block() -> None:
    value = {"rows": [{"id": i, "n": 10**1000 + i} for i in range(500)], "note": "é" * 5000}
    assert content_of(value, steps=True) == content_of(value)


def test_a_cycle_is_refused_as_json_dumps_refuses_it() -> None:
    cyclic: list[Any] = ["x" * 50_000]
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="Circular reference"):
        json.dumps(cyclic)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_in_steps(cyclic)
    shared = ["y" * 50_000]
    assert dumps_in_steps([shared, shared]) == json.dumps([shared, shared],
                                                           separators=(",", ":"))


class _Text(str):
    __slots__ = ()


def _cycle() -> list[Any]:
    held: list[Any] = [1]
    held.append({"again": held})
    return held


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


ODD_VALUES: list[Any] = [7, -3, True, None, 1.5, "plain", _Text("a str subclass é"), "é\n\"",
                         math.nan, [1, math.inf], _cycle(), _deep(100_000), {"x": object()},
                         ("tuple", 1)]


def _outcome(encode: Callable[[Any], str], value: Any) -> tuple[str, str]:
    try:
        return "text", encode(value)
    except (ValueError, TypeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize(("ascii", "allow_nan"), [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("value", VALUES + ODD_VALUES, ids=range(len(VALUES) + len(ODD_VALUES)))
def test_the_compact_encoder_writes_and_raises_what_json_encode_does(
        value: Any, ascii: bool, allow_nan: bool) -> None:
    usual = json.JSONEncoder(separators=(",", ":"), ensure_ascii=ascii, allow_nan=allow_nan)
    assert _outcome(compact_encoder(ascii=ascii, allow_nan=allow_nan), value) == _outcome(
        usual.encode, value)


@pytest.mark.parametrize("value", VALUES[:1] + ODD_VALUES[:8] + [{"a": [1, {"b": "é"}]}],
                         ids=range(10))
def test_the_spaced_encoder_writes_what_json_dumps_does(value: Any) -> None:
    usual = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
    spaced = compact_encoder(ascii=False, allow_nan=False, separators=(", ", ": "))
    assert _outcome(spaced, value) == _outcome(usual.encode, value)


def _decoded(decode: Callable[[str], Any], text: str) -> tuple[str, str]:
    try:
        return "value", repr(decode(text))
    except (ValueError, TypeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("text", [
    '{"i": 1}', '{"a":[1,2.5,null,true,"\\u00e9"]}', "7", '"x"', " {}", "{} ", "\n[]\t",
    "", "   ", "[1] x", "[1][2]", "{", '{"a" 1}', "NaN", "-Infinity", "1e400", '"\\ud800"',
    "[" * 100_000 + "]" * 100_000,
])
def test_loads_returns_and_raises_what_json_loads_does(text: str) -> None:
    assert _decoded(loads, text) == _decoded(json.loads, text)


class _Key(str):
    pass


@pytest.mark.parametrize("mapping", [
    {}, {"i": 1}, {"a": 1.5, "b": None, "c": True, "d": "x"},
    {f"k{i}": i for i in range(255)}, {f"k{i}": i for i in range(256)},
    {"a": "x" * (32 * 1024 - 1)}, {"a": "x" * (32 * 1024)}, {"ab": "x" * (32 * 1024 - 1)},
    {"a": 10 ** 400}, {"a": 10 ** 4000}, {f"k{i}": 10 ** 3000 for i in range(4)},
    {"a": 10 ** 30_000}, {"a": [1]}, {"a": {}}, {_Key("a"): 1}, {1: "x"},
], ids=range(16))
def test_small_flat_is_is_small_for_flat_mappings(mapping: dict[Any, Any]) -> None:
    flat = all(type(key) is str for key in mapping) and all(
        type(value) in (str, int, float, bool, type(None)) for value in mapping.values())
    assert small_flat(mapping) == (is_small(mapping) if flat else None)
