"""Per-run work that must not grow with the registry: what a run derives from the tool
paths is made once per SDK and found again by identity (no time is asserted)."""

from __future__ import annotations

import ast
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from codemode.mode.dialects import plan
from codemode.sandbox import InProcessExecutor
from codemode.sandbox.executors import broker
from codemode.sandbox.runtime import toolproxy

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.anyio


def _answer(i: int) -> Callable[[object], int]:
    return lambda args: i


def _registry(n: int) -> cm.ToolRegistry:
    registry = cm.ToolRegistry()
    for i in range(n):
        registry.register(cm.define_tool(name=f"t{i}", execute=_answer(i)))
    return registry


def test_one_tuple_of_paths_per_sdk() -> None:
    registry = _registry(1000)
    mode = cm.CodeMode(registry, executor=InProcessExecutor())
    paths = mode._tool_paths(mode.sdk())
    assert len(paths) == 1000
    assert mode._tool_paths(mode.sdk()) is paths
    registry.register(cm.define_tool(name="late", execute=lambda args: 0))
    again = mode._tool_paths(mode.sdk())
    assert again is not paths and "late" in again


def test_the_path_set_and_the_tree_are_made_once_per_tuple() -> None:
    paths = tuple(f"ns.t{i}" for i in range(1000))
    assert broker._path_set(paths) is broker._path_set(paths)
    assert toolproxy._index(paths) is toolproxy._index(paths)
    equal = tuple(list(paths))  # same contents, another object: a correct set and tree
    assert broker._path_set(equal) == broker._path_set(paths)
    assert toolproxy._index(equal) == toolproxy._index(paths)


async def test_a_run_with_a_thousand_tools_calls_the_right_one() -> None:
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(_registry(1000), executor=executor)
        for _ in range(2):
            result = await mode.run("[await tools.t0(), await tools.t999()]")
            assert result.error is None, result.error
            assert result.value == [0, 999]


class _CountedPaths(dict[str, str]):
    """Tool paths that count how often they are iterated."""

    reads = 0

    def __iter__(self) -> Iterator[str]:
        type(self).reads += 1
        return super().__iter__()

    def items(self) -> Any:
        type(self).reads += 1
        return super().items()


def test_the_dialect_plan_reads_the_registry_once_per_sdk() -> None:
    tools = MappingProxyType(_CountedPaths({f"ns.t{i}": f"ns.t{i}" for i in range(1000)}))
    script = "a = await tools.ns.t0()\nb = await tools.ns.t999(x=a)\n[a, b]\n"
    first = plan(script, ast.parse(script), tools=tools, arguments={}, specs={})
    assert first.problems == []
    before = _CountedPaths.reads
    for i in range(3):
        text = f"{script}# {i}\n"
        again = plan(text, ast.parse(text), tools=tools, arguments={}, specs={})
        assert again.problems == [] and again.prelude.orders == first.prelude.orders
    assert _CountedPaths.reads == before
