"""codemode: a Code Mode host — typed tool SDKs, sandboxed scripts, one validated pipeline."""

from .content import ErrorInfo as ErrorInfo
from .content import ToolResult as ToolResult
from .content import audio as audio
from .content import image as image
from .content import resource as resource
from .content import text as text
from .context import Allow as Allow
from .context import Ask as Ask
from .context import CancelSignal as CancelSignal
from .context import Deny as Deny
from .context import ExecContext as ExecContext
from .context import Token as Token
from .context import ToolCall as ToolCall
from .decorator import tool as tool
from .errors import CodemodeError as CodemodeError
from .errors import DuplicateToolError as DuplicateToolError
from .errors import LimitExceeded as LimitExceeded
from .errors import PipelineError as PipelineError
from .errors import PreflightError as PreflightError
from .errors import SandboxError as SandboxError
from .errors import ScriptCompileError as ScriptCompileError
from .errors import SdkGenerationError as SdkGenerationError
from .errors import ToolCallError as ToolCallError
from .errors import ToolDefinitionError as ToolDefinitionError
from .errors import UnknownToolError as UnknownToolError
from .events import JsonlSessionLog as JsonlSessionLog
from .events import ToolEvent as ToolEvent
from .frozen import FrozenDict as FrozenDict
from .frozen import thaw as thaw
from .mcp import McpTools as McpTools
from .mcp import register_mcp_tools as register_mcp_tools
from .mode import CodeMode as CodeMode
from .registry import Registration as Registration
from .registry import ToolRegistry as ToolRegistry
from .sandbox import Executor as Executor
from .sandbox import InProcessExecutor as InProcessExecutor
from .sandbox import Limits as Limits
from .sandbox import ScriptError as ScriptError
from .sandbox import ScriptResult as ScriptResult
from .sandbox import WorkerPoolExecutor as WorkerPoolExecutor
from .spec import ToolSpec as ToolSpec
from .tool import Tool as Tool
from .tool import define_tool as define_tool

__all__ = [
    "Allow",
    "Ask",
    "CancelSignal",
    "CodeMode",
    "CodemodeError",
    "Deny",
    "DuplicateToolError",
    "ErrorInfo",
    "ExecContext",
    "Executor",
    "FrozenDict",
    "InProcessExecutor",
    "JsonlSessionLog",
    "LimitExceeded",
    "Limits",
    "McpTools",
    "PipelineError",
    "PreflightError",
    "Registration",
    "SandboxError",
    "ScriptCompileError",
    "ScriptError",
    "ScriptResult",
    "SdkGenerationError",
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
    "define_tool",
    "image",
    "register_mcp_tools",
    "resource",
    "text",
    "thaw",
    "tool",
]
