"""A real MCP server (official SDK, stdio) whose tool list changes: ``grow`` adds a tool
and sends ``notifications/tools/list_changed``. Run: ``python changing_server.py``."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

_names = ["grow"]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    tools = [
        types.Tool(
            name=name,
            description="Add a tool named `name` to this server." if name == "grow"
            else f"Echo a text (added at run time as {name}).",
            input_schema={"type": "object", "properties": {
                ("name" if name == "grow" else "text"): {"type": "string"}},
                "required": ["name" if name == "grow" else "text"]},
        )
        for name in _names
    ]
    return types.ListToolsResult(tools=tools)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "grow":
        _names.append(str(args["name"]))
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(text=f"added {args['name']}")])
    return types.CallToolResult(content=[types.TextContent(text=f"{params.name}: {args['text']}")])


server = Server("changing", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(
            read, write,
            server.create_initialization_options(NotificationOptions(tools_changed=True)),
        )


if __name__ == "__main__":
    anyio.run(main)
