"""A script's ``search``/``describe`` arguments are bounded by their schemas: ranking ran on
the host's loop in time the query's distinct words times the tools (a 300,000-word query
held a 200-tool host's loop for 28 s, 40 MB of text for over a minute), so an oversized
query is refused before the handler runs (r38)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from codemode.integrations import discovery
from codemode.integrations.discovery import MAX_NAME, MAX_QUERY, discovery_tools
from codemode.sandbox import InProcessExecutor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _noop(args: Any, ctx: Any) -> str:
    return "ok"


@pytest.fixture
async def mode() -> AsyncIterator[cm.CodeMode]:
    registry = cm.ToolRegistry()
    for i in range(20):
        registry.register(cm.define_tool(
            name=f"widget_{i}", description=f"Does widget thing {i}.",
            parameters={"type": "object", "properties": {"a": {"type": "string"}}},
            execute=_noop))
    async with InProcessExecutor() as executor:
        code_mode = cm.CodeMode(registry, executor=executor)
        _, tools = discovery_tools(code_mode)
        for tool in tools:
            registry.register(tool)
        yield code_mode


@pytest.fixture
def handled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The discovery handlers that ran (the schema refuses before they do)."""
    seen: list[str] = []
    for name in ("search", "describe"):
        original = getattr(discovery.Discovery, name)

        def recording(self: Any, *args: Any, _name: str = name, _f: Any = original,
                      **kwargs: Any) -> Any:
            seen.append(_name)
            return _f(self, *args, **kwargs)

        monkeypatch.setattr(discovery.Discovery, name, recording)
    return seen


@pytest.mark.parametrize(("source", "message"), [
    ("q = ' '.join(['w' + str(i) for i in range(300000)])\n"
     "try:\n    await tools.search(query=q)\nexcept ToolCallError as e:\n    r = e.message\nr",
     "$.query: "),
    ("q = 'aB' * 500001\n"
     "try:\n    await tools.search(query=q)\nexcept ToolCallError as e:\n    r = e.message\nr",
     "$.query: "),
    (f"try:\n    await tools.describe(names=['x' * 100000] + ['y' * {MAX_NAME + 1}] * 49)\n"
     "except ToolCallError as e:\n    r = e.message\nr",
     "$.names[0]: "),
], ids=["many-words", "long-text", "long-names"])
async def test_oversized_discovery_arguments_never_reach_the_handler(
        mode: cm.CodeMode, handled: list[str], source: str, message: str) -> None:
    run = await mode.run(source)
    assert run.error is None, run.error
    assert isinstance(run.value, str), run.value
    assert message in run.value and "is too long" in run.value, run.value[:300]
    assert handled == []


async def test_a_query_at_the_bound_is_answered(mode: cm.CodeMode, handled: list[str]) -> None:
    query = ("widget " * MAX_QUERY)[:MAX_QUERY]
    run = await mode.run(f"r = await tools.search(query={query!r})\n"
                         "[m['tool'] for m in r['matches']]")
    assert run.error is None, run.error
    assert len(run.value) == 5 and all(t.startswith("widget_") for t in run.value), run.value
    assert handled == ["search"]
