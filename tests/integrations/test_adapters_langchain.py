"""LangChain: a ``CodeMode`` as a ``StructuredTool``, in a conversation with
``GenericFakeChatModel`` (LangChain's offline chat model); no network.

LangChain's core has no agent loop of its own (that is LangGraph's), so the test runs
the standard one: model → tool calls → ``ToolMessage``s → model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import codemode as cm
from tests.integrations.adapter_kit import BAD_SCRIPT, GOOD_SCRIPT, make_registry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from langchain_core.messages import AIMessage, BaseMessage

# LangChain is imported by the tests that use it (~2 s), not at collection in every worker.


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


def call(call_id: str, code: str) -> AIMessage:
    from langchain_core.messages import AIMessage

    return AIMessage(content="", tool_calls=[
        {"name": "run_code", "args": {"code": code}, "id": call_id, "type": "tool_call"}])


async def test_the_model_calls_the_code_tool_and_reads_the_result(
        mode: cm.CodeMode, log: list[tuple[int, int]]) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from codemode.integrations.adapters.langchain import structured_tool

    events: list[cm.ToolEvent] = []
    mode.registry.subscribe(events.append)
    tool = structured_tool(mode)
    model = GenericFakeChatModel(messages=iter([
        call("c1", BAD_SCRIPT), call("c2", GOOD_SCRIPT), AIMessage(content="42")]))
    conversation: list[BaseMessage] = [HumanMessage("What is 20 + 22?")]
    tool_messages: list[ToolMessage] = []
    for _ in range(5):
        reply = await model.ainvoke(conversation)
        assert isinstance(reply, AIMessage)
        conversation.append(reply)
        if not reply.tool_calls:
            break
        for tool_call in reply.tool_calls:
            answer = await tool.ainvoke(tool_call)
            assert isinstance(answer, ToolMessage)
            tool_messages.append(answer)
            conversation.append(answer)
    assert conversation[-1].content == "42"
    assert log == [(20, 22)]
    failed, worked = tool_messages
    assert (failed.tool_call_id, failed.status) == ("c1", "error")
    assert str(failed.content).startswith("error: ZeroDivisionError at line 1")
    assert (worked.tool_call_id, worked.status) == ("c2", "success")
    assert str(worked.content).startswith("value: 42\noutput:\nsum 42")
    calls = [(e.name, e.call_id) for e in events if e.type == "tool/call"]
    assert calls == [("run_code", "c1"), ("run_code", "c2"), ("add", "c2:code:1")]


async def test_the_tool_carries_the_sdk_and_a_strict_schema(mode: cm.CodeMode) -> None:
    from codemode.integrations.adapters.langchain import structured_tool

    tool = structured_tool(mode)
    assert tool.name == "run_code"
    assert "add: Add two integers." in tool.description
    schema = tool.tool_call_schema.model_json_schema()  # what the model is shown
    assert list(schema["properties"]) == ["code"]
    assert schema["required"] == ["code"]
