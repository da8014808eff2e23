"""Every tool of the shared corpus end to end, as ``codemode serve`` has it: registered from
its MCP listing (the adapter's repairs and renames), in the generated SDK and prompt, a
script calling it with its required arguments (type-correct samples built from its schema)
through the preflight and a sandboxed run, and the arguments the server receives.

One ``CodeMode`` and a script per hundred tools keep it to a few seconds (~15 s on a
loaded 2-core machine, SDK generation of 1,096 tools included)."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from mcp import types
from tool_corpus import corpus_or_skip

import codemode as cm
from codemode.dispatch.frozen import thaw
from codemode.errors import DuplicateToolError
from codemode.integrations.mcp import register_mcp_listing
from tests.integrations.corpus_sample import sample_arguments

_BATCH = 100


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _EchoServer:
    """An MCP session whose every tool answers with the name and arguments it received."""

    async def list_tools(self, *, params: Any = None) -> Any:
        raise AssertionError("the listing is given")

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                        read_timeout_seconds: float | None = None,
                        progress_callback: Any = None, **_: Any) -> types.CallToolResult:
        said = json.dumps({"tool": name, "args": arguments})
        return types.CallToolResult(content=[types.TextContent(text=said)])


def _listings() -> dict[str, list[dict[str, Any]]]:
    """Corpus tools by namespace: a LiveMCPBench server's, else the file's."""
    spaces: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(corpus_or_skip().glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            space = "_".join(path.stem.split("_")[:2])
            if isinstance(item.get("server"), str):
                space = "live_" + re.sub(r"\W", "_", item["server"].rsplit("/", 1)[-1])
            spaces.setdefault(space, []).append(
                {k: item[k] for k in ("name", "description", "inputSchema", "outputSchema")
                 if k in item})
    return spaces


async def test_every_corpus_tool_is_called_from_a_script_with_what_it_was_sent() -> None:
    registry = cm.ToolRegistry()
    server = _EchoServer()
    skipped: list[str] = []
    remote: dict[str, str] = {}
    for space, listing in _listings().items():
        try:
            made = register_mcp_listing(registry, listing, server, namespace=space,
                                        skip_invalid=True)
        except DuplicateToolError:  # a name another namespace took: as the gateway does
            made = register_mcp_listing(registry, listing, server, namespace=space,
                                        skip_invalid=True, prefix=f"{space}_")
        prefix = "" if made.names[0] in (t["name"] for t in listing) else f"{space}_"
        remote.update({wire: wire.removeprefix(prefix) for wire in made.names})
        skipped += made.skipped
    # only BFCL's repeated functions are left out (the first of each is registered)
    assert all("listed more than once" in s for s in skipped), skipped
    specs = registry.specs()
    assert len(specs) + len(skipped) == 1161

    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor(),
                       limits=cm.Limits(timeout=120, result=16 << 20))
    sdk = mode.sdk()
    compile(sdk.module_source, "tools.py", "exec")
    paths = {wire: path for path, wire in sdk.names.tools.items()}
    assert set(paths) == {s.name for s in specs}
    prompt = mode.prompt()

    calls: list[tuple[str, str, dict[str, Any]]] = []
    unsampled: list[str] = []
    for spec in specs:
        assert paths[spec.name].rpartition(".")[2] in prompt
        schema = thaw(spec.parameters)
        args = sample_arguments(schema)
        validator = jsonschema.validators.validator_for(schema)(schema)
        if not isinstance(args, dict) or not validator.is_valid(args):
            unsampled.append(spec.name)  # a pattern or default this sampler cannot meet
            continue
        calls.append((spec.name, paths[spec.name], args))
    assert len(unsampled) <= 2, unsampled

    received: dict[str, Any] = {}
    problems: list[str] = []
    for start in range(0, len(calls), _BATCH):
        batch = calls[start:start + _BATCH]
        lines = ["out = []"]
        for wire, path, args in batch:
            python = sdk.names.arguments_to_python(wire, args)
            keywords = ", ".join(f"{name}={value!r}" for name, value in python.items())
            lines.append(f"out.append(await tools.{path}({keywords}))")
        script = "\n".join([*lines, "out"])
        problems += [f"{batch[p.line - 2][0]}: {p.message}" for p in mode.check(script)]
        run = await mode.run(script)
        assert run.ok, run.error
        for (wire, _, _), answer in zip(batch, run.value, strict=True):
            received[wire] = answer if isinstance(answer, dict) else json.loads(answer)
    assert problems == []
    wrong = [(wire, args, received[wire]) for wire, _, args in calls
             if received[wire] != {"tool": remote[wire], "args": args}]
    assert wrong == []

