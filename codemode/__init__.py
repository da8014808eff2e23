"""codemode: a Code Mode host — typed tool SDKs, sandboxed scripts, one validated pipeline."""

import logging as _logging
import typing as _typing

from .errors import CodemodeError as CodemodeError
from .errors import DuplicateToolError as DuplicateToolError
from .errors import GatewayConfigError as GatewayConfigError
from .errors import LimitExceeded as LimitExceeded
from .errors import PipelineError as PipelineError
from .errors import PreflightError as PreflightError
from .errors import SandboxError as SandboxError
from .errors import ScriptCompileError as ScriptCompileError
from .errors import SdkGenerationError as SdkGenerationError
from .errors import TaskError as TaskError
from .errors import ToolCallError as ToolCallError
from .errors import ToolDefinitionError as ToolDefinitionError
from .errors import UnknownToolError as UnknownToolError
from .exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from .dispatch.agent import AgentSession as AgentSession
    from .dispatch.agent import Injection as Injection
    from .dispatch.cards import CardNode as CardNode
    from .dispatch.cards import CardResult as CardResult
    from .dispatch.cards import DiffCard as DiffCard
    from .dispatch.cards import FileDiff as FileDiff
    from .dispatch.cards import GenericCard as GenericCard
    from .dispatch.cards import Location as Location
    from .dispatch.cards import TerminalCard as TerminalCard
    from .dispatch.cards import fallback_card as fallback_card
    from .dispatch.cards import present_call as present_call
    from .dispatch.cards import present_result as present_result
    from .dispatch.cards import read_session as read_session
    from .dispatch.cards import render_session as render_session
    from .dispatch.cards import with_cards as with_cards
    from .dispatch.content import Envelope as Envelope
    from .dispatch.content import ErrorInfo as ErrorInfo
    from .dispatch.content import ToolResult as ToolResult
    from .dispatch.content import audio as audio
    from .dispatch.content import image as image
    from .dispatch.content import resource as resource
    from .dispatch.content import text as text
    from .dispatch.context import Allow as Allow
    from .dispatch.context import Ask as Ask
    from .dispatch.context import CancelSignal as CancelSignal
    from .dispatch.context import Deny as Deny
    from .dispatch.context import ExecContext as ExecContext
    from .dispatch.context import Token as Token
    from .dispatch.context import ToolCall as ToolCall
    from .dispatch.decorator import tool as tool
    from .dispatch.events import JsonlSessionLog as JsonlSessionLog
    from .dispatch.events import ToolEvent as ToolEvent
    from .dispatch.frozen import FrozenDict as FrozenDict
    from .dispatch.frozen import thaw as thaw
    from .dispatch.registry import Registration as Registration
    from .dispatch.registry import ToolRegistry as ToolRegistry
    from .dispatch.spec import ToolSpec as ToolSpec
    from .dispatch.task_tools import task_tools as task_tools
    from .dispatch.tasks import OutputBuffer as OutputBuffer
    from .dispatch.tasks import TaskIO as TaskIO
    from .dispatch.tasks import TaskManager as TaskManager
    from .dispatch.tasks import TaskStart as TaskStart
    from .dispatch.tasks import TaskStatus as TaskStatus
    from .dispatch.tasks import background as background
    from .dispatch.tool import Tool as Tool
    from .dispatch.tool import define_tool as define_tool
    from .integrations.mcp import McpTools as McpTools
    from .integrations.mcp import register_mcp_tools as register_mcp_tools
    from .mode.approval import ApprovalRequest as ApprovalRequest
    from .mode.approval import PlannedCall as PlannedCall
    from .mode.code_mode import CodeMode as CodeMode
    from .mode.journal import Journal as Journal
    from .mode.journal import JournalEntry as JournalEntry
    from .mode.ledger import RunResult as RunResult
    from .mode.session import Session as Session
    from .mode.stream import CallEndEvent as CallEndEvent
    from .mode.stream import CallStartEvent as CallStartEvent
    from .mode.stream import OutputEvent as OutputEvent
    from .mode.stream import RunEndEvent as RunEndEvent
    from .mode.stream import RunStream as RunStream
    from .sandbox import Executor as Executor
    from .sandbox import InProcessExecutor as InProcessExecutor
    from .sandbox import Limits as Limits
    from .sandbox import ScriptError as ScriptError
    from .sandbox import ScriptResult as ScriptResult
    from .sandbox import WorkerPoolExecutor as WorkerPoolExecutor

