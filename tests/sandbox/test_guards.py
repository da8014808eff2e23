"""Each guard with the attacks it stops; security rows check the host object was NOT reached."""

from __future__ import annotations

import sys
import textwrap
import types
from typing import TYPE_CHECKING, Any

import pytest

from codemode.errors import ToolCallError
from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.language.guards import (
    build_class,
    guarded_getattr,
    guarded_hasattr,
    guarded_type,
    guarded_write,
)
from codemode.sandbox.language.meter import Meter, Tripped
from codemode.sandbox.language.sizes import (
    guarded_add,
    guarded_lshift,
    guarded_mod,
    guarded_mul,
    guarded_pow,
)
from codemode.sandbox.language.state import CURRENT_RUN, RunState
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.runner import run_script

if TYPE_CHECKING:
    from collections.abc import Iterator

    from codemode.sandbox.runtime.result import RunOutcome


class Sentinel:
    """A host object: any attribute lookup that reaches it flips ``touched``."""

    public = "reachable without a guard"
    """A plain attribute: only the guard stands between a script and it."""

    def __init__(self) -> None:
        self.touched: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name != "touched":
            object.__getattribute__(self, "touched").append(name)
        return object.__getattribute__(self, name)


def _generator() -> Iterator[int]:
    yield 1


async def _coroutine() -> None:
    return None


def _traceback() -> types.TracebackType:
    try:
        raise ValueError("x")
    except ValueError as exc:
        assert exc.__traceback__ is not None
        return exc.__traceback__


HOST_OBJECTS = [
    pytest.param(sys, "modules", id="module"),
    pytest.param(types.ModuleType("m"), "anything", id="fresh-module"),
    pytest.param(sys._getframe(), "f_globals", id="frame"),
    pytest.param(_generator.__code__, "co_consts", id="code"),
    pytest.param(_traceback(), "tb_frame", id="traceback"),
    pytest.param(_generator(), "gi_frame", id="generator"),
    *[pytest.param(_generator(), name, id=f"host-generator-{name}")  # not script code
      for name in ("send", "throw", "close", "send")],
    pytest.param(len, "self", id="builtin-function"),
    pytest.param(_generator, "func_globals", id="function"),
    pytest.param(1, "is_integer", id="int-is-integer"),
    pytest.param(ValueError("x"), "with_traceback", id="exception-with-traceback"),
    pytest.param(object(), "anything", id="plain-object"),
    pytest.param({}.get, "self", id="bound-method"),
]


@pytest.mark.parametrize(("obj", "name"), HOST_OBJECTS)
def test_getattr_refuses_host_internals(obj: Any, name: str) -> None:
    # ``int.is_integer`` is 3.12's: on 3.11 the message is CPython's own
    with pytest.raises(AttributeError, match=r"no (accessible )?attribute"):
        guarded_getattr(obj, name)
    assert guarded_hasattr(obj, name) is False
    assert guarded_getattr(obj, name, "fallback") == "fallback"


def test_coroutine_attributes_are_refused() -> None:
    coro = _coroutine()
    try:
        for name in ("cr_frame", "cr_await", "send", "throw"):
            assert hasattr(coro, name)  # there: only the guard refuses it
            with pytest.raises(AttributeError, match="no accessible attribute"):
                guarded_getattr(coro, name)
    finally:
        coro.close()


@pytest.mark.parametrize("name", ["__class__", "__dict__", "__globals__", "_private", "__init__"])
def test_getattr_refuses_underscore_names_before_touching_the_object(name: str) -> None:
    sentinel = Sentinel()
    with pytest.raises(AttributeError, match="private"):
        guarded_getattr(sentinel, name)
    assert sentinel.touched == []


@pytest.mark.parametrize("name", ["public", "touched"])
def test_getattr_refuses_unknown_host_objects_without_touching_them(name: str) -> None:
    sentinel = Sentinel()
    assert getattr(sentinel, name) is not None  # there: only the guard refuses it
    sentinel.touched.clear()
    with pytest.raises(AttributeError, match="'Sentinel' object has no accessible attribute"):
        guarded_getattr(sentinel, name)
    assert sentinel.touched == []
    assert guarded_hasattr(sentinel, name) is False
    assert sentinel.touched == []


