"""Results a real MCP server wrapped as ``{"result": x}`` reach a script as ``x``, and the
prompt says ``-> x``'s type; other objects with a ``result`` key stay as they are.

The upstreams are ``wrapping_server.py``: the MCP SDK's ``MCPServer`` and ``fastmcp``'s
``FastMCP``, started over stdio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types

import codemode as cm
from codemode.integrations.gateway import Gateway, connect, load_config
from codemode.integrations.server import GatewayServer
from codemode.integrations.wrapped_result import MARK, unwrapped_schema
from tests.tool_corpus import corpus_or_skip

SERVER = str(Path(__file__).resolve().parent / "wrapping_server.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _config(kind: str) -> dict[str, Any]:
    return {"mcpServers": {"w": {"command": sys.executable, "args": [SERVER, kind]}}}


def _prompt_entry(prompt: str, tool: str) -> list[str]:
    lines = prompt.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{tool}:"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")),
               len(lines))
    return [line.strip() for line in lines[start + 1:end]]


SCRIPTS = [
    ("await tools.w.greet(name='a')", "hello a"),
    ("await tools.w.count(n=3)", [0, 1, 2]),
    ("await tools.w.nothing()", None),
    ("await tools.w.point()", {"x": 1, "y": 2}),
    ("await tools.w.own_result()", {"result": 7}),
]


@pytest.mark.parametrize("kind", ["sdk", "fastmcp"])
async def test_a_wrapped_result_reaches_the_script_unwrapped(kind: str) -> None:
    """Before: ``greet`` was ``-> {result: str}`` in the prompt and gave the script
    ``{"result": "hello a"}``. A model or a plain dict (``own_result`` returns
    ``{"result": 7}`` itself) is never unwrapped."""
    async with cm.InProcessExecutor() as executor, connect(
            _config(kind), executor=executor) as gateway:
        prompt = gateway.mode.sdk().prompt
        assert _prompt_entry(prompt, "greet") == ["name: str", "-> str"]
        assert _prompt_entry(prompt, "count") == ["n: int", "-> list[int]"]
        assert _prompt_entry(prompt, "nothing") == ["-> str|None"]
        assert _prompt_entry(prompt, "point") == ["-> {x: int, y: int}"]
        assert _prompt_entry(prompt, "own_result") == ["-> dict[str, int]"]
        for script, value in SCRIPTS:
            run = await gateway.mode.run(script)
            assert (run.error, run.value) == (None, value), script


async def test_a_tool_renamed_from_its_function_is_unwrapped() -> None:
    """The MCP SDK titles a wrapped output ``<function>Output``: ``loud`` (the function
    ``shout``) lists ``shoutOutput``. Before: ``-> {result: str}`` and ``{"result": "A"}``
    (fastmcp marks the schema: unwrapped whatever the name)."""
    for kind in ("sdk", "fastmcp"):
        async with cm.InProcessExecutor() as executor, connect(
                _config(kind), executor=executor) as gateway:
            assert _prompt_entry(gateway.mode.sdk().prompt, "loud") == [
                "text: str", "-> str"], kind
            run = await gateway.mode.run("await tools.w.loud(text='a')")
            assert (run.error, run.value) == (None, "A"), kind


@pytest.mark.parametrize("kind", ["sdk", "fastmcp"])
async def test_an_unwrapped_tool_is_served_wrapped_again(kind: str) -> None:
    """``--expose-upstream`` lists the upstream's tools: an output schema that is no object
    schema would be invalid MCP, so it is wrapped back (marked), and the official client,
    which checks structured content against it, takes the call's result."""
    async with cm.InProcessExecutor() as executor, Gateway(
            load_config(_config(kind)), executor=executor) as gateway, Client(
                GatewayServer(gateway, expose_upstream=True).server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        schema = listed["greet"].output_schema
        assert schema is not None
        assert (schema["type"], schema["required"], schema[MARK]) == ("object", ["result"], True)
        assert schema["properties"]["result"]["type"] == "string"
        assert listed["point"].output_schema is not None
        assert MARK not in listed["point"].output_schema
        with anyio.fail_after(30):
            greeted = await client.call_tool("greet", {"name": "b"})
            pointed = await client.call_tool("point", {})
            # a None was served without structured content: the client raised
            # RuntimeError ("has an output schema but did not return structured content")
            nothing = await client.call_tool("nothing", {})
        assert not greeted.is_error
        assert greeted.structured_content == {"result": "hello b"}
        assert pointed.structured_content == {"x": 1, "y": 2}
        assert (nothing.is_error, nothing.structured_content) == (False, {"result": None})


def _corpus_tools() -> list[dict[str, Any]]:
    folder = corpus_or_skip()
    tools: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data if isinstance(data, list) else data.get("tools", [])
        tools += [t for t in entries if isinstance(t, dict)]
    return tools


def test_the_corpus_schemas_unwrapped_are_the_marked_and_the_sdk_made_ones() -> None:
    """Of the published tools with an output schema, those FastMCP marked and those the MCP
    SDK made (title ``<function>Output``, one required ``result``) are unwrapped, to their
    ``result`` schema; an object that declares a ``result`` of its own (BFCL's math tools:
    ``{"result": number}``, not required) stays as it is."""
    with_output = [t for t in _corpus_tools() if isinstance(t.get("outputSchema"), dict)]
    unwrapped = {t["name"]: unwrapped_schema(t["outputSchema"], t["name"])
                 for t in with_output}
    marked = {t["name"] for t in with_output if t["outputSchema"].get(MARK) is True}
    sdk_made = {t["name"] for t in with_output
                if str(t["outputSchema"].get("title")).endswith("Output")
                and t["outputSchema"].get("required") == ["result"]}
    kept = {t["name"] for t in with_output if "result" in (
        t["outputSchema"].get("properties") or {})} - marked - sdk_made
    assert marked and sdk_made and kept
    assert {n for n, s in unwrapped.items() if s is not None} == marked | sdk_made
    for tool in with_output:
        if tool["name"] in marked | sdk_made:
            assert unwrapped[tool["name"]] == tool["outputSchema"]["properties"]["result"]


def test_an_sdk_shaped_schema_carries_its_definitions() -> None:
    """pydantic puts the definitions ``result`` refers to at the root: they come along."""
    schema = {"type": "object", "title": "findOutput", "required": ["result"],
              "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/P"}}},
              "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}}}
    assert unwrapped_schema(schema, "find") == {
        "type": "array", "items": {"$ref": "#/$defs/P"}, "$defs": schema["$defs"]}
    assert unwrapped_schema({**schema, "description": "mine"}, "find") is None
    assert unwrapped_schema(schema, "other") is None  # "find" is no function's name here
    renamed = {**schema, "properties": {"result": {"title": "Result", "type": "string"}}}
    assert unwrapped_schema(renamed, "other") == {
        "title": "Result", "type": "string", "$defs": schema["$defs"]}
    assert unwrapped_schema({**renamed, "title": "not an identifierOutput"}, "other") is None
    assert unwrapped_schema({**schema, "required": []}, "find") is None


def test_a_wrapped_listing_of_the_mcp_types_stays_valid() -> None:
    """The schema a served tool lists validates as an MCP ``Tool``."""
    from codemode.integrations.wrapped_result import wire_schema

    wired = wire_schema({"type": "integer", "$defs": {"a": {}}})
    types.Tool.model_validate({"name": "t", "inputSchema": {"type": "object"},
                               "outputSchema": wired})
    assert wired == {"type": "object", "properties": {"result": {"type": "integer"}},
                     "required": ["result"], MARK: True, "$defs": {"a": {}}}
