"""A real MCP server (the official SDK's ``MCPServer``) whose tools log while they run:
``talk(word)`` sends ``"<word> said"`` at ``info`` through its request's context (so over
streamable HTTP the message comes on that request's own stream); ``wait(seconds)`` logs
``waiting``, then sleeps. Run: ``python logging_server.py`` (stdio) or ``python
logging_server.py http PORT``."""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("talker")


@server.tool()
async def talk(word: str, ctx: Context) -> str:
    """Log that ``word`` was said, then answer it."""
    await ctx.info(f"{word} said")
    return word


@server.tool()
async def wait(seconds: float, ctx: Context) -> str:
    """Log ``waiting``, sleep ``seconds``, then answer (a call a test can kill the server
    during, once it knows the call arrived)."""
    await ctx.info("waiting")
    await anyio.sleep(seconds)
    return "waited"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
