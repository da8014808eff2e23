"""The stdlib facades ``functools``, ``operator``, ``heapq``, ``bisect``, ``textwrap`` and
``copy``: each script answers what plain CPython answers, and each attack through them
is refused or trips a limit without reaching the host.

The expected values are computed here with the real stdlib, by running the same source
with ``exec`` (the sandbox hands back JSON data: tuples come back as lists).
"""

from __future__ import annotations

import ast
import functools
import json
from typing import TYPE_CHECKING, Any, Final

import pytest

import codemode as cm
from codemode.sandbox.language.facades import facade

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

NEW: Final = ("functools", "operator", "heapq", "bisect", "textwrap", "copy")

SMALL: Final = cm.Limits(timeout=10.0, operations=200_000, memory=64 * 1024 * 1024,
                         recursion=50)
"""Small limits for the attacks (a generous clock: each answer is a guard, not the time)."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def mode() -> AsyncIterator[cm.CodeMode]:
    async with cm.InProcessExecutor() as executor:
        yield cm.CodeMode(cm.ToolRegistry(), executor=executor)


def _cpython(source: str) -> Any:
    """What ``source`` gives in plain CPython (its last line is the value), as JSON data."""
    tree = ast.parse(source)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr), source
    namespace: dict[str, Any] = {}
    exec(compile(tree, "<cpython>", "exec"), namespace)
    value = eval(compile(ast.Expression(last.value), "<cpython>", "eval"), namespace)
    return json.loads(json.dumps(value))


SCRIPTS: Final = [
    # functools
    "import functools, operator\nfunctools.reduce(operator.add, range(10))",
    "import functools\nfunctools.reduce(lambda a, b: a * b, [1, 2, 3, 4], 10)",
    "import functools\nfunctools.reduce(max, [], 7)",
    "import functools\np = functools.partial(max, 3)\n[p(1), p(5), list(p.args), p.keywords]",
    "import functools\np = functools.partial(functools.partial(sorted, reverse=True), [2, 3, 1])"
    "\n[p(), p(reverse=False)]",
    "import functools\nsorted(['bb', 'a', 'ccc'], key=functools.cmp_to_key(\n"
    "    lambda a, b: len(b) - len(a)))",
    "import functools\nmax([3, 1, 2], key=functools.cmp_to_key(lambda a, b: a - b))",
    "import functools\n@functools.lru_cache(maxsize=None)\ndef fib(n):\n"
    "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
    "[fib(80), fib.cache_info().hits, list(fib.cache_info())]",
    "import functools\n@functools.cache\ndef f(x, y=1):\n    return [x, y]\n"
    "[f(2), f(2, y=3), f(2) is f(2), f.cache_info().misses]",
    "import functools\n@functools.lru_cache(maxsize=2)\ndef f(x):\n    return x\n"
    "[f(1), f(2), f(3), f(1), list(f.cache_info())]",
    "import functools\n@functools.lru_cache\ndef f(x):\n    return x\nf(1)\nf.cache_clear()\n"
    "list(f.cache_info())",
    "import functools\nclass A:\n    def __init__(self, k):\n        self.k = k\n"
    "    @functools.lru_cache(maxsize=8)\n    def m(self, x):\n        return self.k + x\n"
    "[A(1).m(2), A(10).m(2)]",
    # operator
    "import operator\n[operator.itemgetter(1)([1, 2]), list(operator.itemgetter(0, 2)('abc')),"
    " operator.itemgetter('k')({'k': 5}), operator.itemgetter(slice(1, None))([1, 2, 3])]",
    "import operator\nsorted([(1, 'b'), (0, 'c'), (2, 'a')], key=operator.itemgetter(1))",
    "import operator, datetime\nd = datetime.date(2024, 3, 5)\n"
    "[operator.attrgetter('year')(d), list(operator.attrgetter('month', 'day')(d))]",
    "import operator\n[operator.methodcaller('upper')('ab'), "
    "operator.methodcaller('split', ',')('a,b'), operator.methodcaller('get', 'x', 0)({})]",
    "import operator\n[operator.add(1, 2), operator.add('a', 'b'), operator.sub(5, 3), "
    "operator.mul([1], 3), operator.mod(7, 3), operator.mod('%s!', 'x'), operator.pow(2, 10),"
    " operator.lshift(1, 4), operator.rshift(16, 2), operator.truediv(1, 4), "
    "operator.floordiv(7, 2), operator.neg(3), operator.pos(-3), operator.abs(-3), "
    "operator.invert(5), operator.inv(5), operator.index(7)]",
    "import operator\n[operator.eq([1], [1]), operator.ne(1, 2), operator.lt((1, 2), (1, 3)), "
    "operator.le(2, 2), operator.gt('b', 'a'), operator.ge(1, 2), operator.contains([1, 2], 2),"
    " operator.contains('abc', 'd'), operator.not_([]), operator.truth([0]), "
    "operator.is_(None, None), operator.is_not(1, None)]",
    "import operator\n[sorted(operator.and_({1, 2}, {2, 3})), sorted(operator.or_({1}, {2})), "
    "sorted(operator.xor({1, 2}, {2, 3})), sorted(operator.sub({1, 2}, {2})), "
    "operator.and_(6, 3), operator.or_(4, 1), operator.xor(5, 1)]",
    "import operator, functools\nfunctools.reduce(operator.mul, range(1, 11))",
    "import operator\noperator.getitem({'a': [1, 2]}, 'a')",
    # heapq
    "import heapq\nh = []\nfor x in [5, 1, 4, 2, 3, 1]:\n    heapq.heappush(h, (x, str(x)))\n"
    "[heapq.heappop(h) for _ in range(6)]",
    "import heapq\nh = [9, 5, 1, 4, 2, 3, 8]\nheapq.heapify(h)\n"
    "[list(h), heapq.heappushpop(h, 0), heapq.heappushpop(h, 6), heapq.heapreplace(h, 7), "
    "list(h), [heapq.heappop(h) for _ in range(len(h))]]",
    "import heapq\ndata = [5, 1, 8, 3, 9, 2]\n[heapq.nlargest(3, data), heapq.nsmallest(2, data),"
    " heapq.nlargest(2, data, key=lambda v: -v), heapq.nsmallest(10, 'hello'), "
    "heapq.nlargest(0, data)]",
    "import heapq\n[list(heapq.merge([1, 4, 7], [2, 5], [3, 6, 9])), "
    "list(heapq.merge(['bb', 'a'], ['ccc'], key=len, reverse=True)), list(heapq.merge())]",
    "import heapq\nh = [[3, 'c'], [1, 'a'], [2, 'b']]\nheapq.heapify(h)\n"
    "[heapq.heappop(h), heapq.heappop(h)]",
    "import heapq\nh = []\nfor i in range(200):\n    heapq.heappush(h, (i * 7919 % 211, i))\n"
    "[heapq.heappop(h) for _ in range(len(h))] == sorted(h)",
    # bisect
    "import bisect\na = [1, 3, 3, 5]\n[bisect.bisect_left(a, 3), bisect.bisect_right(a, 3), "
    "bisect.bisect(a, 3), bisect.bisect(a, 0), bisect.bisect_left(a, 3, 2), "
    "bisect.bisect_right(a, 3, 0, 2), bisect.bisect_left((1, 2, 3), 2), "
    "bisect.bisect('ace', 'b')]",
    "import bisect\na = [1, 3, 5]\nbisect.insort(a, 4)\nbisect.insort_left(a, 3)\n"
    "bisect.insort_right(a, 0)\na",
    "import bisect\nrows = [('a', 1), ('c', 3)]\nbisect.insort(rows, ('b', 2), "
    "key=lambda r: r[1])\n[rows, bisect.bisect_left(rows, 3, key=lambda r: r[1])]",
    "import bisect, collections\nq = collections.deque([1, 5])\nbisect.insort(q, 3)\nlist(q)",
    # textwrap
    "import textwrap\ntextwrap.wrap('The quick brown fox jumps over the lazy dog', 10)",
    "import textwrap\ntextwrap.fill('a-b-c-d-eeeeeeeeeeee fff', width=5)",
    "import textwrap\ntextwrap.wrap('x' * 25, width=10, initial_indent='> ', "
    "subsequent_indent='  ', break_long_words=True)",
    "import textwrap\ntextwrap.wrap('one\\ttwo three. Four', 8, fix_sentence_endings=True, "
    "tabsize=4)",
    "import textwrap\ntextwrap.wrap('aaaa bbbb cccc dddd', 9, max_lines=2, placeholder=' ~')",
    "import textwrap\ntextwrap.wrap('supercalifragilistic', 5, break_long_words=False)",
    "import textwrap\n[textwrap.dedent('    a\\n      b\\n\\n    c\\n'), "
    "textwrap.dedent('\\ta\\n  b'), textwrap.dedent('  x\\n \\t\\n  y')]",
    "import textwrap\n[textwrap.indent('a\\n\\nb\\n', '> '), "
    "textwrap.indent('a\\nb', '+', lambda line: line.startswith('b'))]",
    "import textwrap\n[textwrap.shorten('Hello  world!', width=12), "
    "textwrap.shorten('Hello  world!', width=11), "
    "textwrap.shorten('a b c d e f', 7, placeholder='..')]",
    # copy
    "import copy\nx = [1, [2, 3], {'k': (4, [5])}]\ny = copy.deepcopy(x)\ny[1].append(9)\n"
    "y[2]['k'][1].append(6)\n[x, y, copy.copy(x)[1] is x[1], copy.deepcopy(x)[1] is x[1]]",
    "import copy\nshared = [1]\nx = [shared, shared]\ny = copy.deepcopy(x)\n"
    "[y[0] is y[1], y[0] is shared]",
    "import copy\nx = [1]\nx.append(x)\ny = copy.deepcopy(x)\n[y[1] is y, y is not x]",
    "import copy\nt = (1, 'a', (2.5, None))\n[copy.deepcopy(t) is t, copy.copy(t) is t, "
    "copy.deepcopy((1, [2])) == (1, [2])]",
    "import copy\ns = {1, 2}\nf = frozenset({(1, 2)})\n[sorted(copy.copy(s)), copy.copy(s) is s,"
    " sorted(copy.deepcopy(f)), copy.copy(f) is f]",
    "import copy, collections\nc = collections.Counter('abca')\n"
    "d = collections.defaultdict(list, {1: [2]})\no = collections.OrderedDict([(2, 'b'), "
    "(1, 'a')])\nq = collections.deque([1, [2]], maxlen=3)\n"
    "c2, d2, o2, q2 = copy.deepcopy([c, d, o, q])\nd2[3].append(4)\nq2[1].append(5)\n"
    "[dict(c2), type(c2) is collections.Counter, dict(d), dict(d2), list(o2.items()), "
    "list(q), list(q2), q2.maxlen, dict(copy.copy(c)), list(copy.copy(q))]",
    "import copy, collections\nP = collections.namedtuple('P', 'x y')\np = P(1, [2])\n"
    "p2 = copy.deepcopy(p)\np2.y.append(3)\n[p, p2, type(p2) is P, p2.x, copy.copy(p) == p]",
    "import copy\nclass Node:\n    def __init__(self, v):\n        self.v = v\n"
    "        self.kids = []\na = Node(1)\na.kids.append(Node(2))\na.kids.append(a)\n"
    "b = copy.deepcopy(a)\nc = copy.copy(a)\n"
    "[b.v, b.kids[0].v, b.kids[1] is b, b is not a, b.kids[0] is not a.kids[0], "
    "c.kids is a.kids, type(b) is Node]",
]


@pytest.mark.parametrize("source", SCRIPTS)
async def test_facades_answer_what_cpython_answers(mode: cm.CodeMode, source: str) -> None:
    run = await mode.run(source)
    assert run.error is None, run.error
    assert run.value == _cpython(source)


def test_every_new_facade_is_importable_and_named() -> None:
    for name in NEW:
        module = facade(name)
        assert repr(module) == f"<sandbox module {name!r}>"
        assert module.exports() and not any(n.startswith("_") for n in module.exports())


def test_no_unguarded_name_is_offered() -> None:
    assert {"setitem", "delitem", "iadd", "attrgetter"} & facade("operator").exports() == {
        "attrgetter"}
    assert "singledispatch" not in facade("functools").exports()
    # the sandbox's own wraps and update_wrapper (copy text only), total_ordering (script
    # classes only) and cached_property (a descriptor of its own: the real one holds a lock)
    assert all(facade("functools").sandbox_getattr(name) is not getattr(functools, name)
               for name in ("wraps", "update_wrapper", "total_ordering", "cached_property"))
    assert not {"TextWrapper", "re"} & facade("textwrap").exports()
    assert not {"Error", "dispatch_table"} & facade("copy").exports()


SENTINEL: Final = {"state": "host"}
"""A host object a script must never reach or change."""


ATTACKS: Final = [
    # (source, error type, limit or message fragment)
    ("import operator\noperator.attrgetter('__class__')(1)", "AttributeError",
     "names starting with '_' are private"),
    ("import operator\noperator.attrgetter('gi_frame')(x for x in [1])", "AttributeError",
     "no accessible attribute 'gi_frame'"),
    ("import operator\noperator.attrgetter('real.__class__.__bases__')(1)", "AttributeError",
     "are private"),
    ("import operator\noperator.attrgetter('sys')(operator)", "AttributeError",
     "has no attribute 'sys' in the sandbox"),
    ("import operator\noperator.methodcaller('format', 1)('{0.__class__}')", "AttributeError",
     "are private"),
    ("import operator\noperator.methodcaller('__reduce_ex__', 2)([])", "AttributeError",
     "are private"),
    ("import operator\noperator.itemgetter(0)(tools)", "TypeError", "takes a tool's name as text"),
    ("import operator\noperator.itemgetter('__class__')(tools)", "AttributeError",
     "tools has no tool '__class__'"),
    ("import functools\nfunctools.partial(getattr, 1, '__class__')()", "AttributeError",
     "are private"),
    ("import functools\ngetattr(functools.partial(len), '__reduce__')", "AttributeError",
     "are private"),
    ("import functools\nfunctools.partial(len).__setstate__", "PreflightError",
     "invalid attribute name"),
    ("import functools\ntype(functools.partial(len))(1, 2, 3)", "TypeError",
     "the first argument must be callable"),
    ("import functools\nk = functools.cmp_to_key(lambda a, b: 0)(1)\ngetattr(k, '__init__')",
     "AttributeError", "are private"),
    ("import functools\nclass P(functools.partial):\n    pass", "TypeError", "cannot subclass"),
    ("import copy\ncopy.deepcopy(tools)", "TypeError", "copies only data"),
    ("import copy, math\ncopy.deepcopy(math)", "TypeError", "copies only data"),
    ("import copy, math\ncopy.copy([math])[0] is math and copy.deepcopy([math.floor])",
     "TypeError", "copies only data"),
    ("import copy\ncopy.deepcopy(x for x in [1])", "TypeError", "copies only data"),
    ("import copy\ncopy.deepcopy([1], {})", "TypeError", "memo argument is not available"),
    ("import functools, operator\nfunctools.reduce(operator.add, range(10**9))",
     "LimitExceeded", "operations"),
    ("import functools\nfunctools.partial(sum, range(10**9))()", "LimitExceeded", "operations"),
    ("import functools\ndef f():\n    return 0\nfunctools.reduce(lambda a, b: a + 1, "
     "iter(f, 1), 0)", "LimitExceeded", "operations"),
    ("import functools, operator, random\nx = list(range(60000))\nrandom.shuffle(x)\n"
     "sorted(x, key=functools.cmp_to_key(operator.sub))", "LimitExceeded", "operations"),
    ("import functools\nt = ()\nfor i in range(40):\n    t = (t, t)\n"
     "functools.cache(len)(t)", "LimitExceeded", "operations"),
    ("import heapq\nt = ()\nfor i in range(40):\n    t = (t, t)\nh = [t, t, t]\n"
     "heapq.heapify(h)", "LimitExceeded", "operations"),
    ("import heapq\nt = ()\nfor i in range(40):\n    t = (t, t)\nh = [t]\n"
     "heapq.heappush(h, t)", "LimitExceeded", "operations"),
    ("import heapq\nt = ()\nfor i in range(40):\n    t = (t, t)\nh = [t, t, t]\n"
     "heapq.heappop(h)", "LimitExceeded", "operations"),
    ("import heapq\nt = ()\nfor i in range(40):\n    t = (t, t)\nlist(heapq.merge([t], [t]))",
     "LimitExceeded", "operations"),
    ("import heapq\nheapq.nlargest(3, range(10**9))", "LimitExceeded", "operations"),
    ("import heapq, itertools\nheapq.nsmallest(3, itertools.count())", "LimitExceeded",
     "operations"),
    ("import heapq\nheapq.heappush((), 1)", "TypeError", "heap argument must be a list"),
    ("import bisect\nt = ()\nfor i in range(40):\n    t = (t, t)\nbisect.bisect([t, t], t)",
     "LimitExceeded", "operations"),
    ("import bisect\nbisect.insort((1, 2), 3)", "TypeError", "cannot be modified"),
    ("import bisect\nbisect.bisect(tools, 1)", "TypeError", "bisect: a must be"),
    ("import textwrap\nlen(textwrap.fill('a' * 10**6, width=1))", "LimitExceeded", "memory"),
    ("import textwrap\nlen(textwrap.fill('a' * 10**5, width=1))", "LimitExceeded", "operations"),
    ("import textwrap\nlen(textwrap.wrap('a ' * 10**5, width=1))", "LimitExceeded", "memory"),
    ("import textwrap\nlen(textwrap.fill('\\t' * 10**4, tabsize=10**6))", "LimitExceeded",
     "memory"),
    ("import textwrap\nlen(textwrap.wrap('a' * 10**4, width=3, subsequent_indent='x' * 10**4))",
     "LimitExceeded", "memory"),
    ("import textwrap\nlen(textwrap.indent('a\\n' * 10**4, 'x' * 10**5))", "LimitExceeded",
     "memory"),
    ("import textwrap\nlen(textwrap.dedent(' ' * 10**6 + 'a'))", "LimitExceeded",
     "operations"),
    ("import textwrap\ntextwrap.wrap(['a'])", "TypeError", "expects a str"),
    ("import copy\nlen(copy.deepcopy([0] * 10**6))", "LimitExceeded", "operations"),
    ("import copy\nx = []\nfor i in range(1000):\n    x = [x]\ncopy.deepcopy(x)",
     "LimitExceeded", "recursion"),
    ("import copy\nt = ()\nfor i in range(40):\n    t = (t, t)\ncopy.deepcopy({t: 1})",
     "LimitExceeded", "operations"),
]


@pytest.mark.parametrize(("source", "error", "expected"), ATTACKS,
                         ids=[f"attack-{i}" for i in range(len(ATTACKS))])
async def test_attacks_through_the_facades_are_refused(
        mode: cm.CodeMode, source: str, error: str, expected: str) -> None:
    before = {name: facade(name).exports() for name in NEW}
    run = await mode.run(source, limits=SMALL)
    assert run.value is None
    assert run.error is not None, source
    assert run.error.type == error, run.error
    if error == "LimitExceeded":
        assert run.error.limit == expected, run.error
    else:
        assert expected in run.error.message, run.error.message
    for text in (run.error.message, run.error.traceback, run.output):
        assert "<module '" not in text and "codemode/" not in text and "/work/" not in text
    # The host is untouched: the facades offer what they offered, the sentinel is intact,
    # and the same executor still answers a plain script.
    assert {name: facade(name).exports() for name in NEW} == before
    assert SENTINEL == {"state": "host"}
    check = await mode.run("import functools, operator\nfunctools.reduce(operator.add, [1, 2])")
    assert (check.error, check.value) == (None, 3)
