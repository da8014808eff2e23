"""Ordinary Python a script writes (issue #20): its classes' protocol methods, ``super()``,
private attributes, annotations, ``nonlocal``, ``object`` and ``time.sleep``.

Each construct runs on both executors with the value CPython gives; the refusals that
stay (attribute hooks, host objects' private names, a ``super()`` not bound to the
script's own instance) are checked at compile time or on a host object that must not be
reached. The red-team rows for the same constructs are ``attacks/*/r6_*.toml``.
"""

from __future__ import annotations

import textwrap
from typing import Any, Final

import pytest

import codemode.sandbox as sandbox
from codemode.errors import ScriptCompileError
from codemode.sandbox import Limits
from codemode.sandbox.language.compile import compile_script
from codemode.sandbox.language.guards import ScriptMeta, guarded_getattr
from codemode.sandbox.language.state import CURRENT_RUN, RunState

LIMITS: Final = Limits(timeout=10.0, operations=200_000)

WORKING: Final[dict[str, tuple[str, Any]]] = {
    "match-statement": ("""
def kind(v):
    match v:
        case {"type": "issue", "number": n, **rest}:
            return ["issue", n, sorted(rest)]
        case [first, *others] if first == "cmd":
            return ["cmd", others]
        case (1, 2) | (2, 1):
            return "pair"
        case None | True:
            return "none-or-true"
        case -1 | 2.5:
            return "number"
        case [[inner]] as nested if inner == 0:
            return nested
        case _:
            return "other"
[kind({"type": "issue", "number": 7, "a": 1, "b": 2}), kind(["cmd", "x", "y"]),
 kind((2, 1)), kind(None), kind(-1), kind(2.5), kind("z"), kind([[0]])]
""", [["issue", 7, ["a", "b"]], ["cmd", ["x", "y"]], "pair", "none-or-true", "number",
      "number", "other", [[0]]]),
    "exception-bases-models-use": ("""
class Down(ConnectionError):
    pass
class Missing(ImportError):
    pass
out = []
for error in (Down("net"), Missing("mod"), UnboundLocalError("u")):
    try:
        raise error
    except (OSError, ImportError, NameError) as e:
        out.append([type(e).__name__, str(e), isinstance(e, Exception)])
out
""", [["Down", "net", True], ["Missing", "mod", True], ["UnboundLocalError", "u", True]]),
    "repr-str-print-fstring": ("""
class P:
    def __init__(self, x): self.x = x
    def __repr__(self): return f"P({self.x})"
    def __str__(self): return "p" + str(self.x)
p = P(3)
print(p, [p])
[repr(p), str(p), f"{p}", f"{p!r}"]
""", ["P(3)", "p3", "p3", "P(3)"]),
    "len-bool": ("""
class Bag:
    def __init__(self): self.items = []
    def __len__(self): return len(self.items)
    def __bool__(self): return len(self.items) > 0
b = Bag()
empty = bool(b)
b.items.append(1)
[len(b), empty, bool(b), 'yes' if b else 'no']
""", [1, False, True, "yes"]),
    "iter-next": ("""
class Count:
    def __init__(self, n): self.n = n; self.i = 0
    def __iter__(self): return self
    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i
[list(Count(3)), [x * 2 for x in Count(2)], sum(Count(4))]
""", [[1, 2, 3], [2, 4], 10]),
    "generator-iter-reversed": ("""
class Line:
    def __init__(self, *xs): self.xs = list(xs)
    def __iter__(self):
        for x in self.xs:
            yield x
    def __reversed__(self): return iter(self.xs[::-1])
[list(Line(1, 2)), list(reversed(Line(1, 2)))]
""", [[1, 2], [2, 1]]),
    "getitem-setitem-delitem-contains": ("""
class Grid:
    def __init__(self): self.cells = {}
    def __getitem__(self, k): return self.cells.get(k, 0)
    def __setitem__(self, k, v): self.cells[k] = v
    def __delitem__(self, k): del self.cells[k]
    def __contains__(self, k): return k in self.cells
g = Grid()
g[1, 2] = 5
g[0, 0] = 1
del g[0, 0]
[g[1, 2], g[0, 0], (1, 2) in g, (0, 0) in g]
""", [5, 0, True, False]),
    "sequence-protocol": ("""
class Seq:
    def __len__(self): return 3
    def __getitem__(self, i):
        if i >= 3: raise IndexError(i)
        return i * 10
[list(Seq()), Seq()[1], 20 in Seq(), sorted(Seq(), reverse=True)]
""", [[0, 10, 20], 10, True, [20, 10, 0]]),
    "call": ("""
class Adder:
    def __init__(self, n): self.n = n
    def __call__(self, x): return x + self.n
[list(map(Adder(2), [1, 2])), sorted([3, 1, 2], key=Adder(0)), callable(Adder(1))]
""", [[3, 4], [1, 2, 3], True]),
    "arithmetic-operators": ("""
class V:
    def __init__(self, x, y): self.x = x; self.y = y
    def __add__(self, o): return V(self.x + o.x, self.y + o.y)
    def __sub__(self, o): return V(self.x - o.x, self.y - o.y)
    def __mul__(self, k): return V(self.x * k, self.y * k)
    def __rmul__(self, k): return self * k
    def __truediv__(self, k): return V(self.x / k, self.y / k)
    def __neg__(self): return V(-self.x, -self.y)
    def __abs__(self): return (self.x ** 2 + self.y ** 2) ** 0.5
    def __eq__(self, o): return (self.x, self.y) == (o.x, o.y)
v = V(1, 2) + V(3, 4) - V(1, 1)
w = -(2 * v)
[v.x, v.y, w.x, v == V(3, 5), abs(V(3, 4)), (V(2, 4) / 2).y]
""", [3, 5, -6, True, 5.0, 2.0]),
    "inplace-operators": ("""
class Acc:
    def __init__(self): self.items = []
    def __iadd__(self, other):
        self.items.extend(other)
        return self
    def __imul__(self, n):
        self.items = self.items * n
        return self
a = Acc()
a += [1, 2]
a += 'a'
a *= 2
a.items
""", [1, 2, "a", 1, 2, "a"]),
    "hash-eq-in-dict-and-set": ("""
class Key:
    def __init__(self, k): self.k = k
    def __hash__(self): return hash(self.k)
    def __eq__(self, o): return isinstance(o, Key) and o.k == self.k
d = {Key('a'): 1}
d[Key('a')] = 2
s = {Key(1), Key(1), Key(2)}
[len(d), d[Key('a')], len(s), Key(2) in s]
""", [1, 2, 2, True]),
    "ordering-sorted-min-max": ("""
class Item:
    def __init__(self, p): self.p = p
    def __lt__(self, o): return self.p < o.p
    def __repr__(self): return f"Item({self.p})"
items = [Item(3), Item(1), Item(2)]
[repr(sorted(items)), repr(min(items)), repr(max(items))]
""", ["[Item(1), Item(2), Item(3)]", "Item(1)", "Item(3)"]),
    "numeric-conversions": ("""
class Money:
    def __init__(self, cents): self.cents = cents
    def __int__(self): return self.cents // 100
    def __float__(self): return self.cents / 100
    def __round__(self, n=0): return round(self.cents / 100, n)
m = Money(1234)
[int(m), float(m), round(m, 1)]
""", [12, 12.34, 12.3]),
    "context-manager": ("""
log = []
class Managed:
    def __enter__(self):
        log.append('enter')
        return self
    def __exit__(self, exc_type, exc, tb):
        log.append(('exit', exc_type is None))
        return False
with Managed() as m:
    log.append('body')
log
""", ["enter", "body", ["exit", True]]),
    "context-manager-suppresses": ("""
class Ignore:
    def __init__(self, kind): self.kind = kind
    def __enter__(self): return self
    def __exit__(self, et, e, tb): return et is self.kind
with Ignore(ValueError):
    raise ValueError('x')
try:
    with Ignore(ValueError):
        raise KeyError('k')
except KeyError as e:
    caught = type(e).__name__
caught
""", "KeyError"),
    "async-context-manager-and-iterator": ("""
class Conn:
    async def __aenter__(self): return 'conn'
    async def __aexit__(self, *exc): return False
class Ticks:
    def __init__(self, n): self.n = n
    def __aiter__(self): return self
    async def __anext__(self):
        if self.n == 0:
            raise StopAsyncIteration
        self.n -= 1
        return self.n
async with Conn() as c:
    got = [c]
async for t in Ticks(2):
    got.append(t)
got
""", ["conn", 1, 0]),
    "super-init-and-method": ("""
class Base:
    def __init__(self, name): self.name = name
    def greet(self): return 'hi ' + self.name
class Child(Base):
    def __init__(self, name, age):
        super().__init__(name)
        self.age = age
    def greet(self): return super().greet() + '!'
c = Child('a', 3)
[c.name, c.age, c.greet()]
""", ["a", 3, "hi a!"]),
    "super-dunder-of-a-script-base": ("""
class A:
    def __repr__(self): return 'A'
    def __eq__(self, o): return True
class B(A):
    def __repr__(self): return 'B<' + super().__repr__() + '>'
    def __eq__(self, o): return super().__eq__(o) and isinstance(o, B)
[repr(B()), B() == B(), B() == A()]
""", ["B<A>", True, False]),
    "super-dunder-of-a-host-bases-base": ("""
class AppError(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
    def __str__(self):
        return f"[{self.code}] {super().__str__()}"
class Missing(KeyError):
    def __repr__(self):
        return 'Missing/' + super().__repr__()
e = AppError(7, 'boom')
[str(e), repr(e), repr(Missing('k')), str(Missing('k')), Missing('k').__str__()]
""", ["[7] boom", "AppError('boom')", "Missing/Missing('k')", "'k'", "'k'"]),
    "exception-subclass": ("""
class AppError(Exception):
    def __init__(self, msg, code):
        super().__init__(msg)
        self.code = code
    def __str__(self): return f"[{self.code}] {self.args[0]}"
class Older(ValueError):
    def __init__(self, msg):
        ValueError.__init__(self, msg)
try:
    raise AppError('bad', 7)
except AppError as e:
    r = [str(e), e.code, type(e).__name__, e.args]
try:
    raise Older('old')
except ValueError as e:
    r.append(str(e))
r
""", ["[7] bad", 7, "AppError", ["bad"], "old"]),
    "object-base-and-sentinel": ("""
MISSING = object()
class A(object):
    def __init__(self):
        super().__init__()
    def get(self, d, k, default=MISSING):
        v = d.get(k, MISSING)
        return default if v is MISSING else v
[A().get({'a': 1}, 'b', 9), A().get({'a': 1}, 'a'), isinstance(A(), object)]
""", [9, 1, True]),
    "annotations": ("""
x: int = 5
y: list[str] = ['a']
z: int
def f(n: int) -> int:
    total: int = 0
    for i in range(n):
        total += i
    return total
class Point:
    x: int
    y: int = 0
    def __init__(self, x: int, y: int = 0):
        self.x: int = x
        self.y = y
[x, y, f(4), Point(2).x, Point(2).y, Point.y]
""", [5, ["a"], 6, 2, 0, 0]),
    "nonlocal": ("""
def make_counter():
    count = 0
    def inc(step=1):
        nonlocal count
        count += step
        return count
    return inc
c = make_counter()
c(); c(5)
def outer():
    seen, last = [], None
    def record(v):
        nonlocal last
        seen.append(v)
        last = v
    for i in range(3):
        record(i)
    return seen, last
[c(), outer()]
""", [7, [[0, 1, 2], 2]]),
    "private-attributes": ("""
class Stack:
    _made = 0
    def __init__(self):
        Stack._made += 1
        self._items = []
        self.__secret = 'mine'
    def push(self, x):
        self._items.append(x)
        return self
    def _peek(self):
        return self._items[-1]
    def top(self):
        return self._peek()
    def secret(self):
        return self.__secret
s = Stack().push(1).push(2)
s._items += [3]
Stack()
[s.top(), s._items, Stack._made, s.secret(), getattr(s, '_missing', 'dflt'), hasattr(s, '_items')]
""", [3, [1, 2, 3], 2, "mine", "dflt", True]),
    "private-module-names": ("""
_cache = {}
def _fib(n):
    if n < 2:
        return n
    if n not in _cache:
        _cache[n] = _fib(n - 1) + _fib(n - 2)
    return _cache[n]
_fib(30)
""", 832040),
    "names": ("""
class Foo: pass
def bar(): pass
try:
    {}['k']
except Exception as e:
    err = type(e).__name__
[Foo.__name__, bar.__name__, Foo().__class__.__name__, type(Foo()).__name__,
 ValueError.__name__, err]
""", ["Foo", "bar", "Foo", "Foo", "ValueError", "KeyError"]),
    "linked-list": ("""
class Node:
    def __init__(self, v, nxt=None):
        self.v = v
        self.nxt = nxt
class LinkedList:
    def __init__(self):
        self._head = None
        self._size = 0
    def push(self, v):
        self._head = Node(v, self._head)
        self._size += 1
    def __len__(self): return self._size
    def __iter__(self):
        n = self._head
        while n is not None:
            yield n.v
            n = n.nxt
    def __repr__(self): return 'LL(' + ', '.join(str(v) for v in self) + ')'
ll = LinkedList()
for i in range(3):
    ll.push(i)
[len(ll), list(ll), 1 in ll, repr(ll)]
""", [3, [2, 1, 0], True, "LL(2, 1, 0)"]),
    "property-classmethod-staticmethod": ("""
class Temp:
    def __init__(self, c): self._c = c
    @property
    def f(self): return self._c * 9 / 5 + 32
    @f.setter
    def f(self, value): self._c = (value - 32) * 5 / 9
    @classmethod
    def boiling(cls): return cls(100)
    @staticmethod
    def scale(): return 'C'
t = Temp.boiling()
before = t.f
t.f = 32
[before, t._c, Temp.scale(), t.scale(), type(t).boiling().f]
""", [212.0, 0.0, "C", "C", 212.0]),
    "time-sleep": ("""
import time
t0 = time.monotonic()
time.sleep(0.01)
time.sleep(0)
time.monotonic() > t0
""", True),
}
"""Ordinary snippets -> the value CPython gives them."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["InProcessExecutor", "WorkerPoolExecutor"])
async def executor(request: pytest.FixtureRequest) -> Any:
    async with getattr(sandbox, request.param)() as ex:
        yield ex


async def _host(name: str, args: dict[str, Any]) -> Any:
    if name == "fail":
        raise ValueError("denied by the host")
    return args


async def _run(executor: Any, source: str) -> sandbox.ScriptResult:
    result: sandbox.ScriptResult = await executor.run(
        textwrap.dedent(source), call_tool=_host, tool_paths=("fail",), limits=LIMITS)
    return result


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(WORKING))
async def test_ordinary_python_runs(executor: Any, name: str) -> None:
    source, expected = WORKING[name]
    result = await _run(executor, source)
    assert result.error is None, result.error
    assert result.value == expected


@pytest.mark.anyio
async def test_print_uses_the_script_str(executor: Any) -> None:
    result = await _run(executor, """
        class P:
            def __str__(self): return 'as str'
            def __repr__(self): return 'as repr'
        print(P(), [P()])
    """)
    assert result.error is None
    assert result.output == "as str [as repr]\n"


@pytest.mark.anyio
async def test_annotations_are_not_evaluated(executor: Any) -> None:
    result = await _run(executor, """
        x: print('evaluated') = 1
        def f():
            y: await tools.fail() = 2
            return y
        class C:
            z: print('evaluated in a class')
        x + f() if False else x
    """)
    assert result.error is None
    assert (result.value, result.output, result.calls) == (1, "", ())


@pytest.mark.anyio
async def test_time_sleep_is_bounded_and_counted(executor: Any) -> None:
    result = await _run(executor, "import time\ntime.sleep(0.05)\n'slept'")
    assert result.value == "slept"
    assert result.usage.operations == 5  # one operation per 10 ms slice asked for
    long = await _run(executor, "import time\ntime.sleep(3600)")
    assert long.error is not None and long.error.type == "LimitExceeded"
    assert "time.sleep(3600) would end after the run's deadline" in long.error.message


@pytest.mark.anyio
@pytest.mark.parametrize(("call", "error", "fragment"), [
    ("time.sleep(-1)", "ValueError", "sleep length must be non-negative"),
    ("time.sleep('1')", "TypeError", "'str' object cannot be interpreted"),
    ("time.sleep(True)", "TypeError", "'bool' object cannot be interpreted"),
    ("time.sleep(float('nan'))", "ValueError", "NaN"),
    ("time.sleep(float('inf'))", "LimitExceeded", "would end after the run's deadline"),
])
async def test_time_sleep_refuses_what_cpython_refuses(
        executor: Any, call: str, error: str, fragment: str) -> None:
    result = await _run(executor, f"import time\n{call}")
    assert result.error is not None
    assert (result.error.type, fragment in result.error.message) == (error, True)


@pytest.mark.parametrize(("source", "fragment"), [
    *((f"class A:\n    def {name}(self, *a):\n        pass", f'"{name}" cannot be defined in a '
       "class body") for name in (
        "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__del__", "__new__",
        "__init_subclass__", "__set_name__", "__class_getitem__", "__reduce__",
        "__reduce_ex__", "__getstate__", "__index__", "__length_hint__",
        "__await__", "__get__", "__set__", "__instancecheck__", "__mro_entries__")),
    ("def __repr__(self):\n    pass", '"__repr__" cannot be defined outside a class'),
    ("class A:\n    def f(self):\n        def __len__(s):\n            return 0",
     '"__len__" cannot be defined outside a class'),
    ("class A:\n    __hash__ = 0", '"__hash__" is an invalid variable name'),
    ("x.__dict__", '"__dict__" is an invalid attribute name'),
    ("x.__class__", '"__class__" is an invalid attribute name'),
    ("super().__class__", '"__class__" is an invalid attribute name'),
    ("super().__getattribute__('x')", '"__getattribute__" is an invalid attribute name'),
    ("x.__init__ = len", '"__init__" is an invalid attribute name'),
    ("class A:\n    pass\nA.__name__ = 'B'", '"__name__" is an invalid attribute name'),
    ("_getattr_ = getattr", '"_getattr_" is an invalid variable name'),
    ("_T_ = iter([])", '"_T_" is an invalid variable name'),
    ("x._sandbox_names_", '"_sandbox_names_" is an invalid attribute name'),
    ("class A:\n    _sandbox_names_ = ('x',)", '"_sandbox_names_" is an invalid variable name'),
    ("class A:\n    _sandbox_annotated_ = ('x',)",
     '"_sandbox_annotated_" is an invalid variable name'),
    ("try:\n    1/0\nexcept Exception as e:\n    e.__cause__ = None",
     '"__cause__" is an invalid attribute name'),
    ("try:\n    1/0\nexcept Exception as e:\n    del e.__context__",
     '"__context__" is an invalid attribute name'),
    ("try:\n    1/0\nexcept Exception as e:\n    e.__traceback__",
     '"__traceback__" is an invalid attribute name'),
    ("x.__slots__", '"__slots__" is an invalid attribute name'),
    ("class A:\n    _asyncio_future_blocking = False",
     '"_asyncio_future_blocking" is an invalid variable name'),
    ("self._asyncio_future_blocking = True",
     '"_asyncio_future_blocking" is an invalid attribute name'),
    ("def f():\n    x = 1\n    def g():\n        nonlocal _depth_x_", '"_depth_x_" is an invalid'),
    ("eval('1')", "Eval calls are not allowed"),
    ("exec('1')", "Exec calls are not allowed"),
    ("def print(x):\n    pass", '"print" is a reserved name'),
])
def test_what_stays_refused_at_compile_time(source: str, fragment: str) -> None:
    with pytest.raises(ScriptCompileError) as info:
        compile_script(source)
    assert fragment in info.value.message


@pytest.mark.anyio
@pytest.mark.parametrize(("source", "fragment"), [
    ("import json\njson._names", "names starting with '_' are private"),
    ("import json\ngetattr(json, '_names', 'hidden')", "names starting with '_' are private"),
    ("'abc'._x", "names starting with '_' are private"),
    ("tools._paths", "names starting with '_' are private"),
    # namedtuple's own _make/_asdict/_replace/_fields are offered; no other private name
    ("import collections\nP = collections.namedtuple('P', 'a')\nP._fields_x",
     "attribute '_fields_x' is not accessible"),
    ("import collections\nP = collections.namedtuple('P', 'a')\nP(1)._x",
     "attribute '_x' is not accessible"),
    ("getattr(object(), '_x', None)", "names starting with '_' are private"),
    ("class A:\n    pass\nA().__secret", "attribute '__secret' is not accessible"),
    ("class A:\n    pass\nA().__hash__", "attribute '__hash__' is not accessible"),
    ("super(ValueError, ValueError('x')).__init__", "attribute '__init__' is not accessible"),
    ("class C:\n    pass\nsuper(C, C).__init__", "attribute '__init__' is not accessible"),
    ("class C:\n    def f(self):\n        return super().__hash__\nC().f()",
     "attribute '__hash__' is not accessible"),
    ("class E(Exception):\n    def f(self):\n        return super().with_traceback\nE().f()",
     "no accessible attribute 'with_traceback'"),
])
async def test_host_objects_answer_no_private_names(
        executor: Any, source: str, fragment: str) -> None:
    result = await _run(executor, source)
    assert result.error is not None and result.error.type == "AttributeError"
    assert fragment in result.error.message


@pytest.mark.anyio
async def test_base_init_never_reinitialises_a_host_exception(executor: Any) -> None:
    result = await _run(executor, """
        class A:
            pass
        try:
            await tools.fail()
        except ToolCallError as e:
            caught = e
        before = [caught.message, caught.args]
        refusals = []
        for init in (Exception.__init__, A.__init__, RuntimeError.__init__):
            try:
                init(caught, 'forged')
            except TypeError as e:
                refusals.append(str(e))
        [refusals, before == [caught.message, caught.args], 'forged' in caught.args]
    """)
    assert result.error is None, result.error
    refusals, unchanged, forged = result.value
    assert len(refusals) == 3 and all(
        "applies only to instances of the script's own classes" in text for text in refusals)
    assert (unchanged, forged) == (True, False)


@pytest.mark.anyio
async def test_a_special_method_must_be_a_def(executor: Any) -> None:
    result = await _run(executor, """
        def swap(f):
            return len
        class A:
            @swap
            def __repr__(self):
                return 'A'
    """)
    assert result.error is not None and result.error.type == "TypeError"
    assert "A.__repr__ must be a plain function" in result.error.message


def test_special_methods_refuse_to_run_outside_their_run() -> None:
    """CPython calls these implicitly (hash, repr, sorted …): after the run, or in another
    run, the method's body is never entered."""
    entered: list[str] = []

    def __hash__(self: Any) -> int:
        entered.append("hash")
        return 1

    def __repr__(self: Any) -> str:
        entered.append("repr")
        return "A"

    own, other = RunState(LIMITS), RunState(LIMITS)
    token = CURRENT_RUN.set(own)
    try:
        cls = ScriptMeta("A", (), {"__hash__": __hash__, "__repr__": __repr__})
        obj = cls()
        assert (hash(obj), repr(obj)) == (1, "A")
    finally:
        CURRENT_RUN.reset(token)
    assert entered == ["hash", "repr"]
    token = CURRENT_RUN.set(other)
    try:
        with pytest.raises(TypeError, match="cannot run after the script ended"):
            hash(obj)
    finally:
        CURRENT_RUN.reset(token)
    own.meter.end()
    token = CURRENT_RUN.set(own)
    try:
        with pytest.raises(TypeError, match=r"\(__repr__ of a script object\)"):
            repr(obj)
        with pytest.raises(TypeError, match="cannot run after the script ended"):
            {obj}  # noqa: B018
    finally:
        CURRENT_RUN.reset(token)
    with pytest.raises(TypeError, match="cannot run after the script ended"):
        hash(obj)  # no run at all: the host's own code
    assert entered == ["hash", "repr"]


