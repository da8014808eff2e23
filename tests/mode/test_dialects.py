"""Scripts as models write them (issue #13): each dialect next to its canonical script.

Every row runs both scripts on both executors and compares the value and the call
trace (tool name and arguments, in order). Refusal rows assert the exact message a
model gets; strict rows show the same dialects refused when the tolerance is off.
"""

from __future__ import annotations

import ast
import sys
from typing import TYPE_CHECKING, Any, Final

import anyio
import pytest

import codemode as cm
from codemode.mode.dialects import plan, positional_order
from codemode.sandbox.runtime.prelude import Prelude, attach, detach

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio

ITEMS = {1: "apple", 2: "pear", 3: "plum"}


def build(meetings: dict[str, Any]) -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    @cm.tool
    def search(query: str, limit: int = 10) -> list[dict[str, Any]]:
        """Search items by name."""
        return [{"id": i, "name": n} for i, n in ITEMS.items() if query in n][:limit]

    @cm.tool
    def get_item(id: int) -> dict[str, Any]:
        """One item."""
        if id not in ITEMS:
            raise LookupError(f"no item {id}")
        return {"id": id, "name": ITEMS[id]}

    async def meet(args: Any, ctx: cm.ExecContext) -> str:
        # Returns only once two calls are in flight together: run one at a time, it
        # would never return (the fail_after only keeps a broken run from hanging).
        meetings["started"] += 1
        if meetings["started"] >= 2:
            meetings["event"].set()
        with anyio.fail_after(10):
            await meetings["event"].wait()
        return f"met {args['key']}"

    async def get_sheet(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        return {"sheet": args["sheet_id"], "rows": 3}

    async def page(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        return dict(args)

    async def filter_tool(args: Any, ctx: cm.ExecContext) -> str:
        return "filtered"

    registry.register(search)
    registry.register(get_item)
    registry.register(cm.define_tool(
        name="meet", execute=meet,
        parameters={"type": "object", "properties": {"key": {"type": "string"}},
                    "required": ["key"], "additionalProperties": False}))
    registry.register(cm.define_tool(
        name="get_sheet", namespace="gdrive", execute=get_sheet,
        parameters={"type": "object", "properties": {"sheet_id": {"type": "string"}},
                    "required": ["sheet_id"], "additionalProperties": False}))
    registry.register(cm.define_tool(  # required after optional: no clear positional order
        name="page", execute=page,
        parameters={"type": "object", "properties": {
            "size": {"type": "integer"}, "query": {"type": "string"},
            "cursor": {"type": "string"}},
            "required": ["query", "cursor"], "additionalProperties": False}))
    registry.register(cm.define_tool(
        name="filter", execute=filter_tool,
        parameters={"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"], "additionalProperties": False}))
    async def echo(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        return dict(args)

    # corpus shapes: GitHub MCP's camelCase ``perPage`` beside snake_case ``issue_number``,
    # LiveMCPBench's dashed names, BFCL's dotted names
    for name, props, required in (
            ("list_issues", {"owner": {"type": "string"}, "perPage": {"type": "number"},
                             "issue_number": {"type": "number"}}, ["owner"]),
            ("get-bbc-news", {"category": {"type": "string"}}, []),
            ("weather.get_by_city", {"city": {"type": "string"}, "date": {"type": "string"}},
             ["city", "date"])):
        registry.register(cm.define_tool(
            name=name, execute=echo,
            parameters={"type": "object", "properties": props, "required": required}))
    return registry


@pytest.fixture
def meetings() -> dict[str, Any]:
    return {"started": 0, "event": anyio.Event()}


@pytest.fixture
async def mode(executor: Executor, meetings: dict[str, Any]) -> AsyncIterator[cm.CodeMode]:
    yield cm.CodeMode(build(meetings), executor=executor)


@pytest.fixture
async def strict(executor: Executor, meetings: dict[str, Any]) -> AsyncIterator[cm.CodeMode]:
    yield cm.CodeMode(build(meetings), executor=executor, strict=True)


def trace(run: cm.ScriptResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.arguments)) for c in run.calls]


