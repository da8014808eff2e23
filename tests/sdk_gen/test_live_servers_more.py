"""More live MCP servers over stdio (official client), all offline: SDK, lint, calls, CodeMode.

``mcp-server-fetch`` (one tool; only listed, fetching needs the network),
``korean-tax-calc-mcp`` (76 typed calculators, Korean descriptions, ``$defs``) and
``clinical-calc-mcp`` (FastMCP: ``additionalProperties: false``, output schemas). Their
specs are fetched at test time; nothing they publish is stored in the project.
"""

from __future__ import annotations

import json
import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.types import TextContent
from sdkgen_support import ROOT, InstanceMaker, Recorder, function_for, load_sdk

import codemode as cm
import sdk_gen
from codemode.integrations.mcp import register_mcp_tools
from sdk_gen._schema import root_object

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = pytest.mark.anyio

SERVERS = {
    "fetch": ("mcp_server_fetch", 1),
    "tax": ("korean_tax_calc_mcp", 76),
    "clinical": ("clinical_calc_mcp", 3),
}
"""Namespace → (module run with ``python -m``, number of tools it lists)."""
WANTED = {"fetch.fetch", "tax.corporate_tax", "clinical.bsa_mosteller"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def _sessions(stack: AsyncExitStack) -> dict[str, ClientSession]:
    sessions = {}
    for namespace, (module, _) in SERVERS.items():
        params = StdioServerParameters(command=sys.executable, args=["-m", module])
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        sessions[namespace] = session
    return sessions


@pytest.fixture(scope="module")
async def sessions() -> AsyncIterator[dict[str, ClientSession]]:
    """The three servers, started once for the module (each start imports the ``mcp`` SDK,
    ~2 s CPU). Sharing them is sound: they keep no state between calls (fetch is only
    listed; the calculators are pure functions) and each test has its own registry."""
    async with AsyncExitStack() as stack:
        yield await _sessions(stack)


async def _specs(sessions: dict[str, ClientSession]) -> list[dict[str, Any]]:
    specs = []
    for namespace, session in sessions.items():
        listed = await session.list_tools()
        assert len(listed.tools) == SERVERS[namespace][1], namespace
        specs += [
            {**tool.model_dump(by_alias=True, exclude_none=True), "namespace": namespace}
            for tool in listed.tools
        ]
    return specs


async def test_sdk_from_more_live_servers(
    tmp_path: Path, sessions: dict[str, ClientSession]
) -> None:
    """Generate, import, round-trip generated instances, call real tools, then one mypy + ruff."""
    gen = tmp_path / "gen"
    specs = await _specs(sessions)
    sdk = sdk_gen.generate(specs)
    assert sdk.warnings == ()
    assert sorted(sdk.names.tools.values()) == sorted(s["name"] for s in specs)
    assert set(sdk.names.tools) >= WANTED
    module = load_sdk(sdk, gen, "live_more")

    recorder = Recorder()
    module.set_transport(recorder)
    valid = total = 0
    for seed, spec in enumerate(specs):
        schema = spec["inputSchema"]
        table = sdk.names.arguments[spec["name"]]
        assert set(table.values()) == set(schema.get("properties", {})), spec["name"]
        to_py = {wire: py for py, wire in table.items()}
        func = function_for(module, sdk.names.wire_to_python(spec["name"]))
        maker = InstanceMaker(schema, seed)
        root = root_object(maker.root, maker.defs)
        validator = jsonschema.validators.validator_for(schema)(schema)
        for _ in range(3):
            instance = maker.arguments(root.properties, root.required)
            total += 1
            valid += validator.is_valid(instance)
            recorder.calls.clear()
            await func(**{to_py[k]: v for k, v in instance.items()})
            sent = [(t, json.dumps(a, sort_keys=True)) for t, a in recorder.calls]
            assert sent == [(spec["name"], json.dumps(instance, sort_keys=True))]
    assert valid / total > 0.9, f"only {valid}/{total} generated instances were schema-valid"

    namespaces = {s["name"]: s["namespace"] for s in specs}

    async def transport(tool: str, arguments: dict[str, Any]) -> Any:
        result = await sessions[namespaces[tool]].call_tool(tool, arguments)
        assert not result.is_error, result
        first = result.content[0]
        assert isinstance(first, TextContent)
        return result.structured_content or json.loads(first.text)

    module.set_transport(transport)
    body = await module.clinical.bsa_mosteller(weight_kg=81.0, height_cm=180.0)
    tax = await module.tax.corporate_tax(base=100_000_000, year=2024)

    assert body["bsa_m2"] == pytest.approx(2.0, abs=0.01)
    assert "9000000" in json.dumps(tax), tax  # 9 % of 100,000,000 won
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


async def test_codemode_runs_a_script_against_more_live_servers(
    sessions: dict[str, ClientSession],
) -> None:
    """Register every server through ``codemode.integrations.mcp``; one script calls two of them."""
    registry = cm.ToolRegistry()
    servers = {
        namespace: await register_mcp_tools(registry, session, namespace=namespace)
        for namespace, session in sessions.items()
    }
    assert {ns: len(s.names) for ns, s in servers.items()} == {
        ns: count for ns, (_, count) in SERVERS.items()
    }
    async with cm.CodeMode(registry, executor=cm.InProcessExecutor()) as mode:
        names = mode.sdk().names.tools
        assert set(names) >= WANTED
        run = await mode.run(
            "body = await tools.clinical.bsa_mosteller(weight_kg=81.0, height_cm=180.0)\n"
            "tax = await tools.tax.corporate_tax(base=100_000_000, year=2024)\n"
            "try:\n"
            "    await tools.clinical.bsa_mosteller(weight_kg=-body['bsa_m2'], height_cm=1.0)\n"
            "    bad = None\n"
            "except ToolCallError as e:\n"
            "    bad = e.message\n"
            "[round(body['bsa_m2'], 2), tax is not None, bad]"
        )
    for server in servers.values():
        server.dispose()
    assert run.ok, run.error
    bsa, taxed, bad = run.value
    assert bsa == pytest.approx(2.0, abs=0.01) and taxed
    assert "less than or equal to the minimum of 0" in bad, "refused before the server"
    assert registry.specs() == ()


class _MessyServer:
    """An MCP session whose listing carries schemas the metaschema refuses, as some do."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any] | None]] = []

    async def list_tools(self, *, params: Any = None) -> types.ListToolsResult:
        string = {"type": "string"}
        listing: dict[str, dict[str, Any]] = {
            "draft3-required": {
                "type": "object",
                "properties": {"q": {**string, "required": True}},
            },
            "js-pattern": {"properties": {"id": {**string, "pattern": "^(?<year>\\d{4})$"}}},
            "root-without-type": {"required": [], "additionalProperties": False},
            "unknown-type": {"type": "object", "properties": {"f": {"type": "file"}}},
            "fine": {"type": "object", "properties": {"from": string}, "required": ["from"]},
        }
        return types.ListToolsResult(
            tools=[types.Tool(name=name, input_schema=schema) for name, schema in listing.items()]
        )

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: Any = None,
    ) -> types.CallToolResult:
        self.calls.append((name, arguments))
        return types.CallToolResult(content=[TextContent(type="text", text=f"{name} ok")])


async def test_adapter_registers_listings_the_metaschema_refuses() -> None:
    """One refused keyword no longer keeps a whole server out: it is dropped and reported."""
    server = _MessyServer()
    registry = cm.ToolRegistry()
    made = await register_mcp_tools(registry, server, namespace="messy")
    assert set(made.names) == {
        "draft3-required", "js-pattern", "root-without-type", "unknown-type", "fine",
    }  # fmt: skip
    assert made.repairs == (
        "draft3-required: /properties/q/required (True) lifted into the parent",
        "js-pattern: dropped properties/id/pattern",
        "root-without-type: root type None read as 'object'",
        "unknown-type: dropped properties/f/type",
    )
    specs = {spec.name: spec for spec in registry.specs()}
    assert specs["draft3-required"].parameters["required"] == ["q"]
    assert "repairs" not in str(specs["fine"].parameters)
    async with cm.CodeMode(registry, executor=cm.InProcessExecutor()) as mode:
        run = await mode.run(
            "a = await tools.messy.draft3_required(q='x')\n"
            "b = await tools.messy.js_pattern(id='2024')\n"
            "c = await tools.messy.fine(from_='here')\n"
            "[a, b, c]"
        )
    assert run.ok, run.error
    assert run.value == ["draft3-required ok", "js-pattern ok", "fine ok"]
    assert server.calls == [
        ("draft3-required", {"q": "x"}),
        ("js-pattern", {"id": "2024"}),
        ("fine", {"from": "here"}),
    ]
