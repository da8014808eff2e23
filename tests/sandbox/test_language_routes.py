"""Every route to an allowlisted method gives the guarded one (an exhaustive table).

A method the guards bind (``SPECIAL_METHODS``: size checks, comparison charges …) must
be the guarded one whether the script reaches it through an instance, the class it
names (``tuple``, ``collections.deque``, ``datetime.date``), ``type(x)``, ``getattr``, a
reference stored in a local and called later, a named tuple class or a script subclass
of one. Each route is checked by recording that the guard's binder ran and that the
route answers exactly what the instance route answers.
"""

from __future__ import annotations

import collections
import copy
import datetime
import decimal
import inspect
import json
import re
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import pytest

from codemode.errors import ToolCallError
from codemode.sandbox.language import guards
from codemode.sandbox.language.builtins import SAFE_BUILTINS, STAND_INS, type_
from codemode.sandbox.language.facades import facade
from codemode.sandbox.language.facades.chainmap import ChainMap
from codemode.sandbox.language.facades.decimal_facade import Decimal
from codemode.sandbox.language.facades.fractions_facade import Fraction
from codemode.sandbox.language.guards import (
    ATTRIBUTES,
    CLASS_METHODS,
    SPECIAL_METHODS,
    guarded_getattr,
)
from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.state import CURRENT_RUN, RunState
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.runner import warm_up

if TYPE_CHECKING:
    from collections.abc import Callable

warm_up()  # the facades register their types and guarded methods


@pytest.fixture(autouse=True)
def _run() -> Iterator[RunState]:
    state = RunState(Limits(operations=10_000_000, timeout=30.0))
    token = CURRENT_RUN.set(state)
    try:
        yield state
    finally:
        CURRENT_RUN.reset(token)


def _match() -> Any:
    search = facade("re").sandbox_getattr("search")
    token = CURRENT_RUN.set(RunState(Limits()))
    try:
        return search("(?P<w>b+)", "abbc")
    finally:
        CURRENT_RUN.reset(token)


def _regex_error() -> Any:
    compile_ = facade("re").sandbox_getattr("compile")
    token = CURRENT_RUN.set(RunState(Limits()))
    try:
        compile_("(")
    except Exception as exc:
        return exc
    finally:
        CURRENT_RUN.reset(token)
    raise AssertionError("'(' compiled")


