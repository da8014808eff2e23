"""Live streaming: ``mode.stream(script)`` and ``run(on_event=...)`` on both executors.

Printed text and nested-call events arrive while the run is going (a tool that waits
for the test to have seen the script's first line proves it), in order, bounded by the
run's output limit, and the host checks a worker's ``output`` frames like any other.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm
from codemode.sandbox import Executor, InProcessExecutor, WorkerPoolExecutor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode.mode.stream import RunEvent

STREAM_RUNTIME = "tests.integrations.stream_runtime:run"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["inprocess", "pool"])
async def executor(request: pytest.FixtureRequest) -> AsyncIterator[Executor]:
    impl: Executor = InProcessExecutor() if request.param == "inprocess" else WorkerPoolExecutor()
    async with impl:
        yield impl


class Gate:
    """A tool's way to wait until the test has seen an event."""

    def __init__(self) -> None:
        self.open = anyio.Event()
        self.cancelled = False


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def registry(gate: Gate) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    @reg.register
    @cm.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @reg.register
    @cm.tool
    async def wait_gate() -> str:
        """Wait until the test opens the gate."""
        try:
            await gate.open.wait()
        except BaseException:
            gate.cancelled = True
            raise
        return "opened"

    @reg.register
    @cm.tool
    async def explode() -> str:
        """Always fails."""
        raise ValueError("disk on fire")

    return reg


@pytest.fixture
async def mode(registry: cm.ToolRegistry, executor: Executor) -> AsyncIterator[cm.CodeMode]:
    async with cm.CodeMode(registry, executor=executor) as code_mode:
        yield code_mode


async def collect(mode: cm.CodeMode, script: str, **kwargs: Any) -> list[RunEvent]:
    with anyio.fail_after(30):
        async with mode.stream(script, **kwargs) as events:
            return [event async for event in events]


def output_of(events: list[RunEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, cm.OutputEvent))


async def test_events_come_in_order_and_add_up_to_the_result(mode: cm.CodeMode) -> None:
    events = await collect(mode, "print('before')\nx = await tools.add(a=1, b=2)\n"
                                 "print('after', x)\nx")
    kinds = [type(e).__name__ for e in events]
    assert kinds[-1] == "RunEndEvent"
    first_call = kinds.index("CallStartEvent")
    assert kinds[first_call + 1] == "CallEndEvent"
    assert output_of(events[:first_call]) == "before\n"
    assert output_of(events[first_call:]) == "after 3\n"
    end = events[-1]
    assert isinstance(end, cm.RunEndEvent)
    assert end.result.value == 3
    assert output_of(events) == end.result.output
    start = events[first_call]
    assert isinstance(start, cm.CallStartEvent)
    assert (start.name, start.tool, dict(start.arguments)) == ("add", "add", {"a": 1, "b": 2})
    assert start.call_id.endswith(":code:1")


async def test_output_arrives_while_the_run_is_going(mode: cm.CodeMode, gate: Gate) -> None:
    seen: list[RunEvent] = []
    with anyio.fail_after(30):  # without live output the tool would wait for ever
        async with mode.stream("print('ready')\nr = await tools.wait_gate()\nr") as events:
            async for event in events:
                seen.append(event)
                if isinstance(event, cm.OutputEvent) and "ready" in output_of(seen):
                    assert events.result is None
                    gate.open.set()
    assert events.result is not None
    assert events.result.value == "opened"


async def test_output_between_calls_is_sent_before_the_run_ends(mode: cm.CodeMode) -> None:
    """No tool call follows the print: the worker sends it on its own, soon."""
    script = "import asyncio\nprint('tick')\nawait asyncio.sleep(60)\n'done'"
    # Held back to the run's end, the output would miss this bound.
    with anyio.fail_after(15):
        async with mode.stream(script, limits=cm.Limits(timeout=90)) as events:
            async for event in events:
                if isinstance(event, cm.OutputEvent):
                    assert event.text.startswith("tick")
                    assert events.result is None  # the script is still sleeping
                    break
    assert events.result is None  # leaving the block stopped the run


async def test_output_of_a_busy_script_is_sent_by_its_next_print(mode: cm.CodeMode) -> None:
    """The script never awaits (no timer can run in the worker): the next print sends what
    waited longer than ``OUTPUT_DELAY``."""
    script = ("print('start')\ni = 0\nwhile i < 200_000:\n    i += 1\nprint('tick')\n"
              "while True:\n    i += 1")
    # The run spins for a minute; held back to its end, the output would miss this bound.
    with anyio.fail_after(15):
        async with mode.stream(script, limits=cm.Limits(timeout=60,
                                                        operations=10**12)) as events:
            async for event in events:
                assert isinstance(event, cm.OutputEvent)
                assert event.text.startswith("start")
                assert events.result is None  # the script is still spinning
                break
    assert events.result is None


