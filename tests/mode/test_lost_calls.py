"""Tool calls reached through a value (a list or dict of tools, ``getattr(tools, name)``,
``a if c else b``, a loop over such a table) are made, as CPython makes them.

Such a call names no tool, so the rewrite used not to await it: ``fs[0](x=1)`` as a
statement made no call and the run ended as if it had. Now the rewrite awaits calls of
those forms, and any call still made and never awaited fails the run with an error that
names it, its line and what to write. Each row runs on both executors and in CPython with
the tools as plain functions: value, output and calls (in order) must be equal; each
refusal row asserts that the tool was never reached and that the error says so.
"""

# ruff: noqa: E501 - the rows are scripts as models write them

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from tests.mode.cpython_side import run_in_cpython

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


def lookup(key: str) -> dict[str, Any]:
    """The record of a key."""
    return {"key": key, "size": len(key)}


def count(key: str) -> int:
    """How long a key is."""
    return len(key)


@pytest.fixture
async def mode(executor: Executor) -> AsyncIterator[cm.CodeMode]:
    registry = cm.ToolRegistry()
    registry.register(cm.tool(lookup))
    registry.register(cm.tool(count))
    yield cm.CodeMode(registry, executor=executor)


def cpython(script: str) -> tuple[Any, str, list[tuple[str, dict[str, Any]]]]:
    calls: list[tuple[str, dict[str, Any]]] = []

    def logged(name: str, func: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            arguments = dict(inspect.signature(func).bind(*args, **kwargs).arguments)
            calls.append((name, arguments))  # as the sandbox's trace: by parameter name
            return func(**arguments)
        return call

    tools = type("Tools", (), {"lookup": staticmethod(logged("lookup", lookup)),
                               "count": staticmethod(logged("count", count))})()
    value, output = run_in_cpython(script, {"tools": tools, "lookup": tools.lookup,
                                            "count": tools.count})
    return value, output, calls


# (name, script): value, output and calls as in CPython
ROWS: list[tuple[str, str]] = [
    ("list_item_as_a_statement", 'fs = [tools.lookup]\nfs[0](key="a")\n"done"'),
    ("dict_item_as_a_statement", 'd = {"f": tools.count}\nd["f"](key="abc")\n"done"'),
    ("getattr_as_a_statement", 'getattr(tools, "count")(key="ab")\n"done"'),
    ("conditional_callee", 'c = len("x") > 3\n(tools.lookup if c else tools.count)(key="xy")\n"done"'),
    ("list_item_value_printed", 'fs = [tools.lookup]\nx = fs[0](key="p")\nprint(x)\nx["size"]'),
    ("dict_of_tools_in_a_loop", '''
handlers = {"l": lookup, "c": tools.count}
out = {}
for name, fn in handlers.items():
    out[name] = fn(key=name * 3)
out'''),
    ("loop_over_a_list_of_tools", '''
steps = [tools.count, tools.lookup]
results = []
for step in steps:
    results.append(step(key="ab"))
for step in steps:
    step(key="zzz")
results'''),
    ("comprehension_over_tools", 'fs = (tools.count, count)\n[f(key=k) for f in fs for k in ["a", "bb"]]'),
    ("dispatch_by_name_in_a_function", '''
def run(name, key):
    return getattr(tools, name)(key=key)

[run("count", "abcd"), run("lookup", "q")["key"]]'''),
    ("map_over_a_tool", 'list(map(tools.count, ["a", "bb"])) + list(map(count, ["ccc"]))'),
    ("table_inside_a_function", '''
import asyncio
async def main():
    steps = {"n": tools.count, "r": lookup}
    steps["n"](key="abc")
    return [steps[k](key=k) for k in sorted(steps)]
asyncio.run(main())'''),
    ("dict_keys_iterated", 'd = {"a": tools.count, "b": tools.lookup}\nfor k in d:\n    d[k](key=k)\nsorted(d)'),
]


@pytest.mark.parametrize(("name", "script"), ROWS, ids=[r[0] for r in ROWS])
async def test_calls_through_values_run_as_in_cpython(mode: cm.CodeMode, name: str,
                                                      script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    value, output, calls = cpython(script)
    assert (run.value, run.output) == (value, output)
    assert [(c.name, dict(c.arguments)) for c in run.calls] == calls


# (name, script, the call the error names, the line): the rewrite cannot tell these are
# tool calls; the run fails naming the call, and no tool ran
LOST: list[tuple[str, str, str, int]] = [
    ("table_built_by_append", 'fs = []\nfs.append(tools.lookup)\nfs[0](key="a")\n"done"',
     "tools.lookup(key=...) (line 3: `fs[0](key=\"a\")`) was never awaited, so the tool was not called.", 3),
    ("value_never_used", 'pick = {}\npick["x"] = tools.count\ny = pick["x"](key="b")\n"done"',
     "tools.count(key=...) (line 3: `y = pick[\"x\"](key=\"b\")`) was never awaited", 3),
    ("own_async_def_never_awaited", 'async def fetch(k):\n    return await tools.lookup(key=k)\nops = {"f": fetch}\nops["f"]("a")\n"done"',
     "fetch() (line 4: `ops[\"f\"](\"a\")`) was never awaited, so its code never ran.", 4),
    ("many_lost", 'fs = []\nfs.append(tools.count)\nfor i in range(5):\n    fs[0](key=str(i))\n1',
     "tools.count(key=...) (line 4: `fs[0](key=str(i))`) was never awaited, so the tool was not called; 4 more call(s) were never awaited either.", 4),
]


@pytest.mark.parametrize(("name", "script", "message", "line"), LOST, ids=[r[0] for r in LOST])
async def test_a_call_never_awaited_fails_the_run_naming_it(
        mode: cm.CodeMode, name: str, script: str, message: str, line: int) -> None:
    run = await mode.run(script)
    assert run.calls == ()  # no tool was reached
    assert run.error is not None and run.error.type == "RuntimeError"
    assert message in run.error.message and "await" in run.error.message
    assert run.error.line == line
    assert run.value is None


async def test_a_task_the_script_cancels_is_no_lost_call(mode: cm.CodeMode) -> None:
    # the script itself decided the call is not made: no error, as in asyncio
    run = await mode.run('import asyncio\nt = asyncio.create_task(tools.count(key="a"))\n'
                         't.cancel()\ntry:\n    await t\nexcept asyncio.CancelledError:\n'
                         '    r = "cancelled"\nr')
    assert run.error is None, run.error
    assert (run.value, run.calls) == ("cancelled", ())
