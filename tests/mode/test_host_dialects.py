"""Compat round 11: scripts written for other hosts, against tools of realistic shape.

The schemas follow the corpora's (GitHub MCP's ``search_issues`` with enums and a
camelCase ``perPage``, ``push_files`` with an array of objects, ``create_issue`` with an
optional body, a web search answering markdown text). Rows whose dialect means something
in CPython (smolagents' sync bare calls, Anthropic's ``await tool(...)``, Monty's bare
async externals) run next to CPython with the same handlers as plain functions; rows
whose dialect has no CPython meaning (LangChain's ``tool.invoke({...})``, Cloudflare's
``codemode.x({...})``) run next to their canonical script. Value, output and call trace
must be equal.
"""

# ruff: noqa: E501 - the rows are scripts as models write them

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from tests.mode.cpython_side import final_answer, run_in_cpython

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

pytestmark = pytest.mark.anyio

ISSUES = [{"number": n, "title": t, "state": st, "labels": [{"name": x} for x in lb],
           "user": {"login": u}, "comments": c}
          for n, t, st, lb, u, c in (
              (1, "Crash on start", "open", ["bug", "p1"], "ada", 4),
              (2, "Docs typo", "closed", ["docs"], "alan", 0),
              (3, "Slow search", "open", ["perf", "bug"], "grace", 7),
              (4, "Add dark mode", "open", ["feature"], "ada", 2))]


def search_issues(query: str, state: str | None = None, perPage: int = 30,
                  sort: str | None = None) -> dict[str, Any]:
    hits = [i for i in ISSUES if state in (None, i["state"])
            and any(w in i["title"].lower() for w in query.lower().split())]
    if sort == "comments":
        hits.sort(key=lambda i: -i["comments"])
    return {"total_count": len(hits), "items": hits[:perPage]}


def create_issue(owner: str, repo: str, title: str, body: str = "",
                 labels: list[str] | None = None) -> dict[str, Any]:
    return {"number": 100 + len(title), "html_url": f"https://github.com/{owner}/{repo}/issues/{100 + len(title)}",
            "labels": labels or [], "body_chars": len(body)}


def push_files(owner: str, repo: str, branch: str, files: list[dict[str, str]],
               message: str) -> dict[str, Any]:
    return {"ref": f"refs/heads/{branch}", "paths": [f["path"] for f in files],
            "bytes": sum(len(f["content"]) for f in files), "message": message}


def web_search(query: str, max_results: int = 3) -> str:
    return "## Search Results\n\n" + "\n\n".join(
        f"[{query.title()} {i}](https://ex.com/{i})\nAbout {query}: {i * 11} stars." for i in range(1, max_results + 1))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "search_issues": search_issues, "create_issue": create_issue, "push_files": push_files,
    "web_search": web_search}
SCHEMAS: dict[str, dict[str, Any]] = {
    "search_issues": {"properties": {
        "query": {"type": "string", "description": "Search query"},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "perPage": {"type": "number", "minimum": 1, "maximum": 100},
        "sort": {"type": "string", "enum": ["comments", "created", "updated"]}},
        "required": ["query"]},
    "create_issue": {"properties": {
        "owner": {"type": "string"}, "repo": {"type": "string"}, "title": {"type": "string"},
        "body": {"type": "string", "description": "Issue body content (optional)"},
        "labels": {"type": "array", "items": {"type": "string"}}},
        "required": ["owner", "repo", "title"]},
    "push_files": {"properties": {
        "owner": {"type": "string"}, "repo": {"type": "string"}, "branch": {"type": "string"},
        "files": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]}},
        "message": {"type": "string"}},
        "required": ["owner", "repo", "branch", "files", "message"]},
    "web_search": {"properties": {
        "query": {"type": "string"}, "max_results": {"type": "integer", "minimum": 1}},
        "required": ["query"]},
}


def registry() -> cm.ToolRegistry:
    reg = cm.ToolRegistry()
    for name, fn in FUNCTIONS.items():
        def execute(args: Any, ctx: cm.ExecContext, fn: Callable[..., Any] = fn) -> Any:
            return fn(**args)
        reg.register(cm.define_tool(name=name, description=(fn.__doc__ or name), execute=execute,
                                    parameters={"type": "object", **SCHEMAS[name]}))
    return reg


