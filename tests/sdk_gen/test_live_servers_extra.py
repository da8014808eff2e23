"""Three more live MCP servers over stdio, all offline, each built on a different stack.

``excel-mcp-server`` (the ``mcp`` SDK: 46 tools, deep nested arguments, output schemas, an
embedded-resource result), ``mcp-sequential-thinking`` (the SDK's ``MCPServer``: ``$defs``,
optional values with bounds in their branch) and ``kglite`` (a Rust server: a declared
``$schema``, ``format: uint64``, ``oneOf`` results). Their specs are fetched at test time;
nothing they publish is stored in the project.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from sdkgen_support import ROOT, load_sdk

import codemode as cm
import sdk_gen
from codemode.integrations.mcp import register_mcp_tools
from sdk_gen._audit import audit_prompt

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = pytest.mark.anyio

SERVERS = {
    "excel": (["-m", "excel_mcp", "stdio"], 46),
    "steps": (["-m", "mcp_sequential_thinking.server"], 11),
    "kg": (["-m", "kglite.mcp_server", "--source-root", "{root}"], 10),
}
"""Namespace → (``python`` arguments, number of tools it lists)."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def _sessions(stack: AsyncExitStack, home: Path) -> dict[str, ClientSession]:
    from mcp.client.stdio import stdio_client

    (home / "src").mkdir(exist_ok=True)
    (home / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    env = {"HOME": str(home), "EXCEL_FILES_PATH": str(home)}  # their files stay in tmp_path
    sessions = {}
    for namespace, (args, _) in SERVERS.items():
        argv = [arg.format(root=home / "src") for arg in args]
        params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=home)
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        sessions[namespace] = session
    return sessions


@pytest.fixture(scope="module")
async def sessions(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[dict[str, ClientSession]]:
    """The three servers, started once for the module in one home folder (each start imports
    its stack, seconds of CPU). Sharing them is sound: listing changes nothing, and the one
    script that writes (a workbook it creates with ``overwrite=True``, a new thinking
    session) reads back only what it wrote itself."""
    async with AsyncExitStack() as stack:
        yield await _sessions(stack, tmp_path_factory.mktemp("home"))


async def test_sdk_from_extra_live_servers(
    tmp_path: Path, sessions: dict[str, ClientSession]
) -> None:
    """Every tool renders typed, the prompt loses no fact, the module passes mypy and ruff."""
    specs: list[dict[str, Any]] = []
    for namespace, session in sessions.items():
        listed = await session.list_tools()
        assert len(listed.tools) == SERVERS[namespace][1], namespace
        specs += [
            {**tool.model_dump(by_alias=True, exclude_none=True), "namespace": namespace}
            for tool in listed.tools
        ]
    sdk = sdk_gen.generate(specs)
    assert sdk.warnings == ()
    checked, lost = audit_prompt(specs, sdk)
    assert lost == [] and checked["nested names"] > 100
    gen = tmp_path / "gen"
    load_sdk(sdk, gen, "live_extra")
    files = sorted(str(p) for p in gen.iterdir() if p.suffix in {".py", ".pyi"})
    checks = [
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
         str(tmp_path / ".mypy"), *files],
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
         str(ROOT / "pyproject.toml"), *files],
    ]  # fmt: skip
    for command in checks:
        done = await anyio.run_process(command, cwd=gen, check=False)
        assert done.returncode == 0, done.stdout.decode()[-3000:]


SCRIPT = """
book = 'book.xlsx'
await tools.excel.create_workbook(path=book, overwrite=True)
await tools.excel.write_range(path=book, sheet='Sheet1', at='A1', rows=[['n', 'sq'], [3, '=A2*A2']])
cells = await tools.excel.read_range(path=book, sheet='Sheet1', range='A1:B2')
exported = await tools.excel.export_workbook(path=book)
session = await tools.steps.create_session(title='sweep')
await tools.steps.add_step(session_id=session['session_id'], content='n squared', request_id='r1')
log = await tools.steps.read_session(session_id=session['session_id'])
hits = await tools.kg.grep(pattern='def ', glob='*.py')
try:
    await tools.excel.read_range(path=book, sheet='Sheet1', max_cells='many' * len(book))
    bad = None
except ToolCallError as e:
    bad = e.message
[cells['values'], 'attached' in exported, [s['content'] for s in log['steps']], hits, bad]
"""


async def test_codemode_runs_a_script_against_extra_live_servers(
    sessions: dict[str, ClientSession],
) -> None:
    """One script uses all three servers; a wrong argument fails cleanly, before any server."""
    registry = cm.ToolRegistry()
    for namespace, session in sessions.items():
        made = await register_mcp_tools(registry, session, namespace=namespace)
        assert made.repairs == ()
    async with cm.CodeMode(registry, executor=cm.InProcessExecutor()) as mode:
        assert "kg.read_source" in mode.sdk().names.tools
        preflight = await mode.run("await tools.steps.add_step(session_id='s', content='')")
        run = await mode.run(SCRIPT)
    assert preflight.error is not None and preflight.error.type == "PreflightError"
    assert "should be non-empty" in preflight.error.message, preflight.error.message
    assert run.ok, run.error
    values, attached, steps, hits, bad = run.value
    assert values == [["n", "sq"], [3, 9]]
    assert attached and [a["type"] for a in run.attachments] == ["resource"]
    assert run.attachments[0]["resource"]["blob"]  # the workbook, base64, for the caller
    assert steps == ["n squared"]
    assert "calc.py:1:def add(a, b):" in hits
    assert bad is not None and "$.max_cells" in bad and "not of type 'integer'" in bad
