"""What every framework adapter shares: ``run_code`` as one call through the registry.

The adapters never run a script themselves: ``CodeTool.run`` dispatches the
``run_code`` tool through ``mode.registry`` (registering ``mode.as_tool()`` there
when the registry has no tool of that name), so the outer call gets the same policy,
events and spans as any call, and its script's calls are parented under it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, final

from codemode.dispatch.context import ToolCall

if TYPE_CHECKING:
    from collections.abc import Mapping

    from codemode.dispatch.content import ToolResult
    from codemode.mode.code_mode import CodeMode

__all__ = ["PARAMETERS", "CodeOutcome", "CodeTool"]

PARAMETERS: Final[Mapping[str, Any]] = MappingProxyType({
    "type": "object",
    "properties": {"code": {"type": "string", "description": "The Python script to run."}},
    "required": ["code"],
    "additionalProperties": False,
})
"""The adapters' argument schema: the script only (strict-schema frameworks need every
property required; the host's ``Limits`` bound the run)."""

SUMMARY: Final = (
    "Run a short async Python script in a sandbox. The script calls the SDK's tools as "
    "`await tools.<name>(...)`, can chain and loop over them, and its last expression is "
    "returned with what it printed. Prefer one script over many separate tool calls."
)


@dataclass(frozen=True, kw_only=True, slots=True)
class CodeOutcome:
    """One ``run_code`` call as a framework reports it to its model."""

    text: str
    """The model-visible result (``value: …``, ``output: …``, ``calls: …`` or ``error: …``)."""
    is_error: bool
    """Whether the script (or the call) failed: the framework's error path."""
    result: ToolResult
    """The full dispatch result (its ``meta`` holds the trace and usage)."""


@final
class CodeTool:
    """``run_code`` seen from a framework: name, texts, schema and the call itself."""

    def __init__(self, mode: CodeMode, *, description: str | None = None) -> None:
        self.mode = mode
        self.name = mode.tool_name
        """The tool's name in the framework (the ``CodeMode``'s ``tool_name``)."""
        self.summary = description or SUMMARY
        """What the tool does, without the SDK."""
        self._ids = itertools.count(1)

    def instructions(self) -> str:
        """The model-facing SDK text (``mode.prompt()``), current with the registry."""
        return self.mode.prompt()

    def description(self) -> str:
        """The summary followed by the SDK: the whole API a model needs, in one text."""
        return f"{self.summary}\n\n{self.instructions()}"

    async def run(self, code: str, *, call_id: str | None = None,
                  agent: str | None = None) -> CodeOutcome:
        """Dispatch ``run_code`` with ``code``; never raises for a failing script."""
        registry = self.mode.registry
        if self.name not in registry:
            registry.register(self.mode.as_tool())
        call = ToolCall(call_id=call_id or f"{self.name}-{next(self._ids)}", name=self.name,
                        arguments={"code": code}, agent=agent)
        result = await registry.execute(call)
        return CodeOutcome(text=result.text, is_error=result.is_error, result=result)