def cpython(script: str, style: str) -> tuple[Any, str]:
    """The row in CPython: bare tool functions sync (``smol``) or async (``async``)."""
    namespace: dict[str, Any] = {"__name__": "__main__", "final_answer": final_answer}
    for name, fn in FUNCTIONS.items():
        if style == "async":
            async def call(*a: Any, fn: Callable[..., Any] = fn, **k: Any) -> Any:
                return fn(*a, **k)
            namespace[name] = call
        else:
            namespace[name] = fn
    return run_in_cpython(script, namespace)


@pytest.fixture(scope="module")
async def mode() -> AsyncIterator[cm.CodeMode]:
    async with cm.InProcessExecutor() as executor:
        yield cm.CodeMode(registry(), executor=executor)


# (name, CPython style, script): value and output as in CPython
CPYTHON_ROWS: list[tuple[str, str, str]] = [
    ("smol_parse_search_text", "smol", r"""
import re
text = web_search(query="rust async runtimes", max_results=3)
stars = [int(s) for s in re.findall(r"(\d+) stars", text)]
links = re.findall(r"\]\((https?://[^)]+)\)", text)
print(f"found {len(links)} links, stars={stars}")
final_answer({"best": links[stars.index(max(stars))], "total": sum(stars)})
"""),
    ("smol_helper_imports_inside", "smol", r"""
def open_bugs(term):
    import collections
    res = search_issues(term, "open")
    return collections.Counter(l["name"] for i in res["items"] for l in i["labels"])

counts = open_bugs("crash slow mode")
for label, n in counts.most_common():
    print(label, n)
final_answer(dict(counts))
"""),
    ("smol_positional_then_create", "smol", r"""
hits = search_issues("search", "open", 5, "comments")
top = hits["items"][0]
issue = create_issue("octo", "app", f"Follow-up: {top['title']}", body=f"See #{top['number']}", labels=["follow-up"])
print(issue["html_url"])
final_answer(issue["number"])
"""),
    ("smol_push_built_files", "smol", r"""
import json
report = {i["number"]: i["title"] for i in search_issues(query="crash docs slow dark")["items"]}
files = [{"path": f"reports/{n}.json", "content": json.dumps({"title": t})} for n, t in sorted(report.items())]
res = push_files(owner="octo", repo="app", branch="reports", files=files, message=f"{len(files)} reports")
print(res["ref"], res["bytes"])
final_answer(res["paths"])
"""),
    ("smol_helper_as_sort_key", "smol", r"""
def related(issue):
    words = issue["title"].lower().split()
    return search_issues(query=" ".join(w for w in words if len(w) > 3))["total_count"] * 10 + issue["comments"]

issues = search_issues(query="crash slow dark docs")["items"]
ranked = sorted(issues, key=related, reverse=True)
issues.sort(key=related)
print([i["number"] for i in issues])
final_answer({"ranked": [i["title"] for i in ranked], "least": min(issues, key=related)["number"]})
"""),
    ("ptc_gather_bare_await", "async", r"""
import asyncio
import json
queries = ["crash", "docs", "dark mode"]
results = await asyncio.gather(*[search_issues(query=q, perPage=2) for q in queries])
by_query = {q: [i["number"] for i in r["items"]] for q, r in zip(queries, results)}
print(json.dumps(by_query, sort_keys=True))
by_query
"""),
    ("ptc_main_gather_users", "async", r"""
import asyncio, json

async def main():
    res = await search_issues(query="crash slow dark typo", sort="comments")
    logins = sorted({i["user"]["login"] for i in res["items"]})
    pages = await asyncio.gather(*(web_search(query=f"{u} github", max_results=1) for u in logins))
    summary = {u: p.splitlines()[2] for u, p in zip(logins, pages)}
    print(json.dumps(summary, indent=1))
    return summary

asyncio.run(main())
"""),
    ("ptc_gather_return_exceptions", "async", r"""
import asyncio
results = await asyncio.gather(search_issues(query="crash"), create_issue(owner="o", repo="r", title="t"), return_exceptions=True)
ok = [type(r).__name__ for r in results]
result = {"kinds": ok, "created": results[1]["number"]}
"""),
    ("monty_await_in_comprehension", "async", r"""
terms = ["crash", "slow", "typo"]
counts = {t: (await search_issues(query=t))["total_count"] for t in terms}
open_titles = [i["title"] for t in terms for i in (await search_issues(query=t, state="open"))["items"]]
result = {"counts": counts, "open": open_titles}
"""),
    ("monty_dict_records", "async", r"""
from dataclasses import dataclass

@dataclass
class Row:
    number: int
    title: str
    hot: bool

res = await search_issues(query="crash slow dark", state="open")
rows = [Row(i["number"], i["title"], i["comments"] > 3) for i in res["items"]]
hot = [r.title for r in rows if r.hot]
print(len(rows), "rows;", len(hot), "hot")
{"hot": hot, "cold": [r.number for r in rows if not r.hot]}
"""),
    ("monty_async_helper_walrus", "async", r"""
async def labels_of(q):
    if (res := await search_issues(query=q))["total_count"] == 0:
        return []
    return sorted({l["name"] for i in res["items"] for l in i["labels"]})

{q: await labels_of(q) for q in ["crash", "nothing here", "dark"]}
"""),
]


