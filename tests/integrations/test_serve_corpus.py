"""Real servers' tool schemas through ``codemode serve``: a varied sample of the shared
corpus (``$ref``, ``anyOf``/``oneOf``, enums, ``const``, ``not``, patterns, formats,
nullable types, typed ``additionalProperties``, dotted and dashed names), plus the shapes
the corpus lacks (a unicode name, ``$defs`` with ``patternProperties``, 600 properties),
served by a real upstream process over stdio (``echo_server.py``) and called through the
gateway by the official ``mcp`` client: the listing as published, the SDK the model reads,
script calls that reach the upstream with exactly their arguments, bad arguments refused
before anything runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, types
from tool_corpus import corpus_or_skip

import codemode as cm
from codemode.integrations.gateway import Gateway, load_config
from codemode.integrations.server import GatewayServer
from tests.integrations.corpus_sample import sample_arguments
from tests.integrations.raw_peer import PY

ECHO = str(Path(__file__).resolve().parent / "echo_server.py")
_PER_FEATURE = 3

_FEATURES: dict[str, Any] = {
    "$ref": lambda s: '"$ref"' in s,
    "oneOf": lambda s: '"oneOf"' in s,
    "anyOf": lambda s: '"anyOf"' in s,
    "enum": lambda s: '"enum"' in s,
    "const": lambda s: '"const"' in s,
    "not": lambda s: '"not"' in s,
    "pattern": lambda s: '"pattern"' in s,
    "format": lambda s: '"format"' in s,
    "typed additionalProperties": lambda s: re.search(r'"additionalProperties": \{"', s),
    "nullable": lambda s: '"null"' in s,
}
_MADE = [  # shapes no corpus tool has
    {"name": "翻译.文本-v2", "description": "Translate a text.", "inputSchema": {
        "type": "object", "required": ["文本"], "properties": {
            "文本": {"type": "string"}, "from": {"type": "string"}, "class": {"type": "integer"}}}},
    {"name": "with_defs", "description": "Points and tags.", "inputSchema": {
        "type": "object", "required": ["at"],
        "$defs": {"Point": {"type": "object", "required": ["x", "y"], "additionalProperties": False,
                            "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
        "properties": {
            "at": {"$ref": "#/$defs/Point"},
            "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
            "tags": {"type": "object", "additionalProperties": False,
                     "patternProperties": {"^[a-z]+$": {"type": "integer"}}}}}},
    {"name": "wide_record", "description": "A record of 600 fields.", "inputSchema": {
        "type": "object", "required": ["field_0"], "properties": {
            f"field_{i}": {"type": ["string", "null"], "description": f"Field {i}."}
            for i in range(600)}}},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _sample_tools() -> list[dict[str, Any]]:
    """The first tools (corpus order) with each feature and with an odd name, one listing
    entry per name."""
    tools: dict[str, dict[str, Any]] = {}
    for path in sorted(corpus_or_skip().glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            tools.setdefault(item["name"], {k: item[k] for k in (
                "name", "description", "inputSchema") if k in item})
    picked: dict[str, dict[str, Any]] = {}
    tests: dict[str, Any] = {**_FEATURES, "dotted name": None, "dashed name": None}
    for feature, test in tests.items():
        found = [t for t in tools.values() if (
            test(json.dumps(t["inputSchema"])) if test is not None
            else ("." if feature == "dotted name" else "-") in t["name"])]
        assert found, feature  # the corpus has each
        picked.update((t["name"], t) for t in found[:_PER_FEATURE])
    return [*picked.values(), *_MADE]


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_corpus_schemas_are_listed_described_and_called_as_published(
        tmp_path: Path) -> None:
    sample = _sample_tools()
    listing = tmp_path / "tools.json"
    listing.write_text(json.dumps(sample), encoding="utf-8")
    config = {"mcpServers": {"echo": {"command": PY, "args": [ECHO, str(listing)]}}}
    async with cm.InProcessExecutor() as executor, Gateway(
        load_config(config), executor=executor, limits=cm.Limits(timeout=60)
    ) as gateway, Client(GatewayServer(gateway, expose_upstream=True).server) as client:
        assert [s.state for s in gateway.status()] == ["up"]
        listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        # relayed as the upstream published them (a client can call them directly)
        assert {t["name"]: listed.get(t["name"]) for t in sample} == {
            t["name"]: t["inputSchema"] for t in sample}
        sdk = gateway.mode.sdk()
        paths = {wire: path for path, wire in sdk.names.tools.items()}
        described = _text(await client.call_tool(
            "describe_tools", {"names": [paths[t["name"]] for t in sample]}))
        for tool in sample:
            assert paths[tool["name"]].rpartition(".")[2] + ":" in described, tool["name"]

        # one script calls them all with Python keywords, as a model writes them
        lines = ["import json", "out = []"]
        expected = []
        for tool in sample:
            args = sample_arguments(tool["inputSchema"])
            python = sdk.names.arguments_to_python(tool["name"], args)
            keywords = ", ".join(f"{k}={v!r}" for k, v in python.items())
            lines.append(f"out.append(json.loads(await tools.{paths[tool['name']]}({keywords})))")
            expected.append({"tool": tool["name"], "args": args})
        run = await client.call_tool("run_code", {"code": "\n".join([*lines, "out"])})
        assert not run.is_error, _text(run)
        value = json.loads(_text(run).split("\ncalls: ")[0].removeprefix("value: "))
        assert value == expected

        # an argument of the wrong type: refused before the script runs, and a direct
        # call is refused naming the argument (the echo would have answered it)
        wrong = {}
        for tool in sample:
            schema = tool["inputSchema"]
            name = next((r for r in schema.get("required", [])
                         if schema["properties"][r].get("type") == "string"), None)
            if name is not None:
                wrong[tool["name"]] = {**sample_arguments(schema), name: 5}, name
        assert len(wrong) >= 10
        for wire, (args, name) in wrong.items():
            python = sdk.names.arguments_to_python(wire, args)
            keywords = ", ".join(f"{k}={v!r}" for k, v in python.items())
            py_name = next(k for k, v in python.items() if v == 5 and args.get(name) == 5)
            refused = await client.call_tool(
                "run_code", {"code": f"await tools.{paths[wire]}({keywords})"})
            assert refused.is_error
            # "5 is not of type 'string'", or "5 is not one of [...]" for an enum
            assert f"tools.{paths[wire]}({py_name}=...): 5 is not " in _text(refused), (
                _text(refused))
            direct = await client.call_tool(wire, args)
            assert direct.is_error
            assert _text(direct).startswith(
                f"invalid arguments for {wire!r}: $.{name}: 5 is not "), _text(direct)
