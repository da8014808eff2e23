"""CallBroker: the host-side gate. Refused calls never reach the host callback."""

from __future__ import annotations

import json
import math
import threading
from typing import Any

import anyio
import pytest

from codemode.errors import ToolCallError
from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.replies import RUN_ENDED


class Host:
    """Records what reached it; ``gate`` holds calls until it is set."""

    def __init__(self, result: Any = "ok") -> None:
        self.calls: list[tuple[str, Any]] = []
        self.result = result
        self.gate: anyio.Event | None = None
        self.entered = anyio.Event()

    async def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls.append((name, arguments))
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        return self.result


def _error(reply: dict[str, Any]) -> tuple[str, str]:
    assert set(reply) == {"error"}, reply
    return reply["error"]["tool"], reply["error"]["message"]


async def test_every_entry_refuses_calls_after_close() -> None:
    host = Host()
    broker = CallBroker(host, Limits(), tool_paths=["echo"])
    assert (await broker.answer("echo", {"i": 1})) == {"ok": "ok"}
    broker.close()
    assert broker.closed
    assert _error(await broker.answer("echo", {"i": 2})) == ("echo", RUN_ENDED)
    assert _error(await broker.answer_json("echo", '{"i": 3}')) == ("echo", RUN_ENDED)
    frame = await broker.answer_frame(9, "echo", {"i": 4})
    assert RUN_ENDED.encode() in frame and b'"reply",9' in frame.replace(b" ", b"")
    with pytest.raises(ToolCallError, match="the run has ended"):
        await broker.call("echo", {"i": 5})
    assert host.calls == [("echo", {"i": 1})]
    assert [(r.arguments, r.ok) for r in broker.records] == [({"i": 1}, True)]


async def test_a_call_waiting_for_a_slot_when_the_run_ends_is_refused_and_traced() -> None:
    host = Host()
    host.gate = anyio.Event()
    broker = CallBroker(host, Limits(concurrency=1), tool_paths=["t"])
    replies: dict[str, Any] = {}

    async def one(tag: str) -> None:
        replies[tag] = await broker.answer("t", {"tag": tag})

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "first")
        await host.entered.wait()
        tg.start_soon(one, "second")
        await anyio.wait_all_tasks_blocked()  # the second waits for the only slot
        broker.close()
        host.gate.set()
    assert replies["first"] == {"ok": "ok"}
    assert _error(replies["second"]) == ("t", RUN_ENDED)
    assert host.calls == [("t", {"tag": "first"})]
    assert [(r.arguments["tag"], r.ok, r.error) for r in broker.records] == [
        ("first", True, None), ("second", False, RUN_ENDED)]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param({"x": {1, 2}}, "arguments are not JSON data", id="set"),
        pytest.param({"x": math.nan}, "arguments are not JSON data", id="nan"),
        pytest.param({"x": object()}, "arguments are not JSON data", id="object"),
        pytest.param([1, 2], "arguments must be a JSON object", id="list"),
        pytest.param("x", "arguments must be a JSON object", id="text"),
    ],
)
async def test_in_process_arguments_that_are_not_a_json_object_never_reach_the_host(
    arguments: Any, message: str
) -> None:
    host = Host()
    broker = CallBroker(host, Limits(), tool_paths=["t"])
    tool, text = _error(await broker.answer("t", arguments))
    assert tool == "t" and text.startswith(message)
    assert host.calls == []
    assert broker.records == ()


async def test_in_process_arguments_cross_as_a_detached_json_copy() -> None:
    host = Host()
    broker = CallBroker(host, Limits(), tool_paths=["t"])
    arguments: dict[Any, Any] = {1: "x", "t": (1, 2), "d": {"k": [1]}}
    assert (await broker.answer("t", arguments)) == {"ok": "ok"}
    [(_, seen)] = host.calls
    assert seen == {"1": "x", "t": [1, 2], "d": {"k": [1]}}
    seen["d"]["k"].append(2)
    assert arguments["d"] == {"k": [1]}, "the host never shares an object with the script"


@pytest.mark.parametrize(
    "text", ["{nope", "", "[1]", "NaN", '"x"'], ids=["broken", "empty", "list", "nan", "text"]
)
async def test_argument_text_must_decode_to_a_json_object(text: str) -> None:
    host = Host()
    broker = CallBroker(host, Limits(), tool_paths=["t"])
    tool, message = _error(await broker.answer_json("t", text))
    assert tool == "t"
    assert message.startswith(("arguments are not JSON data", "arguments must be a JSON object"))
    assert host.calls == []


@pytest.mark.parametrize("result", [{1, 2}, math.inf, object(), b"bytes"],
                         ids=["set", "inf", "object", "bytes"])
async def test_a_host_result_that_is_not_json_is_an_internal_error(result: Any) -> None:
    host = Host(result)
    broker = CallBroker(host, Limits(), tool_paths=["t"])
    assert _error(await broker.answer("t", {})) == ("t", "internal error")
    assert _error(await broker.answer_json("t", "{}")) == ("t", "internal error")
    assert [(r.ok, r.error) for r in broker.records] == [(False, "internal error")] * 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('{"x": [' + "1," * 600_000 + "1]}", "arguments refused: the text holds more",
                     id="too-many-values"),
        pytest.param('{"x": ' + "[" * 150 + '"' + "y" * 70_000 + '"' + "]" * 150 + "}",
                     "arguments refused: the text nests deeper", id="too-deep"),
        pytest.param('{"x": "' + "y" * 70_000 + '"', "arguments are not JSON data",
                     id="cut-short"),
    ],
)
async def test_large_argument_text_is_decoded_under_the_frames_bounds(
    text: str, message: str
) -> None:
    host = Host()
    broker = CallBroker(host, Limits(), tool_paths=["t"])
    tool, problem = _error(await broker.answer_json("t", text))
    assert tool == "t" and problem.startswith(message), problem
    assert host.calls == []


async def test_large_argument_text_is_decoded_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past INLINE_FRAME the text goes to the counting decoder on a worker thread (one
    ``json.loads`` of it would hold the loop); the host sees the same value."""
    from codemode.sandbox.executors import broker as broker_module

    threads: list[bool] = []
    decode = broker_module.decode_text_bounded

    def spy(*args: Any) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return decode(*args)

    monkeypatch.setattr(broker_module, "decode_text_bounded", spy)
    host = Host()
    broker = CallBroker(host, Limits(), tool_paths=["t"])
    value = {"n": [10**4000 + i for i in range(20)], "s": "é" * 10_000}
    assert await broker.answer_json("t", json.dumps(value)) == {"ok": "ok"}
    assert await broker.answer_json("t", json.dumps({"small": 1})) == {"ok": "ok"}
    assert host.calls == [("t", value), ("t", {"small": 1})]
    assert threads == [False]