@pytest.mark.parametrize(("obj", "name", "expected"), [
    ("a,b", "split", ["a", "b"]),
    ([3, 1], "copy", [3, 1]),
    ({"k": 1}, "get", 1),
    (ToolCallError("t", "m", "$.x"), "path", "$.x"),
    (ValueError("v"), "args", ("v",)),
])
def test_getattr_allows_listed_attributes(obj: Any, name: str, expected: Any) -> None:
    value = guarded_getattr(obj, name)
    assert (value(",") if name == "split" else value("k") if name == "get"
            else value() if name == "copy" else value) == expected


def test_getattr_rejects_non_string_names() -> None:
    with pytest.raises(TypeError, match=r"^attribute name must be a string$"):  # the guard's
        guarded_getattr("x", 1)  # type: ignore[arg-type]


def test_script_class_attributes_resolve_to_script_code_only() -> None:
    cls = build_class("E", (Exception,), {"__module__": "s", "note": "mine"})
    instance = cls("boom")
    instance.extra = 1
    assert guarded_getattr(instance, "note") == "mine"
    assert guarded_getattr(instance, "extra") == 1
    assert guarded_getattr(instance, "args") == ("boom",)
    assert hasattr(instance, "with_traceback")  # there: only the guard refuses it
    with pytest.raises(AttributeError, match="'E' object has no accessible attribute "
                                             "'with_traceback'"):
        guarded_getattr(instance, "with_traceback")
    assert hasattr(cls, "mro")
    with pytest.raises(AttributeError, match="no accessible attribute 'mro'"):
        guarded_getattr(cls, "mro")


@pytest.mark.parametrize("base", [str, int, dict, list, type, types.FunctionType, Sentinel])
def test_script_classes_cannot_subclass_host_types(base: type) -> None:
    with pytest.raises(TypeError, match="cannot subclass"):
        build_class("X", (base,), {"__module__": "s"})


@pytest.mark.parametrize("obj", [str, len, Sentinel(), ToolCallError("a", "b"), (1, 2), "s",
                                 frozenset()])
def test_write_refuses_objects_the_script_does_not_own(obj: Any) -> None:
    with pytest.raises(TypeError, match="cannot be modified"):
        guarded_write(obj)


def test_write_allows_script_containers_and_objects() -> None:
    cls = build_class("P", (), {"__module__": "s"})
    for obj in ({}, [], set(), cls(), cls):
        assert guarded_write(obj) is obj


@pytest.mark.parametrize("obj", [Sentinel(), sys, _generator(), len])
def test_type_refuses_host_objects(obj: Any) -> None:
    with pytest.raises(TypeError, match="not available"):
        guarded_type(obj)


def test_type_of_script_values() -> None:
    assert guarded_type(1) is int
    assert guarded_type(ValueError()) is ValueError


@pytest.fixture
def run_state() -> Iterator[RunState]:
    state = RunState(Limits(memory=1024 * 1024, operations=10_000))
    token = CURRENT_RUN.set(state)
    try:
        yield state
    finally:
        CURRENT_RUN.reset(token)


@pytest.mark.parametrize(("guard", "args"), [
    (guarded_mul, ("a", 10**9)),
    (guarded_mul, (10**9, [0])),
    (guarded_mul, (1 << 100_000, 1 << 100_000)),
    (guarded_pow, (10, 10**9)),
    (guarded_pow, (3, 10**3000, 10**3000 + 7)),
    (guarded_lshift, (1, 10**9)),
    (guarded_add, ("a" * 600_000, "b" * 600_000)),
    (guarded_mod, ("%*d", (10**9, 1))),
    (guarded_mod, ("%1000000000d", 1)),
])
def test_size_guards_trip_before_allocating(run_state: RunState, guard: Any,
                                            args: tuple[Any, ...]) -> None:
    with pytest.raises(Tripped):
        guard(*args)
    assert run_state.meter.tripped is not None
    assert run_state.meter.tripped.limit in ("memory", "operations")


@pytest.mark.parametrize(("guard", "args", "expected"), [
    (guarded_mul, (3, 4), 12),
    (guarded_mul, ("ab", 3), "ababab"),
    (guarded_mul, (2.5, 2), 5.0),
    (guarded_pow, (2, 100), 2**100),
    (guarded_pow, (2, 10, 1000), 24),
    (guarded_lshift, (1, 64), 1 << 64),
    (guarded_add, ([1], [2]), [1, 2]),
    (guarded_mod, (17, 5), 2),
    (guarded_mod, ("%5.1f", 2.25), "  2.2"),
])
def test_size_guards_pass_ordinary_values(run_state: RunState, guard: Any,
                                          args: tuple[Any, ...], expected: Any) -> None:
    assert guard(*args) == expected
    assert run_state.meter.tripped is None


