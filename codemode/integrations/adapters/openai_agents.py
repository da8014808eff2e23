"""A ``CodeMode`` as an OpenAI Agents SDK function tool (the ``openai-agents`` extra).

``function_tool(mode)`` is a ``FunctionTool`` named ``run_code`` with a strict JSON
schema (``{"code": string}``) whose description carries the SDK prompt. As with the
SDK's own ``@function_tool``, a failure reaches the model as the tool's output text
(``error: <type> at line n: …``), so it can fix the script and call again; only
cancellation propagates.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

try:
    from agents import FunctionTool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "codemode.integrations.adapters.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'codemode[openai-agents]'") from exc

from codemode.integrations.adapters.core import PARAMETERS, CodeTool

if TYPE_CHECKING:
    from agents.tool_context import ToolContext

    from codemode.mode.code_mode import CodeMode

__all__ = ["function_tool"]


def function_tool(mode: CodeMode, *, description: str | None = None) -> FunctionTool:
    """The tool to pass as ``Agent(tools=[function_tool(mode)])``.

    The description (summary + SDK) is taken when this is called: build the tool again
    after the registry's tools change.
    """
    code_tool = CodeTool(mode, description=description)

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        try:
            parsed = json.loads(arguments)
        except ValueError as exc:
            return f"error: the tool arguments are not JSON ({exc}); send {{\"code\": \"...\"}}"
        code = parsed.get("code") if isinstance(parsed, dict) else None
        if not isinstance(code, str):
            return 'error: the tool takes {"code": "<python script>"}'
        outcome = await code_tool.run(code, call_id=ctx.tool_call_id)
        return outcome.text

    return FunctionTool(name=code_tool.name, description=code_tool.description(),
                        params_json_schema=json.loads(json.dumps(dict(PARAMETERS))),
                        on_invoke_tool=invoke, strict_json_schema=True)
