"""The preflight reads the dialect plan's one walk (issue #18): by node type (statements,
calls, attribute chains) it finds the same problems, in the same order, as over the whole
node list, strict or not."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from script_literals import script_literals

import codemode as cm
from codemode.mode.dialects import plan
from codemode.mode.preflight import check_script


def _registry() -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    async def execute(args: Any, ctx: cm.ExecContext) -> Any:
        return 1

    for name, props, required in (("echo", {"i": {"type": "integer"}}, ["i"]),
                                  ("search", {"query": {"type": "string"},
                                              "limit": {"type": "integer"}}, ["query"]),
                                  ("gdrive.get_sheet", {"id": {"type": "string"}}, ["id"])):
        registry.register(cm.define_tool(name=name, execute=execute, parameters={
            "type": "object", "properties": props, "required": required,
            "additionalProperties": False}))
    return registry


SAME_PLACE = [
    "tools.echo(q=1)",  # a discarded call (strict) and its missing argument, both at 1:1
    "tools.nope.deeper(1)",  # a discarded call and an unknown tool
    "tools.echo(i=tools.nope(x=1))(2)",
    "for i in range(3):\n    tools.echo(x=i)\n    tools.gdrive.nope(id='a')",
    "x = [tools.echo(q=i) for i in tools.search(limit='a')]",
]


def _corpus() -> list[str]:
    found = dict.fromkeys(SAME_PLACE)
    found.update(dict.fromkeys(script_literals("mode/test_preflight.py",
                                               "mode/test_dialects.py")))
    return list(found)


CORPUS = _corpus()


@pytest.mark.parametrize("strict", [False, True])
def test_the_preflight_by_node_type_finds_what_the_node_list_gives(strict: bool) -> None:
    mode = cm.CodeMode(_registry(), executor=cm.InProcessExecutor())
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    names = {"tools": sdk.names.tools, "arguments": sdk.names.arguments, "specs": specs}
    with_problems = several = 0
    for source in CORPUS:
        tree = ast.parse(source)
        try:
            found = plan(source, tree, strict=strict, **names)
        except RecursionError:
            continue
        shared: dict[str, Any] = {"tree": tree, "tool_of": found.tool_of,
                                  "orders": None if strict else found.prelude.orders,
                                  "parents": found.parents}
        listed = check_script(source, nodes=found.nodes, **shared, **names)
        by_type = check_script(source, kinds=found.kinds, **shared, **names)
        assert by_type == listed, source
        with_problems += bool(listed)
        several += len(listed) > 1
    assert with_problems > 40 and several > 5


def test_problems_at_one_place_keep_their_order() -> None:
    mode = cm.CodeMode(_registry(), executor=cm.InProcessExecutor(), strict=True)
    problems = mode.check("tools.echo(q=1)")
    assert [(p.line, p.column) for p in problems] == [(1, 1), (1, 1), (1, 12)]
    assert "discarded" in problems[0].message and "missing" in problems[1].message