def test_meter_counts_at_c_speed_and_trips_sticky() -> None:
    meter = Meter(operations=5000, timeout=10)
    get = {}.get
    assert sum(map(get, meter.ticker, range(3000))) == sum(range(3000))
    assert 3000 <= meter.used <= 3001
    with pytest.raises(Tripped):
        for _ in map(get, meter.ticker, range(10_000)):
            pass
    assert meter.tripped is not None and meter.tripped.limit == "operations"
    with pytest.raises(Tripped):
        next(meter.ticker)
    with pytest.raises(Tripped):
        meter.check()


def test_meter_abort_stops_at_the_next_tick() -> None:
    meter = Meter(operations=10**9, timeout=10)
    next(meter.ticker)
    meter.abort("host gave up")
    with pytest.raises(Tripped, match="host gave up"):
        next(meter.ticker)


async def _script(source: str) -> RunOutcome:
    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    limits = Limits(timeout=2, operations=50_000)
    return await run_script(textwrap.dedent(source), call=CallBroker(host, limits).answer_json,
                            tool_paths=["echo"], limits=limits)


@pytest.mark.parametrize(("source", "error"), [
    ("getattr(1, '__cl' + 'ass__')", "AttributeError"),
    ("getattr(tools, '_' + 'children')", "AttributeError"),
    ("getattr(tools.echo, '_' + 'caller')", "AttributeError"),
    ("getattr('{0.__cl' + 'ass__}', 'for' + 'mat')('x')", "AttributeError"),
    ("getattr('{0.gi_' + 'frame}', 'for' + 'mat')(x for x in [1])", "AttributeError"),
    ("def g():\n    yield 1\ngetattr(g(), 'gi_' + 'frame')", "AttributeError"),
    ("async def c():\n    pass\ngetattr(c(), 'cr_' + 'frame')", "AttributeError"),
    ("try:\n    1/0\nexcept Exception as e:\n    getattr(e, '__traceback' + '__')",
     "AttributeError"),
    ("type('X', (), {})", "TypeError"),
    ("class S(str):\n    pass", "TypeError"),
    ("class M(type):\n    pass", "TypeError"),
    ("import json\njson.loads = len", "TypeError"),
    ("tools.echo = 1", "TypeError"),
    ("list.append = len", "TypeError"),
    ("ToolCallError.message = 'x'", "TypeError"),
    ("vars()", "TypeError"),  # the script's variables: never listed
    ("vars(tools)", "TypeError"),
    ("import json\nvars(json)", "TypeError"),
    ("open('/etc/passwd')", "NameError"),
    ("setattr(tools, 'x', 1)", "TypeError"),  # what ``tools.x = 1`` may do: nothing
    ("class A:\n    pass\nsetattr(A(), '__class__', int)", "AttributeError"),
    ("class A:\n    pass\nsetattr(A, '__eq__', len)", "AttributeError"),
    ("setattr([], '_x', 1)", "AttributeError"),
    ("try:\n    1/0\nexcept Exception as e:\n    setattr(e, '__traceback__', None)",
     "AttributeError"),
    ("object.__subclasses__()", "SyntaxError"),
    ("().__class__.__bases__[0]", "SyntaxError"),
    ("exec('1')", "SyntaxError"),
    ("eval('1')", "SyntaxError"),
    ("import os", "ModuleNotFoundError"),
    ("import json.decoder", "ModuleNotFoundError"),
    ("from json import codecs", "ImportError"),
    ("from re import enum", "ImportError"),
    ("from . import x", "ImportError"),
    ("__import__('os')", "SyntaxError"),
])
async def test_script_attacks_are_refused(source: str, error: str) -> None:
    outcome = await _script(source)
    assert outcome.error is not None, outcome.value
    assert outcome.error.type == error, outcome.error
    assert outcome.error.limit is None
    sentinel = await _script("x = await tools.echo(ok=1)\nx['ok']")
    assert sentinel.value == 1


async def test_host_classes_are_unchanged_after_attacks() -> None:
    await _script("ToolCallError.message = 'pwned'")
    await _script("try:\n    ValueError.x = 1\nexcept Exception:\n    pass")
    assert "message" not in vars(ToolCallError)
    assert not hasattr(ValueError, "x")