_LAZY: _typing.Final[dict[str, str]] = {
    "AgentSession": "dispatch.agent",
    "Injection": "dispatch.agent",
    "CardNode": "dispatch.cards",
    "CardResult": "dispatch.cards",
    "DiffCard": "dispatch.cards",
    "FileDiff": "dispatch.cards",
    "GenericCard": "dispatch.cards",
    "Location": "dispatch.cards",
    "TerminalCard": "dispatch.cards",
    "fallback_card": "dispatch.cards",
    "present_call": "dispatch.cards",
    "present_result": "dispatch.cards",
    "read_session": "dispatch.cards",
    "render_session": "dispatch.cards",
    "with_cards": "dispatch.cards",
    "Envelope": "dispatch.content",
    "ErrorInfo": "dispatch.content",
    "ToolResult": "dispatch.content",
    "audio": "dispatch.content",
    "image": "dispatch.content",
    "resource": "dispatch.content",
    "text": "dispatch.content",
    "Allow": "dispatch.context",
    "Ask": "dispatch.context",
    "CancelSignal": "dispatch.signal",
    "Deny": "dispatch.context",
    "ExecContext": "dispatch.context",
    "Token": "dispatch.context",
    "ToolCall": "dispatch.context",
    "tool": "dispatch.decorator",
    "JsonlSessionLog": "dispatch.events",
    "ToolEvent": "dispatch.events",
    "FrozenDict": "dispatch.frozen",
    "thaw": "dispatch.frozen",
    "Registration": "dispatch.registry",
    "ToolRegistry": "dispatch.registry",
    "ToolSpec": "dispatch.spec",
    "task_tools": "dispatch.task_tools",
    "OutputBuffer": "dispatch.tasks",
    "TaskIO": "dispatch.tasks",
    "TaskManager": "dispatch.tasks",
    "TaskStart": "dispatch.tasks",
    "TaskStatus": "dispatch.tasks",
    "background": "dispatch.tasks",
    "Tool": "dispatch.tool",
    "define_tool": "dispatch.tool",
    "McpTools": "integrations.mcp",
    "register_mcp_tools": "integrations.mcp",
    "ApprovalRequest": "mode.approval",
    "PlannedCall": "mode.approval",
    "CodeMode": "mode.code_mode",
    "Journal": "mode.journal",
    "JournalEntry": "mode.journal",
    "RunResult": "mode.ledger",
    "Session": "mode.session",
    "CallEndEvent": "mode.stream",
    "CallStartEvent": "mode.stream",
    "OutputEvent": "mode.stream",
    "RunEndEvent": "mode.stream",
    "RunStream": "mode.stream",
    "Executor": "sandbox.executors.base",
    "InProcessExecutor": "sandbox.executors.inprocess",
    "Limits": "sandbox.limits",
    "ScriptError": "sandbox.runtime.result",
    "ScriptResult": "sandbox.runtime.result",
    "WorkerPoolExecutor": "sandbox.executors.pool",
}
"""Public name -> the module that defines it, imported on first use (see
``codemode.exports``): a process that needs part of codemode does not import the rest."""

_logging.getLogger("codemode").addHandler(_logging.NullHandler())
"""Quiet by default: records reach the handlers an application configured, and are never
printed by ``logging.lastResort`` when it configured none."""

__all__ = [
    "AgentSession",
    "Allow",
    "ApprovalRequest",
    "Ask",
    "CallEndEvent",
    "CallStartEvent",
    "CancelSignal",
    "CardNode",
    "CardResult",
    "CodeMode",
    "CodemodeError",
    "Deny",
    "DiffCard",
    "DuplicateToolError",
    "Envelope",
    "ErrorInfo",
    "ExecContext",
    "Executor",
    "FileDiff",
    "FrozenDict",
    "GatewayConfigError",
    "GenericCard",
    "InProcessExecutor",
    "Injection",
    "Journal",
    "JournalEntry",
    "JsonlSessionLog",
    "LimitExceeded",
    "Limits",
    "Location",
    "McpTools",
    "OutputBuffer",
    "OutputEvent",
    "PipelineError",
    "PlannedCall",
    "PreflightError",
    "Registration",
    "RunEndEvent",
    "RunResult",
    "RunStream",
    "SandboxError",
    "ScriptCompileError",
    "ScriptError",
    "ScriptResult",
    "SdkGenerationError",
    "Session",
    "TaskError",
    "TaskIO",
    "TaskManager",
    "TaskStart",
    "TaskStatus",
    "TerminalCard",
    "Token",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolDefinitionError",
    "ToolEvent",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "UnknownToolError",
    "WorkerPoolExecutor",
    "audio",
    "background",
    "define_tool",
    "fallback_card",
    "image",
    "present_call",
    "present_result",
    "read_session",
    "register_mcp_tools",
    "render_session",
    "resource",
    "task_tools",
    "text",
    "thaw",
    "tool",
    "with_cards",
]


def _installed_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("codemode")
    except metadata.PackageNotFoundError:  # a checkout used without installing it
        return "0+unknown"


__version__: str
"""The installed distribution's version (``codemode --version`` prints the same)."""


_lazy_getattr, __dir__ = _lazy_exports(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    """A public name, imported on first use (``_LAZY``), or ``__version__``, read from the
    distribution's metadata: importing ``importlib.metadata`` and scanning the installed
    distributions cost every process that imports codemode a few milliseconds it rarely
    needs."""
    if name == "__version__":
        version = globals()["__version__"] = _installed_version()
        return version
    return _lazy_getattr(name)
