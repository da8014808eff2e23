"""The OpenAI Agents SDK side of ``test_adapters_openai_agents``: a scripted ``Model`` and the
response items it answers with. A module of its own so the SDK (~3 s to import) loads only in
the process that runs those tests, not in every xdist worker that collects them."""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from codemode.integrations.adapters.openai_agents import function_tool

__all__ = ["Agent", "ResponseFunctionToolCall", "RunConfig", "Runner", "ScriptedModel",
           "function_tool", "message", "outputs", "tool_call"]


def tool_call(call_id: str, code: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", call_id=call_id, name="run_code",
                                    arguments=json.dumps({"code": code}))


def message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="m1", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


class ScriptedModel(Model):
    """Answers turn by turn from a script; records what the runner sent it."""

    def __init__(self, turns: list[Any]) -> None:
        self.turns = turns
        self.inputs: list[Any] = []
        self.tools: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any,
                           tools: Any, output_schema: Any, handoffs: Any, tracing: Any,
                           **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        self.tools.append(tools)
        return ModelResponse(output=[self.turns.pop(0)], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("not streamed in these tests")


def outputs(items: Any) -> dict[str, str]:
    """The function-call outputs the runner sent back to the model, by call id."""
    return {item["call_id"]: item["output"] for item in items
            if isinstance(item, dict) and item.get("type") == "function_call_output"}
