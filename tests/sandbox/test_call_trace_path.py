"""The per-call path's shortcuts give what the long way gives (issue #18, perf23).

A call's arguments sent as a JSON text of at most ``_KEPT_TEXT`` characters are kept
without ``_traced``'s look, the run's records are built without ``CallRecord``'s
``__init__``, and a call's script line is read from its code and offset only when shown.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import pytest

from codemode.sandbox.executors.broker import _KEPT_TEXT, CallBroker, _traced
from codemode.sandbox.language.state import line_at
from codemode.sandbox.runtime.result import CallRecord, call_record

_SPACED = json.JSONEncoder(ensure_ascii=False)
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def _densest(encode: Any, item: Any) -> dict[str, Any]:
    """Arguments of as many ``item``s as fit in ``_KEPT_TEXT`` characters of JSON."""
    items: list[Any] = []
    step = 4096
    while step:
        if len(encode({"a": items + [item] * step})) <= _KEPT_TEXT:
            items += [item] * step
        else:
            step //= 2
    return {"a": items}


@pytest.mark.parametrize("item", [0, 1.5, True, None, "", [], {}, [0], 10 ** 18, 2 ** 62])
@pytest.mark.parametrize("encode", [_SPACED.encode, _COMPACT.encode], ids=["spaced", "compact"])
def test_arguments_of_a_short_text_are_kept_by_the_long_way_too(item: Any, encode: Any) -> None:
    arguments = _densest(encode, item)
    assert len(encode(arguments)) <= _KEPT_TEXT
    assert _traced(arguments) is arguments


async def _echo(path: str, args: dict[str, Any]) -> Any:
    return args


@pytest.mark.parametrize("text", ['{"i": 1}', json.dumps({"a": [0] * 3000}),
                                  json.dumps({"a": "x" * 70_000})])
async def test_the_trace_of_a_text_call_is_the_trace_of_its_value(text: str) -> None:
    broker = CallBroker(_echo)
    await broker.answer_json("echo", text)
    await broker.call("echo", json.loads(text))
    by_text, by_value = broker.records
    assert by_text.arguments == by_value.arguments
    assert by_text.arguments == _traced(json.loads(text))


@pytest.mark.parametrize("error", [None, "boom"])
def test_a_record_built_without_init_equals_one_built_with_it(error: str | None) -> None:
    fast = call_record(3, "ns.tool", {"a": 1}, 0.25, 0.5, error)
    usual = CallRecord(index=3, name="ns.tool", arguments={"a": 1}, started=0.25,
                       duration=0.5, ok=error is None, error=error)
    assert fast == usual
    assert {f.name: getattr(fast, f.name) for f in dataclasses.fields(CallRecord)} == \
        dataclasses.asdict(usual)


def _probe() -> tuple[tuple[Any, int], int]:
    """The caller's place and ``f_lineno``, read at the same instruction (its call)."""
    frame = sys._getframe(1)
    return (frame.f_code, frame.f_lasti), frame.f_lineno


def _places() -> list[tuple[tuple[Any, int], int]]:
    seen = [_probe()]
    seen.append(
        _probe())
    for _ in range(2):
        seen.append(_probe())
    return seen


@pytest.mark.parametrize(("place", "line"), _places())
def test_the_line_of_a_place_is_what_f_lineno_said_there(place: Any, line: int) -> None:
    assert line_at(place) == line
