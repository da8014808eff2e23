"""Sync generators that call tools (smolagents-style pagination), run as in CPython.

The sandbox makes such a generator an async generator and its uses the async forms;
each row runs on both executors and in CPython with the tool as a plain function: the
value, the printed output and the tool calls (arguments, in order) must be equal, so
laziness (``break``, the first item only, ``next``, ``any``/``all`` stopping early,
``zip`` stopping at its shorter input, ``islice`` at its stop, ``chain`` reading one
iterable after the other) makes the same calls. Uses no rewrite can
follow are refused before any call, with what to write.
"""

# ruff: noqa: E501 - the rows are scripts as models write them

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from tests.mode.cpython_side import run_in_cpython

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


def search_issues(repo: str, page: int = 1) -> dict[str, Any]:
    """Issues of a repository, two a page, two pages."""
    items = [{"title": f"{repo}#{page}.{i}", "number": page * 10 + i} for i in range(2)]
    return {"items": items if page <= 2 else []}


@pytest.fixture
async def mode(executor: Executor) -> AsyncIterator[cm.CodeMode]:
    registry = cm.ToolRegistry()
    registry.register(cm.tool(search_issues))
    yield cm.CodeMode(registry, executor=executor)


def cpython(script: str) -> tuple[Any, str, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    def logged(**arguments: Any) -> dict[str, Any]:
        calls.append(arguments)  # as the sandbox's trace: the arguments given
        return search_issues(**arguments)
    value, output = run_in_cpython(script, {"search_issues": logged})
    return value, output, calls


PAGES = '''
def all_issues(repo):
    page = 1
    while True:
        batch = search_issues(repo=repo, page=page)
        if not batch["items"]:
            return
        yield from batch["items"]
        page += 1
'''

# (name, script): value, output and calls as in CPython
ROWS: list[tuple[str, str]] = [
    ("list_comprehension", PAGES + '[i["title"] for i in all_issues("octo/cat")]'),
    ("refusal_fixes_run_enumerate_zip_islice_any_all", PAGES + '''
i = 0
for x in all_issues("e"):
    print(i, x["number"])
    i += 1
pairs = list(zip(list(all_issues("z")), "ab"))
items = []
for x in all_issues("s"):
    items.append(x["number"])
    if len(items) == 3:
        break
found = False
for x in all_issues("a"):
    if x["number"] > 10:
        found = True
        break
ok = True
for x in all_issues("l"):
    if not x["number"] < 12:
        ok = False
        break
[len(pairs), items, found, ok]'''),
    ("for_loop_prints", PAGES + 'for issue in all_issues("octo/dog"):\n'
                                '    print(issue["number"])\n"done"'),
    ("break_stops_the_calls", PAGES + 'for first in all_issues("x"):\n    break\nfirst'),
    ("loop_in_a_function", PAGES + '''
def count(repo):
    n = 0
    for issue in all_issues(repo):
        n += 1
        if issue["number"] == 20:
            return n
    return -1
[count("a"), count("b")]'''),
    ("builtins_read_to_the_end", PAGES + '''
[list(all_issues("a"))[1]["number"], sum(i["number"] for i in all_issues("b")),
 "-".join(str(i["number"]) for i in all_issues("c")),
 sorted(all_issues("d"), key=lambda i: -i["number"])[0]["title"],
 len(set(i["number"] % 2 for i in all_issues("e"))), len(dict((i["title"], 1) for i in all_issues("f"))),
 max(i["number"] for i in all_issues("g")), len(tuple(all_issues("h")))]'''),
    ("set_and_dict_comprehensions", PAGES + '''
[sorted({i["number"] for i in all_issues("a")}), {i["title"]: i["number"] for i in all_issues("b")}]'''),
    ("nested_comprehension", PAGES + '''
[i["number"] for r in ["a", "b"] for i in all_issues(r) if i["number"] > 10]'''),
    ("yield_from_a_generator_that_calls_tools", PAGES + '''
def numbers(repo):
    yield from all_issues(repo)
    yield {"number": -1}

def evens(repo):
    for i in numbers(repo):
        if i["number"] % 2 == 0:
            yield i["number"]

[n for n in evens("z")]'''),
    ("yield_from_a_plain_generator", '''
def digits(n):
    yield from str(n)

def pages(repo):
    for page in (1, 2, 3):
        yield from digits(len(search_issues(repo=repo, page=page)["items"]))  # counts

list(pages("q"))'''),
    ("recursion_closure_for_else_and_calls_in_arguments", '''
def all_issues(repo):
    page = 1
    while True:
        try:
            batch = search_issues(repo=repo, page=page)
        except Exception:
            return
        if not batch["items"]:
            return
        for it in batch["items"]:
            yield it
        page += 1

def walk(depth):
    yield depth
    if depth < 2:
        n = len(search_issues(repo=f"d{depth}")["items"])
        for _ in range(n):
            yield from walk(depth + 1)  # recurse

def outer(prefix):
    def inner(r):
        yield from all_issues(prefix + r)
    return [i["number"] for i in inner("x")]

a = sum(len(search_issues(repo=i["title"])["items"]) for i in all_issues("a"))
b = [i["number"] for i in all_issues(search_issues(repo="k")["items"][0]["title"])]
c = list(walk(0))
d = outer("p/")
for i in all_issues("e"):
    if i["number"] > 10:
        break
else:
    i = None
[a, b, c, d, i]'''),
    ("used_in_a_method", '''
def all_issues(repo):
    yield from search_issues(repo=repo)["items"]

class Report:
    def titles(self):
        return [i["title"] for i in all_issues("a")]

Report().titles()'''),
    ("take_two_then_stop", PAGES + '''
got = []
for i in all_issues("t"):
    got.append(i["number"])
    if len(got) == 3:
        break
got'''),
    ("next_any_all_stop_early", PAGES + '''
first = next(all_issues("n"))
none = next(all_issues("d"), "dflt")
hit = any(i["number"] > 10 for i in all_issues("a"))
every = all(i["number"] < 12 for i in all_issues("b"))
some = any(all_issues("c"))
print(first["title"], none["number"], hit, every, some)
[first["number"], hit, every, some]'''),
    ("held_generator_read_in_steps", PAGES + '''
g = all_issues("h")
head = next(g)
print("head", head["number"])
rest = [i["number"] for i in g]
tail = next(g, None)
[head["title"], rest, tail]'''),
    ("generator_expression_of_calls_read_lazily", '''
repos = ["a", "b", "c", "d"]
hit = any(search_issues(repo=r)["items"][0]["number"] > 9 for r in repos)
every = all(search_issues(repo=r, page=3)["items"] for r in repos)
first = next(r for r in repos if search_issues(repo=r)["items"][1]["title"].startswith("c"))
none = next((r for r in repos if not search_issues(repo=r)["items"]), None)
for page in (search_issues(repo=r, page=2) for r in repos):
    print(page["items"][0]["title"])
    if page["items"][0]["title"].startswith("b"):
        break
[hit, every, first, none]'''),
    ("enumerate_and_zip_in_loops", PAGES + '''
for n, i in enumerate(all_issues("e"), start=1):
    print(n, i["number"])
    if n == 3:
        break
pairs = [f"{label}={i['number']}" for label, i in zip("ab", all_issues("z"))]
labels = {k: i["title"] for k, i in zip(range(10), all_issues("y"))}
counted = {n: i["number"] for n, i in enumerate(all_issues("c"))}
[n, pairs, labels, counted]'''),
    ("zip_islice_chain_read_in_cpython_order", PAGES + '''
import itertools
from itertools import chain, islice
first = [(i["number"], k) for i, k in zip(all_issues("z"), "ab")]
both = {a["number"]: b["title"] for a, b in zip(all_issues("p"), all_issues("q"))}
for i, label in zip(all_issues("f"), ["only"]):
    print(label, i["title"])
three = list(itertools.islice(all_issues("i"), 3))
none = list(islice(all_issues("n"), 0))
stepped = [i["number"] for i in islice(all_issues("s"), 1, None, 2)]
joined = [i["number"] for i in chain(all_issues("a"), [{"number": 0}], all_issues("b"))]
print(sorted(x["number"] for x in itertools.chain(all_issues("c"), [])))
[first, both, three, none, stepped, joined]'''),
    ("next_of_a_generator_expression_over_one", PAGES + '''
found = next(i["number"] for i in all_issues("n") if i["number"] > 10)
missing = next((i for i in all_issues("m") if i["number"] > 99), "none")
class Board:
    def __init__(self, repo):
        self.repo = repo
    def issues(self):
        for page in (1, 2, 3):
            yield from search_issues(repo=self.repo, page=page)["items"]
board = Board("b")
titles = [i["title"] for i in board.issues()]
late = next((i["title"] for i in board.issues() if i["number"] >= 20), None)
[found, missing, titles, late]'''),
]


@pytest.mark.parametrize(("name", "script"), ROWS, ids=[r[0] for r in ROWS])
async def test_a_tool_calling_generator_runs_as_in_cpython(mode: cm.CodeMode, name: str,
                                                           script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    calls = [dict(c.arguments) for c in run.calls]
    assert (json.loads(json.dumps(run.value)), run.output, calls) == cpython(script)


STORED = ("all_issues() is a generator that calls tools, so it runs as an async generator, "
          "read only where it is called: iterate the call itself (`for x in "
          "all_issues(...):`, `[x for x in all_issues(...)]`, `list(all_issues(...))`); it "
          "cannot be stored, returned, passed to another function or sent values "
          "(`.send()`/`.throw()`)")


@pytest.mark.parametrize(("script", "message"), [
    (PAGES + 'try:\n    next(all_issues("x"))\nexcept StopIteration:\n    pass',
     "line 11: all_issues() is a generator that calls tools, so it runs as an async "
     "generator, which `next()` reads as `await anext(...)`: its end raises "
     "StopAsyncIteration, not the StopIteration this script catches: give next() a "
     "default, `next(all_issues(...), None)`"),
    (PAGES + 'def f():\n    g = all_issues("x")\n    return next(g)\nf()', f"line 11: {STORED}"),
    (PAGES + 'g = all_issues("x")\ng.send(None)', f"line 11: {STORED}"),
    (PAGES + 'len(list(enumerate(all_issues("x"))))',
     "line 10: all_issues() is a generator that calls tools, so it runs as an async "
     "generator, which enumerate() cannot read: keep the count yourself: `i = 0`, then "
     "`for x in all_issues(...):` whose body ends with `i += 1`"),
    (PAGES + 'for n, (i, s) in enumerate(zip(all_issues("x"), "ab")):\n    print(n)',
     "line 10: all_issues() is a generator that calls tools, so it runs as an async "
     "generator, which zip() cannot read: read it into a list first, "
     "`zip(list(all_issues(...)), other)`, or loop over it and take the other items with "
     "`next(other_iterator)`"),
    (PAGES + 'import itertools\nfew = itertools.islice(all_issues("x"), 3)\nlist(few)',
     "line 11: all_issues() is a generator that calls tools, so it runs as an async "
     "generator, which islice() cannot read: take the items in a loop that stops: "
     "`items = []`, then `for x in all_issues(...):` with `items.append(x)` and "
     "`if len(items) == n: break`"),
    (PAGES + 'any(map(bool, all_issues("y")))', f"line 10: {STORED}"),
    (PAGES + 'f = lambda r: [i for i in all_issues(r)]\nf("x")',
     "line 10: all_issues() is a generator that calls tools, so it is read with `async "
     "for`, which a lambda cannot hold: use a `def`"),
    ('def total(repo):\n    n = yield from search_issues(repo=repo)["items"]\n'
     'list(total("x"))',
     "line 2: total() is a generator that calls tools, so `yield from` becomes a loop: "
     "write it on a line of its own as `for x in ...: yield x` (its value is not "
     "available)"),
    ('def items(repo):\n    yield from search_issues(repo=repo)["items"]\n    return 3\n'
     'list(items("x"))',
     "line 3: items() is a generator that calls tools, so it runs as an async generator, "
     "which cannot `return` a value: end it with a bare `return` (yield the value first if "
     "it is needed)"),
])
async def test_uses_no_rewrite_can_follow_are_refused_before_any_call(
        mode: cm.CodeMode, script: str, message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None
    assert run.error.message == f"the script was not run:\n{message}"
    assert not run.calls  # refused before the first tool call