# (dialect, canonical script, the same script in the dialect, inputs)
ROWS: list[tuple[str, str, str, dict[str, Any] | None]] = [
    ("bare tool names",
     'r = await tools.search(query="p")\n[x["name"] for x in r]',
     'r = await search(query="p")\n[x["name"] for x in r]', None),
    ("bare namespaces",
     'await tools.gdrive.get_sheet(sheet_id="s1")',
     'await gdrive.get_sheet(sheet_id="s1")', None),
    # the tool ``filter`` is ``tools.filter_`` in the SDK (the builtin's name); a script
    # that calls it by its own name reached an empty namespace ("not callable")
    ("a tool named as a builtin, by its wire name",
     'await tools.filter_(query="p")',
     'await tools.filter(query="p")', None),
    ("positional arguments",
     'await tools.search(query="p", limit=1)',
     'await tools.search("p", 1)', None),
    ("positional and keyword arguments",
     'await tools.search(query="p", limit=1)',
     'await search("p", limit=1)', None),
    ("one dict of arguments",
     'await tools.search(query="p", limit=1)',
     'await tools.search({"query": "p", "limit": 1})', None),
    ("one dict of arguments in a variable",
     'await tools.search(query="p", limit=1)',
     'args = {"query": "p", "limit": 1}\nawait tools.search(args)', None),
    ("a variable as the first argument",
     'await tools.search(query="pl")',
     'q = "pl"\nawait tools.search(q)', None),
    ("calls without await",
     'item = await tools.get_item(id=2)\nitem["name"]',
     'item = get_item(2)\nitem["name"]', None),
    ("calls without await in expressions",
     'a = await tools.get_item(id=1)\nb = await tools.get_item(id=3)\na["name"] + b["name"]',
     'get_item(1)["name"] + tools.get_item(id=3)["name"]', None),
    ("calls without await in a loop and a comprehension",
     'out = []\nfor h in await tools.search(query="p"):\n'
     '    out.append((await tools.get_item(id=h["id"]))["name"])\nout',
     'out = [get_item(h["id"])["name"] for h in search("p")]\nout', None),
    ("un-awaited calls handed to asyncio.gather run concurrently",
     'import asyncio\nawait asyncio.gather(tools.meet(key="a"), tools.meet(key="b"))',
     'import asyncio\nawait asyncio.gather(meet("a"), meet("b"))', None),
    ("a list of un-awaited calls, gathered later, runs concurrently",
     'import asyncio\nawait asyncio.gather(*[tools.meet(key=k) for k in "ab"])',
     'tasks = [meet(k) for k in "ab"]\nresults = asyncio.gather(*tasks)\nresults', None),
    ("host inputs as globals",
     'await tools.get_item(id=3)',
     'get_item(item_id)', {"item_id": 3}),
    ("final_answer(x)",
     'r = await tools.get_item(id=1)\nr["name"]',
     'r = get_item(1)\nfinal_answer(r["name"])\nprint("not reached")\nget_item(2)', None),
    ("top-level return",
     'found = None\nfor i in [1, 2, 3]:\n    r = await tools.get_item(id=i)\n'
     '    if r["name"] == "pear":\n        found = r\n        break\nfound',
     'for i in [1, 2, 3]:\n    r = get_item(i)\n    if r["name"] == "pear":\n        return r\n'
     'return None', None),
    ("ending in an assignment",
     'result = await tools.get_item(id=1)\nresult',
     'result = await tools.get_item(id=1)', None),
    ("an async def main() never called",
     'async def main():\n    return await tools.get_item(id=2)\nawait main()',
     'async def main():\n    return await tools.get_item(id=2)\n', None),
    ("asyncio.run(main())",
     'async def main():\n    return await tools.get_item(id=2)\nawait main()',
     'import asyncio\n\nasync def main():\n    return await tools.get_item(id=2)\n\n'
     'asyncio.run(main())\n', None),
    ("if __name__ == '__main__'",
     'async def main():\n    return await tools.get_item(id=2)\nawait main()',
     'import asyncio\n\nasync def main():\n    return await tools.get_item(id=2)\n\n'
     'if __name__ == "__main__":\n    asyncio.run(main())\n', None),
    ("a plain def that calls tools",
     'async def name(i):\n    return (await tools.get_item(id=i))["name"]\n'
     '[await name(i) for i in (1, 3)]',
     'def name(i):\n    return get_item(i)["name"]\n[name(i) for i in (1, 3)]', None),
    ("sum() over calls without await",
     'n = 0\nfor i in (1, 2):\n    n += len((await tools.get_item(id=i))["name"])\nn',
     'sum(len(get_item(i)["name"]) for i in (1, 2))', None),
    ("modules used without import",
     'import json\njson.dumps(await tools.get_item(id=1))',
     'json.dumps(get_item(1))', None),
    ("<tool>_sync aliases",
     'a = await tools.get_item(id=1)\nb = await tools.get_item(id=2)\n[a, b]',
     'a = tools.get_item_sync(id=1)\nb = get_item_sync(2)\n[a, b]', None),
    ("final_answer(answer=x)",
     '(await tools.get_item(id=1))["name"]',
     'final_answer(answer=get_item(1)["name"])', None),
    ("annotated assignment",
     'r = await tools.get_item(id=1)\nr',
     'r: dict = get_item(1)', None),
    ("sum() over a generator with calls that are the whole argument",
     'n = 0\nfor i in (1, 3):\n    n += (await tools.get_item(id=i))["id"]\nn',
     'sum(tools.get_item(id=i)["id"] for i in (1, 3))', None),
    ("e.__class__.__name__",
     'try:\n    await tools.get_item(id=9)\nexcept ToolCallError as e:\n'
     '    out = "ToolCallError"\nout',
     'try:\n    get_item(9)\nexcept Exception as e:\n    out = e.__class__.__name__\nout', None),
    ("tools['wire-name'] without await",
     'r = await tools.get_bbc_news(category="uk")\nr["category"]',
     'r = tools["get-bbc-news"](category="uk")\nr["category"]', None),
    ("tools[name] and getattr(tools, wire name)",
     'a = await tools.get_item(id=1)\nb = await tools.get_bbc_news(category="uk")\n[a, b]',
     'name = "get_item"\na = await tools[name](id=1)\nf = getattr(tools, "get-bbc-news")\n'
     'b = await f(category="uk")\n[a, b]', None),
    ("a dotted wire name under tools",
     'await tools.weather_get_by_city(city="Oslo", date="2024-01-01")',
     'await tools.weather.get_by_city(city="Oslo", date="2024-01-01")', None),
    ("a dotted wire name, bare and without await",
     'w = await tools.weather_get_by_city(city="Oslo", date="2024-01-01")\nw["city"]',
     'w = weather.get_by_city("Oslo", "2024-01-01")\nw["city"]', None),
    ("an MCP client's call by name (mcp.call_tool, session.call_tool(arguments=...))",
     'a = await tools.get_item(id=1)\nb = await tools.search(query="p", limit=1)\n'
     'c = await tools.get_item(id=3)\n[a, b, c]',
     'a = await mcp.call_tool("get_item", {"id": 1})\n'
     'b = await session.call_tool("search", arguments={"query": "p", "limit": 1})\n'
     'args = {"id": 3}\nc = mcp.call_tool("get_item", args)\n[a, b, c]', None),
    ("tools.call_tool by a wire name, gathered",
     'import asyncio\nrs = await asyncio.gather(tools.get_bbc_news(category="uk"), '
     'tools.get_item(id=2))\nrs',
     'import asyncio\nrs = await asyncio.gather(tools.call_tool("get-bbc-news", '
     '{"category": "uk"}), tools.call("get_item", {"id": 2}))\nrs', None),
    ("a result's key named like a dict method, read without a call",
     'p = await tools.page(query="a", cursor="c")\n'
     '[len(p["query"]), p["cursor"], list(p.items()), p.get("size")]',
     'p = await tools.page(query="a", cursor="c")\nx = {"items": p["query"], "keys": p["cursor"]}\n'
     '[len(x.items), x.keys, list(p.items()), p.get("size")]', None),
    ("type(e).__name__ of a failed call",
     'try:\n    await tools.get_item(id=9)\nexcept ToolCallError as e:\n'
     '    out = ["ToolCallError", e.message]\nout',
     'try:\n    get_item(9)\nexcept Exception as e:\n    out = [type(e).__name__, e.message]\nout',
     None),
    # each function is made async only once the one it calls is: as many rounds as
    # functions (before r37 every round re-read every body: 800 of them took 10 s)
    ("a chain of plain functions, the one calling the tool defined last",
     "".join(f"async def f{i}():\n    return await f{i + 1}()\n" for i in range(60))
     + "async def f60():\n    return await tools.get_item(id=2)\nawait f0()",
     "".join(f"def f{i}():\n    return f{i + 1}()\n" for i in range(60))
     + "def f60():\n    return get_item(2)\nf0()", None),
    ("a plain function redefined to call a tool: its callers await the new one",
     "def g():\n    return 1\nasync def h():\n    return await g()\n"
     "async def g():\n    return await tools.get_item(id=1)\nawait h()",
     "def g():\n    return 1\ndef h():\n    return g()\n"
     "def g():\n    return get_item(1)\nh()", None),
    # before: the annotation became '__main__' too, and dropped with it: ``name = = 1``
    ("__name__ read, and in an annotation (never evaluated)",
     'name = 1\n[name, "__main__"]', 'name: __name__ = 1\n[name, __name__]', None),
]