@pytest.mark.parametrize(("name", "style", "script"), CPYTHON_ROWS, ids=[r[0] for r in CPYTHON_ROWS])
async def test_host_script_runs_as_in_cpython(mode: cm.CodeMode, name: str, style: str,
                                              script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert (json.loads(json.dumps(run.value)), run.output) == cpython(script, style)


# (name, the dialect, its canonical script): no CPython meaning, compared with the canonical
CANONICAL_ROWS: list[tuple[str, str, str]] = [
    ("langchain_invoke_dict", r"""
res = search_issues.invoke({"query": "crash slow", "state": "open", "sort": "comments"})
print(res["total_count"])
[i["number"] for i in res["items"]]
""", r"""
res = await tools.search_issues(query="crash slow", state="open", sort="comments")
print(res["total_count"])
[i["number"] for i in res["items"]]
"""),
    ("langchain_run_string_and_ainvoke", r"""
import asyncio
text = web_search.run("vector databases")
more = await asyncio.gather(web_search.ainvoke({"query": "faiss", "max_results": 1}), tools.web_search.arun("milvus"))
[text.count("stars"), [m.splitlines()[2] for m in more]]
""", r"""
import asyncio
text = await tools.web_search(query="vector databases")
more = await asyncio.gather(tools.web_search(query="faiss", max_results=1), tools.web_search(query="milvus"))
[text.count("stars"), [m.splitlines()[2] for m in more]]
"""),
    ("langchain_tool_in_helper", r"""
def titles(q):
    return [i["title"] for i in search_issues.invoke({"query": q})["items"]]

result = {q: titles(q) for q in ["crash", "dark"]}
""", r"""
async def titles(q):
    return [i["title"] for i in (await tools.search_issues(query=q))["items"]]

{q: await titles(q) for q in ["crash", "dark"]}
"""),
    ("cloudflare_one_dict", r"""
async def main():
    found = await codemode.search_issues({"query": "crash slow dark", "state": "open", "perPage": 2})
    issue = await codemode.create_issue({"owner": "octo", "repo": "app", "title": "Triage", "body": ", ".join(str(i["number"]) for i in found["items"])})
    return {"created": issue["number"], "from": [i["number"] for i in found["items"]]}
""", r"""
async def main():
    found = await tools.search_issues(query="crash slow dark", state="open", perPage=2)
    issue = await tools.create_issue(owner="octo", repo="app", title="Triage", body=", ".join(str(i["number"]) for i in found["items"]))
    return {"created": issue["number"], "from": [i["number"] for i in found["items"]]}

await main()
"""),
    ("cloudflare_gather_array_of_objects", r"""
import asyncio
results = await asyncio.gather(*[codemode.search_issues({"query": q}) for q in ["crash", "typo"]])
files = [{"path": f"triage/{r['items'][0]['number']}.md", "content": r["items"][0]["title"]} for r in results]
pushed = await codemode.push_files({"owner": "octo", "repo": "app", "branch": "triage", "files": files, "message": "triage"})
pushed
""", r"""
import asyncio
results = await asyncio.gather(*[tools.search_issues(query=q) for q in ["crash", "typo"]])
files = [{"path": f"triage/{r['items'][0]['number']}.md", "content": r["items"][0]["title"]} for r in results]
pushed = await tools.push_files(owner="octo", repo="app", branch="triage", files=files, message="triage")
pushed
"""),
]


def trace(run: cm.ScriptResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.arguments)) for c in run.calls]


@pytest.mark.parametrize(("name", "script", "canonical"), CANONICAL_ROWS,
                         ids=[r[0] for r in CANONICAL_ROWS])
async def test_host_dialect_runs_as_its_canonical_script(mode: cm.CodeMode, name: str,
                                                         script: str, canonical: str) -> None:
    run, expected = await mode.run(script), await mode.run(canonical)
    assert run.error is None, run.error
    assert expected.error is None, expected.error
    assert expected.calls
    assert (run.value, run.output, trace(run)) == (
        expected.value, expected.output, trace(expected))


