"""Running scripts the way a model's call does, and reading their outcome in tests."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, final

from codemode.dispatch.context import ToolCall

if TYPE_CHECKING:
    from codemode.dispatch.content import ToolResult
    from codemode.dispatch.registry import ToolRegistry
    from codemode.sandbox import ScriptResult

__all__ = ["RunCode", "assert_script_ok"]


@final
class RunCode:
    """Calls the registry's ``run_code`` tool through ``registry.execute``, like a model would.

    Each call gets a fresh id (``run-1``, ``run-2`` …) unless one is given, so
    nested calls are ``run-1:code:1`` … and events can be matched to the run.
    """

    def __init__(self, registry: ToolRegistry, *, tool_name: str = "run_code") -> None:
        self.registry = registry
        self.tool_name = tool_name
        self._ids = itertools.count(1)

    def next_call_id(self) -> str:
        """The id the next call without an explicit ``call_id`` will use."""
        return f"run-{next(self._ids)}"

    async def __call__(self, code: str, *, timeout: float | None = None,  # noqa: ASYNC109
                       call_id: str | None = None, agent: str | None = None) -> ToolResult:
        """Dispatch ``run_code`` with ``code``; returns the model-visible ``ToolResult``.

        ``timeout`` is the tool's own argument (the script's wall time), not a
        deadline on this await.
        """
        arguments: dict[str, Any] = {"code": code}
        if timeout is not None:
            arguments["timeout"] = timeout
        call = ToolCall(call_id=call_id or self.next_call_id(), name=self.tool_name,
                        arguments=arguments, agent=agent)
        return await self.registry.execute(call)


def assert_script_ok(result: ScriptResult) -> Any:
    """The script's value; an AssertionError showing the error, line and output otherwise."""
    error = result.error
    if error is None:
        return result.value
    where = f" at line {error.line}" if error.line is not None else ""
    parts = [f"script failed{where}: {error.type}: {error.message}"]
    if error.traceback:
        parts.append(error.traceback.rstrip())
    if result.output:
        parts.append("output:\n" + result.output.rstrip())
    raise AssertionError("\n".join(parts))
