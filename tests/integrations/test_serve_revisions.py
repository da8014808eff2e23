"""A client of an older MCP revision gets only the content blocks its revision defines:
audio came with 2025-03-26 and resource links with 2025-06-18, and a client of an earlier
one (its SDK's result model has no such type) fails the whole result on one. Checked with
the official ``mcp`` client session (initialized at 2024-11-05) against a real
``codemode serve`` over stdio whose upstream answers every kind of block; a current
client (in-process) gets the blocks as sent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

import codemode as cm
from codemode.integrations.gateway import Gateway, load_config
from codemode.integrations.server import GatewayServer
from tests.integrations.checkout import ENV

if TYPE_CHECKING:
    from collections.abc import Sequence

PY = sys.executable
CONFIG = {"mcpServers": {"media": {
    "command": PY, "args": [str(Path(__file__).resolve().parent / "media_server.py")]}}}
SCRIPT = {"code": "await tools.media.media()"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _blocks(content: Sequence[Any]) -> list[str]:
    return [b.text if isinstance(b, types.TextContent) else b.type for b in content]


async def test_a_2024_client_gets_audio_and_resource_links_as_text(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(CONFIG), encoding="utf-8")
    params = StdioServerParameters(command=PY, env=ENV, cwd=str(tmp_path), args=[
        "-m", "codemode.cli", "serve", "--executor", "inprocess", "--config", str(config),
        "--expose-upstream"])
    with (tmp_path / "serve.stderr").open("w", encoding="utf-8") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(
                read, write) as session:
            hello = await session.send_request(types.InitializeRequest(
                params=types.InitializeRequestParams(
                    protocol_version="2024-11-05", capabilities=types.ClientCapabilities(),
                    client_info=types.Implementation(name="old", version="1"))),
                types.InitializeResult)
            assert hello.protocol_version == "2024-11-05"
            await session.send_notification(types.InitializedNotification())

            async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
                return await session.send_request(types.CallToolRequest(
                    params=types.CallToolRequestParams(name=name, arguments=arguments)),
                    types.CallToolResult)

            direct = await call("media", {})
            run = await call("run_code", SCRIPT)
    assert "Traceback" not in (tmp_path / "serve.stderr").read_text(encoding="utf-8")
    assert _blocks(direct.content) == [
        "caption", "image",
        "[audio audio/wav, 8 base64 chars: not sent, protocol 2024-11-05 has no audio"
        " content]",
        "resource", "[resource link file:///big.csv (big.csv, text/csv)]"]
    # run_code attaches the binary blocks after its text: the audio one as a text too
    assert not run.is_error
    assert _blocks(run.content)[1:] == ["image", _blocks(direct.content)[2]]

    async with cm.InProcessExecutor() as executor, Gateway(
            load_config(CONFIG), executor=executor) as gateway, Client(
                GatewayServer(gateway, expose_upstream=True).server) as client:
        current = await client.call_tool("media", {})
    assert _blocks(current.content) == ["caption", "image", "audio", "resource",
                                        "resource_link"]