@pytest.mark.parametrize(("dialect", "canonical", "script", "inputs"), ROWS,
                         ids=[row[0] for row in ROWS])
async def test_dialect_matches_canonical(mode: cm.CodeMode, meetings: dict[str, Any],
                                         dialect: str, canonical: str, script: str,
                                         inputs: dict[str, Any] | None) -> None:
    expected = await mode.run(canonical)
    assert expected.error is None, expected.error
    meetings.update(started=0, event=anyio.Event())
    run = await mode.run(script, inputs=inputs)
    assert run.error is None, run.error
    assert run.value == expected.value
    assert trace(run) == trace(expected)
    assert run.output == ""


async def test_canonical_scripts_are_not_rewritten(mode: cm.CodeMode) -> None:
    sdk = mode.sdk()
    specs = {s.name: s for s in mode.visible_specs()}
    import ast

    for _, canonical, _, _ in ROWS:
        found = plan(canonical, ast.parse(canonical), tools=sdk.names.tools,
                     arguments=sdk.names.arguments, specs=specs)
        assert found.source == canonical
        assert found.problems == []


async def test_dialects_are_named(mode: cm.CodeMode) -> None:
    import ast

    sdk = mode.sdk()
    specs = {s.name: s for s in mode.visible_specs()}
    script = 'r = search("p")\nfinal_answer(r)'
    found = plan(script, ast.parse(script), tools=sdk.names.tools,
                 arguments=sdk.names.arguments, specs=specs)
    assert found.dialects == ("bare tool names", "positional arguments", "calls without await")
    assert found.source == 'r = (await search("p"))\nfinal_answer(r)'
    assert found.prelude.names == {"search": "search"}
    assert found.prelude.orders == {"search": ("query", "limit")}


