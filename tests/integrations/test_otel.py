"""OpenTelemetry: one span per dispatch, nested script calls under their ``run_code`` span.

Spans are read back from the OTel SDK's in-memory exporter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import codemode as cm
from codemode.integrations.otel import instrument
from codemode.sandbox import Executor, InProcessExecutor, WorkerPoolExecutor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["inprocess", "pool"])
async def executor(request: pytest.FixtureRequest) -> AsyncIterator[Executor]:
    impl: Executor = InProcessExecutor() if request.param == "inprocess" else WorkerPoolExecutor()
    async with impl:
        yield impl


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield tracer_provider
    tracer_provider.shutdown()


@pytest.fixture
def registry(provider: TracerProvider) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    @reg.register
    @cm.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @reg.register
    @cm.tool
    async def traced() -> str:
        """Opens a span of its own, as an instrumented HTTP client would."""
        with provider.get_tracer("handler").start_as_current_span("handler work"):
            return "ok"

    @reg.register
    @cm.tool
    async def explode(size: int = 10) -> str:
        """Always fails."""
        raise ValueError("x" * size)

    return reg


def spans_named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def only(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    found = spans_named(exporter, name)
    assert len(found) == 1, [s.name for s in exporter.get_finished_spans()]
    return found[0]


async def test_a_call_is_one_span_with_genai_attributes(
        registry: cm.ToolRegistry, provider: TracerProvider,
        exporter: InMemorySpanExporter) -> None:
    instrument(registry, tracer_provider=provider)
    result = await registry.execute(cm.ToolCall(call_id="c1", name="add",
                                                arguments={"a": 1, "b": 2}, agent="planner"))
    assert not result.is_error
    span = only(exporter, "execute_tool add")
    assert span.kind is SpanKind.INTERNAL
    assert span.status.status_code is StatusCode.UNSET
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two numbers.",
        "gen_ai.agent.name": "planner",
    }
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "codemode"


async def test_nested_calls_are_children_of_their_run_code_span(
        registry: cm.ToolRegistry, provider: TracerProvider, exporter: InMemorySpanExporter,
        executor: Executor) -> None:
    instrument(registry, tracer_provider=provider)
    async with cm.CodeMode(registry, executor=executor) as mode:
        registry.register(mode.as_tool())
        script = ("import asyncio\nxs = await asyncio.gather(tools.add(a=1, b=2), "
                  "tools.add(a=3, b=4))\nxs")
        with provider.get_tracer("test").start_as_current_span("agent turn"):
            result = await registry.execute(cm.ToolCall(call_id="r1", name="run_code",
                                                        arguments={"code": script}))
    assert not result.is_error, result.text
    turn = only(exporter, "agent turn")
    run = only(exporter, "execute_tool run_code")
    nested = spans_named(exporter, "execute_tool add")
    assert len(nested) == 2
    assert run.parent is not None
    assert run.parent.span_id == turn.context.span_id
    for span in nested:
        assert span.parent is not None
        assert span.parent.span_id == run.context.span_id
        assert span.context.trace_id == turn.context.trace_id
    assert sorted(dict(s.attributes or {})["gen_ai.tool.call.id"] for s in nested) == [
        "r1:code:1", "r1:code:2"]
    assert dict(run.attributes or {})["codemode.run.calls"] == 2


async def test_a_limit_trip_is_the_run_code_span_status(
        registry: cm.ToolRegistry, provider: TracerProvider, exporter: InMemorySpanExporter,
        executor: Executor) -> None:
    instrument(registry, tracer_provider=provider)
    async with cm.CodeMode(registry, executor=executor,
                           limits=cm.Limits(operations=1000)) as mode:
        registry.register(mode.as_tool())
        result = await registry.execute(cm.ToolCall(
            call_id="r1", name="run_code", arguments={"code": "while True:\n    pass"}))
    assert result.is_error
    run = only(exporter, "execute_tool run_code")
    attributes = dict(run.attributes or {})
    assert run.status.status_code is StatusCode.ERROR
    assert attributes["codemode.limit"] == "operations"
    assert attributes["error.type"] == "limit_exceeded"


@pytest.mark.parametrize(("call", "kind"), [
    (cm.ToolCall(call_id="e1", name="explode"), "handler_error"),
    (cm.ToolCall(call_id="e2", name="add", arguments={"a": "one", "b": 2}),
     "invalid_arguments"),
    (cm.ToolCall(call_id="e3", name="no_such_tool"), "unknown_tool"),
    (cm.ToolCall(call_id="e4", name="add", arguments={"a": 1, "b": 1}), "denied"),
])
async def test_failures_set_error_status_and_type(
        registry: cm.ToolRegistry, provider: TracerProvider, exporter: InMemorySpanExporter,
        call: cm.ToolCall, kind: str) -> None:
    if kind == "denied":
        registry.pre_execute(lambda ctx: cm.Deny("read-only"))
    instrument(registry, tracer_provider=provider)
    result = await registry.execute(call)
    assert result.is_error
    span = only(exporter, f"execute_tool {call.name}")
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == kind
    assert result.error is not None
    assert span.status.description == result.error.message


async def test_a_handlers_own_spans_nest_under_its_tool_span(
        registry: cm.ToolRegistry, provider: TracerProvider,
        exporter: InMemorySpanExporter) -> None:
    instrument(registry, tracer_provider=provider)
    await registry.execute(cm.ToolCall(call_id="t1", name="traced"))
    tool = only(exporter, "execute_tool traced")
    inner = only(exporter, "handler work")
    assert inner.parent is not None
    assert inner.parent.span_id == tool.context.span_id


async def test_text_attributes_are_clipped(
        registry: cm.ToolRegistry, provider: TracerProvider,
        exporter: InMemorySpanExporter) -> None:
    instrument(registry, tracer_provider=provider, max_text=64, record_arguments=True)
    await registry.execute(cm.ToolCall(call_id="b1", name="explode",
                                       arguments={"size": 100_000}))
    span = only(exporter, "execute_tool explode")
    assert span.status.description is not None
    assert len(span.status.description) <= 65
    assert len(str(dict(span.attributes or {})["gen_ai.tool.call.arguments"])) <= 65


@pytest.mark.parametrize("record", [False, True])
async def test_arguments_are_recorded_only_when_asked(
        registry: cm.ToolRegistry, provider: TracerProvider, exporter: InMemorySpanExporter,
        record: bool) -> None:
    instrument(registry, tracer_provider=provider, record_arguments=record)
    await registry.execute(cm.ToolCall(call_id="a1", name="add", arguments={"a": 1, "b": 2}))
    attributes: dict[str, Any] = dict(only(exporter, "execute_tool add").attributes or {})
    if record:
        assert attributes["gen_ai.tool.call.arguments"] == '{"a": 1, "b": 2}'
    else:
        assert "gen_ai.tool.call.arguments" not in attributes


async def test_close_removes_the_hooks(
        registry: cm.ToolRegistry, provider: TracerProvider,
        exporter: InMemorySpanExporter) -> None:
    before = (len(registry.hooks.wrappers), len(registry.hooks.observers),
              len(registry.hooks.subscribers))
    instrumentation = instrument(registry, tracer_provider=provider)
    instrumentation.close()
    assert (len(registry.hooks.wrappers), len(registry.hooks.observers),
            len(registry.hooks.subscribers)) == before
    await registry.execute(cm.ToolCall(call_id="c1", name="add", arguments={"a": 1, "b": 2}))
    assert exporter.get_finished_spans() == ()
