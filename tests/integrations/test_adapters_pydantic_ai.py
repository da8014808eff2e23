"""pydantic-ai: a ``CodeMode`` as a toolset, in conversations with ``FunctionModel``.

The model writes a failing script first, reads the error as a retry, then a working
one, and answers from its result; no network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from tests.integrations.adapter_kit import BAD_SCRIPT, GOOD_SCRIPT, make_registry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from pydantic_ai.messages import ModelMessage, ModelResponse, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo

# pydantic-ai is imported by the tests that use it (~1 s), not at collection in every worker.


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def log() -> list[tuple[int, int]]:
    return []


@pytest.fixture
async def mode(log: list[tuple[int, int]]) -> AsyncIterator[cm.CodeMode]:
    async with cm.InProcessExecutor() as executor, cm.CodeMode(
            make_registry(log), executor=executor) as code_mode:
        yield code_mode


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    from pydantic_ai.messages import ToolReturnPart

    return [part for message in messages for part in message.parts
            if isinstance(part, ToolReturnPart)]


async def test_the_model_calls_the_code_tool_and_reads_the_result(
        mode: cm.CodeMode, log: list[tuple[int, int]]) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from codemode.integrations.adapters.pydanticai import toolset

    seen: list[AgentInfo] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        done = returns(messages)
        if not done:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": BAD_SCRIPT})])
        if done[-1].outcome == "retried":
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": GOOD_SCRIPT})])
        return ModelResponse(parts=[TextPart(f"the tool said: {done[-1].content}")])

    agent = Agent(FunctionModel(model), toolsets=[toolset(mode)])
    result = await agent.run("What is 20 + 22?")
    assert log == [(20, 22)]
    first, second = returns(result.all_messages())
    assert first.outcome == "retried"
    assert "ZeroDivisionError" in str(first.content)
    assert second.outcome == "success"
    assert str(second.content).startswith("value: 42\noutput:\nsum 42")
    assert result.output.startswith("the tool said: value: 42")
    info = seen[0]
    assert [t.name for t in info.function_tools] == ["run_code"]
    assert info.function_tools[0].parameters_json_schema["required"] == ["code"]
    assert info.instructions is not None
    assert "add: Add two integers." in info.instructions  # the SDK, as instructions


async def test_a_model_that_keeps_failing_stops_at_max_retries(mode: cm.CodeMode) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UnexpectedModelBehavior
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from codemode.integrations.adapters.pydanticai import toolset

    calls: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": BAD_SCRIPT})])

    agent = Agent(FunctionModel(model), toolsets=[toolset(mode, max_retries=1)])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries"):
        await agent.run("divide")
    assert len(calls) == 2  # the first try and one retry


async def test_test_model_calls_run_code_through_the_registry(
        log: list[tuple[int, int]]) -> None:
    """``TestModel`` fills every string argument with ``"a"``: a script reading the host
    input ``a``, so its call succeeds and its result comes back."""
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    from codemode.integrations.adapters.pydanticai import toolset

    events: list[Any] = []
    registry = make_registry(log)
    registry.subscribe(events.append)
    async with cm.InProcessExecutor() as executor, cm.CodeMode(
            registry, executor=executor, inputs={"a": 7}) as code_mode:
        agent = Agent(TestModel(call_tools=["run_code"]), toolsets=[toolset(code_mode)])
        result = await agent.run("anything")
    (returned,) = returns(result.all_messages())
    assert returned.content == "value: 7\ncalls: no tool calls"
    assert [(e.type, e.name) for e in events] == [("tool/call", "run_code"),
                                                 ("tool/result", "run_code")]