async def test_langchain_input_keyword_is_the_one_argument(mode: cm.CodeMode) -> None:
    run = await mode.run('r = search_issues.invoke(input={"query": "crash", "state": "open"})\n'
                         'page = web_search.run(tool_input="x", )\n[r["total_count"], page[:2]]')
    assert run.error is None, run.error
    assert run.value == [1, "##"]
    assert trace(run) == [("search_issues", {"query": "crash", "state": "open"}),
                          ("web_search", {"query": "x"})]


@pytest.mark.parametrize("script", [
    'r = await search_issues.ainvoke({"query": "crash", "state": "open"}, config=config)\nr',
    'r = search_issues.invoke({"query": "crash", "state": "open"},\n'
    '    config={"tags": ["t"]}, callbacks=None,\n)\nr',
    'r = search_issues.invoke(config=config, input={"query": "crash", "state": "open"})\nr',
    # not rewritten: the run-time method drops them the same way
    'f = tools.search_issues.ainvoke\n'
    'r = await f({"query": "crash", "state": "open"}, config=config, run_name="x")\nr',
])
async def test_langchain_config_is_ignored_and_the_dict_is_the_arguments(
        mode: cm.CodeMode, script: str) -> None:
    """``t.invoke(input, config=None, **kwargs)``: LangChain's own options are never the
    tool's arguments; before, the dict went to the first parameter and ``config`` was an
    unknown argument (the preflight refused both)."""
    run = await mode.run("config = {'tags': []}\n" + script)
    assert run.error is None, run.error
    assert run.value["total_count"] == 1
    assert trace(run) == [("search_issues", {"query": "crash", "state": "open"})]


async def test_langchain_options_next_to_other_keywords_are_named(mode: cm.CodeMode) -> None:
    run = await mode.run('search_issues.invoke({"query": "x"}, config={}, limit=3)')
    assert run.error is not None and run.calls == ()
    assert "tools.search_issues has no argument 'limit'" in run.error.message


@pytest.mark.parametrize(("script", "value"), [
    ("tools.web_search.description.__class__.__name__", "str"),  # before: "unknown tool"
    ("web_search.name.upper()", "WEB_SEARCH"),
    ("len(tools.search_issues.name.split('_'))", 2),
])
async def test_a_tool_texts_attributes_are_the_texts(mode: cm.CodeMode, script: str,
                                                    value: Any) -> None:
    """A LangChain tool's ``name``/``description`` are texts: what follows them is read
    on the text at run time, not looked up as a tool."""
    run = await mode.run(script)
    assert (run.error, run.value, run.calls) == (None, value, ())


async def test_an_unknown_attribute_after_a_tool_is_still_an_unknown_tool(
        mode: cm.CodeMode) -> None:
    run = await mode.run("tools.web_search.nope.upper()")
    assert run.error is not None and run.calls == ()
    assert "unknown tool tools.web_search.nope.upper" in run.error.message


async def test_a_variable_named_codemode_stays_the_scripts(mode: cm.CodeMode) -> None:
    run = await mode.run('codemode = {"search_issues": 1}\ncodemode["search_issues"]')
    assert (run.error, run.value, run.calls) == (None, 1, ())


_LANGCHAIN_FIX = ("`.{0}()` is a LangChain tool's method; here the tool is called itself: "
                  "`await tools.search_issues(...)` with keyword arguments (a dict of arguments "
                  "goes in as `await tools.search_issues(**args)`)")
_CODEMODE_FIX = ("name 'codemode' is not defined: the tools are `tools` here, called as "
                 "`await tools.<name>(arg=...)` (a dict of arguments goes in as "
                 "`await tools.<name>(**args)`)")


@pytest.mark.parametrize(("script", "message"), [
    ('await tools.search_issues.invoke({"query": "x"})',
     "line 1: unknown tool tools.search_issues.invoke: " + _LANGCHAIN_FIX.format("invoke")),
    ('r = await tools.search_issues.arun({"query": "x"})\nr',
     "line 1: unknown tool tools.search_issues.arun: " + _LANGCHAIN_FIX.format("arun")),
    ('r = await codemode.search_issues({"query": "x"})\nr', "line 1: " + _CODEMODE_FIX),
])
async def test_strict_names_what_to_write_for_other_hosts_tools(
        mode: cm.CodeMode, script: str, message: str) -> None:
    strict = cm.CodeMode(registry(), executor=mode.executor, strict=True)
    run = await strict.run(script)
    assert run.error is not None
    assert run.error.message == f"the script was not run:\n{message}"
    assert run.calls == ()
