"""codemode: a Code Mode host — typed tool SDKs, sandboxed scripts, one validated pipeline."""

import logging as _logging

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


def __getattr__(name: str) -> str:
    """``__version__``, read from the distribution's metadata on first use: importing
    ``importlib.metadata`` and scanning the installed distributions cost every process
    that imports codemode a few milliseconds it rarely needs."""
    if name == "__version__":
        version = globals()["__version__"] = _installed_version()
        return version
    raise AttributeError(f"module 'codemode' has no attribute {name!r}")
