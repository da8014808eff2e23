"""Live MCP servers over stdio (official client): SDK from ``tools/list``, calls through it.

Nothing the servers publish is stored in the project: the specs are fetched at test time.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from sdkgen_support import load_sdk

import sdk_gen

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _git_repo(path: Path) -> Path:
    path.mkdir()
    for args in (
        ["init", "-q"],
        ["config", "user.email", "t@example.invalid"],
        ["config", "user.name", "t"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / "a.txt").write_text("hello\n")
    subprocess.run(["git", "add", "a.txt"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "first"], cwd=path, check=True)
    return path


async def _session(stack: AsyncExitStack, module: str, *args: str) -> ClientSession:
    params = StdioServerParameters(command=sys.executable, args=["-m", module, *args])
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def _specs(session: ClientSession, namespace: str) -> list[dict[str, Any]]:
    listed = await session.list_tools()
    return [
        {**tool.model_dump(by_alias=True, exclude_none=True), "namespace": namespace}
        for tool in listed.tools
    ]


async def test_sdk_from_live_mcp_servers(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo")
    async with AsyncExitStack() as stack:
        time_session = await _session(stack, "mcp_server_time", "--local-timezone", "UTC")
        git_session = await _session(stack, "mcp_server_git", "--repository", str(repo))
        specs = [*await _specs(time_session, "time"), *await _specs(git_session, "git")]
        sessions = {
            s["name"]: (time_session if s["namespace"] == "time" else git_session) for s in specs
        }

        sdk = sdk_gen.generate(specs)
        assert sdk.warnings == ()
        assert {"time.get_current_time", "time.convert_time", "git.git_status"} <= set(
            sdk.names.tools
        )
        module = load_sdk(sdk, tmp_path / "gen", "mcp_tools")

        sent: list[tuple[str, dict[str, Any]]] = []

        async def transport(tool: str, arguments: dict[str, Any]) -> Any:
            sent.append((tool, arguments))
            result = await sessions[tool].call_tool(tool, arguments)
            assert not result.is_error, result
            return result.structured_content or result.content[0].text

        module.set_transport(transport)
        now = await module.time.get_current_time(timezone="UTC")
        status = await module.git.git_status(repo_path=str(repo))
        log = await module.git.git_log(repo_path=str(repo), max_count=1)

    assert now["timezone"] == "UTC"
    assert "nothing to commit" in str(status) or "working tree clean" in str(status)
    assert "first" in str(log)
    assert sent == [
        ("get_current_time", {"timezone": "UTC"}),
        ("git_status", {"repo_path": str(repo)}),
        ("git_log", {"repo_path": str(repo), "max_count": 1}),
    ]
    checked = await anyio.run_process(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "."],
        cwd=tmp_path / "gen",
        check=False,
    )
    assert checked.returncode == 0, checked.stdout.decode()
