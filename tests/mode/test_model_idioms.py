"""Idioms real models write that the sandbox used to get wrong, each run next to CPython.

Every table row runs through ``CodeMode`` (dialects, preflight, policy, runtime) and,
where the script is plain Python, through CPython with a ``tools`` object of the same
tools: the values must be equal. Rows for what CPython cannot run (a dialect) or what the
sandbox refuses assert the exact value or message.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
from typing import TYPE_CHECKING, Any, Final

import pytest

import codemode as cm
from codemode.mode.preflight import check_script
from codemode.sandbox.language.facades import FACADE_NAMES
from codemode.sandbox.language.policy import index_nodes

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


def get_weather(city: str) -> dict[str, Any]:
    """Weather of a city."""
    return {"city": city, "temp": 3 * len(city)}


def get_user(user_id: int) -> dict[str, Any]:
    """One user."""
    return {"id": user_id, "name": f"user{user_id}"}


class CPythonTools:
    """``tools`` for CPython: the same functions, as coroutines."""

    async def get_weather(self, *, city: str) -> dict[str, Any]:
        return get_weather(city)

    async def get_user(self, *, user_id: int) -> dict[str, Any]:
        return get_user(user_id)


async def cpython(script: str) -> Any:
    """The value of ``script``'s last expression in plain CPython, as JSON data."""
    tree = ast.parse(script)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr), "a row must end in an expression"
    tree.body[-1] = ast.copy_location(
        ast.Assign([ast.Name("result", ast.Store())], last.value), last)
    code = compile(ast.fix_missing_locations(tree), "<cpython>", "exec",
                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace: dict[str, Any] = {"tools": CPythonTools()}
    pending = eval(code, namespace)  # the test's own rows
    if inspect.iscoroutine(pending):
        await pending
    return json.loads(json.dumps(namespace["result"]))


@pytest.fixture(scope="module")
async def executor() -> AsyncIterator[cm.InProcessExecutor]:
    async with cm.InProcessExecutor() as impl:
        yield impl


def registry() -> cm.ToolRegistry:
    reg = cm.ToolRegistry()
    reg.register(cm.tool(get_weather))
    reg.register(cm.tool(get_user))
    return reg


@pytest.fixture
def mode(executor: cm.InProcessExecutor) -> cm.CodeMode:
    return cm.CodeMode(registry(), executor=executor)


@pytest.fixture
def strict(executor: cm.InProcessExecutor) -> cm.CodeMode:
    return cm.CodeMode(registry(), executor=executor, strict=True)


async def value(mode: cm.CodeMode, script: str) -> Any:
    run = await mode.run(script)
    assert run.error is None, run.error
    return run.value


# -- 1. a call saved now and awaited later ------------------------------------------------

SAVED_CALLS: list[tuple[str, str]] = [
    ("two saved calls, awaited one after the other",
     'w_task = tools.get_weather(city="Paris"); u_task = tools.get_user(user_id=1)\n'
     'w = await w_task; u = await u_task\n[w, u]'),
    ("a saved gather",
     'import asyncio\nfut = asyncio.gather(tools.get_weather(city="a"), '
     'tools.get_user(user_id=2))\nresults = await fut\nresults'),
    ("the script's own coroutine, saved",
     'async def one(x):\n    return x + 1\ncoro = one(1)\nawait coro'),
    ("a dict filled in one loop, awaited in another",
     'pending = {}\nout = {}\nfor c in ["Oslo", "Rome"]:\n'
     '    pending[c] = tools.get_weather(city=c)\n'
     'for c, coro in pending.items():\n    out[c] = (await coro)\nout'),
    ("a dict of calls awaited by key",
     'pending = {c: tools.get_weather(city=c) for c in ["a", "bb"]}\n'
     '[(await pending[c])["temp"] for c in ["bb", "a"]]'),
    ("a list of calls awaited in a comprehension",
     'tasks = [tools.get_weather(city=c) for c in ["a", "bb"]]\n[await t for t in tasks]'),
    ("a list appended to, awaited in a loop over enumerate",
     'tasks = []\nfor i in [1, 2]:\n    tasks.append(tools.get_user(user_id=i))\n'
     'out = []\nfor i, t in enumerate(tasks):\n    out.append([i, (await t)["name"]])\nout'),
    ("nested lists of calls",
     'batches = [[tools.get_user(user_id=i) for i in b] for b in [[1, 2], [3]]]\n'
     'names = []\nfor batch in batches:\n    for t in batch:\n'
     '        names.append((await t)["name"])\nnames'),
    ("inside an async def",
     'async def both():\n    a = tools.get_user(user_id=1)\n'
     '    b = tools.get_weather(city="x")\n    return [await b, await a]\nawait both()'),
    # before: awaited where passed, so ``await c`` got a dict ("can't be used in 'await'")
    ("handed to the script's own async def that awaits it",
     'async def first(c, k):\n    return (await c)[k]\n'
     '[await first(tools.get_weather(city="ab"), "temp"),'
     ' await first(k="name", c=tools.get_user(user_id=3))]'),
    ("handed to the script's own async def that gathers it",
     'import asyncio\nasync def both(a, *, b):\n    return await asyncio.gather(a, b)\n'
     'await both(tools.get_user(user_id=1), b=tools.get_weather(city="x"))'),
]


@pytest.mark.parametrize(("name", "script"), SAVED_CALLS, ids=[r[0] for r in SAVED_CALLS])
async def test_saved_calls_awaited_later_run_as_in_cpython(mode: cm.CodeMode, name: str,
                                                          script: str) -> None:
    assert await value(mode, script) == await cpython(script)


async def test_a_call_used_as_a_value_is_still_awaited_next_to_saved_ones(
        mode: cm.CodeMode) -> None:
    script = ('saved = tools.get_user(user_id=1)\nused = tools.get_weather(city="ab")\n'
              '[used["temp"], (await saved)["name"]]')
    assert await value(mode, script) == [6, "user1"]


async def test_a_call_handed_to_a_guard_fails_inside_its_try(
        executor: cm.InProcessExecutor) -> None:
    """``await safe(tools.x())`` with ``async def safe(c): try: return await c``: before,
    the call was awaited where it was passed and its error escaped the ``try``. A function
    that does not await its parameter still gets the call's value."""
    def broken(city: str) -> str:
        """Always fails."""
        raise ValueError(f"no weather for {city}")

    reg = registry()
    reg.register(cm.tool(broken))
    mode = cm.CodeMode(reg, executor=executor)
    script = ('async def safe(c, default=None):\n    try:\n        return await c\n'
              '    except ToolCallError as e:\n        return default or e.message\n'
              'async def name_of(u):\n    return u["name"]\n'
              '[await safe(tools.broken(city="a")), await safe(tools.get_user(user_id=1)),'
              ' await name_of(tools.get_user(user_id=2))]')
    assert await value(mode, script) == [
        "ValueError: no weather for a", {"id": 1, "name": "user1"}, "user2"]


# -- 2. async generators ------------------------------------------------------------------

ASYNC_GENERATORS: list[tuple[str, str]] = [
    ("async for over an async generator",
     'async def agen():\n    for i in range(3):\n        yield i\nout = []\n'
     'async for x in agen():\n    out.append(x)\nout'),
    ("an async comprehension",
     'async def agen(n):\n    for i in range(n):\n        yield i * i\n'
     '[x async for x in agen(4)]'),
    ("an async generator that awaits tools",
     'async def temps(cities):\n    for c in cities:\n'
     '        yield (await tools.get_weather(city=c))["temp"]\n'
     '[t async for t in temps(["a", "bbb"])]'),
]


@pytest.mark.parametrize(("name", "script"), ASYNC_GENERATORS,
                         ids=[r[0] for r in ASYNC_GENERATORS])
async def test_async_generators_are_not_awaited(mode: cm.CodeMode, name: str,
                                                script: str) -> None:
    assert await value(mode, script) == await cpython(script)


async def test_an_async_def_with_a_nested_generator_is_still_awaited(mode: cm.CodeMode) -> None:
    # Only a ``yield`` in its own body makes an async generator; ``r = f()`` is a dialect.
    script = ('async def f():\n    def g():\n        yield 1\n    return list(g())\n'
              'r = f()\nr')
    assert await value(mode, script) == [1]


# -- 3. annotations, __future__, typing ---------------------------------------------------

ANNOTATED: list[tuple[str, str]] = [
    ("builtin generics in a function's annotations",
     'def count(users: list[dict], key: str) -> dict[str, int]:\n'
     '    return {key: len(users)}\ncount([{}, {}], "n")'),
    ("every kind of argument annotated",
     'def f(a: list[int], /, b: dict[str, int] = {}, *rest: tuple[int, ...], '
     'c: set[str] | None = None, **kw: dict[str, list]) -> list[int]:\n'
     '    return [a[0], len(b), len(rest), len(kw)]\nf([7], {"x": 1}, 1, 2, d=3)'),
    ("an async def and methods",
     'class Box:\n    def __init__(self, items: list[int]) -> None:\n'
     '        self.items = items\n    def total(self) -> int:\n'
     '        return sum(self.items)\n'
     'async def load(user_id: int) -> dict[str, list[str]]:\n'
     '    return await tools.get_user(user_id=user_id)\n'
     '[Box([1, 2]).total(), (await load(4))["name"]]'),
    ("from __future__ import annotations, names defined nowhere",
     'from __future__ import annotations\ndef f(x: Undefined) -> AlsoUndefined[int]:\n'
     '    return x\nf(5)'),
    ("the other no-op future features",
     'from __future__ import generator_stop, division, print_function\n7 / 2'),
    ("typing names in annotations and aliases",
     'from typing import Any, Dict, List, Optional, Union, Callable, TypeVar, cast\n'
     'T = TypeVar("T")\nRows = List[Dict[str, Any]]\nKey = Union[int, str] | None\n'
     'def first(rows: Rows, pick: Callable[[T], T] = None) -> Optional[T]:\n'
     '    return rows[0] if rows else None\n'
     '[first([{"a": 1}]), cast(List[int], "x"), first([])]'),
    ("isinstance with typing aliases of builtin types",
     'import typing\n[isinstance([], typing.List), isinstance({}, typing.Dict), '
     'isinstance((1,), typing.Tuple), isinstance("", typing.Set)]'),
    ("TYPE_CHECKING imports never run",
     'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from os import PathLike\n'
     'else:\n    n = 3\n[TYPE_CHECKING, n]'),
]


@pytest.mark.parametrize("strict_mode", [False, True], ids=["dialects", "strict"])
@pytest.mark.parametrize(("name", "script"), ANNOTATED, ids=[r[0] for r in ANNOTATED])
async def test_annotations_are_never_evaluated(mode: cm.CodeMode, strict: cm.CodeMode,
                                               strict_mode: bool, name: str,
                                               script: str) -> None:
    assert await value(strict if strict_mode else mode, script) == await cpython(script)


@pytest.mark.parametrize(("script", "message"), [
    ("from __future__ import braces\n1",
     "from __future__ import braces is not available in the sandbox (available: "
     "absolute_import, annotations, division, generator_stop, generators, nested_scopes, "
     "print_function, unicode_literals, with_statement)"),
    ("from typing import get_type_hints\n1",
     "cannot import name 'get_type_hints' from 'typing' in the sandbox (available: "
     "AbstractSet, Annotated, Any, AnyStr, AsyncGenerator, AsyncIterable, AsyncIterator, "
     "Awaitable, Callable, ClassVar, Collection, Concatenate, Container, Coroutine, Counter, "
     "DefaultDict, Deque, Dict, Final, FrozenSet, Generator, Generic, Hashable, Iterable, "
     "Iterator, List, Literal, LiteralString, Mapping, MutableMapping, MutableSequence, "
     "MutableSet, NamedTuple, Never, NewType, NoReturn, NotRequired, Optional, OrderedDict, "
     "ParamSpec, Protocol, Required, Reversible, Self, Sequence, Set, Sized, SupportsAbs, "
     "SupportsFloat, SupportsIndex, SupportsInt, SupportsRound, TYPE_CHECKING, Text, Tuple, "
     "Type, TypeAlias, TypeGuard, TypeIs, TypeVar, TypeVarTuple, TypedDict, Union, Unpack, "
     "assert_never, assert_type, cast, final, no_type_check, overload, override, "
     "runtime_checkable); annotations are not evaluated in the sandbox (typing "
     "names are placeholders): keep the types you check in a dict of your own (`{'age': "
     "int}`) and test values with isinstance()"),
])
async def test_unavailable_typing_forms_are_refused_before_running(
        mode: cm.CodeMode, script: str, message: str) -> None:
    assert [p.message for p in mode.check(script)] == [message]


@pytest.mark.parametrize(("script", "message"), [
    ("import typing\nisinstance([], typing.Iterable)",
     "typing.Iterable cannot be used with isinstance() in the sandbox: check against a "
     "builtin type such as list or dict"),
    ("import typing\ntyping.List.x", "'Placeholder' object has no accessible attribute 'x'"),
    ("import typing\ntyping.TypeVar(3)", "TypeVar name must be a string"),
])
async def test_typing_placeholders_do_nothing_else(mode: cm.CodeMode, script: str,
                                                   message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and (run.error.line, run.error.message) == (2, message)



@pytest.mark.parametrize(("script", "message"), [
    ("u = {'name': 'ada'}\nu.name",
     "'dict' object has no attribute 'name'; it is a dict key: read it with "
     "['name'] or .get('name')"),
    ("u = {'name': 'ada'}\nu.age", "'dict' object has no attribute 'age'"),  # CPython's
])
async def test_a_dict_key_read_as_an_attribute_says_how_to_read_it(
        mode: cm.CodeMode, script: str, message: str) -> None:
    """Tool results are plain dicts; a model used to JS objects writes ``user.name``."""
    run = await mode.run(script)
    assert run.error is not None and (run.error.type, run.error.line, run.error.message) == (
        "AttributeError", 2, message)


CLASS_MESSAGES: list[tuple[str, str, str]] = [
    # CPython's own message: ``type(g).foo`` on a class the script sees but cannot use
    ("g = (i for i in [])\ntype(g).foo", "AttributeError",
     "type object 'generator' has no attribute 'foo'"),
    # the rest differ from CPython (it allows them) but name the public class, never the
    # sandbox's own (before: '_Shown', '_GuardedType' or 'compress' objects)
    ("x = iter([])\ntype(x)", "TypeError",
     "type() is not available for iterator objects in the sandbox"),
    ("x = iter([])\nx.foo = 1", "TypeError", "iterator objects cannot be modified in the sandbox"),
    ("m = type(print)\nm.x = 1", "TypeError",
     "class 'builtin_function_or_method' cannot be modified in the sandbox"),
    ("m = type(print)\ntype(m)", "TypeError",
     "type() of a class ('builtin_function_or_method') is not available in the sandbox: "
     "compare the class itself (`x is int`, issubclass(x, int))"),
    ("x = 1\ntype(int)", "TypeError",
     "type() of a class ('int') is not available in the sandbox: compare the class itself "
     "(`x is int`, issubclass(x, int))"),
]


@pytest.mark.parametrize(("script", "error", "message"), CLASS_MESSAGES)
async def test_errors_about_a_class_name_the_public_class(
        mode: cm.CodeMode, script: str, error: str, message: str) -> None:
    """A model fixes its script from the message: a sandbox-internal class name in it
    (``'_Shown' objects``) names nothing it can look up."""
    run = await mode.run(script)
    assert run.error is not None and (run.error.type, run.error.line, run.error.message) == (
        error, 2, message)
    if script.startswith("g = "):
        with pytest.raises(AttributeError) as raised:
            await cpython(script)
        assert str(raised.value) == message


@pytest.mark.parametrize(("script", "value"), [
    ("try:\n    import numpy as np\nexcept ImportError:\n    np = None\nnp is None", True),
    ("try:\n    import pandas\nexcept ModuleNotFoundError as e:\n    r = [type(e).__name__,"
     " 'pandas' in str(e)]\nr", ["ModuleNotFoundError", True]),
    ("try:\n    from json import ujson_fast\nexcept ImportError:\n    r = 'json only'\nr",
     "json only"),
])
async def test_an_optional_import_runs_its_fallback(mode: cm.CodeMode, script: str,
                                                    value: object) -> None:
    """A model's ``try: import numpy`` / ``except ImportError:`` gets CPython's exception
    types at run time, and its fallback runs."""
    run = await mode.run(script)
    assert run.ok, run.error
    assert run.value == value

# -- 4. imports checked before anything runs ----------------------------------------------

AVAILABLE = ", ".join(sorted(FACADE_NAMES))
NO_HOST = "a script reaches files, processes and the network only through the tools"


@pytest.mark.parametrize("strict_mode", [False, True], ids=["dialects", "strict"])
@pytest.mark.parametrize(("script", "problems"), [
    ('w = await tools.get_weather(city="a")\nimport os\nos.getcwd()',
     [(2, 8, f"module 'os' is not available in the sandbox (available: {AVAILABLE}); "
             f"{NO_HOST}")]),
    ("import json, requests as r, sys\njson.dumps(1)",
     [(1, 14, f"module 'requests' is not available in the sandbox (available: {AVAILABLE}); "
              f"{NO_HOST}")]),
    ("import shutil\n1",
     [(1, 8, f"module 'shutil' is not available in the sandbox (available: {AVAILABLE}); "
             f"{NO_HOST}")]),
    ("import json.decoder\n1",
     [(1, 8, f"module 'json.decoder' is not available in the sandbox (available: "
             f"{AVAILABLE})")]),
    ("from json import loads, codecs\n1",
     [(1, 25, "cannot import name 'codecs' from 'json' in the sandbox (available: "
              "JSONDecodeError, dumps, loads)")]),
    ("def f():\n    from pathlib import Path\n    return Path\n1",
     [(2, 5, f"module 'pathlib' is not available in the sandbox (available: {AVAILABLE}); "
             f"{NO_HOST}")]),
    ("from . import x\n1", [(1, 1, "relative imports are not available in the sandbox")]),
])
async def test_unavailable_imports_are_refused_before_any_call(
        mode: cm.CodeMode, strict: cm.CodeMode, strict_mode: bool, script: str,
        problems: list[tuple[int, int, str]]) -> None:
    chosen = strict if strict_mode else mode
    assert [(p.line, p.column, p.message) for p in chosen.check(script)] == problems
    run = await chosen.run(script)
    assert run.error is not None and run.error.type == "PreflightError"
    assert run.calls == ()


@pytest.mark.parametrize(("script", "error"), [
    ('import os\nos.getcwd()', "ModuleNotFoundError"),
    ("from json import codecs\n1", "ImportError"),
])
async def test_the_preflight_says_what_the_runtime_says(executor: cm.InProcessExecutor,
                                                       mode: cm.CodeMode, script: str,
                                                       error: str) -> None:
    unchecked = cm.CodeMode(registry(), executor=executor, preflight=False)
    run = await unchecked.run(script)
    assert run.error is not None and run.error.type == error  # CPython's types
    assert [p.message for p in mode.check(script)] == [run.error.message]


@pytest.mark.parametrize("how", ["source", "tree", "nodes"])
def test_every_preflight_path_checks_imports(how: str) -> None:
    script = "import os\nif TYPE_CHECKING:\n    import sys\nelse:\n    import re, pathlib\n1"
    tree = ast.parse(script)
    nodes, parents, _ = index_nodes(tree)
    extra: dict[str, Any] = {"source": {}, "tree": {"tree": tree},
                             "nodes": {"tree": tree, "nodes": nodes, "parents": parents}}[how]
    problems = check_script(script, tools={}, arguments={}, specs={}, **extra)
    assert [(p.line, p.column) for p in problems] == [(1, 8), (5, 16)]
    assert problems[1].message.startswith("module 'pathlib' is not available in the sandbox")


async def test_modules_used_without_import_still_need_no_import(mode: cm.CodeMode) -> None:
    assert await value(mode, 'from typing import List\njson.dumps(typing.cast(List, [1]))') == (
        "[1]")


# -- 5. builtins that were missing, and why the others are -------------------------------

BUILTIN_ROWS: list[tuple[str, str]] = [
    ("ConnectionError caught as OSError",
     'try:\n    raise ConnectionError("down")\nexcept OSError as e:\n'
     '    r = [type(e).__name__, str(e), isinstance(e, Exception)]\nr'),
    ("a tuple of handlers",
     'out = []\nfor exc in [ConnectionError("a"), TimeoutError("b"), ImportError("c")]:\n'
     '    try:\n        raise exc\n    except (ConnectionError, TimeoutError):\n'
     '        out.append("retry")\n    except ImportError as e:\n'
     '        out.append(str(e))\nout'),
    ("UnboundLocalError",
     'total = 0\ndef add():\n    total = total + 1\ntry:\n    add()\n'
     'except UnboundLocalError:\n    r = "unbound"\nr'),
    ("ExceptionGroup",
     'try:\n    raise ExceptionGroup("many", [ValueError(1), KeyError(2)])\n'
     'except ExceptionGroup as e:\n    r = str(e)\nr'),
    ("NotImplemented from __eq__",
     'class Money:\n    def __init__(self, cents):\n        self.cents = cents\n'
     '    def __eq__(self, other):\n        if not isinstance(other, Money):\n'
     '            return NotImplemented\n        return self.cents == other.cents\n'
     '[Money(1) == Money(1), Money(1) == 1, Money(1) != "x"]'),
    ("Ellipsis", '[Ellipsis is ..., str(Ellipsis)]'),
]


@pytest.mark.parametrize(("name", "script"), BUILTIN_ROWS, ids=[r[0] for r in BUILTIN_ROWS])
async def test_added_builtins_work_as_in_cpython(mode: cm.CodeMode, name: str,
                                                 script: str) -> None:
    assert await value(mode, script) == await cpython(script)


@pytest.mark.parametrize(("name", "reason"), [
    ("help", "the SDK in the prompt lists the tools and their arguments"),
    ("id", "compare objects with `is`, or key them by a value of their own"),
    ("bytearray", "write a literal (`b'...'`) or encode text (`text.encode()`)"),
    ("open", "no files, processes or code from text: use the tools"),
    ("BaseException", "catch `Exception`, which every error a script or a tool raises is; "
                      "the run's own stop signals are not for a script to catch; "
                      "`isinstance(x, BaseException)` works"),
])
async def test_missing_builtins_say_what_to_write_instead(mode: cm.CodeMode, name: str,
                                                          reason: str) -> None:
    script = f"x = {name}\nx"
    assert [p.message for p in mode.check(script)] == [
        f"`{name}` is not available in the sandbox ({reason})"]


async def test_except_base_exception_is_refused_before_running(mode: cm.CodeMode) -> None:
    script = ('try:\n    await tools.get_user(user_id=1)\nexcept BaseException as e:\n'
              '    r = e\nr')
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()


# -- 6. Counter += updates the same Counter -----------------------------------------------

COUNTER_ROWS: list[tuple[str, str]] = [
    ("an alias sees +=",
     'from collections import Counter\nc = Counter("a")\nc2 = c\nc += Counter("b")\n'
     '[c2, c is c2]'),
    ("+= on an argument updates the caller's Counter",
     'from collections import Counter\ndef add(counter, words):\n'
     '    counter += Counter(words)\ntotal = Counter()\nadd(total, ["x", "y", "x"])\n'
     'add(total, ["y"])\ntotal'),
]


# -- 7. stdlib stand-ins answer as CPython ------------------------------------------------

STDLIB_ROWS: list[tuple[str, str]] = [
    ("isinstance against range, and type() of a range",
     '[isinstance(range(3), range), isinstance([], range), isinstance(3, (int, range)), '
     'type(range(2)) is range, list(range(2, 5))]'),
    ("isinstance against the collections and datetime classes",
     'from collections import Counter, defaultdict, OrderedDict, deque, namedtuple\n'
     'import datetime\nP = namedtuple("P", "x y")\nd = datetime.datetime(2024, 1, 2)\n'
     '[isinstance(Counter(), dict), isinstance(defaultdict(int), defaultdict), '
     'isinstance(OrderedDict(), OrderedDict), isinstance(deque(), deque), '
     'isinstance({}, Counter), isinstance(P(1, 2), P), isinstance((1, 2), P), '
     'isinstance(d, datetime.date), isinstance(d.date(), datetime.datetime), '
     'isinstance(datetime.timezone.utc, datetime.timezone)]'),
    ("isinstance against re.Pattern and re.Match",
     'import re\np = re.compile("a")\n[isinstance(p, re.Pattern), isinstance(p.match("a"), '
     're.Match), isinstance("a", re.Pattern), isinstance(None, re.Match)]'),
    ("a named tuple's _asdict, _replace, _fields, _make, _field_defaults",
     'from collections import namedtuple\nP = namedtuple("P", ["x", "y"], defaults=[0])\n'
     'p = P(1, 2)\nclass Q(P):\n    def total(self):\n        return self.x + self.y\n'
     '[p._asdict(), p._replace(x=5), list(P._fields), P._make([3, 4]), p._fields, '
     'P._field_defaults, Q(1, 2)._replace(y=5).total(), Q._make(range(2)).total()]'),
    ("OSError's errno, strerror, filename and the subclasses",
     'out = []\nfor exc in [OSError(2, "gone"), FileNotFoundError(2, "gone", "a.txt"), '
     'PermissionError("no")]:\n    try:\n        raise exc\n    except OSError as e:\n'
     '        out.append([type(e).__name__, e.errno, e.strerror, e.filename, list(e.args), '
     'str(e)])\nout'),
    ("e.args of caught errors",
     'out = []\nfor f in [lambda: {}["k"], lambda: int("x"), lambda: [].pop()]:\n'
     '    try:\n        f()\n    except Exception as e:\n        out.append(list(e.args))\n'
     'out'),
    ("Counter.elements, most_common, total, subtract, update",
     'from collections import Counter\nc = Counter("abracadabra")\nd = Counter(a=3, b=1)\n'
     'd.subtract({"a": 1, "b": 2})\nd.update(["a", "c"])\n'
     '[sorted(c.elements()), list(Counter(a=2, b=0, c=-1).elements()), c.most_common(2), '
     'c.total(), d, +d]'),
    ("generator send, throw and close",
     'def running():\n    total = 0\n    while True:\n        try:\n'
     '            x = yield total\n        except ValueError as e:\n'
     '            x = len(str(e))\n        total += x\n'
     'g = running()\nout = [next(g), g.send(3), g.send(4), g.throw(ValueError("abc")), '
     'g.throw(ValueError)]\ng.close()\ntry:\n    next(g)\nexcept StopIteration:\n'
     '    out.append("closed")\nout'),
    ("json.dumps options",
     'import json, datetime\n[json.dumps({"b": 1, "a": "é"}, sort_keys=True, ensure_ascii=False), '
     'json.dumps([1, {"a": 2}], separators=(",", ":")), json.dumps({"a": [1]}, indent=2), '
     'json.dumps(float("nan")), json.dumps({1: 2, (1,): 3}, skipkeys=True), '
     'json.dumps({"d": datetime.date(2024, 1, 2)}, default=str)]'),
    ("json.dumps(allow_nan=False)",
     'import json\ntry:\n    json.dumps([float("inf")], allow_nan=False)\n'
     '    r = "encoded"\nexcept ValueError as e:\n    r = "refused"\nr'),
    ("json.loads hooks",
     'import json\nfrom collections import OrderedDict\n'
     '[json.loads(\'{"a": 1.5}\', parse_float=str), '
     'json.loads(\'{"a": {"b": 1}}\', object_hook=lambda d: sorted(d)), '
     'json.loads("[1, 2]", parse_int=float), json.loads("[NaN]", parse_constant=str), '
     'list(json.loads(\'{"b": 1, "a": 2}\', object_pairs_hook=OrderedDict))]'),
]


AS_CPYTHON: list[tuple[str, str]] = COUNTER_ROWS + STDLIB_ROWS


@pytest.mark.parametrize(("name", "script"), AS_CPYTHON, ids=[r[0] for r in AS_CPYTHON])
async def test_counter_and_stdlib_usage_answers_as_cpython(mode: cm.CodeMode, name: str,
                                                           script: str) -> None:
    assert await value(mode, script) == await cpython(script)


@pytest.mark.parametrize(("script", "message"), [
    ('def g():\n    yield 1\nx = g()\nnext(x)\nx.throw(1)',
     "generator.throw() takes one exception (an Exception instance or class) in the sandbox"),
    ('import re\nre.Pattern("a")', "cannot create 're.Pattern' instances"),
    ('from collections import namedtuple\nP = namedtuple("P", "x")\nP._asdict',
     "attribute '_asdict' is not accessible: names starting with '_' are private in the "
     "sandbox"),
])
async def test_stdlib_stand_ins_refuse_the_rest(mode: cm.CodeMode, script: str,
                                                message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.error.message == message


# -- 8. one dict of arguments, keys spelled as on the wire --------------------------------


def _search_registry() -> cm.ToolRegistry:
    reg = registry()
    reg.register(cm.define_tool(
        name="search", description="Search a range.",
        parameters={"from": {"type": "string", "required": True}, "to": {"type": "string"},
                    "page-size": {"type": "integer"}},
        execute=lambda args: dict(args)))
    return reg


@pytest.mark.parametrize(("script", "expected"), [(script, {"from": "a", "to": "b"}) for script in [
    'await tools.search(**{"from": "a", "to": "b"})',
    'await tools.search({"from": "a", "to": "b"})',
    'await tools.search({"from_": "a", "to": "b"})',
    'search({"from": "a", "to": "b"})',
    'args = {"from": "a", "to": "b"}\nawait tools.search(args)',
    'args = {"from": "a", "to": "b"}\nsearch(**args)',
    'await tools.search(from_="a", to="b")',
]] + [(script, {"from": "a", "page-size": 5}) for script in [  # a key no identifier spells
    'await tools.search({"page-size": 5, "from": "a"})',
    'args = {"page-size": 5, "from": "a"}\nawait tools.search(args)',
]])
async def test_a_dict_of_arguments_may_use_the_wire_names(
        executor: cm.InProcessExecutor, script: str, expected: dict[str, Any]) -> None:
    mode = cm.CodeMode(_search_registry(), executor=executor)
    assert await value(mode, script) == expected


async def test_a_dict_of_arguments_is_checked_before_the_run(
        executor: cm.InProcessExecutor) -> None:
    mode = cm.CodeMode(_search_registry(), executor=executor)
    assert [p.message for p in mode.check('await tools.search({"from": 1})')] == [
        "tools.search(from_=...): 1 is not of type 'string'"]


# -- 9. lambdas that call tools -----------------------------------------------------------

LAMBDA_ROWS: list[tuple[str, str, Any]] = [
    ("map over a lambda, listed",
     'ids = [1, 2]\nrows = list(map(lambda i: tools.get_user(user_id=i), ids))\nrows',
     [{"id": 1, "name": "user1"}, {"id": 2, "name": "user2"}]),
    ("map over a lambda that reads the result",
     'list(map(lambda i: tools.get_user(user_id=i)["name"], [1, 2]))', ["user1", "user2"]),
    ("map over a lambda of two iterables",
     'list(map(lambda c, n: tools.get_weather(city=c * n)["temp"], ["a", "b"], [1, 2]))',
     [3, 6]),
    ("map over a lambda inside an async def",
     'async def names(ids):\n    return list(map(lambda i: tools.get_user(user_id=i)["name"], '
     'ids))\nawait names([3])', ["user3"]),
    ("gathered map over a lambda",
     'import asyncio\nawait asyncio.gather(*map(lambda i: tools.get_user(user_id=i), [1, 2]))',
     [{"id": 1, "name": "user1"}, {"id": 2, "name": "user2"}]),
    ("sorted by a key that calls a tool",
     'xs = ["bb", "a", "ccc"]\nsorted(xs, key=lambda x: tools.get_weather(city=x)["temp"])',
     ["a", "bb", "ccc"]),
    ("sorted in reverse by a key that calls a tool",
     'xs = ["bb", "a", "ccc"]\n'
     'sorted(xs, key=lambda x: tools.get_weather(city=x)["temp"], reverse=True)',
     ["ccc", "bb", "a"]),
    ("max and min by a key that calls a tool",
     '[max([1, 3, 2], key=lambda i: tools.get_weather(city="x" * i)["temp"]), '
     'min(["bb", "a"], key=lambda c: tools.get_weather(city=c)["temp"])]', [3, "a"]),
    ("sorted over an iterator by a key that calls a tool (its items read once)",
     'xs = iter(["bb", "a", "ccc"])\nsorted(xs, key=lambda x: tools.get_weather(city=x)["temp"])',
     ["a", "bb", "ccc"]),
    ("min over a generator by a key that calls a tool, then the generator is spent",
     'xs = (c for c in ["bb", "a"])\n'
     '[min(xs, key=lambda c: tools.get_weather(city=c)["temp"]), list(xs)]', ["a", []]),
    ("max over an attribute's iterator by a plain def key that calls tools",
     'class Box:\n    def __init__(self, xs):\n        self.xs = xs\n'
     'def temp(c):\n    return tools.get_weather(city=c)["temp"]\n'
     'box = Box(iter(["a", "ccc", "bb"]))\nmax(box.xs, key=temp)', "ccc"),
    ("sorted in a comprehension's iterable by a key that calls a tool",
     'xs = ["bb", "a"]\n'
     '[x * 2 for x in sorted(xs, key=lambda x: tools.get_weather(city=x)["temp"])]',
     ["aa", "bbbb"]),
    ("ties keep Python's order: max and min the first, sorted stable in reverse too",
     '[max(["bb", "cc", "a"], key=lambda c: tools.get_weather(city=c)["temp"]), '
     'min(["b", "a", "cc"], key=lambda c: tools.get_weather(city=c)["temp"]), '
     'sorted(["bb", "a", "cc"], reverse=True, key=lambda c: tools.get_weather(city=c)["temp"])]',
     ["bb", "b", ["bb", "cc", "a"]]),
    ("min with a default over nothing, by a key that calls a tool",
     '[min(iter([]), key=lambda c: tools.get_weather(city=c)["temp"], default="none"), '
     'max(["a"], default=None, key=lambda c: tools.get_weather(city=c)["temp"])]',
     ["none", "a"]),
    ("sorted over a dict's items and max over a generator, by keys that call a tool",
     'cities = {"bb": 1, "a": 2}\n'
     '[sorted(cities.items(), key=lambda kv: tools.get_weather(city=kv[0])["temp"]), '
     'max((c * 2 for c in cities), key=lambda c: tools.get_weather(city=c)["temp"])]',
     [[["a", 2], ["bb", 1]], "bbbb"]),
    ("list.sort by a key that calls a tool",
     'xs = ["ccc", "a", "bb"]\nxs.sort(key=lambda x: tools.get_weather(city=x)["temp"])\nxs',
     ["a", "bb", "ccc"]),
    ("a lambda bound to a name, called",
     'f = lambda i: tools.get_user(user_id=i)\n[f(1)["name"], (await f(2))["name"]]',
     ["user1", "user2"]),
    # before: refused ("a tool call inside a lambda cannot be awaited")
    ("a lambda called where it stands",
     '[(lambda: tools.get_user(user_id=3))(), await (lambda: tools.get_user(user_id=4))(), '
     '(lambda: tools.get_user(user_id=5)["name"] + "!")()]',
     [{"id": 3, "name": "user3"}, {"id": 4, "name": "user4"}, "user5!"]),
    ("a lambda called where it stands, in a comprehension inside an async def",
     'async def main(ids):\n    return [(lambda: tools.get_user(user_id=i))()["name"] '
     'for i in ids]\nawait main([1, 2])', ["user1", "user2"]),
    ("a lambda bound to a name inside an async def",
     'async def main():\n    get = lambda i: tools.get_user(user_id=i)["name"]\n'
     '    return [get(1), get(2)]\nawait main()', ["user1", "user2"]),
]


@pytest.mark.parametrize(("name", "script", "expected"), LAMBDA_ROWS,
                         ids=[r[0] for r in LAMBDA_ROWS])
async def test_lambdas_that_call_tools_give_the_results(mode: cm.CodeMode, name: str,
                                                        script: str, expected: Any) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.value == expected
    assert all(call.ok for call in run.calls) and run.calls


_IN_A_LAMBDA: Final = ("a tool call inside a lambda cannot be awaited: use a loop or an "
                       "`async def` and `await` the call")


@pytest.mark.parametrize(("script", "message"), [
    ('(lambda i: tools.get_user(user_id=i))(3)', _IN_A_LAMBDA),
    ('(lambda: (u := tools.get_user(user_id=3)))()', _IN_A_LAMBDA),  # u is the lambda's
    ('d = {"get": lambda i: tools.get_user(user_id=i), "id": lambda i: i}\nd["get"](1)',
     _IN_A_LAMBDA),  # not every value calls a tool: d[k](...) may be no awaitable
    ('sorted([await tools.get_user(user_id=1)], key=lambda u: tools.get_user(user_id=u["id"]))',
     _IN_A_LAMBDA),  # the items are no plain name: computing the keys first would call twice
    ('import asyncio\nf = lambda i: tools.get_user(user_id=i)\n'
     'await asyncio.gather(*map(f, [1, 2]))',
     "f() calls tools, so it must be `async def f(...)` and each call awaited; it is used as "
     "a value at line 3, where it cannot be awaited: call it in a loop, e.g. "
     "`[await f(x) for x in xs]`"),
])
async def test_other_lambdas_that_call_tools_say_what_to_write(
        mode: cm.CodeMode, script: str, message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()
    assert [p.message for p in mode.check(script)] == [message]


@pytest.mark.parametrize(("script", "loop", "expected"), [
    ('import functools\n'
     'functools.reduce(lambda acc, c: acc + tools.get_weather(city=c)["temp"], ["a", "bb"], 0)',
     "acc = 0\nfor c in ['a', 'bb']: acc = acc + tools.get_weather(city=c)['temp']\nacc",
     functools.reduce(lambda acc, c: acc + get_weather(c)["temp"], ["a", "bb"], 0)),
    ('from functools import reduce\n'
     'reduce(lambda t, c: t + tools.get_weather(city=c)["temp"], [1, "a", "bb"])',
     "t, *rest = [1, 'a', 'bb']\nfor c in rest: t = t + tools.get_weather(city=c)['temp']\nt",
     functools.reduce(lambda t, c: t + get_weather(c)["temp"], ["a", "bb"], 1)),
])
async def test_reduce_over_a_lambda_that_calls_tools_names_the_loop(
        mode: cm.CodeMode, script: str, loop: str, expected: int) -> None:
    """``reduce`` calls its function itself, so no rewrite awaits the call in it; the
    message spells the loop, and that loop, as written, gives reduce's value."""
    problems = [p.message for p in mode.check(script)]
    head, body, _ = loop.split("\n")
    assert problems == ["a tool call inside a lambda cannot be awaited: reduce() cannot await "
                        f"it: write the loop instead, `{head}` then `{body}`"]
    assert await value(mode, loop) == expected


async def test_lambdas_keep_every_line_where_it_was(mode: cm.CodeMode) -> None:
    script = ('xs = ["bb", "a"]\nys = sorted(xs, key=lambda x: tools.get_weather(city=x)["temp"])\n'
              'f = lambda i: tools.get_user(user_id=i)\nzs = list(map(lambda i: f(i), [1]))\n'
              'raise ValueError(ys)')
    run = await mode.run(script)
    assert run.error is not None and (run.error.type, run.error.line) == ("ValueError", 5)
    assert [c.name for c in run.calls] == ["get_weather", "get_weather", "get_user"]


async def test_strict_mode_leaves_lambdas_as_python_runs_them(strict: cm.CodeMode) -> None:
    # No rewrite: the lambda's call is never awaited, and the result says so.
    run = await strict.run('list(map(lambda i: tools.get_user(user_id=i), [1]))')
    assert run.error is not None and (run.error.type, run.error.message) == (
        "TypeError", "the result is an un-awaited tool call: add `await` before it")


# -- Decimal and Fraction as CPython has them ----------------------------------------------

_ERRORS: Final = ("def err(f):\n    try:\n        return repr(f())\n"
                  "    except Exception as e:\n        return f'{type(e).__name__}: {e}'\n")

NUMBER_ROWS: list[tuple[str, str]] = [
    # before: TypeError (an IntEnum/IntFlag member is an int subclass the facades refused)
    ("IntEnum and IntFlag members are ints to Decimal and Fraction",
     "from decimal import Decimal\nfrom fractions import Fraction\n"
     "from enum import IntEnum, IntFlag\nclass E(IntEnum):\n    x = 3\n"
     "class F(IntFlag):\n    y = 2\n"
     "[str(Decimal(E.x)), str(Decimal.from_float(E.x)), str(Decimal(1) + E.x), "
     "str(E.x * Decimal('1.5')), Decimal(3) == E.x, Decimal(2) < E.x, "
     "str(Fraction(1, 3) + F.y), str(Fraction(E.x)), str(E.x * Fraction(1, 2)), "
     "Fraction(1, 2) < E.x, str(Fraction.from_float(E.x)), str(Fraction.from_decimal(E.x)), "
     "str(Fraction(E.x, F.y)), str(Fraction(1, 2) ** E.x), str(Decimal(2) ** E.x), "
     "str(Fraction.from_float(True)), str(Decimal(2).quantize(E.x))]"),
    # before: Python's own errors said 'Decimal' where CPython says 'decimal.Decimal'
    ("operator errors name decimal.Decimal as CPython does",
     _ERRORS + "from decimal import Decimal\nfrom fractions import Fraction\n"
     "[err(lambda: Decimal(1) < 'a'), err(lambda: 'a' > Decimal(1)), "
     "err(lambda: Decimal(1) <= None), err(lambda: [1] >= Decimal(1)), "
     "err(lambda: Decimal(1) + 'a'), err(lambda: 'a' + Decimal(1)), "
     "err(lambda: Decimal(1) - None), err(lambda: None * Decimal(2)), "
     "err(lambda: Decimal(1) ** 'a'), err(lambda: divmod(Decimal(1), 'a')), "
     "err(lambda: Fraction(1) < 'a'), err(lambda: 'a' > Fraction(1)), "
     "err(lambda: Fraction(1) + 'a'), err(lambda: 'a' - Fraction(1)), "
     "err(lambda: divmod('a', Fraction(1))), err(lambda: Fraction(1) % Decimal(1)), "
     "err(lambda: Decimal(1) < Fraction(1, 2)), err(lambda: Decimal(1) + Fraction(1, 2)), "
     "err(lambda: [1] * Decimal(2)), err(lambda: Decimal(2) * [1]), "
     "type(Decimal(1)).__name__, repr(type(Decimal(1)))]"),
    # before: refused as too big (sized by the exponent, not by the digits printed)
    ("a Decimal's format is sized by the text it prints",
     "from decimal import Decimal\ntiny = Decimal('1e-9999999999999')\n"
     "[f'{tiny:.2f}', f'{tiny:.3e}', f'{tiny:g}', f'{tiny}', f'{tiny:.5}', f'{tiny:.2n}', "
     "f'{-tiny:>12.3f}', f'{tiny:.1%}', f\"{Decimal('12345.678'):,.2f}\", "
     "f\"{Decimal('0.5'):%}\", f\"{Decimal('1.5e-7'):f}\", f\"{Decimal('1e99999'):.2e}\", "
     "f\"{Decimal('NaN'):.2f}\", f\"{Decimal('1.23E+5'):f}\", f\"{Decimal('7'):.3%}\"]"),
]


@pytest.mark.parametrize(("name", "script"), NUMBER_ROWS, ids=[r[0] for r in NUMBER_ROWS])
async def test_decimal_and_fraction_run_as_in_cpython(mode: cm.CodeMode, name: str,
                                                      script: str) -> None:
    assert await value(mode, script) == await cpython(script)


# -- a tool-calling lambda handed to the script's own helper (smolagents) -------------------

def lookup(city: str) -> dict[str, Any]:
    """Weather of a known city."""
    if city == "Atlantis":
        raise ValueError("unknown city Atlantis")
    return get_weather(city)


THUNK_ROWS: list[tuple[str, str]] = [
    ("a guard helper calling the lambda in its try",
     'def attempt(label, fn):\n    try:\n        return fn()\n    except Exception as e:\n'
     '        print(label, e)\n        return None\n'
     'w = attempt("w", lambda: lookup(city="Oslo"))\n'
     'bad = attempt("bad", lambda: lookup(city="Atlantis"))\n'
     'rows = [attempt(c, lambda: lookup(city=c)) for c in ["a", "bb"]]\n[w, bad, rows]'),
    ("a retry helper calling the lambda in a loop, handed by keyword",
     'def retry(fn, times=2):\n    errors = []\n    for _ in range(times):\n        try:\n'
     '            return fn()\n        except Exception:\n'
     '            errors.append("failed")\n    return errors\n'
     '[retry(fn=lambda: lookup(city="Rome")), retry(lambda: lookup(city="Atlantis"), 3)]'),
    # before: refused ("cannot be awaited", "used as a value")
    ("filter with a lambda that calls a tool",
     'list(filter(lambda c: get_weather(city=c)["temp"] > 3, ["a", "bb", "c"]))'),
    ("map of a plain def that calls a tool, and of the tool itself",
     'def temp(c):\n    return get_weather(city=c)["temp"]\n'
     '[list(map(temp, ["a", "bbb"])), [t for t in map(temp, ["cc"])], '
     'list(map(get_weather, ["x"]))]'),
    ("map of a plain def over two lists",
     'def both(c, k):\n    return get_weather(city=c)[k]\n'
     'list(map(both, ["a", "bb"], ["temp", "city"]))'),
    ("a tool handed to a guard helper with its arguments",
     'def safe_call(fn, *args, **kwargs):\n    try:\n        return fn(*args, **kwargs)\n'
     '    except Exception:\n        return None\n'
     '[safe_call(lookup, city="ab"), safe_call(lookup, city="Atlantis")]'),
    ("a helper calling the lambda with an argument, twice",
     'def both(fn, a, b):\n    return [fn(a)["temp"], fn(b)["temp"]]\n'
     'both(lambda c: get_weather(city=c), "x", "yyy")'),
]


async def sync_cpython(script: str) -> Any:
    """``script``'s value in CPython with the tools as plain functions (smolagents)."""
    tree = ast.parse(script)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr)
    namespace: dict[str, Any] = {"lookup": lookup, "get_weather": get_weather}
    exec(compile(tree, "<cpython>", "exec"), namespace)  # the test's own rows
    return json.loads(json.dumps(eval(compile(ast.Expression(last.value), "<cpython>",
                                              "eval"), namespace)))


@pytest.mark.parametrize(("name", "script"), THUNK_ROWS, ids=[r[0] for r in THUNK_ROWS])
async def test_a_lambda_handed_to_a_helper_that_calls_it_runs_as_in_cpython(
        executor: cm.InProcessExecutor, name: str, script: str) -> None:
    """Before: refused ("a tool call inside a lambda cannot be awaited")."""
    reg = registry()
    reg.register(cm.tool(lookup))
    mode = cm.CodeMode(reg, executor=executor)
    assert await value(mode, script) == await sync_cpython(script)


@pytest.mark.parametrize(("script", "message"), [
    ('def attempt(fn):\n    try:\n        return fn()\n    except Exception:\n'
     '        return None\nattempt(lambda: get_weather(city="a")["temp"])',
     "line 6: a tool call inside a lambda cannot be awaited: if attempt() only calls the "
     "function it is handed, hand it a lambda whose body is the tool call alone (`lambda: "
     "tools.x(...)`) at every call, and it awaits that call; else call the tool first and "
     "pass its value"),
    ('def keep(fn):\n    return fn\nf = keep(lambda: get_weather(city="a"))\nf',
     "line 3: a tool call inside a lambda cannot be awaited: if keep() only calls the "
     "function it is handed"),
    # before: the tool was never called, silently ([False, 3] and no call; CPython [True, 3])
    ('def safe_call(fn, *args):\n    try:\n        return fn(*args)\n    except Exception:\n'
     '        return None\nr = safe_call(get_weather, "")\n[r is None, safe_call(len, "abc")]',
     "line 6: safe_call() is handed the tool `get_weather` for `fn` here and other values "
     "elsewhere, so it cannot await the call: call the tool first and pass its value"),
    ('def call(fn, x):\n    fn(x)\n    return 1\n[call(len, "a"), call(tools.get_weather, "b")]',
     "line 4: call() is handed the tool `tools.get_weather` for `fn` here"),
])
async def test_a_lambda_a_helper_cannot_await_says_what_to_write(
        mode: cm.CodeMode, script: str, message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError"
    assert message in run.error.message


# -- sorted/map/filter rewrites call tools as often as CPython, or are refused -------------

async def counted_cpython(script: str) -> tuple[Any, list[str]]:
    """``sync_cpython``'s value and the cities the tools were called with, in order."""
    calls: list[str] = []

    def counted(city: str) -> dict[str, Any]:
        calls.append(city)
        return get_weather(city)

    tree = ast.parse(script)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr)
    namespace: dict[str, Any] = {"get_weather": counted}
    exec(compile(tree, "<cpython>", "exec"), namespace)  # the test's own rows
    result = eval(compile(ast.Expression(last.value), "<cpython>", "eval"), namespace)
    return json.loads(json.dumps(result)), calls


@pytest.mark.parametrize("script", [
    # before: the keys were computed over the list while the key grew it: 1000 tool calls
    # and LimitExceeded (sorted copies the items before it calls a key)
    'xs = ["bb", "a", "c"]\ndef k(c):\n    xs.append("zz")\n'
    '    return get_weather(city=c)["temp"]\n[sorted(xs, key=k), len(xs)]',
    'xs = ["bb", "a", "c"]\n'
    '[sorted(xs, key=lambda c: get_weather(city=xs.append(c) or c)["temp"]), len(xs)]',
    # before: ['a', 'bb'] (2 keys of 3 items: the popped ones were never sorted)
    'xs = ["bb", "a", "c"]\ndef k(c):\n    xs.pop()\n    return get_weather(city=c)["temp"]\n'
    '[sorted(xs, key=k), xs]',
])
async def test_a_key_that_changes_the_items_sorts_what_cpython_sorts(
        mode: cm.CodeMode, script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert (run.value, [c.arguments["city"] for c in run.calls]) == await counted_cpython(script)


_LAMBDA: Final = "a tool call inside a lambda cannot be awaited: use a loop or an `async def`"
_TEMP: Final = ("def temp(c):\n    return get_weather(city=c)['temp']\n")


@pytest.mark.parametrize(("script", "message"), [
    # before: every item's tool called (2 calls, CPython 1), or TypeError after both calls
    (_TEMP + 'any(map(temp, ["a", "bbb"]))', "temp() calls tools, so it must be"),
    ('any(map(lambda c: get_weather(city=c)["temp"], ["a", "bbb"]))', _LAMBDA),
    ('next(filter(lambda c: get_weather(city=c)["temp"] > 1, ["a", "bbb"]))', _LAMBDA),
    (_TEMP + 'for t in map(temp, ["a", "bbb"]):\n    break\nt', "temp() calls tools"),
    (_TEMP + 'm = map(temp, ["a", "bbb"])\n[next(m), 1]', "temp() calls tools"),
    # before: the keys were computed before rev() added an item: 'dddd' was left out
    ('xs = ["bb", "a", "c"]\ndef rev():\n    xs.append("dddd")\n    return False\n'
     'sorted(xs, reverse=rev(), key=lambda x: get_weather(city=x)["temp"])', _LAMBDA),
    # before: two tool calls, then the TypeError CPython raises before any
    ('xs = ["bb", "a"]\nsorted(xs, key=lambda x: get_weather(city=x)["temp"], reverse=xs.pop())',
     _LAMBDA),
    # before: the rewrite used the script's own zip, iter or list: [6], ['bb', 'a'], a call
    ('def zip(*a):\n    return [("bb", "x")]\n'
     'list(map(lambda c, k: get_weather(city=c)[k], ["a", "bb"], ["temp", "city"]))', _LAMBDA),
    ('def next(x):\n    return 1\nxs = ["bb", "a"]\n'
     'xs.sort(key=lambda c: get_weather(city=c)["temp"])\nxs', _LAMBDA),
    ('def list(x):\n    return ["mine"]\nlist(map(lambda c: get_weather(city=c)["temp"], ["a"]))',
     _LAMBDA),
])
async def test_a_rewrite_that_would_call_tools_unlike_cpython_is_refused(
        mode: cm.CodeMode, script: str, message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError"
    assert message in run.error.message
    assert run.calls == ()
