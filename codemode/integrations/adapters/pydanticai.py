"""A ``CodeMode`` as a pydantic-ai toolset (the ``pydantic-ai`` extra).

``toolset(mode)`` is a ``FunctionToolset`` with one tool, ``run_code(code)``, whose
instructions are the SDK prompt (pydantic-ai adds a toolset's instructions to the
model's system instructions each run, so they follow the registry). A failing script
raises ``ModelRetry`` with the error text: pydantic-ai hands that to the model as a
retry prompt, the framework's way of saying "fix it and call again".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

try:
    from pydantic_ai import ModelRetry, RunContext, Tool
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "codemode.integrations.adapters.pydanticai needs pydantic-ai: "
        "pip install 'codemode[pydantic-ai]'") from exc

from codemode.integrations.adapters.core import CodeTool

if TYPE_CHECKING:
    from codemode.mode.code_mode import CodeMode

__all__ = ["toolset"]


def toolset(mode: CodeMode, *, max_retries: int = 2,
            description: str | None = None) -> FunctionToolset[Any]:
    """The toolset to pass as ``Agent(toolsets=[toolset(mode)])``.

    ``max_retries`` is how many failing scripts in a row the model may fix before
    pydantic-ai gives up (``UnexpectedModelBehavior``).
    """
    code_tool = CodeTool(mode, description=description)

    async def run_code(ctx: RunContext[Any], code: str) -> str:
        """Run the script.

        Args:
            code: The Python script to run.
        """
        outcome = await code_tool.run(code, call_id=ctx.tool_call_id)
        if outcome.is_error:
            raise ModelRetry(outcome.text)
        return outcome.text

    tool = Tool(run_code, takes_ctx=True, name=code_tool.name, description=code_tool.summary,
                max_retries=max_retries)

    def instructions() -> str:
        return code_tool.instructions()

    return FunctionToolset([tool], instructions=instructions)
