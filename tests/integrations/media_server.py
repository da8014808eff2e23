"""A real MCP server (official SDK, stdio) whose tool ``media`` answers every kind of
content block: text, an image, audio, an embedded text resource and a resource link.
Run: ``python media_server.py``."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAA"
         "AABJRU5ErkJggg==")


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(
        name="media", description="Answer one block of each kind.",
        input_schema={"type": "object"})])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[
        types.TextContent(text="caption"),
        types.ImageContent(data=PIXEL, mime_type="image/png"),
        types.AudioContent(data="UklGRg==", mime_type="audio/wav"),
        types.EmbeddedResource(resource=types.TextResourceContents(
            uri="file:///notes.txt", text="embedded notes", mime_type="text/plain")),
        types.ResourceLink(uri="file:///big.csv", name="big.csv", mime_type="text/csv"),
    ])


server = Server("media", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
