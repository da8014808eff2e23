"""Register an MCP server's tools in a registry, under a namespace.

Each MCP tool becomes a ``Tool`` whose spec is the server's own (name,
description, input and output schemas, namespace) and whose handler calls the
server through an initialised ``mcp.ClientSession``. Calls therefore go
through the same pipeline as local tools, and scripts reach them as
``tools.<namespace>.<name>(...)``. Needs the ``mcp`` extra.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, final

from .errors import ToolDefinitionError
from .frozen import thaw
from .tool import Tool, define_tool

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .context import ExecContext
    from .registry import Registration, ToolRegistry

__all__ = ["McpTools", "mcp_tools", "register_mcp_tools"]


class McpSession(Protocol):
    """What the adapter needs of ``mcp.ClientSession``."""

    async def list_tools(self, *, params: Any = None) -> Any: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: Any = None,
    ) -> Any: ...


def _dump(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


async def _list(session: McpSession) -> list[dict[str, Any]]:
    from mcp import types

    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = _dump(await session.list_tools(params=params))
        tools.extend(page.get("tools", []))
        cursor = page.get("nextCursor")
        if not cursor:
            return tools


def _handler(session: McpSession, remote: str) -> Any:
    async def call(args: Mapping[str, Any], ctx: ExecContext) -> dict[str, Any]:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            ctx.progress({"progress": done, "total": total, "message": message})

        result = _dump(await session.call_tool(remote, thaw(args), progress_callback=progress))
        envelope: dict[str, Any] = {
            "content": result.get("content") or "",
            "is_error": bool(result.get("isError")),
        }
        if result.get("structuredContent") is not None and not envelope["is_error"]:
            envelope["structured"] = result["structuredContent"]
        if result.get("_meta"):
            envelope["meta"] = {"mcp": result["_meta"]}
        return envelope

    return call


def mcp_tools(
    specs: list[dict[str, Any]], session: McpSession, *, namespace: str | None, prefix: str = ""
) -> list[Tool]:
    """``Tool``s for MCP tool listings (``tools/list`` entries) served by ``session``."""
    tools = []
    for spec in specs:
        name = spec.get("name")
        if not isinstance(name, str):
            raise ToolDefinitionError(repr(name), "MCP tool listing without a string name")
        tools.append(
            define_tool(
                name=prefix + name,
                description=spec.get("description") or "",
                parameters=spec.get("inputSchema") or {"type": "object"},
                output_schema=spec.get("outputSchema"),
                execute=_handler(session, name),
                namespace=namespace,
            )
        )
    return tools


@final
@dataclass(frozen=True, slots=True)
class McpTools:
    """The registrations made for one server; ``dispose()`` removes them all."""

    registrations: tuple[Registration, ...]
    """One per tool, in listing order."""

    @property
    def names(self) -> tuple[str, ...]:
        """Wire names registered."""
        return tuple(r.tool.name for r in self.registrations)

    def dispose(self) -> None:
        """Unregister every tool of this server (idempotent)."""
        for registration in self.registrations:
            registration.dispose()


async def register_mcp_tools(
    registry: ToolRegistry, session: McpSession, *, namespace: str | None, prefix: str = ""
) -> McpTools:
    """List the server's tools (all pages) and register them; all or nothing.

    ``prefix`` is prepended to wire names when two servers' tool names collide
    in one registry. A tool whose schema is invalid raises ``ToolDefinitionError``
    before anything is registered.
    """
    tools = mcp_tools(await _list(session), session, namespace=namespace, prefix=prefix)
    made: list[Registration] = []
    try:
        for tool in tools:
            made.append(registry.register(tool))
    except BaseException:
        for registration in made:
            registration.dispose()
        raise
    return McpTools(tuple(made))
