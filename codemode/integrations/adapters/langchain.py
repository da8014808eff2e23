"""A ``CodeMode`` as a LangChain structured tool (the ``langchain`` extra).

``structured_tool(mode)`` is a ``StructuredTool`` named ``run_code`` taking ``code``,
its description carrying the SDK prompt. A failing script raises ``ToolException``
with the error text and the tool handles it (``handle_tool_error=True``), which is
LangChain's way to return an error to the model: a ``ToolMessage`` with that text
and ``status="error"``. The tool is async only (``ainvoke``): scripts run on the
host's event loop. It takes the model's whole tool call (as ``ToolNode`` and
``bind_tools`` loops pass it), whose id becomes the ``run_code`` call id, so events,
spans and the ``ToolMessage`` name the same call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

try:
    from langchain_core.tools import InjectedToolCallId, StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "codemode.integrations.adapters.langchain needs langchain-core: "
        "pip install 'codemode[langchain]'") from exc
from pydantic import BaseModel, ConfigDict, Field

from codemode.integrations.adapters.core import CodeTool

if TYPE_CHECKING:
    from codemode.mode.code_mode import CodeMode

__all__ = ["CodeArguments", "structured_tool"]


class CodeArguments(BaseModel):
    """The tool's arguments: the script (and the tool call's id, which LangChain injects
    and the model never sees)."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="The Python script to run.")
    tool_call_id: Annotated[str, InjectedToolCallId]


def structured_tool(mode: CodeMode, *, description: str | None = None) -> StructuredTool:
    """The tool to bind to a chat model (``model.bind_tools([tool])``) or an agent.

    The description (summary + SDK) is taken when this is called: build the tool again
    after the registry's tools change.
    """
    code_tool = CodeTool(mode, description=description)

    async def run_code(code: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        outcome = await code_tool.run(code, call_id=tool_call_id)
        if outcome.is_error:
            raise ToolException(outcome.text)
        return outcome.text

    return StructuredTool.from_function(
        coroutine=run_code, name=code_tool.name, description=code_tool.description(),
        args_schema=CodeArguments, handle_tool_error=True)
