"""What the broker skips on the per-call and per-run paths, and what it still guards:
results a callback declares fresh are handed over uncopied, everything else is copied;
the run's tool-path set is found by the tuple's identity, never by its contents alone."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

import codemode as cm
from codemode.dispatch.frozen import thaw
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor
from codemode.sandbox.executors.broker import INTERNAL_ERROR, CallBroker
from codemode.sandbox.limits import Limits

pytestmark = pytest.mark.anyio


class Plain:
    """A callback that returns a value it keeps (the broker must copy it)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    async def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.value


class Fresh(Plain):
    fresh_results: ClassVar[bool] = True


class Claims(Plain):
    fresh_results: ClassVar[str] = "yes"  # truthy, but not the flag: still copied


async def test_a_fresh_result_is_handed_over_as_is() -> None:
    value = {"rows": [1, 2]}
    reply = await CallBroker(Fresh(value), Limits(), ("t",)).answer_json("t", "{}")
    assert reply["ok"] is value


@pytest.mark.parametrize("callback", [Plain, Claims])
async def test_any_other_result_is_copied(callback: type[Plain]) -> None:
    value = {"rows": [1, 2]}
    broker = CallBroker(callback(value), Limits(), ("t",))
    for reply in (await broker.answer_json("t", "{}"), await broker.answer("t", {})):
        assert reply == {"ok": value}
        assert reply["ok"] is not value and reply["ok"]["rows"] is not value["rows"]


async def test_a_result_that_is_not_json_is_still_refused_without_the_flag() -> None:
    broker = CallBroker(Claims({"s": {1, 2}}), Limits(), ("t",))
    reply = await broker.answer_json("t", "{}")
    assert reply == {"error": {"tool": "t", "message": INTERNAL_ERROR, "path": None}}


async def test_the_path_set_follows_the_tuple_not_a_stale_copy() -> None:
    first = ("a", "b")
    second = tuple(["a", "b", "c"])  # equal prefix, another object, another set
    for paths, allowed in ((first, "b"), (second, "c"), (first, "b")):
        broker = CallBroker(Plain(1), Limits(), paths)
        assert await broker.answer_json(allowed, "{}") == {"ok": 1}
    refused = await CallBroker(Plain(1), Limits(), first).answer_json("c", "{}")
    assert refused["error"]["message"] == "no such tool in this run"


@pytest.fixture(scope="module", params=["inprocess", "pool"])
async def executor(request: pytest.FixtureRequest) -> Any:
    impl = InProcessExecutor() if request.param == "inprocess" else WorkerPoolExecutor(size=1)
    async with impl:
        yield impl


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def test_a_script_never_holds_the_host_objects_a_tool_returned(
        executor: cm.Executor) -> None:
    """The bridge's results skip the broker's copy: what the script mutates must still be
    its own copy, on both executors (the host's list and dict are not reached)."""
    kept = {"items": [1, 2], "inner": {"n": 1}}
    registry = cm.ToolRegistry()
    seen: list[cm.ToolResult] = []
    registry.on_result(seen.append)

    async def hand_out(args: Any, ctx: cm.ExecContext) -> Any:
        return kept

    registry.register(cm.define_tool(name="hand_out", execute=hand_out))
    mode = cm.CodeMode(registry, executor=executor)
    result = await mode.run(
        "a = await tools.hand_out()\n"
        "a['items'].append(3)\n"
        "a['inner']['n'] = 99\n"
        "a['new'] = True\n"
        "b = await tools.hand_out()\n"
        "[a, b]\n")
    assert result.error is None, result.error
    assert result.value == [{"items": [1, 2, 3], "inner": {"n": 99}, "new": True},
                            {"items": [1, 2], "inner": {"n": 1}}]
    assert kept == {"items": [1, 2], "inner": {"n": 1}}
    assert [thaw(r.structured) for r in seen] == [kept, kept]  # observers' view, untouched


async def test_a_run_sees_tools_added_and_removed_between_runs(executor: cm.Executor) -> None:
    """One tuple of tool paths per SDK: a registry change makes the next run's set anew."""
    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="one", execute=lambda args: 1))
    mode = cm.CodeMode(registry, executor=executor)
    assert (await mode.run("await tools.one()")).value == 1
    handle = registry.register(cm.define_tool(name="two", execute=lambda args: 2))
    assert (await mode.run("await tools.two()")).value == 2
    handle.dispose()
    gone = await mode.run("await tools.two()")
    assert gone.error is not None and "two" in gone.error.message
    assert (await mode.run("await tools.one()")).value == 1