# (script, the whole preflight message after "the script was not run:\n")
REFUSED: list[tuple[str, str]] = [
    ('await tools.page("a", "b")',
     "line 1: tools.page() needs keyword arguments: its parameters have no clear order; "
     "call it as `await tools.page(size=..., query=..., cursor=...)`"),
    ('await tools.search("a", 1, 2)',
     "line 1: tools.search() takes at most 2 positional argument(s) (query, limit); got 3: "
     "call it as `await tools.search(query=..., limit=...)`"),
    ('search = await search(query="a")\nsearch',
     "line 1: `search` is a tool and also a variable of this script: call the tool as "
     "`await tools.search(query=...)`, or rename the variable"),
    ('filter(query="a")',
     "line 1: `filter` here is the builtin, not the tool: call the tool as "
     "`await tools.filter_(query=...)`"),
    ('fs = {"name": lambda i: get_item(i)["name"], "same": lambda i: i}\nfs["name"](1)',
     "line 1: a tool call inside a lambda cannot be awaited: use a loop or an `async def` "
     "and `await` the call"),
    ('r = await tools.get_item(id=1)\nreuslt = r["name"]\nresult',
     "line 3: name 'result' is not defined; did you mean `reuslt`?"),
    ('await tools.get_item(id=server_id)',
     "line 1: name 'server_id' is not defined: assign it before use (this run has no "
     "host inputs)"),
    ("open('/etc/passwd')",
     "line 1: `open` is not available in the sandbox (no files, processes or code from "
     "text: use the tools)"),
    ('def name(i):\n    return get_item(i)["name"]\nf = name\n[f(1), f(2)]',
     "line 1: name() calls tools, so it must be `async def name(...)` and each call "
     "awaited; it is used as a value at line 3, where it cannot be awaited: call it in "
     "a loop, e.g. `[await name(x) for x in xs]`"),
    ('def names():\n    for i in (1, 2):\n        yield get_item(i)\ng = names()\nh = g\nlist(h)',
     "line 5: names() is a generator that calls tools, so it runs as an async generator, "
     "read only where it is called: iterate the call itself (`for x in names(...):`, "
     "`[x for x in names(...)]`, `list(names(...))`); it cannot be stored, returned, "
     "passed to another function or sent values (`.send()`/`.throw()`)"),
    ("await tools.get_item('one')",
     "line 1: tools.get_item(id=...): 'one' is not of type 'integer'"),
    ("get_item()",
     "line 1: tools.get_item is missing required argument(s): id"),
    # an MCP client's call by name whose result the script reads as an MCP result: the
    # refusal says how this host calls the tool and what it returns
    ('r = await tools.call_tool("get_item", {"id": 1})\nr.content[0].text',
     "line 1: unknown tool tools.call_tool; call the tool itself: `await tools.get_item(...)` "
     "with keyword arguments (a dict of arguments goes in as `await tools.get_item(**args)`); "
     "it returns the tool's data itself (a dict, list or text), not an MCP result: there is "
     "no `.content[0].text` to read"),
    ('r = await mcp.call_tool("get_item", {"id": 1})\nr.structuredContent',
     "line 1: name 'mcp' is not defined: call the tool itself, `await tools.get_item(id=...)` "
     "(a dict of arguments goes in as `await tools.get_item(**args)`); it returns the tool's "
     "data itself (a dict, list or text), not an MCP result: there is no `.content[0].text` "
     "to read"),
    # by name, only a registered tool is reached: anything else is not rewritten
    ('await mcp.call_tool("__class__", {})',
     "line 1: name 'mcp' is not defined: assign it before use (this run has no host inputs)"),
    ('await tools.call_tool("get_item.__class__", {})', "line 1: unknown tool tools.call_tool"),
    ('await tools.call("_run", {})', "line 1: unknown tool tools.call"),
    # ``mcp`` also used otherwise: nothing is rewritten
    ('tools_list = await mcp.list_tools()\nr = await mcp.call_tool("get_item", {"id": 1})',
     "line 1: name 'mcp' is not defined: call the tool itself, `await tools.get_item(id=...)` "
     "(a dict of arguments goes in as `await tools.get_item(**args)`); it returns the tool's "
     "data itself (a dict, list or text), not an MCP result: there is no `.content[0].text` "
     "to read"),
]


