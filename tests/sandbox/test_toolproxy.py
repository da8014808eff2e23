"""The ``tools`` proxy: a run makes only what its script reaches (issue #18)."""

from __future__ import annotations

from typing import Any

import pytest

from codemode.sandbox.language.meter import Meter, Tripped
from codemode.sandbox.runtime.toolproxy import ToolFunction, ToolNamespace, build_tools, resolve

PATHS = (*(f"t{i}" for i in range(1000)), "gh.issues.get", "gh.repo", "a", "a.b")


async def _never(path: str, text: str) -> Any:
    raise AssertionError("no call is made here")


def _tools(orders: dict[str, Any] | None = None) -> ToolNamespace:
    return build_tools(PATHS, _never, Meter(operations=10**6, timeout=1.0), 10**6, orders)


def test_a_run_builds_only_the_tools_its_script_reaches() -> None:
    tools = _tools()
    assert tools._made == {}
    first = resolve(tools, "t7")
    assert isinstance(first, ToolFunction) and first is resolve(tools, "t7")
    assert list(tools._made) == ["t7"]
    issues = resolve(tools, "gh.issues")
    assert isinstance(issues, ToolNamespace) and repr(issues) == "<tools gh.issues>"
    assert sorted(tools._made) == ["gh", "t7"]


def test_runs_share_the_names_but_not_the_functions() -> None:
    one, two = _tools(), _tools()
    assert one._children is two._children
    assert resolve(one, "t1") is not resolve(two, "t1")


def test_a_namespace_and_a_tool_of_one_name_keep_the_namespace() -> None:
    assert isinstance(resolve(_tools(), "a"), ToolNamespace)
    assert repr(resolve(_tools(), "a.b")) == "<tool a.b>"


@pytest.mark.parametrize(("orders", "alias_works"), [(None, False), ({}, True)])
def test_sync_aliases_only_with_the_dialects(orders: dict[str, Any] | None,
                                             alias_works: bool) -> None:
    tools = _tools(orders)
    if alias_works:
        assert resolve(tools, "t3_sync") is resolve(tools, "t3")
    else:
        with pytest.raises(AttributeError, match="has no tool 't3_sync'"):
            resolve(tools, "t3_sync")


def test_an_unknown_name_lists_close_matches() -> None:
    with pytest.raises(AttributeError, match=r"tools\.gh has no tool 'rpo'; did you mean 'repo'"):
        resolve(_tools(), "gh.rpo")


def test_a_builtin_named_tool_is_reached_by_its_name_with_the_dialects() -> None:
    paths = ("set_", "set_items", "list_")
    tools = build_tools(paths, _never, Meter(operations=10**6, timeout=1.0), 10**6, {})
    assert repr(resolve(tools, "set")) == "<tool set_>"
    assert repr(resolve(tools, "list")) == "<tool list_>"
    strict = build_tools(paths, _never, Meter(operations=10**6, timeout=1.0), 10**6, None)
    with pytest.raises(AttributeError, match="has no tool 'set'; did you mean 'set_'"):
        resolve(strict, "set")


@pytest.mark.anyio
@pytest.mark.parametrize(("text", "sent"), [("a" * 900, True), ("\U0001F600" * 400, False),
                                            ("é" * 450, True), ("é" * 520, False)])
async def test_arguments_are_capped_in_bytes_not_characters(text: str, sent: bool) -> None:
    # The cap (memory // ARGUMENT_SHARE: 1,000 bytes here) was compared with characters:
    # 400 emoji, 1,600 bytes of UTF-8, went to the host.
    made: list[str] = []

    async def record(path: str, arguments: str) -> Any:
        made.append(arguments)
        return None

    meter = Meter(operations=10**6, timeout=5.0)
    tools = build_tools(PATHS, record, meter, 16 * 1000)
    call = resolve(tools, "t1")
    assert isinstance(call, ToolFunction)
    if sent:
        await call(s=text)
        assert made == [f'{{"s": "{text}"}}']
    else:
        with pytest.raises(Tripped):
            await call(s=text)
        assert made == []
        assert meter.tripped is not None and meter.tripped.limit == "memory"
        assert "bytes of JSON (at most 1000 per call)" in str(meter.tripped)
