"""Real MCP servers that wrap plain returns as ``{"result": x}``: ``sdk`` (the MCP SDK's
``MCPServer``) or ``fastmcp`` (the ``fastmcp`` package), over stdio or streamable HTTP
(``http PORT``). The same tools on both: plain returns, a ``None``, a model (not wrapped),
a dict that has a ``result`` key of its own (not wrapped either), a renamed one."""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel


class Point(BaseModel):
    x: int
    y: int


def greet(name: str) -> str:
    """Say hello."""
    return f"hello {name}"


def count(n: int) -> list[int]:
    """Count up."""
    return list(range(n))


def nothing() -> str | None:
    """Return nothing."""
    return None


def point() -> Point:
    """A point."""
    return Point(x=1, y=2)


def own_result() -> dict[str, int]:
    """A dict whose only key is ``result``: data, not a wrapping."""
    return {"result": 7}


def shout(text: str) -> str:
    """Shout (listed as ``loud``: its function's name is in the SDK's output title)."""
    return text.upper()


TOOLS: tuple[Any, ...] = (greet, count, nothing, point, own_result)


def main() -> None:
    kind, *rest = sys.argv[1:]
    if kind == "sdk":
        from mcp.server.mcpserver import MCPServer

        server: Any = MCPServer("wrapping")
        for fn in TOOLS:
            server.tool()(fn)
        server.tool(name="loud")(shout)
    else:
        from fastmcp import FastMCP

        server = FastMCP("wrapping")
        for fn in TOOLS:
            server.tool(fn)
        server.tool(shout, name="loud")
    if rest and rest[0] == "http":
        server.run(transport="streamable-http", host="127.0.0.1", port=int(rest[1]))
    else:
        server.run()


if __name__ == "__main__":
    main()