@pytest.mark.parametrize(("script", "message"), REFUSED, ids=[r[1][8:50] for r in REFUSED])
async def test_refused_before_any_call(mode: cm.CodeMode, script: str, message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError"
    assert run.error.message == "the script was not run:\n" + message
    assert run.calls == ()


# (the script, the arguments the handler gets): the trace keeps the script's spelling
RESPELLED: list[tuple[str, dict[str, Any]]] = [
    ('list_issues(owner="a", per_page=2, issueNumber=3)',
     {"owner": "a", "perPage": 2, "issue_number": 3}),
    ('await tools.list_issues({"owner": "a", "per_page": 2, "issueNumber": 3})',
     {"owner": "a", "perPage": 2, "issue_number": 3}),
    ('p = {"owner": "a", "PER_PAGE": 2, "issueNumber": 3}\nawait tools.list_issues(**p)',
     {"owner": "a", "perPage": 2, "issue_number": 3}),
    ('r = await tools.search({"Query": "p", "LIMIT": 1})\n[x["name"] for x in r]', ["apple"]),
]


@pytest.mark.parametrize(("script", "value"), RESPELLED)
async def test_argument_names_in_another_case_style_are_the_parameters(
        mode: cm.CodeMode, script: str, value: Any) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.value == value


@pytest.mark.parametrize(("script", "error", "fragment"), [
    ('tools["__class__"]', "AttributeError", "tools has no tool '__class__'"),
    ('tools["_run"]', "AttributeError", "tools has no tool '_run'"),
    ('tools["search.__class__"]', "AttributeError", "tools has no tool 'search.__class__'"),
    ('tools[0]', "TypeError", "tools[...] takes a tool's name as text, not int"),
    ('w = getattr(tools, "weather")\nw["__class__"]', "AttributeError",
     "tools.weather has no tool '__class__'"),
    ('getattr(tools, "weather")["get_by_city.__call__"]', "AttributeError",
     "tools.weather has no tool 'get_by_city.__call__'"),
])
async def test_tools_by_name_reach_only_tools(mode: cm.CodeMode, script: str, error: str,
                                              fragment: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.error.type == error, run.error
    assert fragment in run.error.message
    assert run.calls == ()


async def test_a_respelled_argument_keeps_what_the_call_also_gave(mode: cm.CodeMode) -> None:
    run = await mode.run('p = {"owner": "a", "perPage": 1, "per_page": 2}\n'
                         'await tools.list_issues(**p)')
    assert run.error is None, run.error
    assert run.value == {"owner": "a", "perPage": 1, "per_page": 2}


async def test_strict_names_the_sdk_spelling_of_a_builtin_named_tool(
        strict: cm.CodeMode) -> None:
    run = await strict.run('await tools.filter(query="p")')
    assert run.error is not None and "filter_" in run.error.message, run.error
    assert trace(run) == []


async def test_strict_refuses_tools_by_name(strict: cm.CodeMode) -> None:
    run = await strict.run('await tools["get-bbc-news"](category="uk")')
    assert run.error is not None
    assert run.error.message == "write `tools.get_bbc_news` instead of `tools['get-bbc-news']`"
    run = await strict.run('await tools.list_issues(owner="a", per_page=2)')
    assert run.error is not None and run.error.type == "PreflightError"
    assert "has no argument 'per_page'; did you mean perPage" in run.error.message


async def test_unbound_name_after_calls_runs_none_of_them(mode: cm.CodeMode) -> None:
    script = ("for i in (1, 2, 3):\n    await tools.get_item(id=i)\n"
              "summary = {'n': 3}\nsumary['n']")
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError"
    assert run.error.message == ("the script was not run:\nline 4: name 'sumary' is not "
                                 "defined; did you mean `summary`?")
    assert run.calls == ()


async def test_undefined_names_get_suggestions_within_cpythons_limits(
        mode: cm.CodeMode) -> None:
    """``did you mean`` for the first 5 undefined names, among at most 750 names (difflib
    is Python: 4 000 undefined names each compared with 4 000 defined ones took 94 s)."""
    few = "".join(f"total{i} = {i}\n" for i in range(7)) + "".join(
        f"totl{i}\n" for i in range(7))
    hints = [p.message for p in mode.check(few)]
    assert hints[:5] == [f"name 'totl{i}' is not defined; did you mean `total{i}`?"
                         for i in range(5)]
    assert all("did you mean" not in hint for hint in hints[5:]) and len(hints) == 7
    many = "".join(f"total{i} = {i}\n" for i in range(800)) + "totl1\n"
    assert [p.message for p in mode.check(many)] == [
        "name 'totl1' is not defined: assign it before use (this run has no host inputs)"]


@pytest.mark.parametrize(("script", "unbound"), [
    ("x = gone if False else 1", []),
    ("x = 1 if 0 else gone", ["gone"]),
    ("x = 1 if True else gone", []),
    ("if False:\n    gone()\nelse:\n    late()", ["late"]),
    ("if '':\n    gone()\nelif 1:\n    x = 2\nelse:\n    never()", []),
    ("while 0:\n    gone()\nelse:\n    late()", ["late"]),
    ("while True:\n    break\nelse:\n    gone()", []),
    ("x = True or gone\ny = 0 and gone\nz = None or late", ["late"]),
    ("x = gone and False", ["gone"]),
    ("flag = False\nx = late if flag else 1", ["late"]),  # a flag may change: no literal
    ("if not True:\n    late()", ["late"]),
])
async def test_a_name_only_where_a_literal_test_never_goes_is_not_unbound(
        mode: cm.CodeMode, script: str, unbound: list[str]) -> None:
    """CPython never reads a name a constant test rules out; any other place still counts."""
    assert [p.message.split("'")[1] for p in mode.check(script)] == unbound


def _steps(source: str) -> int:
    """The calls one plan of ``source`` makes, C functions (``isinstance``, ``len`` …) and
    Python frames (a generator expression's every step): the planner's work, counted
    without a clock (the plan finds no unbound ``x``)."""
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    tree = ast.parse(source)
    sys.setprofile(profile)
    try:
        found = plan(source, tree, tools={}, arguments={}, specs={})
    finally:
        sys.setprofile(None)
    assert [p.message for p in found.problems if "'x'" in p.message] == []
    return calls


@pytest.mark.parametrize("script", [
    "if 0:\n    y = {reads}\n",
    "y = True or ({reads})\n",
    "y = ({reads}) if False else 1\n",
])
def test_reads_a_literal_test_rules_out_cost_one_step_each(script: str) -> None:
    """Each ruled-out read was walked up afresh, its ``or`` scanned up to itself: twice the
    reads, four times the steps (16,000 reads under ``if 0:``, 80 kB: 7 s of the host's
    CPU for one check). Now twice the reads cost about twice the steps."""
    few, many = (_steps(script.format(reads=" or ".join(["x"] * count)))
                 for count in (400, 800))
    assert many <= 2.5 * few, (few, many)


DATACLASS_QUERIES: Final = """from dataclasses import dataclass, fields
@dataclass
class C:
    a: int
    def __post_init__(self):
        self.b = await tools.echo(x=1)
def f({args}):
    pass
{queries}1
"""


def test_dataclass_queries_ask_about_their_import_once() -> None:
    """Each ``fields(Cls)`` of a class whose ``__post_init__`` calls tools asked whether
    ``fields`` is bound by its import alone, walking every import, argument and handler:
    twice of each, four times the steps (4,000 of each, 67 kB: 2.1 s of the host's CPU for
    one check). Now about twice."""
    few, many = (_steps(DATACLASS_QUERIES.format(
        args=", ".join(f"a{i}" for i in range(count)), queries="fields(C)\n" * count))
        for count in (300, 600))
    assert many <= 2.5 * few, (few, many)


async def test_inputs_named_in_the_unbound_message_and_prompt(mode: cm.CodeMode) -> None:
    run = await mode.run("get_item(item)", inputs={"item_id": 1})
    assert run.error is not None
    assert run.error.message == ("the script was not run:\nline 1: name 'item' is not "
                                 "defined; did you mean `item_id`?")
    assert "  item_id: int = 1\n" in mode.prompt(inputs={"item_id": 1})
    with pytest.raises(ValueError, match="cannot be a script global"):
        await mode.run("1", inputs={"tools": 1})
    with pytest.raises(ValueError, match="must be JSON data"):
        await mode.run("1", inputs={"x": object()})


# (canonical script, dialect script, the message the strict preflight gives for it)
STRICT: list[tuple[str, str, str]] = [
    ('await tools.search(query="p")', 'await search(query="p")',
     "line 1: name 'search' is not defined: tools are called as "
     "`await tools.search(query=...)`"),
    ('await tools.search(query="p")', 'await tools.search("p")',
     "line 1: tools.search takes keyword arguments only (accepts: limit, query)"),
    ('await tools.search(query="p")', 'tools.search(query="p")',
     "line 1: the result of tools.search(...) is discarded and the call never runs: "
     "add await"),
    ('r = await tools.get_item(id=1)\nr', 'r = await tools.get_item(id=1)\nfinal_answer(r)',
     "line 2: final_answer() is not available: end the script with the value as its "
     "last expression"),
    ('r = await tools.get_item(id=1)\nr', 'r = await tools.get_item(id=1)\nreturn r',
     "line 2: a top-level `return` is not allowed: end the script with the value as its "
     "last expression"),
    ('r = await tools.get_item(id=1)\nr', 'r = await tools.get_item(id=1)',
     "line 1: the script has no result: it ends by assigning `r`; add `r` as the last line"),
    ('async def main():\n    return 1\nawait main()', 'async def main():\n    return 1\n',
     "line 1: main() is defined but never called, so nothing runs: add `await main()` as "
     "the last line"),
    ('async def main():\n    return 1\nawait main()',
     'import asyncio\nasync def main():\n    return 1\nasyncio.run(main())',
     "line 4: asyncio.run() is not available (the script already runs in an event loop): "
     "write `await main()`"),
    ('await tools.get_item(id=1)', 'await mcp.call_tool("get_item", {"id": 1})',
     "line 1: name 'mcp' is not defined: call the tool itself, `await tools.get_item(id=...)` "
     "(a dict of arguments goes in as `await tools.get_item(**args)`); it returns the tool's "
     "data itself (a dict, list or text), not an MCP result: there is no `.content[0].text` "
     "to read"),
    ('import json\njson.dumps([1])', 'json.dumps([1])',
     "line 1: name 'json' is not defined: add `import json` at the top of the script"),
]


@pytest.mark.parametrize(("canonical", "script", "message"), STRICT,
                         ids=[r[2][8:48] for r in STRICT])
async def test_strict_refuses_the_dialects(strict: cm.CodeMode, canonical: str, script: str,
                                           message: str) -> None:
    ok = await strict.run(canonical)
    assert ok.error is None, ok.error
    run = await strict.run(script)
    assert run.error is not None and run.error.type == "PreflightError"
    assert run.error.message == "the script was not run:\n" + message
    assert run.calls == ()


async def test_strict_names_a_dict_key_shadowed_by_a_method(strict: cm.CodeMode) -> None:
    run = await strict.run('p = await tools.page(query="a", cursor="c")\n'
                           'x = {"items": [p["query"]]}\n[len(x["items"]), len(x.items())]')
    assert run.error is None and run.value == [1, 1]
    run = await strict.run('x = {"items": [1, 2]}\n[n for n in x.items]')
    assert run.error is not None and (run.error.type, run.error.line) == ("AttributeError", 2)
    assert run.error.message == (
        "`.items` without a call is the dict method items(), but this dict has a key "
        "'items': read the key with ['items'] (or call the method: .items())")


@pytest.mark.parametrize("script", [
    'counts = {"get": 3, "post": 5, "put": 1}\nmax(counts, key=counts.get)',
    'counts = {"get": 3, "post": 5}\nsorted(counts, key=counts.get, reverse=True)',
    'd = {"get": 1, "pop": 2}\nlist(map(d.get, ["pop", "get", "x"]))',
    'd = {"get": 0, "copy": 2}\nlist(filter(d.get, ["get", "copy"]))',
    'd = {"setdefault": 1}\nf = d.setdefault\nf("n", 2)\nsorted(d)',
], ids=["max-key", "sorted-key", "map", "filter", "bound-name"])
async def test_a_dict_method_handed_on_as_a_callback_stays_the_method(
        mode: cm.CodeMode, script: str) -> None:
    """A word count's key ``"get"`` does not turn ``key=counts.get`` into a number."""
    *body, last = script.split("\n")
    namespace: dict[str, Any] = {}
    exec("\n".join(body), namespace)  # the CPython side of the comparison
    expected = eval(last, namespace)
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.value == expected


async def test_strict_runtime_keeps_keyword_only(strict: cm.CodeMode) -> None:
    run = await strict.run("f = tools.search\nawait f('p')", inputs={"unused": 1})
    assert run.error is not None and run.error.type == "TypeError"
    assert run.error.message == ("tools.search() takes keyword arguments only, e.g. "
                                 "tools.search(name=value); got 1 positional")


async def test_runtime_positional_messages(mode: cm.CodeMode) -> None:
    """A tool the preflight cannot follow (``(tools.page,)[0]``) is checked when called;
    ``f = tools.page`` is the tool under another name, checked before the run."""
    found = await mode.run("f = tools.page\nawait f('a', 'b')")
    assert found.error is not None and found.error.type == "PreflightError"
    assert "tools.page() needs keyword arguments" in found.error.message
    run = await mode.run("f = (tools.page,)[0]\nawait f('a', 'b')")
    assert run.error is not None and run.error.type == "TypeError"
    assert run.error.message == ("tools.page() needs keyword arguments: its parameters have "
                                 "no clear order; call it as `await tools.page(name=value)`")
    run = await mode.run("f = (tools.search,)[0]\nawait f('a', query='b')")
    assert run.error is not None
    assert run.error.message == "tools.search() got multiple values for argument 'query'"
    run = await mode.run("f = (tools.search,)[0]\nawait f('a', 1, 2)")
    assert run.error is not None
    assert run.error.message == ("tools.search() takes at most 2 positional argument(s) "
                                 "(query, limit); got 3: call it as "
                                 "`await tools.search(query=..., limit=...)`")


def test_positional_order() -> None:
    spec = cm.define_tool(name="t", execute=lambda a, c: None, parameters={
        "type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]}).spec
    assert positional_order(spec, {"a": "a", "b": "b"}) == ("a", "b")
    spec = cm.define_tool(name="t", execute=lambda a, c: None, parameters={
        "type": "object", "properties": {"b": {}, "a": {}}, "required": ["a"]}).spec
    assert positional_order(spec, {"a": "a", "b": "b"}) == ("a",)
    assert positional_order(None, {}) is None


def test_prelude_round_trip_and_forgery() -> None:
    prelude = Prelude(inputs={"x": [1]}, modules=("json",), names={"s": "search"},
                      orders={"search": ("query",), "page": None})
    found, source = detach(attach("x\n", prelude))
    assert found == prelude and source == "x\n"
    found, source = detach('#codemode:prelude {"inputs": {"_secret": 1, "ok": 2}}\nok')
    assert found is not None and dict(found.inputs) == {"ok": 2} and source == "ok"
    assert detach("#codemode:prelude not json\n1") == (None, "1")
    assert detach("1") == (None, "1")


async def test_a_dict_with_a_content_key_is_data(executor: Executor) -> None:
    registry = cm.ToolRegistry()

    async def doc(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        return {"content": "hello", "meta": {"id": 1}}

    async def wrapped(args: Any, ctx: cm.ExecContext) -> cm.Envelope:
        return cm.Envelope("visible", meta={"id": 2})

    for name, handler in (("doc", doc), ("wrapped", wrapped)):
        registry.register(cm.define_tool(name=name, execute=handler, parameters={
            "type": "object", "properties": {}, "additionalProperties": False}))
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run('d = await tools.doc()\n[d["content"], d["meta"]["id"], '
                         'await tools.wrapped()]')
    assert run.error is None, run.error
    assert run.value == ["hello", 1, "visible"]


BY_NAME_REACH: list[tuple[str, str, str, list[str]]] = [
    # (script, error type, message fragment, tools called): red-team round 22
    ('await tools.call("hidden", {})', "PreflightError", "unknown tool tools.call", []),
    ('await mcp.call_tool("hidden", {})', "PreflightError", "name 'mcp' is not defined", []),
    ('await mcp.call_tool("run_code", {"code": "1"})', "PreflightError",
     "name 'mcp' is not defined", []),
    ('await mcp.call_tool("get_item", {"id": "x"})', "ToolCallError",
     "'x' is not of type 'integer'", ["get_item"]),
    ('await mcp.call_tool("get_item", {"id": 1, "__class__": 2})', "ToolCallError",
     "'__class__' was unexpected", ["get_item"]),
    ('r = await mcp.call_tool("get_item", {"id": 1})\nmcp = 3\nr', "NameError",
     "name 'mcp' is not defined", []),
    ('r = await mcp.call_tool("get_item", {"id": 1})\ndel mcp\nr', "NameError",
     "name 'mcp' is not defined", []),
    ('def f():\n    global mcp\n    mcp = 1\nawait mcp.call_tool("get_item", {"id": 1})',
     "NameError", "name 'mcp' is not defined", []),
    ('[await mcp.call_tool("get_item", {"id": 1}) for mcp in [1]]', "AttributeError",
     "'int' object has no attribute 'call_tool'", []),
    ('match 1:\n    case mcp:\n        pass\nawait mcp.call_tool("get_item", {"id": 1})',
     "AttributeError", "'int' object has no attribute 'call_tool'", []),
    ('try:\n    1/0\nexcept Exception as mcp:\n    await mcp.call_tool("get_item", {"id": 1})',
     "AttributeError", "no accessible attribute 'call_tool'", []),
    ('class mcp:\n    pass\nawait mcp.call_tool("get_item", {"id": 1})', "AttributeError",
     "type object 'mcp' has no attribute 'call_tool'", []),  # CPython's message
    ('r = await mcp.call_tool("get_item", mcp.call_tool("get_item", {"id": 1}))',
     "ToolCallError", "'name' was unexpected", ["get_item", "get_item"]),
]


@pytest.mark.parametrize(("script", "error", "fragment", "called"), BY_NAME_REACH)
async def test_a_call_by_name_reaches_what_tools_x_reaches(
        executor: Executor, meetings: dict[str, Any], script: str, error: str, fragment: str,
        called: list[str]) -> None:
    """The rewrite makes ``tools.<registered path>(**args)`` of a name the script never
    binds: a hidden tool, ``run_code`` and anything the script rebinds stay out of reach,
    arguments are validated, each call is made once."""
    registry = build(meetings)
    registry.register(cm.define_tool(name="hidden", parameters={}, execute=lambda a: "no",
                                     visible_in_code=False))
    run = await cm.CodeMode(registry, executor=executor).run(script)
    assert run.error is not None and run.error.type == error, run.error
    assert fragment in run.error.message
    assert [c.name for c in run.calls] == called


def test_a_long_attribute_chain_is_not_walked_at_every_link(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """r38: the plan read every link of ``a.a.a….b`` down to its base (quadratic: 990
    links, a 2,000-character script, held the host's loop 0.5 s; 2,900 links, 5 s); a link
    deeper than any tool path is now passed over, and the answer is the same (a tool read
    inside a chain, ``tools.x.name.split``: tests/mode/test_host_dialects.py)."""
    from codemode.mode import dialects

    walked: list[int] = []
    original = dialects._root

    def counting(node: Any) -> Any:
        walked.append(1)
        return original(node)

    monkeypatch.setattr(dialects, "_root", counting)
    registry = cm.ToolRegistry()

    async def execute(args: Any, ctx: cm.ExecContext) -> Any:
        return "T"

    registry.register(cm.define_tool(name="gdrive.get_sheet", execute=execute,
                                     parameters={"type": "object"}))
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor())
    problems = mode.check("a = 1\nx = " + "a." * 990 + "b")
    assert [p.message for p in problems] == ["the script is nested too deeply to compile"]
    assert len(walked) < 10, len(walked)
