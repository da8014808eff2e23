"""Constructs models write that the sandbox used to refuse, each run next to CPython.

``asyncio.as_completed``/``wait``/``TaskGroup``/``timeout``, ``itertools.tee``/``batched``,
``enum``, ``typing.NamedTuple``/``TypedDict``/``Protocol``/``Generic``, ``pprint``,
``vars``/``setattr``/``delattr``, ``e.__cause__``/``e.__context__``, ``__slots__`` and
``__format__``. Every row runs through ``CodeMode`` on both executors and, where the
script is plain Python 3.11, through CPython with a ``tools`` object of the same tools:
values and printed output must be equal. The security rows check that what these
constructs could lead to (the enum metaclass, a host exception chained under a script's,
a host object's private names) is never reached, and the DoS rows that their loops and
buffers stay inside the run's limits.
"""

# ruff: noqa: E501 - the rows are scripts as models write them

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
from typing import TYPE_CHECKING, Any, Final

import pytest

import codemode as cm
from codemode.sandbox.language.facades.enum_facade import EnumMeta

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


def get_user(user_id: int) -> dict[str, Any]:
    """One user."""
    if user_id > 50:
        raise LookupError(f"no user {user_id}")
    return {"id": user_id, "name": f"user{user_id}"}


class CPythonToolError(Exception):
    """What a failed call raises in CPython (the sandbox's ``ToolCallError``)."""


class CPythonTools:
    async def get_user(self, *, user_id: int) -> dict[str, Any]:
        await asyncio.sleep(0)
        try:
            return get_user(user_id)
        except LookupError as exc:
            raise CPythonToolError(f"LookupError: {exc}") from None


async def cpython(script: str) -> tuple[Any, str]:
    """(the value of the last expression, the printed output) in plain CPython."""
    tree = ast.parse(script)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr), "a row must end in an expression"
    tree.body[-1] = ast.copy_location(
        ast.Assign([ast.Name("result", ast.Store())], last.value), last)
    code = compile(ast.fix_missing_locations(tree), "<cpython>", "exec",
                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    namespace: dict[str, Any] = {"tools": CPythonTools(), "ToolCallError": CPythonToolError}
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        pending = eval(code, namespace)  # the test's own rows
        if asyncio.iscoroutine(pending):
            await pending
    return json.loads(json.dumps(namespace["result"])), output.getvalue()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["InProcessExecutor", "WorkerPoolExecutor"])
