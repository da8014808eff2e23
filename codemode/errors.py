"""Every error codemode raises, under one root.

Each error builds its own message from typed arguments, so callers catch by
type and read fields instead of parsing text::

    CodemodeError
    ├── ToolDefinitionError        a tool spec is invalid (name, schema, options)
    │   └── DuplicateToolError     a name is already registered
    ├── UnknownToolError           no tool by that name (lists close matches)
    ├── ToolCallError              a nested call from a script failed (raised in the script)
    ├── PipelineError              a hook broke the pipeline's contract (a host bug)
    ├── TaskError                  a background task could not start or is unknown
    ├── SandboxError               the sandbox itself failed (infrastructure, not the script)
    │   ├── ScriptCompileError     the script is not valid restricted Python
    │   ├── WorkerProtocolError    a sandbox worker sent bytes that are not a valid frame
    │   └── LimitExceeded          a run limit tripped (names the limit and its value)
    ├── SdkGenerationError         the SDK generator could not render a spec
    ├── PreflightError             static checks found problems before running a script
    ├── ToolsLoadError             the CLI's ``--tools MODULE:OBJECT`` could not be loaded
    └── GatewayConfigError         an MCP servers config (``codemode serve``) is invalid

Domain failures a model must read (a handler raising, bad arguments) are not
raised by the pipeline: they come back as ``ToolResult(is_error=True)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CodemodeError",
    "DuplicateToolError",
    "GatewayConfigError",
    "LimitExceeded",
    "PipelineError",
    "PreflightError",
    "SandboxError",
    "ScriptCompileError",
    "SdkGenerationError",
    "TaskError",
    "ToolCallError",
    "ToolDefinitionError",
    "ToolsLoadError",
    "UnknownToolError",
    "WorkerProtocolError",
]


class CodemodeError(Exception):
    """Root of every error raised by codemode."""


class ToolDefinitionError(CodemodeError):
    """A tool definition is invalid; raised at definition or registration time."""

    def __init__(self, tool: str, problem: str) -> None:
        self.tool = tool
        self.problem = problem
        super().__init__(f"invalid tool {tool!r}: {problem}")


class DuplicateToolError(ToolDefinitionError):
    """A tool with this name is already registered and the policy forbids replacing it."""

    def __init__(
        self, tool: str, problem: str = "a tool with this name is already registered"
    ) -> None:
        super().__init__(tool, problem)


class UnknownToolError(CodemodeError):
    """No registered tool has this name."""

    def __init__(self, tool: str, suggestions: Sequence[str] = ()) -> None:
        self.tool = tool
        self.suggestions = tuple(suggestions)
        hint = f"; did you mean {', '.join(map(repr, self.suggestions))}?" if suggestions else ""
        super().__init__(f"unknown tool {tool!r}{hint}")


class ToolCallError(CodemodeError):
    """A tool call made from a script failed; scripts catch it by this name.

    Carries only strings, so a script that catches it reaches no host object.
    """

    def __init__(self, tool: str, message: str, path: str | None = None) -> None:
        self.tool = tool
        self.message = message
        self.path = path
        where = f" at {path}" if path and path not in message else ""
        # ``str(e)`` is the failure itself, as other hosts hand it to scripts (an MCP
        # error result's text, the tool's own exception): ``print(f"{uid}: {e}")`` reads
        # the same; the tool is ``e.tool``, and :meth:`described` names it.
        super().__init__(f"{message}{where}")

    def described(self) -> str:
        """The message with the tool's name first (an uncaught failure, a host's log)."""
        text = str(self)
        return text if repr(self.tool) in self.message else f"{self.tool}: {text}"


class PipelineError(CodemodeError):
    """A hook or wrapper broke the pipeline's contract; a host bug, so it raises."""

    def __init__(self, tool: str, problem: str) -> None:
        self.tool = tool
        self.problem = problem
        super().__init__(f"pipeline error in call to {tool!r}: {problem}")


class TaskError(CodemodeError):
    """A background task was refused (no owner, no control plane, a cancelled call) or
    is unknown to the caller; a tool that raises it fails its call with this message."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)


class SandboxError(CodemodeError):
    """The sandbox failed to run a script for reasons outside the script."""


class ScriptCompileError(SandboxError):
    """The script does not compile under the restricted policy.

    ``problems`` lists each refusal with its own (line, column, message) when the policy
    found several, so a preflight reports every one at its line.
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None, *,
                 problems: tuple[tuple[int | None, int | None, str], ...] = ()) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.problems = problems
        where = f" (line {line})" if line is not None else ""
        super().__init__(f"{message}{where}")


class WorkerProtocolError(SandboxError):
    """A sandbox worker process sent bytes that are not a valid protocol frame."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"worker protocol violation: {problem}")


class LimitExceeded(SandboxError):
    """A run limit tripped; names the limit and its configured value."""

    def __init__(self, limit: str, value: object, detail: str = "") -> None:
        self.limit = limit
        self.value = value
        self.detail = detail
        extra = f": {detail}" if detail else ""
        super().__init__(f"limit exceeded: {limit}={value}{extra}")


class SdkGenerationError(CodemodeError):
    """The SDK generator could not render a tool spec."""

    def __init__(self, tool: str, problem: str) -> None:
        self.tool = tool
        self.problem = problem
        super().__init__(f"cannot generate SDK for {tool!r}: {problem}")


class PreflightError(CodemodeError):
    """Static checks rejected a script before it ran; ``problems`` lists each one."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("script failed preflight:\n" + "\n".join(self.problems))


class ToolsLoadError(CodemodeError):
    """``--tools MODULE:OBJECT`` did not name a usable tools object."""


class GatewayConfigError(CodemodeError):
    """An MCP servers config (``{"mcpServers": {...}}``) is invalid; names where and why."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}")
