"""The model-visible projection of a tool: what leaves the host core."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ToolSpec"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """What the SDK, the prompt and the sandbox may see of a tool; never the handler."""

    name: str
    """Wire name, exactly as callers send it."""
    description: str = ""
    """Model-facing description."""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    """JSON Schema (object root) of the arguments."""
    output_schema: Mapping[str, Any] | None = None
    """JSON Schema of structured results, when the tool declares one."""
    namespace: str | None = None
    """Group in the SDK (``tools.<namespace>.<name>``), e.g. an MCP server's name."""
    visible_in_code: bool = True
    """Whether scripts may call this tool through the ``tools`` proxy."""
    returns_text: bool = False
    """The tool answers text (content blocks, no structured result), so a script receives a
    ``str`` and the SDK says ``-> str``; e.g. an upstream MCP tool without ``outputSchema``.
    ``False`` (a local tool whose handler returns data) leaves the result type open."""