def _script_generator() -> Any:
    """A started generator of script code (``send``/``throw``/``close`` are the script's
    own generators' only)."""
    source = ("def gen():\n    while True:\n        try:\n            yield 1\n"
              "        except ValueError:\n            pass\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, SCRIPT_FILENAME, "exec"), namespace)  # test code, not a script's
    gen = namespace["gen"]()
    next(gen)
    return gen


def _script_async_generator() -> Any:
    """A started async generator of script code (``aclose`` is the script's own async
    generators' only)."""
    source = "async def agen():\n    while True:\n        yield 1\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, SCRIPT_FILENAME, "exec"), namespace)  # test code, not a script's
    agen = namespace["agen"]()
    _finished(agen.__anext__())
    return agen


def _finished(awaitable: Any) -> Any:
    """The value of an awaitable that completes without suspending (an async generator's
    step or close), driven here without a loop."""
    steps = awaitable.__await__()
    try:
        next(steps)
    except StopIteration as done:
        return done.value
    raise AssertionError(f"{awaitable!r} suspended")


SAMPLES: Final[dict[type, Callable[[], Any]]] = {
    str: lambda: "a bB\tc",
    bytes: lambda: b"a b",
    int: lambda: 6,
    bool: lambda: True,
    float: lambda: 2.5,
    complex: lambda: 1 + 2j,
    property: lambda: property(len),
    list: lambda: [3, 1, 2, 1],
    tuple: lambda: (1, 2, 1),
    dict: lambda: {1: 2, 3: 4},
    set: lambda: {1, 2},
    frozenset: lambda: frozenset({1, 2}),
    range: lambda: range(5),
    slice: lambda: slice(1, 5, 2),
    type({}.keys()): lambda: {1: 2}.keys(),
    type({}.items()): lambda: {1: 2}.items(),
    collections.Counter: lambda: collections.Counter("aab"),
    collections.defaultdict: lambda: collections.defaultdict(int, {1: 2, 3: 4}),
    collections.OrderedDict: lambda: collections.OrderedDict([(1, 2), (3, 4)]),
    collections.deque: lambda: collections.deque([3, 1, 2, 1]),
    datetime.date: lambda: datetime.date(2020, 1, 2),
    datetime.time: lambda: datetime.time(3, 4, 5),
    datetime.datetime: lambda: datetime.datetime(2020, 1, 2, 3, 4, 5),
    datetime.timedelta: lambda: datetime.timedelta(days=1, seconds=5),
    datetime.timezone: lambda: datetime.timezone(datetime.timedelta(hours=2)),
    BaseException: lambda: BaseException("x"),
    OSError: lambda: OSError(2, "gone", "a.txt"),
    ImportError: lambda: ImportError("m", name="m"),
    ModuleNotFoundError: lambda: ModuleNotFoundError("m", name="m"),
    StopIteration: lambda: StopIteration(3),
    ExceptionGroup: lambda: ExceptionGroup("many", [ValueError("a")]),
    ToolCallError: lambda: ToolCallError("t", "m", "$.x"),
    json.JSONDecodeError: lambda: json.JSONDecodeError("bad", "doc", 1),
    UnicodeDecodeError: lambda: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"),
    UnicodeEncodeError: lambda: UnicodeEncodeError("ascii", "\xff", 0, 1, "bad"),
    type(datetime.date(2020, 1, 1).isocalendar()): lambda: datetime.date(2020, 1, 6).isocalendar(),
    type(datetime.date(2020, 1, 1).timetuple()): lambda: datetime.date(2020, 1, 1).timetuple(),
    types.GeneratorType: lambda: _script_generator(),
    types.AsyncGeneratorType: lambda: _script_async_generator(),
    type(_match()): _match,
    type(_regex_error()): _regex_error,
    Decimal: lambda: Decimal.wrap(decimal.Decimal("1.5")),
    ChainMap: lambda: ChainMap({1: 2}, {3: 4}),
    Fraction: lambda: Fraction.from_float(0.75),
}
"""A sample instance of every allowlisted type."""

ARGS: Final[dict[str, tuple[Any, ...]]] = {
    "count": (1,), "index": (1,), "remove": (1,), "extend": ([4],), "extendleft": ([4],),
    "center": (9,), "ljust": (9,), "rjust": (9,), "zfill": (9,), "encode": ("utf-8",),
    "decode": ("ascii",), "expandtabs": (4,), "join": (["x", "y"],),
    "replace": ("b", "BB"), "translate": ({98: "XY"},), "get": (1,), "pop": (1,),
    "setdefault": (5, 6), "update": ({5: 6},), "subtract": ("a",), "most_common": (1,),
    "move_to_end": (1,), "add": (3,), "discard": (1,), "union": ([3],),
    "intersection": ([1],), "difference": ([1],), "symmetric_difference": ([3],),
    "intersection_update": ([1],), "difference_update": ([1],),
    "symmetric_difference_update": ([3],), "issubset": ([1, 2, 3],), "issuperset": ([1],),
    "isdisjoint": ([5],), "strftime": ("%Y %H",), "group": (0,), "expand": (r"\g<w>",),
    "astimezone": (datetime.UTC,),
    "send": (2,), "throw": (ValueError,),
}
"""Arguments of each guarded method (none when absent)."""

_ARGS_BY_TYPE: Final[dict[tuple[type, str], tuple[Any, ...]]] = {
    (str, "count"): ("b",), (str, "split"): (), (bytes, "count"): (b"b",),
    (range, "index"): (3,), (collections.Counter, "get"): ("a",),
    (collections.Counter, "pop"): ("a",), (collections.Counter, "update"): ("ab",),
    (type({}.items()), "isdisjoint"): ([(1, 2)],), (datetime.time, "strftime"): ("%H",),
}


def _args(cls: type, name: str) -> tuple[Any, ...]:
    return _ARGS_BY_TYPE.get((cls, name), ARGS.get(name, ()))


def _script_class(real: type) -> Any:
    """The class object a script names for ``real`` (its stand-in, or ``real`` itself)."""
    return STAND_INS.get(real, real)


def _routes(real: type, name: str) -> dict[str, Callable[[Any], Callable[..., Any]]]:
    """Route name -> (instance -> the callable that route yields, bound to the instance)."""
    def instance(obj: Any) -> Callable[..., Any]:
        return guarded_getattr(obj, name)  # type: ignore[no-any-return]

    def via_getattr_builtin(obj: Any) -> Callable[..., Any]:
        return SAFE_BUILTINS["getattr"](obj, name)  # type: ignore[no-any-return]

    def via_class(obj: Any) -> Callable[..., Any]:
        unbound = guarded_getattr(_script_class(real), name)
        return lambda *args: unbound(obj, *args)

    def via_type(obj: Any) -> Callable[..., Any]:
        unbound = guarded_getattr(type_(obj), name)
        return lambda *args: unbound(obj, *args)

    def stored(obj: Any) -> Callable[..., Any]:
        kept = [guarded_getattr(type_(obj), name)]  # a reference kept in a container
        return lambda *args: kept[0](obj, *args)

    if real in (types.GeneratorType, types.AsyncGeneratorType):  # type() of one is refused
        return {"instance": instance, "getattr()": via_getattr_builtin, "class": via_class}
    return {"instance": instance, "getattr()": via_getattr_builtin, "class": via_class,
            "type()": via_type, "stored": stored}


def _recording(key: tuple[type, str], seen: list[str],
               monkeypatch: pytest.MonkeyPatch) -> None:
    binder = SPECIAL_METHODS[key]

    def record(obj: Any) -> Any:
        seen.append("bound")
        return binder(obj)
    monkeypatch.setitem(SPECIAL_METHODS, key, record)


def _call(method: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        answer = method(*copy.deepcopy(args))
        if inspect.isawaitable(answer):  # ``agen.aclose()``: compared by its value
            answer = _finished(answer)
        if isinstance(answer, Iterator):  # ``Counter.elements()``: compared by its items
            answer = list(answer)
        return "value", answer
    except Exception as exc:
        return "error", type(exc).__name__


_VALUES: Final = frozenset({"args", "strerror", "filename", "filename2", "message", "name"})
"""Guarded exception fields: values (scrubbed), not methods."""

GUARDED: Final = sorted((key for key in SPECIAL_METHODS.keys() - CLASS_METHODS.keys()
                         if key[1] not in _VALUES),
                        key=lambda key: (key[0].__name__, key[1]))


@pytest.mark.parametrize("key", GUARDED, ids=[f"{c.__name__}.{n}" for c, n in GUARDED])
def test_every_route_to_a_guarded_method_is_guarded(
        key: tuple[type, str], monkeypatch: pytest.MonkeyPatch) -> None:
    real, name = key
    assert real in SAMPLES, f"no sample instance of {real.__name__}: add one to SAMPLES"
    seen: list[str] = []
    _recording(key, seen, monkeypatch)
    answers: dict[str, Any] = {}
    for route, get in _routes(real, name).items():
        obj = SAMPLES[real]()
        seen.clear()
        answer = _call(get(obj), _args(real, name))
        assert seen == ["bound"], f"{real.__name__}.{name} via {route}: the guard did not run"
        state = obj if real not in (type(_match()), types.GeneratorType,
                                    types.AsyncGeneratorType) else None
        answers[route] = (answer, repr(state))
    assert len({repr(a) for a in answers.values()}) == 1, answers


def _tuple_routes() -> dict[str, Callable[[], tuple[Any, Callable[..., Any]]]]:
    """Routes to ``count``/``index`` through a named tuple and a script subclass of one."""
    namedtuple = facade("collections").sandbox_getattr("namedtuple")
    point = namedtuple("P", "a b")
    sub = guards.build_class("Q", (point,), {"__module__": "__script__", "__qualname__": "Q"})

    def routes(name: str) -> dict[str, Callable[[], tuple[Any, Callable[..., Any]]]]:
        def instance() -> tuple[Any, Callable[..., Any]]:
            obj = point(1, 1)
            return obj, guarded_getattr(obj, name)

        def named_class() -> tuple[Any, Callable[..., Any]]:
            obj = point(1, 1)
            unbound = guarded_getattr(point, name)
            return obj, lambda *args: unbound(obj, *args)

        def subclass() -> tuple[Any, Callable[..., Any]]:
            obj = sub(1, 1)
            unbound = guarded_getattr(sub, name)
            return obj, lambda *args: unbound(obj, *args)

        def subclass_instance() -> tuple[Any, Callable[..., Any]]:
            obj = sub(1, 1)
            return obj, guarded_getattr(obj, name)

        def type_of_instance() -> tuple[Any, Callable[..., Any]]:
            obj = sub(1, 1)
            unbound = guarded_getattr(type_(obj), name)
            return obj, lambda *args: unbound(obj, *args)

        def unbound_tuple_on_named() -> tuple[Any, Callable[..., Any]]:
            obj = point(1, 1)
            unbound = guarded_getattr(SAFE_BUILTINS["tuple"], name)
            return obj, lambda *args: unbound(obj, *args)

        return {"instance": instance, "named class": named_class, "subclass": subclass,
                "subclass instance": subclass_instance, "type()": type_of_instance,
                "tuple.name(named)": unbound_tuple_on_named}
    return routes  # type: ignore[return-value]


@pytest.mark.parametrize("name", ["count", "index"])
def test_named_tuple_routes_are_guarded(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    _recording((tuple, name), seen, monkeypatch)
    answers = {}
    for route, make in _tuple_routes()(name).items():  # type: ignore[operator]
        seen.clear()
        _, method = make()
        answers[route] = method(1)
        assert seen == ["bound"], f"tuple.{name} via {route}: the guard did not run"
    assert set(answers.values()) == {0 if name == "index" else 2}, answers


ALLOWED: Final = sorted(((cls, name) for cls, names in ATTRIBUTES.items() for name in names),
                        key=lambda key: (key[0].__name__, key[1]))


@pytest.mark.parametrize("key", ALLOWED, ids=[f"{c.__name__}.{n}" for c, n in ALLOWED])
def test_instance_and_class_routes_agree(key: tuple[type, str]) -> None:
    """For every allowlisted (type, name): the class route (when it is a method of the
    instance) answers what the instance route answers, and a method with no guard of its
    own is the plain one on both routes (no route adds or drops a guard)."""
    real, name = key
    assert real in SAMPLES, f"no sample instance of {real.__name__}: add one to SAMPLES"
    obj = SAMPLES[real]()
    through_instance = guarded_getattr(obj, name)
    raw = getattr(obj, name)
    descriptor = type(next((base.__dict__[name] for base in real.__mro__
                            if name in base.__dict__), None)).__name__
    if name in _VALUES:  # a value: the same texts, with no host address in them
        assert through_instance == raw
        return
    if key in SPECIAL_METHODS:
        through_class = guarded_getattr(_script_class(real), name)
        assert through_instance is not raw and through_class is not getattr(real, name)
        return
    if descriptor in ("method_descriptor", "function", "wrapper_descriptor"):
        # an instance method: each route on a fresh instance answers the same, and leaves
        # the instance in the same state (no route adds or drops a guard)
        through_class = guarded_getattr(_script_class(real), name)
        args = _args(real, name)

        def answer(bind: Callable[[Any], Callable[..., Any]]) -> str:
            fresh = SAMPLES[real]()
            # a new object's repr holds its address (``<property object at 0x…>``)
            return re.sub(r"0x[0-9a-f]+", "0x…", repr((_call(bind(fresh), args), fresh)))
        expected = answer(lambda fresh: getattr(fresh, name))
        assert answer(lambda fresh: guarded_getattr(fresh, name)) == expected
        assert answer(lambda fresh: lambda *a: through_class(fresh, *a)) == expected
    elif callable(raw) and not isinstance(raw, type):
        assert through_instance == raw, (real, name)


CLASS_ROWS: Final = sorted(CLASS_METHODS, key=lambda key: (key[0].__name__, key[1]))
CLASS_ARGS: Final[dict[str, tuple[Any, ...]]] = {
    "strptime": ("2024-03-05", "%Y-%m-%d"), "fromtimestamp": (86400,),
    "utcfromtimestamp": (86400,), "from_bytes": (b"\x01", "big"), "maketrans": ("ab", "cd"),
}
CLASS_RESULTS: Final[dict[str, type]] = {"maketrans": dict}
"""What a replaced class method that builds no instance of its class returns."""


@pytest.mark.parametrize("key", CLASS_ROWS, ids=[f"{c.__name__}.{n}" for c, n in CLASS_ROWS])
def test_every_route_to_a_replaced_class_method_is_replaced(key: tuple[type, str]) -> None:
    """Class-level methods the sandbox replaces (``now``/``today``/``fromtimestamp`` in UTC,
    ``strptime`` called from the host): the class, an instance and ``type()`` give the
    replacement, never the raw classmethod."""
    real, name = key
    obj = SAMPLES[real]()
    raw = getattr(real, name)
    routes = {"class": guarded_getattr(_script_class(real), name),
              "instance": guarded_getattr(obj, name),
              "type()": guarded_getattr(type_(obj), name)}
    args = CLASS_ARGS.get(name, ())
    answers = set()
    for route, method in routes.items():
        assert method != raw, f"{real.__name__}.{name} via {route} is the raw classmethod"
        value = method(*args)
        assert type(value) is CLASS_RESULTS.get(name, real), (route, value)
        assert getattr(value, "tzinfo", None) is None, (route, value)
        answers.add(repr(value) if args else type(value))
    assert len(answers) == 1, answers
