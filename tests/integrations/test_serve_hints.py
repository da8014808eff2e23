"""What ``codemode serve`` tells a client about its tools besides their schemas, checked
with the official ``mcp`` client over stdio against a real ``codemode serve`` with real
upstreams (mcp-server-time, mcp-server-git; one check in-process): each tool's ``title``
and ``annotations`` (clients such as Claude Desktop and Cursor ask before a call that
may write or destroy, not before a read-only one), and the server's version."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client

import codemode as cm
from codemode.integrations.gateway import Gateway, load_config
from codemode.integrations.server import GatewayServer
from tests.integrations.checkout import ENV

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

PY = sys.executable
TIME = {"command": PY, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
             "openWorldHint": False}
"""What mcp-server-time lists for its tools, and serve for search_tools/describe_tools."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def _served(tmp_path: Path, servers: dict[str, Any]) -> AsyncIterator[Client]:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    params = StdioServerParameters(command=PY, env=ENV, cwd=str(tmp_path), args=[
        "-m", "codemode.cli", "serve", "--executor", "inprocess", "--config", str(config),
        "--expose-upstream"])
    with (tmp_path / "serve.stderr").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err), mode="legacy") as client:  # type: ignore[arg-type]
            yield client
    assert "Traceback" not in (tmp_path / "serve.stderr").read_text(encoding="utf-8")


def _hints(listed: types.ListToolsResult) -> dict[str, tuple[str | None, dict[str, Any]]]:
    return {t.name: (t.title, t.annotations.model_dump(by_alias=True, exclude_none=True)
                     if t.annotations else {}) for t in listed.tools}


async def test_upstream_annotations_are_relayed_and_run_code_gets_their_common_ground(
        tmp_path: Path, repo: Path) -> None:
    """Exposed upstream tools lost their annotations (git_reset's destructiveHint, every
    read-only hint) and the server's version was empty."""
    git = {"command": PY, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}
    async with _served(tmp_path, {"time": TIME, "git": git}) as client:
        info = client.server_info
        hints = _hints(await client.list_tools())
    assert (info.name, info.version) == ("codemode", metadata.version("codemode"))
    assert hints["get_current_time"] == (None, READ_ONLY)
    assert hints["git_reset"] == (None, {"readOnlyHint": False, "destructiveHint": True,
                                         "idempotentHint": True, "openWorldHint": False})
    assert hints["git_log"][1]["readOnlyHint"] is True
    assert hints["search_tools"] == ("Search tools", READ_ONLY)
    assert hints["describe_tools"] == ("Describe tools", READ_ONLY)
    # a script may call git_reset: run_code is neither read-only nor non-destructive, but
    # no tool reaches outside (every one says openWorldHint false)
    assert hints["run_code"] == ("Run code", {"openWorldHint": False})

    # over time's tools only (in-process: the same server object), a script only reads
    async with cm.InProcessExecutor() as executor, Gateway(
            load_config({"mcpServers": {"time": TIME}}), executor=executor) as gateway, Client(
                GatewayServer(gateway).server) as client:
        hints = _hints(await client.list_tools())
    assert hints["run_code"] == ("Run code", {"readOnlyHint": True, "destructiveHint": False,
                                              "openWorldHint": False})
