"""OpenAI Agents SDK: a ``CodeMode`` as a ``FunctionTool``, in a conversation with a fake
``Model`` (the SDK's own tests drive agents the same way); no network, no tracing export.
The SDK side lives in ``openai_agents_kit``, imported by the tests themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import codemode as cm
from tests.integrations.adapter_kit import BAD_SCRIPT, GOOD_SCRIPT, make_registry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


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


async def test_the_model_calls_the_code_tool_and_reads_the_result(
        mode: cm.CodeMode, log: list[tuple[int, int]]) -> None:
    from tests.integrations.openai_agents_kit import (
        Agent,
        RunConfig,
        Runner,
        ScriptedModel,
        function_tool,
        message,
        outputs,
        tool_call,
    )

    model = ScriptedModel([tool_call("c1", BAD_SCRIPT), tool_call("c2", GOOD_SCRIPT),
                           message("20 + 22 = 42")])
    agent = Agent(name="calc", model=model, tools=[function_tool(mode)])
    result = await Runner.run(agent, "What is 20 + 22?",
                              run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "20 + 22 = 42"
    assert log == [(20, 22)]
    sent = outputs(model.inputs[-1])
    assert sent["c1"].startswith("error: ZeroDivisionError at line 1")
    assert sent["c2"].startswith("value: 42\noutput:\nsum 42")
    (tool,) = model.tools[0]
    assert tool.name == "run_code"
    assert tool.strict_json_schema
    assert tool.params_json_schema["required"] == ["code"]
    assert "add: Add two integers." in tool.description  # the SDK, in the description


@pytest.mark.parametrize(("arguments", "expected"), [
    ("not json", "error: the tool arguments are not JSON"),
    ('{"code": 5}', 'error: the tool takes {"code": "<python script>"}'),
])
async def test_malformed_arguments_are_an_error_the_model_reads(
        mode: cm.CodeMode, log: list[tuple[int, int]], arguments: str, expected: str) -> None:
    from tests.integrations.openai_agents_kit import (
        Agent,
        ResponseFunctionToolCall,
        RunConfig,
        Runner,
        ScriptedModel,
        function_tool,
        message,
        outputs,
    )

    bad = ResponseFunctionToolCall(type="function_call", call_id="c1", name="run_code",
                                   arguments=arguments)
    model = ScriptedModel([bad, message("gave up")])
    agent = Agent(name="calc", model=model, tools=[function_tool(mode)])
    result = await Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "gave up"
    assert outputs(model.inputs[-1])["c1"].startswith(expected)
    assert log == []