async def test_failed_call_is_an_error_event(mode: cm.CodeMode) -> None:
    events = await collect(mode, "try:\n    await tools.explode()\nexcept ToolCallError as e:\n"
                                 "    print('caught')\n'ok'")
    ends = [e for e in events if isinstance(e, cm.CallEndEvent)]
    assert len(ends) == 1
    assert ends[0].is_error
    assert ends[0].error is not None
    assert "disk on fire" in ends[0].error
    assert output_of(events) == "caught\n"


async def test_streamed_output_is_bounded_by_the_output_limit(mode: cm.CodeMode) -> None:
    events = await collect(mode, "for i in range(2000):\n    print('0123456789' * 10)\n1",
                           limits=cm.Limits(output=1000))
    streamed = output_of(events)
    assert len(streamed.encode()) == 1000
    end = events[-1]
    assert isinstance(end, cm.RunEndEvent)
    assert end.result.output.startswith(streamed)
    assert "truncated" in end.result.output


async def test_printed_objects_reach_the_host_as_plain_text(mode: cm.CodeMode) -> None:
    """What host callbacks get is an exact ``str`` made during the run, never a script
    object a consumer could call into after the run."""
    events = await collect(mode, "print({'k': [1, 2.5]}, None, 3, sep='-', end='!')\n1")
    texts = [e.text for e in events if isinstance(e, cm.OutputEvent)]
    assert "".join(texts) == "{'k': [1, 2.5]}-None-3!"
    assert all(type(text) is str for text in texts)


async def test_leaving_the_block_cancels_the_run(mode: cm.CodeMode, gate: Gate) -> None:
    with anyio.fail_after(30):
        async with mode.stream("await tools.wait_gate()") as events:
            async for event in events:
                if isinstance(event, cm.CallStartEvent):
                    break
    assert gate.cancelled
    assert events.result is None


async def test_on_event_callback_sees_the_same_events(mode: cm.CodeMode) -> None:
    got: list[RunEvent] = []
    result = await mode.run("print('x')\nawait tools.add(a=2, b=2)", on_event=got.append)
    assert result.value == 4
    assert isinstance(got[-1], cm.RunEndEvent)
    assert got[-1].result is result
    assert [type(e).__name__ for e in got if not isinstance(e, cm.OutputEvent)] == [
        "CallStartEvent", "CallEndEvent", "RunEndEvent"]
    assert output_of(got) == "x\n"


async def test_a_raising_callback_is_logged_and_the_run_goes_on(
        mode: cm.CodeMode, caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: RunEvent) -> None:
        raise RuntimeError("observer bug")

    with caplog.at_level(logging.ERROR, logger="codemode"):
        result = await mode.run("print('x')\nawait tools.add(a=1, b=1)", on_event=broken)
    assert result.value == 2
    assert result.error is None
    records = [r for r in caplog.records if r.name == "codemode.mode"]
    assert records
    assert all("on_event callback raised" in r.getMessage() for r in records)


@pytest.fixture(scope="module")
async def hostile() -> AsyncIterator[WorkerPoolExecutor]:
    async with WorkerPoolExecutor(size=1, runtime=STREAM_RUNTIME) as pool:
        yield pool


@pytest.mark.parametrize(("source", "streaming", "ok"), [
    ("polite", True, True),
    ("flood", True, False),
    ("foreign", True, False),
    ("polite", False, False),  # output frames a run did not ask for
])
async def test_the_host_checks_a_workers_output_frames(
        hostile: WorkerPoolExecutor, source: str, streaming: bool, ok: bool) -> None:
    async def no_tools(path: str, arguments: dict[str, Any]) -> Any:
        raise AssertionError("no tool is called")

    received: list[str] = []
    with anyio.fail_after(30):
        result = await hostile.run(source, call_tool=no_tools, limits=cm.Limits(output=100),
                                   on_output=received.append if streaming else None)
    if ok:
        assert result.error is None
        assert result.value == "finished"
        assert received == ["fine"]
    else:
        assert result.error is not None
        assert result.error.type == "SandboxError"
        assert result.value is None
        assert sum(map(len, received)) <= 100  # never more than the limit reached the host
