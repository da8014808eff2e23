"""The plain call's fast pieces behave exactly like the general ones they stand in for:
slot constructors, the one-step normalisation, signal children, ``dispatch_with``."""

from __future__ import annotations

import enum
import math
import time
from dataclasses import dataclass, fields
from typing import Any

import anyio
import pytest

import codemode as cm
from codemode.dispatch.content import Envelope, InvalidResult, normalise, normalise_timed
from codemode.dispatch.context import ExecContext, Token, ToolCall
from codemode.dispatch.frozen import constructor
from codemode.dispatch.pipeline import CallExtras, dispatch_with
from codemode.dispatch.signal import CancelSignal
from codemode.dispatch.task_scope import NO_TASKS

pytestmark = pytest.mark.anyio


def _values(cls: type) -> dict[str, Any]:
    spec = cm.define_tool(name="t", execute=lambda args: 1).spec
    table: dict[type, dict[str, Any]] = {
        cm.ToolResult: {"call_id": "c", "name": "t", "content": (cm.text("x"),),
                        "structured": {"a": 1}, "is_error": True, "error": None,
                        "meta": {"m": 1}, "duration": 0.5},
        ExecContext: {"call_id": "c", "name": "t", "arguments": {"a": 1}, "token": Token(),
                      "parent": Token(), "agent": "me", "spec": spec, "signal": CancelSignal(),
                      "deadline": 3.0, "report": print, "labels": frozenset({"x"}),
                      "dry_run": True, "session": None, "tasks": NO_TASKS},
        ToolCall: {"call_id": "c", "name": "t", "arguments": {"a": 1}, "parent": Token(),
                   "agent": "me", "labels": {"secret": "at line 1"}, "approved": True},
    }
    return table[cls]


@pytest.mark.parametrize("cls", [cm.ToolResult, ExecContext, ToolCall])
def test_constructor_makes_what_the_dataclass_makes(cls: type) -> None:
    values = _values(cls)
    made = constructor(cls)(**values)
    assert type(made) is cls
    assert made == cls(**values)
    assert {f.name: getattr(made, f.name) for f in fields(cls)} == values
    with pytest.raises(AttributeError):
        made.call_id = "other"  # still frozen


def test_constructor_keeps_defaults_and_requires_the_rest() -> None:
    make = constructor(cm.ToolResult)
    made = make(call_id="c", name="t", content=())
    assert made == cm.ToolResult(call_id="c", name="t", content=())
    with pytest.raises(TypeError, match="content"):
        make(call_id="c", name="t")
    with pytest.raises(TypeError):
        make("c", "t", ())  # keywords only: a field order change cannot shift values
    with pytest.raises(TypeError, match="labels"):  # a default_factory field must be passed
        constructor(ToolCall)(call_id="c", name="t", arguments={}, parent=None, agent=None,
                              approved=False)


def test_constructor_refuses_what_it_would_get_wrong() -> None:
    @dataclass(frozen=True, slots=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            raise AssertionError("skipped by a slot constructor")

    with pytest.raises(TypeError, match="__post_init__"):
        constructor(Checked)
    with pytest.raises(TypeError):
        constructor(int)


class Colour(enum.IntEnum):
    RED = 1


RESULTS: list[Any] = [
    "text", "", 0, 7, -(10**30), True, False, None, 1.5, -0.0, math.inf, math.nan,
    {"a": [1, {"b": None}]}, {}, {1: "x"}, {"type": "text", "text": "a block"},
    {"type": "text"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    [cm.text("a"), cm.text("b")], [1, "two", [3]], [], (1, 2), b"bytes", {1, 2},
    Colour.RED, Envelope("x", meta={"k": 1}), Envelope({"n": 1}, is_error=True),
    cm.ToolResult(call_id="old", name="old", content=(cm.text("kept"),)), object(),
]


@pytest.mark.parametrize("value", RESULTS, ids=lambda v: type(v).__name__)
def test_normalise_timed_is_normalise_plus_a_duration(value: Any) -> None:
    try:
        expected: cm.ToolResult | str = normalise("c", "t", value)
    except InvalidResult as exc:
        expected = f"InvalidResult: {exc}"
    start = time.perf_counter()
    try:
        got: cm.ToolResult | str = normalise_timed("c", "t", value, start)
    except InvalidResult as exc:
        got = f"InvalidResult: {exc}"
    assert got == expected  # ``duration`` is not compared
    if isinstance(got, cm.ToolResult):
        assert got.duration >= 0
        assert type(got.structured) is type(expected.structured)  # type: ignore[union-attr]


def test_signal_children_fire_with_their_parent_until_released() -> None:
    parent = CancelSignal(grace=0.25)
    kept, released, alone = parent.child(), parent.child(), parent.child(grace=0.0)
    heard: list[str] = []
    kept.on_cancel(lambda: heard.append("kept"))
    parent.release(released)
    alone.cancel("just this one")
    assert not parent.cancelled and not kept.cancelled  # a child never fires its parent
    parent.cancel("the run ended")
    assert kept.cancelled and kept.reason == "the run ended" and kept.grace == 0.25
    assert heard == ["kept"]
    assert not released.cancelled  # released: its call ended, the parent forgot it
    assert alone.reason == "just this one" and alone.grace == 0.0
    late = parent.child()
    assert late.cancelled and late.reason == "the run ended"
    parent.release(late)  # releasing a child of a fired parent is harmless
    parent.release(kept)


def test_grandchildren_fire_through_their_parent() -> None:
    root = CancelSignal()
    grandchild = root.child().child()
    root.cancel("stop")
    assert grandchild.cancelled and grandchild.reason == "stop"


async def test_dispatch_with_hands_the_extras_to_the_handler() -> None:
    registry = cm.ToolRegistry()
    seen: dict[str, Any] = {}

    async def look(args: Any, ctx: cm.ExecContext) -> str:
        seen.update(signal=ctx.signal, deadline=ctx.deadline, session=ctx.session)
        ctx.progress({"half": True})
        return "ok"

    registry.register(cm.define_tool(name="look", execute=look))
    signal, updates = CancelSignal(), []
    deadline = anyio.current_time() + 60
    result = await dispatch_with(registry, ToolCall(call_id="c", name="look"),
                                 CallExtras(None, signal, deadline, updates.append, True, None))
    assert result.text == "ok" and not result.is_error
    assert seen == {"signal": signal, "deadline": deadline, "session": None}
    assert updates == [{"half": True}]
    assert registry.lookup("look") is registry.get("look")
    assert registry.lookup("nope") is None


async def test_dispatch_with_a_fired_signal_cancels_before_the_handler() -> None:
    registry = cm.ToolRegistry()
    ran: list[str] = []

    async def work(args: Any, ctx: cm.ExecContext) -> str:
        ran.append("ran")
        return "done"

    registry.register(cm.define_tool(name="work", execute=work))
    signal = CancelSignal()
    signal.cancel()
    result = await dispatch_with(registry, ToolCall(call_id="c", name="work"),
                                 CallExtras(None, signal, None, None, True, None))
    assert result.is_error and result.error is not None and result.error.kind == "cancelled"
    assert ran == []  # the handler was never reached
