"""An MCP SDK (``MCPServer``) server whose tools fail: ``crash`` raises a ``ValueError``
(the SDK answers only ``Error executing tool crash``: it keeps a crash's text on the
server), ``refuse`` raises the SDK's ``ToolError`` (its text reaches the client)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("failing")


@server.tool()
def crash(table: str) -> str:
    """Fail with an unexpected exception."""
    raise ValueError(f"the table {table} is locked")


@server.tool()
def refuse(table: str) -> str:
    """Fail on purpose."""
    raise ToolError(f"no access to {table} (read-only)")


if __name__ == "__main__":
    server.run()