def test_a_host_object_is_not_touched_for_a_private_name() -> None:
    touched: list[str] = []

    class Host:
        def __getattribute__(self, name: str) -> Any:
            touched.append(name)
            return object.__getattribute__(self, name)

    host = Host()
    for name in ("_x", "__init__", "__secret", "__repr__"):
        with pytest.raises(AttributeError, match="private"):
            guarded_getattr(host, name)
        with pytest.raises(AttributeError, match="private"):
            guarded_getattr(host, name, None)
    assert touched == []


DATACLASSES: Final = {
    "fields-and-defaults": """
        from dataclasses import dataclass
        @dataclass
        class Summary:
            name: str
            n: int = 0
        [repr(Summary('x', 2)), Summary('y') == Summary('y', 0)]
    """,
    "classvar-factory-kw-only-post-init": """
        from dataclasses import dataclass, field, KW_ONLY
        from typing import ClassVar
        @dataclass(order=True)
        class P:
            kind: ClassVar[str] = 'p'
            x: int
            tags: list = field(default_factory=list)
            _: KW_ONLY
            y: int = 3
            def __post_init__(self):
                self.tags.append(self.x)
        [repr(P(1, y=4)), P.kind, P(1) < P(2), P(1, y=5) == P(1, y=5)]
    """,
    "inherited-post-init": """
        import dataclasses
        @dataclasses.dataclass
        class A:
            a: int
            def __post_init__(self):
                self.a *= 2
        @dataclasses.dataclass
        class B(A):
            b: str = 'z'
            def __post_init__(self):
                super().__post_init__()
                self.b = self.b.upper()
        [repr(B(2)), dataclasses.asdict(B(1, 'q')), [f.name for f in dataclasses.fields(B)]]
    """,
    "annotations-outside-dataclasses-stay-dropped": """
        class Plain:
            a: int
            b: int = 2
        [Plain.b, hasattr(Plain, 'a')]
    """,
}
"""Scripts run by an executor directly (no ``CodeMode``, so no planner marked the fields):
``executor.run`` of a dataclass with annotated fields made an ``__init__`` without them."""


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(DATACLASSES))
async def test_dataclasses_run_on_an_executor_as_in_cpython(executor: Any, name: str) -> None:
    source = textwrap.dedent(DATACLASSES[name]).strip()
    *body, last = source.split("\n")
    namespace: dict[str, Any] = {}
    # the CPython side of the comparison (without this module's ``annotations`` future)
    exec(compile("\n".join(body), "<cpython>", "exec", dont_inherit=True), namespace)
    expected = eval(last, namespace)
    result = await _run(executor, source)
    assert result.error is None, result.error
    assert result.value == expected
