"""The dialect plan's shortcuts (issue #18) change nothing: passes skipped when the node-type
index shows they can find nothing, and positional orders remembered per tool spec, give
the plan and preflight findings every pass and a fresh order give, over the dialect,
preflight and model-script tests' scripts and the compat corpora, strict or not."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from script_literals import script_literals

import codemode as cm
from codemode.mode import dialects
from codemode.mode.dialects import plan, positional_order
from codemode.mode.preflight import check_script
from codemode.sandbox import InProcessExecutor
from tests.mode.compat_harness import corpus_rows, other_hosts_mode

TEST_FILES = ("mode/test_dialects.py", "mode/test_preflight.py", "mode/test_model_idioms.py",
              "mode/test_host_dialects.py", "mode/test_sync_generators.py",
              "mode/test_model_scripts.py", "mode/test_lost_calls.py",
              "mode/test_corpus_other_hosts.py")
MODEL_SCRIPTS = list(dict.fromkeys(row["script"] for round_ in range(18, 24)
                                   for rows in corpus_rows(f"compat{round_}") for row in rows))
"""The compat corpora: scripts as models write them for other hosts."""
GATES = [
    # what each skip looks for, where nothing else in the script would run the pass
    'import functools\ndef fetch(symbol):\n    return tools.get_stock_info(symbol=symbol)\n'
    'get = functools.partial(fetch, "AAPL")\nget()',
    'prices = {"a": lambda s: tools.get_stock_info(symbol=s)}\nprices["a"]("X")',
    'steps = [tools.get_watchlist, tools.get_stock_info]\nfor step in steps[:1]:\n    step()',
    'name: __name__ = 1\nprint(__name__)',  # (an annotation is never read)
    'def attempt(fn):\n    try:\n        return fn()\n    except Exception:\n'
    '        return None\nattempt(lambda: get_watchlist())',
]
CORPUS = list(dict.fromkeys([*GATES, *MODEL_SCRIPTS, *script_literals(*TEST_FILES)]))
TOOLS = {
    # the tools the test files' scripts name (the compat corpora's come with their mode)
    "search": ({"query": "string", "limit": "integer"}, ["query"]),
    "get_item": ({"id": "integer"}, ["id"]), "meet": ({"key": "string"}, ["key"]),
    "gdrive.get_sheet": ({"sheet_id": "string"}, ["sheet_id"]),
    "page": ({"size": "integer", "query": "string", "cursor": "string"}, ["query", "cursor"]),
    "filter": ({"query": "string"}, ["query"]), "weather.get_by_city": (
        {"city": "string", "date": "string"}, ["city", "date"]),
    "list_issues": ({"owner": "string", "perPage": "number"}, ["owner"]),
    "get-bbc-news": ({"category": "string"}, []), "lookup": ({"key": "string"}, ["key"]),
    "count": ({"key": "string"}, ["key"]), "get_weather": ({"city": "string"}, ["city"]),
    "get_user": ({"id": "integer"}, ["id"]), "search_issues": ({"query": "string"}, []),
    "get_issue": ({"number": "integer"}, ["number"]), "search-issues": ({"q": "string"}, []),
    "update_labels": ({"number": "integer", "labels": "array"}, ["number"]),
    "log": ({"text": "string"}, ["text"]), "send_message": ({"text": "string"}, ["text"]),
}


def _mode() -> cm.CodeMode:
    mode = other_hosts_mode(InProcessExecutor())

    async def echo(args: Any, ctx: cm.ExecContext) -> Any:
        return dict(args)

    for name, (props, required) in TOOLS.items():
        mode.registry.register(cm.define_tool(name=name, execute=echo, parameters={
            "type": "object", "properties": {k: {"type": t} for k, t in props.items()},
            "required": required}))
    return mode


def _plans(mode: cm.CodeMode, scripts: list[str], strict: bool) -> list[Any]:
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    out: list[Any] = []
    for source in scripts:
        tree = ast.parse(source)
        try:
            found = plan(source, tree, tools=sdk.names.tools, arguments=sdk.names.arguments,
                         specs=specs, strict=strict, inputs={"limit": 3})
        except RecursionError:
            continue
        checked = check_script(source, tools=sdk.names.tools, arguments=sdk.names.arguments,
                               specs=specs, tree=tree, tool_of=found.tool_of,
                               orders=None if strict else found.prelude.orders,
                               nodes=found.nodes, parents=found.parents, kinds=found.kinds)
        out.append((source, found.source, found.prelude, found.problems, found.dialects,
                    found.appended, checked))
    return out


@pytest.mark.parametrize("strict", [False, True])
def test_the_plan_with_skips_is_the_plan_with_every_pass(
        strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    mode = _mode()
    scripts = MODEL_SCRIPTS if strict else CORPUS  # strict: most passes do not run at all
    skipped = _plans(mode, scripts, strict)
    monkeypatch.setattr(dialects._Planner, "skips", False)
    monkeypatch.setattr(dialects, "_order_of", positional_order)
    full = _plans(mode, scripts, strict)
    assert len(full) > (500 if strict else 2000)
    for shortcut, every in zip(skipped, full, strict=True):
        assert shortcut == every, shortcut[0]


def test_the_plan_walk_is_the_node_visitors(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's walk (methods cached per node type, only the fields that may hold a
    node) visits what ``ast.NodeVisitor``'s does, in the same order."""
    mode = _mode()
    fast = _plans(mode, CORPUS, False)
    for name in ("visit", "generic_visit", "visit_Constant"):
        monkeypatch.setattr(dialects._Planner, name, getattr(ast.NodeVisitor, name))
    stdlib = _plans(mode, CORPUS, False)
    assert len(fast) > 2000 and sum(found[1] != found[0] for found in fast) > 500
    for ours, theirs in zip(fast, stdlib, strict=True):
        assert ours == theirs, ours[0]


def _tool(order: list[str]) -> cm.Tool:
    async def echo(args: Any, ctx: cm.ExecContext) -> Any:
        return list(args)

    return cm.define_tool(name="pair", execute=echo, parameters={
        "type": "object", "properties": {name: {"type": "integer"} for name in order},
        "required": order, "additionalProperties": False})


async def test_a_changed_tool_gets_its_new_positional_order() -> None:
    registry = cm.ToolRegistry()
    handle = registry.register(_tool(["a", "b"]))
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(registry, executor=executor)
        first = await mode.run("await tools.pair(1, 2)")
        again = await mode.run("await tools.pair(3, 4)")
        handle.dispose()
        registry.register(_tool(["b", "a"]))
        changed = await mode.run("await tools.pair(5, 6)")
    assert (first.value, again.value, changed.value) == (["a", "b"], ["a", "b"], ["b", "a"])