async def executor(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with getattr(cm, request.param)() as impl:
        yield impl


def _mode(executor: Any, limits: cm.Limits | None = None) -> cm.CodeMode:
    registry = cm.ToolRegistry()
    registry.register(cm.tool(get_user))
    return cm.CodeMode(registry, executor=executor, limits=limits)


AS_CPYTHON: Final[dict[str, str]] = {
    "as_completed": """
import asyncio
names = []
for next_done in asyncio.as_completed([tools.get_user(user_id=i) for i in [3, 1, 2]]):
    user = await next_done
    names.append(user["name"])
sorted(names)
""",
    "as_completed_failure": """
import asyncio
out = []
for f in asyncio.as_completed([tools.get_user(user_id=1), tools.get_user(user_id=99)]):
    try:
        out.append((await f)["id"])
    except ToolCallError as e:
        out.append("failed")
sorted(out, key=str)
""",
    "wait_all": """
import asyncio
tasks = [asyncio.create_task(tools.get_user(user_id=i)) for i in [1, 2, 3]]
done, pending = await asyncio.wait(tasks)
[len(done), len(pending), [t.result()["id"] for t in tasks], all(t in done for t in tasks)]
""",
    "wait_first_exception": """
import asyncio
async def slow():
    await asyncio.sleep(0.05)
    return "slow"
good = asyncio.create_task(slow())
bad = asyncio.create_task(tools.get_user(user_id=99))
done, pending = await asyncio.wait([good, bad], return_when=asyncio.FIRST_EXCEPTION)
first = [bad in done, good in pending, type(bad.exception()).__name__ in ("ToolCallError", "CPythonToolError")]
await good
first + [good.result(), good.done()]
""",
    "wait_first_completed_timeout": """
import asyncio
async def later(x, delay):
    await asyncio.sleep(delay)
    return x
t1 = asyncio.create_task(later("fast", 0))
t2 = asyncio.create_task(later("slow", 5))
done, pending = await asyncio.wait([t1, t2], return_when=asyncio.FIRST_COMPLETED)
nothing, still = await asyncio.wait(pending, timeout=0.01)
t2.cancel()
[[t.result() for t in done], len(pending), len(nothing), len(still)]
""",
    "match_class_patterns_inside_sequences_and_mappings": """
from dataclasses import dataclass
@dataclass
class Point:
    x: int
    y: int
@dataclass
class Line:
    start: Point
    end: Point
user = await tools.get_user(user_id=3)
out = []
for subject in [[Point(0, 1), 5, 6], [Point(1, 1)], {"p": Point(3, 4), "n": user["name"]},
                [Line(Point(0, 0), Point(2, 2)), Point(0, 7)], {"p": 1}, "text", [Point(0, 1)]]:
    match subject:
        case [Point(x=0, y=1), *rest] if rest:
            out.append(["zero", rest])
        case [Point(x=a) as p]:
            out.append(["one", a, p.y])
        case {"p": Point(x=x, y=y), "n": str(name)}:
            out.append(["map", x, y, name])
        case [Line(Point(x=0), end=Point(y=ey)), Point(0, y=py)]:
            out.append(["line", ey, py])
        case _:
            out.append("other")
out
""",
    "task_group": """
import asyncio
async def main():
    async with asyncio.TaskGroup() as tg:
        first = tg.create_task(tools.get_user(user_id=1))
        rest = [tg.create_task(tools.get_user(user_id=i)) for i in [2, 3]]
    return [first.result()["name"]] + [t.result()["id"] for t in rest]
await main()
""",
    "task_group_failure": """
import asyncio
try:
    async with asyncio.TaskGroup() as tg:
        tg.create_task(tools.get_user(user_id=1))
        tg.create_task(tools.get_user(user_id=99))
except Exception as e:
    inner = e.args[1]
    caught = [type(e).__name__, str(e), len(inner), str(inner[0]).endswith("no user 99"),
              isinstance(e, ExceptionGroup), isinstance(inner[0], ToolCallError)]
caught
""",
    "timeout_block": """
import asyncio
out = []
async with asyncio.timeout(5):
    out.append((await tools.get_user(user_id=1))["id"])
try:
    async with asyncio.timeout(0.01):
        await asyncio.sleep(2)
except TimeoutError:
    out.append("timed out")
async with asyncio.timeout(None):
    out.append("no limit")
out
""",
    "tee_pairs": """
import itertools
rows = (n * n for n in range(6))
a, b = itertools.tee(rows)
next(b)
pairs = [(x, y) for x, y in zip(a, b)]
c, d, e = itertools.tee([1, 2], 3)
[pairs, list(c), list(d), list(e), list(itertools.tee("ab", 0))]
""",
    "enum_basics": """
from enum import Enum, auto
class Color(Enum):
    RED = 1
    GREEN = 2
    BLUE = 3
    CRIMSON = 1
    def describe(self):
        return f"{self.name.lower()}={self.value}"
    @property
    def warm(self):
        return self is Color.RED
    @classmethod
    def parse(cls, text):
        return cls[text.upper()]
class Step(Enum):
    START = auto()
    STOP = auto()
print(Color.RED, repr(Color.GREEN), f"[{Color.BLUE:>12}]", list(Step))
[Color.RED.name, Color(2).name, [c.value for c in Color], len(Color),
 Color.CRIMSON is Color.RED, Color["BLUE"].describe(), Color.RED.warm,
 Color.parse("green").value, Color.RED in Color, Step.STOP.value,
 isinstance(Color.RED, Color), type(Color.RED).__name__, Color.RED != Color.GREEN,
 {Color.RED: "r"}[Color.CRIMSON], [m.name for m in reversed(Color)]]
""",
    "enum_int_str": """
from enum import IntEnum, StrEnum, auto, unique
@unique
class Priority(IntEnum):
    LOW = auto()
    HIGH = auto()
    def label(self):
        return self.name.title()
class Status(StrEnum):
    OPEN = auto()
    DONE = "done"
print(Priority.HIGH, repr(Priority.LOW), Status.OPEN, f"{Priority.HIGH:>3}|{Status.DONE:>6}|")
[Priority.HIGH > Priority.LOW, Priority.HIGH + 1, sorted([Priority.HIGH, Priority.LOW]),
 Priority(1) == 1, {1: "x"}[Priority.LOW], Priority.HIGH.label(), Status.OPEN == "open",
 Status("done").name, Status.DONE.upper(), {"s": Status.OPEN, "p": Priority.HIGH},
 ",".join(Status), max(Priority).name]
""",
    "enum_errors": """
from enum import Enum, unique
class Color(Enum):
    RED = 1
    SCARLET = 1
out = []
for attempt in [lambda: Color(9), lambda: Color["X"], lambda: setattr(Color, "RED", 5),
                lambda: setattr(Color.RED, "value", 5), lambda: unique(Color)]:
    try:
        attempt()
    except Exception as e:
        out.append([type(e).__name__, str(e)])
out
""",
    "enum_tuple_values": """
from enum import Enum
class Planet(Enum):
    MERCURY = (3.303e+23, 2.4397e6)
    EARTH = (5.976e+24, 6.37814e6)
    def __init__(self, mass, radius):
        self.mass = mass
        self.radius = radius
    def gravity(self):
        return round(6.673e-11 * self.mass / (self.radius * self.radius), 2)
[Planet.EARTH.gravity(), Planet.MERCURY.value, Planet((5.976e+24, 6.37814e6)).name]
""",
    "named_tuple_class": """
from typing import NamedTuple
class Point(NamedTuple):
    x: float
    y: float = 0.0
    label: str = "p"
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5
p = Point(3, 4)
q = Point(1)
print(p, q)
x, y, label = p
[p.norm(), q, q._replace(label="q"), p._asdict(), Point._fields, len(p), x + y, label,
 isinstance(p, tuple), p == (3, 4, "p"), sorted([p, q])[0].x, repr(Point(0, y=2))]
""",
    "typed_dict_and_protocol": """
from typing import Generic, NamedTuple, Optional, Protocol, TypedDict, TypeVar
T = TypeVar("T")
class Movie(TypedDict, total=False):
    title: str
    year: Optional[int]
class HasName(Protocol):
    def name(self) -> str: ...
class Box(Generic[T]):
    def __init__(self, item: T) -> None:
        self.item = item
    def get(self) -> T:
        return self.item
Pair = NamedTuple("Pair", [("a", int), ("b", int)])
m = Movie(title="Heat", year=1995)
m["rating"] = 8
[m, type(m).__name__, Box(3).get(), Pair(1, 2).b, Pair(1, 2)]
""",
    "pprint": """
import pprint
data = {"users": [{"id": i, "name": f"user{i}", "tags": ["a", "b"] * i} for i in range(4)],
        "meta": (1, 2), "empty": {}}
pprint.pprint(data)
pprint.pprint(data, width=40, indent=2)
pprint.pprint(list(range(30)), compact=True)
pprint.pp({"z": 1, "a": 2})
pprint.pprint(data, depth=1)
class P:
    def __repr__(self):
        return "P()"
pprint.pprint([P(), P()])
pprint.pformat({"b": [1, 2], "a": "x"}, width=10)
""",
    "vars_setattr_getattr": """
class Config:
    def __init__(self, **options):
        for key, value in options.items():
            setattr(self, key, value)
        self._secret = 1
c = Config(retries=3, debug=False)
setattr(c, "timeout", 30)
values = {name: getattr(c, name) for name in ["retries", "debug", "timeout"]}
delattr(c, "debug")
snapshot = vars(c)
[values, snapshot, c.retries, hasattr(c, "debug"), sorted(vars(c)), getattr(c, "missing", "dflt")]
""",
    "chained_errors": """
class AppError(Exception):
    pass
def load(raw):
    try:
        return int(raw)
    except ValueError as e:
        raise AppError(f"bad value {raw!r}") from e
out = []
try:
    load("x")
except AppError as e:
    out += [type(e.__cause__).__name__, str(e.__cause__), e.__context__ is e.__cause__]
try:
    try:
        {}["k"]
    except KeyError:
        1 / 0
except ZeroDivisionError as e:
    out += [type(e.__context__).__name__, e.__cause__ is None]
try:
    raise ValueError("plain")
except ValueError as e:
    out += [e.__cause__, e.__context__, getattr(e, "__cause__", 1)]
out
""",
    "slots_and_format": """
class Money:
    __slots__ = ("cents", "currency")
    def __init__(self, cents, currency="EUR"):
        self.cents = cents
        self.currency = currency
    def __format__(self, spec):
        if spec == "short":
            return f"{self.cents // 100}{self.currency[0]}"
        return format(f"{self.cents / 100:.2f} {self.currency}", spec)
m = Money(1250)
[f"{m}", f"{m:short}", f"{m:>14}|", format(m, "<12") + "|", "{:short}".format(m)]
""",
}


@pytest.mark.parametrize("name", sorted(AS_CPYTHON))
async def test_construct_runs_as_in_cpython(executor: Any, name: str) -> None:
    script = AS_CPYTHON[name].strip("\n") + "\n"
    run = await _mode(executor).run(script)
    assert run.error is None, run.error
    assert (json.loads(json.dumps(run.value)), run.output) == await cpython(script)


async def test_batched_is_python_3_12s(executor: Any) -> None:
    # Python 3.11 has no ``itertools.batched``: the value is the one 3.12 gives.
    run = await _mode(executor).run(
        "import itertools\n[list(itertools.batched('abcdefg', 3)), "
        "list(itertools.batched([], 2))]")
    assert run.error is None, run.error
    assert run.value == [[["a", "b", "c"], ["d", "e", "f"], ["g"]], []]


@pytest.mark.parametrize(("script", "error"), [
    ("import itertools\nitertools.batched([1], 0)", ("ValueError", "n must be at least one")),
    ("import itertools\nitertools.tee([1], -1)", ("ValueError", "n must be >= 0")),
    ("import asyncio\nawait asyncio.wait(tools.get_user(user_id=1))",
     ("TypeError", "expect an iterable of tasks, not one awaitable: pass a list, e.g. "
                   "asyncio.wait([task])")),
    ("import asyncio\nawait asyncio.wait([])", ("ValueError", "Set of Tasks/Futures is empty.")),
    ("import asyncio\nawait asyncio.wait([asyncio.sleep(0)], return_when='SOME')",
     ("ValueError", "Invalid return_when value: SOME")),
    ("import asyncio\nasync with asyncio.TaskGroup() as tg:\n    tg.create_task(1)",
     ("ExceptionGroup", "unhandled errors in a TaskGroup (1 sub-exception)")),
    ("import pprint\npprint.pprint(1, stream=[])",
     ("TypeError", "pprint(stream=...) is not available in the sandbox (it prints to the "
                   "script's output; use pformat() for the text)")),
    ("import pprint\npprint.pformat(1, indent=10**6)",
     ("ValueError", "indent must be at most 64 in the sandbox")),
    ("v = vars\nv()", ("TypeError", "vars() without an argument is not available in the sandbox (it "
                             "would list the script's variables): keep shared values in a dict")),
    ("vars([1])", ("TypeError", "vars() takes an instance of the script's own classes in the "
                                "sandbox, not 'list'")),
    ("setattr(1, 2, 3)", ("TypeError", "setattr(): attribute name must be string, not 'int'")),
    ("from enum import IntEnum\nclass P(IntEnum):\n    A = 1\n    def __len__(self):\n        return 0",
     ("TypeError", "class P cannot define __len__ in the sandbox: it is an IntEnum, whose "
                   "members C code reads as ints")),
    ("from enum import StrEnum\nclass S(StrEnum):\n    A = 'a'\n    def upper(self):\n        return 'x'",
     ("TypeError", "class S cannot define upper in the sandbox: it is an StrEnum, whose "
                   "members C code reads as strs")),
    ("from enum import Enum\nclass C(Enum):\n    A = 1\nclass D(C):\n    B = 2",
     ("TypeError", "<enum 'D'> cannot extend <enum 'C'>")),
    ("from enum import Enum\nclass C(Enum, dict):\n    A = 1",
     ("TypeError", "class C cannot mix an enum with <class 'dict'> in the sandbox (use "
                   "IntEnum or StrEnum for int or str members)")),
    # Python 3.11's answer (3.12 looks the value up instead)
    ("from enum import Enum\nclass C(Enum):\n    A = 1\n1 in C",
     ("TypeError", "unsupported operand type(s) for 'in': 'int' and 'EnumType'")),
    ("from typing import NamedTuple\nclass P(NamedTuple):\n    x: int = 0\n    y: int",
     ("TypeError", "Non-default namedtuple field y cannot follow default field x")),
    ("from typing import List\nclass P(List[int]):\n    pass",
     ("TypeError", "class P cannot subclass typing.List[...] in the sandbox")),
    ("from typing import TypedDict\nclass M(TypedDict):\n    x: int\nisinstance({}, M)",
     ("TypeError", "TypedDict does not support instance and class checks")),
    ("from typing import TypedDict\nclass M(TypedDict):\n    x: int\n    def f(self):\n        pass",
     ("TypeError", "TypedDict classes can contain only annotations ('f' is not one)")),
])
async def test_what_they_refuse_says_how_to_fix_it(executor: Any, script: str,
                                                   error: tuple[str, str]) -> None:
    run = await _mode(executor).run(script)
    assert run.error is not None and (run.error.type, run.error.message) == error


# -- what stays unreachable ------------------------------------------------------------------

# Each row ends in the value the script could reach; the host object must not be in it.
@pytest.mark.parametrize(("script", "error"), [
    # the enum metaclass: type() of an enum class is refused like any metaclass
    ("from enum import Enum\nclass C(Enum):\n    A = 1\ntype(C)", "TypeError"),
    ("from enum import Enum\ntype(Enum)", "TypeError"),
    ("from enum import Enum\nclass C(Enum):\n    A = 1\ngetattr(C, '__call__')", "AttributeError"),
    ("from enum import Enum\nclass C(Enum):\n    A = 1\ngetattr(C.A, '_value_')", "AttributeError"),
    ("from enum import Enum\nclass C(Enum):\n    A = 1\ngetattr(C, '_sandbox_names_')", "AttributeError"),
    ("from enum import Enum\nclass C(Enum):\n    A = 1\nC.__setattr__", "PreflightError"),
    # the host methods of the enum bases apply to members only (never read a host object)
    ("from enum import Enum\nimport dataclasses\nEnum.__repr__(dataclasses.field())", "TypeError"),
    ("from enum import Enum\nEnum.__str__(tools)", "TypeError"),
    # typing forms: their classes and metaclass are not the script's
    ("from typing import NamedTuple\ntype(NamedTuple)", "TypeError"),
    ("from typing import NamedTuple\nNamedTuple.functional", "AttributeError"),
    ("from typing import TypedDict\nclass M(TypedDict):\n    x: int\ngetattr(M, '_name')", "AttributeError"),
    # asyncio objects answer only their public names
    ("import asyncio\nt = asyncio.create_task(asyncio.sleep(0))\ngetattr(t, 'get_coro')", "AttributeError"),
    ("import asyncio\ngetattr(asyncio.TaskGroup(), '_group')", "AttributeError"),
    ("import asyncio\ngetattr(asyncio.timeout(1), '_timeout')", "AttributeError"),
    ("import asyncio\nit = asyncio.as_completed([asyncio.sleep(0)])\ngetattr(it, '_finished')", "AttributeError"),
    ("import itertools\na, b = itertools.tee([1])\ngetattr(a, '_shared')", "AttributeError"),
    # setattr/vars: only what ``obj.name = v`` may do, on the script's own objects
    ("import json\nsetattr(json, 'loads', len)", "TypeError"),
    ("setattr(ToolCallError, 'message', 'x')", "TypeError"),
    ("class A:\n    pass\nsetattr(A(), '_sandbox_names_', ('x',))", "AttributeError"),
    ("class A:\n    pass\nsetattr(A, '__init__', len)", "AttributeError"),
    ("vars(ToolCallError('t', 'm'))", "TypeError"),
])
async def test_host_internals_stay_unreachable(executor: Any, script: str, error: str) -> None:
    run = await _mode(executor).run(script)
    assert run.value is None
    assert run.error is not None and run.error.type == error, run.error


async def test_vars_is_a_copy(executor: Any) -> None:
    # CPython hands out the instance's own __dict__; the sandbox a copy (a script never
    # holds a namespace Python reads attributes from).
    run = await _mode(executor).run(
        "class A:\n    def __init__(self):\n        self.x = 1\n"
        "a = A()\nv = vars(a)\nv['x'] = 2\nv['y'] = 3\n[a.x, hasattr(a, 'y')]")
    assert run.value == [1, False]


async def test_setattr_changes_no_host_object(executor: Any) -> None:
    run = await _mode(executor).run(
        "out = []\nfor target in [ToolCallError, 'text', 1, len]:\n    try:\n"
        "        setattr(target, 'message', 'pwned')\n    except Exception as e:\n"
        "        out.append(type(e).__name__)\nout")
    assert run.value == ["TypeError", "TypeError", "TypeError", "TypeError"]
    assert "message" not in vars(cm.ToolCallError)


async def test_a_chained_host_stop_is_never_handed_out(executor: Any) -> None:
    # wait_for's TimeoutError is raised while the host's cancellation is handled: what is
    # chained under it is the host's, and a script reads only Exceptions it may hold.
    script = """
import asyncio
try:
    await asyncio.wait_for(asyncio.sleep(5), 0.01)
except TimeoutError as e:
    inner = e.__context__
    chain = []
    while inner is not None and len(chain) < 5:
        chain.append(type(inner).__name__)
        inner = inner.__context__
chain
"""
    run = await _mode(executor).run(script)
    assert run.error is None, run.error
    assert "CancelledError" not in run.value and "Tripped" not in run.value


def test_enum_classes_are_script_classes_of_a_host_metaclass() -> None:
    # the metaclass is host code: scripts never hold it (type() refuses it above)
    from codemode.sandbox.language.facades.enum_facade import Enum
    from codemode.sandbox.language.guards import ScriptMeta
    assert type(Enum) is EnumMeta and issubclass(EnumMeta, ScriptMeta)


# -- limits still apply ------------------------------------------------------------------------

@pytest.mark.parametrize(("script", "limit"), [
    # tee: a lagging iterator's backlog is sized (the memory limit, before the host fills)
    ("import itertools\na, b = itertools.tee(itertools.count())\nfor x in a:\n    pass", "memory"),
    # as_completed / wait / TaskGroup over very many calls: the tasks are sized first
    ("import asyncio\nfor f in asyncio.as_completed([tools.get_user(user_id=1) for _ in range(40000)]):\n    pass", "memory"),
    ("import asyncio\nawait asyncio.wait([asyncio.sleep(0) for _ in range(40000)])", "memory"),
    ("import asyncio\nasync with asyncio.TaskGroup() as tg:\n    for _ in range(40000):\n        tg.create_task(asyncio.sleep(0))", "memory"),
    # a task spinning inside a TaskGroup: the operation limit, not an ExceptionGroup
    ("import asyncio\nasync def spin():\n    while True:\n        pass\ntry:\n    async with asyncio.TaskGroup() as tg:\n        tg.create_task(spin())\nexcept Exception:\n    pass", "operations"),
    # a timeout block cannot outlast the run
    ("import asyncio\nasync with asyncio.timeout(None):\n    await asyncio.sleep(60)", "timeout"),
    # enum iteration, batched, pprint are charged
    ("from enum import Enum\nclass C(Enum):\n    A = 1\nwhile True:\n    for c in C:\n        pass", "operations"),
    ("import itertools\nfor b in itertools.batched(itertools.count(), 3):\n    pass", "operations"),
    ("import pprint\nx = [list(range(1000))] * 1000\npprint.pformat(x)", "operations"),
    ("import pprint\nx = ['a' * 10**6] * 100\npprint.pformat(x, indent=64)", "memory"),
])
async def test_new_constructs_stay_inside_the_limits(executor: Any, script: str,
                                                     limit: str) -> None:
    # the clock is the answer of one row only: the others get time to spare, so a loaded
    # machine cannot reach it first (enum iteration took 2 s at a load of 7 on 2 cores; the
    # TaskGroup row, 0.3 s of CPU, passed 10 s at a load of 15-20 in-process).
    # The operation rows get 500,000, not 2 million: an uncharged loop reaches neither, and
    # the enum row took 0.9 s of CPU on 3.12 for 2 million (over 10 s of wall time at a
    # load of 15), 0.16 s for 500,000; a memory row (tee) needs more to fill its memory
    operations = 500_000 if limit == "operations" else 2_000_000
    limits = cm.Limits(operations=operations, timeout=2.0 if limit == "timeout" else 30.0,
                       memory=128 * 1024 * 1024)
    run = await _mode(executor, limits).run(script)
    assert run.error is not None and run.error.limit == limit, run.error


async def test_as_completed_keeps_to_the_concurrency_limit(executor: Any) -> None:
    registry = cm.ToolRegistry()
    state = {"now": 0, "peak": 0}

    async def slow(n: int) -> int:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return n

    registry.register(cm.define_tool(name="slow", parameters={"n": {"type": "integer"}},
                                     execute=lambda args: slow(args["n"])))
    mode = cm.CodeMode(registry, executor=executor, limits=cm.Limits(concurrency=3))
    script = ("import asyncio\nout = []\n"
              "for f in asyncio.as_completed([tools.slow(n=i) for i in range(12)]):\n"
              "    out.append(await f)\n"
              "async with asyncio.TaskGroup() as tg:\n"
              "    ts = [tg.create_task(tools.slow(n=i)) for i in range(12)]\n"
              "[sorted(out), [t.result() for t in ts]]")
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.value == [list(range(12)), list(range(12))]
    assert state["peak"] == 3
