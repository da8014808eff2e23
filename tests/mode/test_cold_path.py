"""A new script's preflight parses it once (issue #18): the dialect plan, the preflight
and the compiler share one tree when no dialect rewrote the text."""

from __future__ import annotations

import ast
from typing import Any

import pytest

import codemode as cm
from codemode.sandbox import InProcessExecutor
from codemode.sandbox.language.compile import cached_script

_unique = iter(range(10**9))


def _registry() -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    async def echo(args: Any, ctx: cm.ExecContext) -> Any:
        return args["i"]

    registry.register(cm.define_tool(name="echo", execute=echo, parameters={
        "type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"],
        "additionalProperties": False}))
    return registry


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources ``ast.parse`` is called with from now on."""
    seen: list[str] = []
    parse = ast.parse

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(source)
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return seen


def test_check_parses_a_canonical_script_once(parses: list[str]) -> None:
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    mode.sdk()
    script = f"x = await tools.echo(i=1)\ny = [x * i for i in range(3)]\ny\n# {next(_unique)}"
    parses.clear()
    assert mode.check(script) == []
    assert parses == [script]
    assert cached_script(script) is not None  # compiled from that tree


def test_a_rewritten_script_is_compiled_from_its_rewritten_text(parses: list[str]) -> None:
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    mode.sdk()
    script = f"x = echo(1)\nx\n# {next(_unique)}"  # bare name, positional, no await
    parses.clear()
    assert mode.check(script) == []
    assert parses[0] == script and len(parses) == 2 and parses[1] != script
    assert cached_script(parses[1]) is not None


async def test_a_script_refused_by_the_policy_is_refused_from_the_shared_tree() -> None:
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(_registry(), executor=executor)
        result = await mode.run(f"().__class__.__bases__\n# {next(_unique)}")
    assert result.error is not None and result.error.type == "PreflightError"
    assert "__class__" in result.error.message
