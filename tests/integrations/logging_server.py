"""A real MCP server (the official SDK's ``MCPServer``) whose tool logs while it runs:
``talk(word)`` sends ``"<word> said"`` at ``info`` through its request's context (so over
streamable HTTP the message comes on that request's own stream). Run: ``python
logging_server.py`` (stdio) or ``python logging_server.py http PORT``."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("talker")


@server.tool()
async def talk(word: str, ctx: Context) -> str:
    """Log that ``word`` was said, then answer it."""
    await ctx.info(f"{word} said")
    return word


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
