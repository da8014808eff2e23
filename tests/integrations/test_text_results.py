"""Tools that answer text say so (``ToolSpec.returns_text``): ``-> str # text`` in the
prompt, ``-> str`` in the module and stub, and a script receives a ``str``. Upstream MCP
tools without ``outputSchema`` are such tools (mcp-server-git, started offline); ones with
it (mcp-server-time) stay typed, and a local tool stays open (``-> Any``)."""

from __future__ import annotations

import json
import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import codemode as cm
import sdk_gen
from codemode.errors import ToolDefinitionError
from codemode.integrations.mcp import register_mcp_tools
from tests.integrations.checkout import ENV

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

PY = sys.executable


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def upstreams(repo: Path) -> AsyncIterator[cm.ToolRegistry]:
    """A registry holding the tools of a live mcp-server-git and mcp-server-time."""
    registry = cm.ToolRegistry()
    async with AsyncExitStack() as stack:
        for namespace, args in (
            ("git", ["-m", "mcp_server_git", "--repository", str(repo)]),
            ("time", ["-m", "mcp_server_time", "--local-timezone", "UTC"]),
        ):
            params = StdioServerParameters(command=PY, args=args)
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await register_mcp_tools(registry, session, namespace=namespace)
        yield registry


def _block(prompt: str, name: str) -> list[str]:
    """The lines of tool ``name`` in a prompt: its own line and the indented ones below."""
    lines = prompt.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split(":")[0] == name)
    rest = lines[start + 1 :]
    end = next((i for i, line in enumerate(rest) if not line.startswith(" ")), len(rest))
    return [lines[start], *rest[:end]]


async def test_upstream_tools_without_output_schema_answer_text(
    upstreams: cm.ToolRegistry, repo: Path
) -> None:
    specs = {spec.name: spec for spec in upstreams.specs()}
    assert specs["git_status"].output_schema is None and specs["git_status"].returns_text
    assert specs["get_current_time"].output_schema is not None
    assert not specs["get_current_time"].returns_text
    async with cm.CodeMode(upstreams, executor=cm.InProcessExecutor()) as mode:
        prompt = mode.prompt()
        assert " -> str # text" in _block(prompt, "git_status")
        time_result = [ln for ln in _block(prompt, "get_current_time") if ln.startswith(" -> ")]
        assert time_result and "str # text" not in time_result[0]
        assert "`-> str # text`: the tool answers text as sent" in prompt
        run = await mode.run(
            f"status = await tools.git.git_status(repo_path={str(repo)!r})\n"
            "now = await tools.time.get_current_time(timezone='UTC')\n"
            "[type(status).__name__, 'notes' in status or 'clean' in status,"
            " type(now).__name__]"
        )
    assert run.ok, run.error
    assert run.value == ["str", True, "dict"]


def test_typed_files_and_stub_say_str_only_for_text_tools() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    text = cm.define_tool(name="lookup", parameters=schema, returns_text=True,
                          execute=lambda args: "{}")
    data = cm.define_tool(name="local", parameters=schema, execute=lambda args: {})
    cache = sdk_gen.SdkCache()
    sdk = sdk_gen.generate([text.spec, data.spec], cache=cache)
    assert _block(sdk.prompt, "lookup")[-1] == " -> str # text"
    assert not any(ln.startswith(" -> ") for ln in _block(sdk.prompt, "local"))
    for source in (sdk.module_source, sdk.stub_source):
        compile(source, "tools", "exec")
        assert ") -> str:\n" in source.split("async def lookup(")[1].split('"""')[0]
        assert ") -> Any:\n" in source.split("async def local(")[1].split('"""')[0]
    assert "Returns:" in sdk.stub_source.split("async def lookup(")[1]
    assert "Returns:" not in sdk.stub_source.split("async def local(")[1].split("async def")[0]
    flag_off = sdk_gen.generate([_dict(text.spec), data.spec], cache=cache)
    assert flag_off.prompt == sdk_gen.generate([_dict(text.spec), data.spec]).prompt
    assert " -> str" not in flag_off.prompt  # the flag is part of what the cache keys on


def _dict(spec: Any) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "inputSchema": spec.parameters}


def test_returns_text_and_an_output_schema_contradict() -> None:
    with pytest.raises(ToolDefinitionError, match="returns_text"):
        cm.define_tool(name="t", returns_text=True, output_schema={"type": "object"},
                       execute=lambda args: {})


async def test_a_local_text_tool_answers_a_str_even_when_it_holds_json() -> None:
    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="report", returns_text=True,
                                     execute=lambda args: json.dumps({"n": 3})))
    async with cm.CodeMode(registry, executor=cm.InProcessExecutor()) as mode:
        run = await mode.run("r = await tools.report()\n[type(r).__name__, json.loads(r)['n']]")
    assert run.ok, run.error
    assert run.value == ["str", 3]


async def test_serve_run_code_description_shows_text_results(tmp_path: Path, repo: Path) -> None:
    config = tmp_path / "mcp.json"
    git = {"command": PY, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}
    config.write_text(json.dumps({"mcpServers": {"git": git}}), encoding="utf-8")
    params = StdioServerParameters(
        command=PY, cwd=str(tmp_path),
        args=["-m", "codemode.cli", "serve", "--executor", "inprocess", "--config", str(config)],
        env=ENV,
    )
    with (tmp_path / "serve.stderr").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            listed = await client.list_tools()
    run_code = next(tool for tool in listed.tools if tool.name == "run_code")
    description = run_code.description or ""
    assert " -> str # text" in _block(description, "git_log")
    assert "`-> str # text`: the tool answers text as sent" in description
