"""MCP listings and results real servers publish that once broke calls.

The live server is a few lines of JSON-RPC written here (no SDK), so it can publish what
real servers do: an output schema with a JavaScript-only regex (a TypeScript server's), or
a declared output schema with only text in the result.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Literal

import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

import codemode as cm
from codemode.integrations.mcp import register_mcp_tools

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

SERVER = r"""
import json, sys
count = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
tools = {
    "js_regex": ({"type": "object", "properties": {"id": {"type": "string",
                  "pattern": "^(?<year>\\d{4})$"}}}, '{"id": "2024"}', {"id": "2024"}),
    "text_only": (count, '{"n": 1}', None),
    "wrong_type": (count, '{"n": "x"}', {"n": "x"}),
}
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg["method"], {}
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "outputs", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": name, "inputSchema": {"type": "object"}, "outputSchema": out}
                            for name, (out, _, _) in tools.items()]}
    elif method == "tools/call":
        _, text, data = tools[msg["params"]["name"]]
        result = {"content": [{"type": "text", "text": text}]}
        if data is not None:
            result["structuredContent"] = data
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def session() -> AsyncIterator[ClientSession]:
    async with AsyncExitStack() as stack:
        params = StdioServerParameters(command=sys.executable, args=["-c", SERVER])
        read, write = await stack.enter_async_context(stdio_client(params))
        client = await stack.enter_async_context(ClientSession(read, write))
        await client.initialize()
        yield client


@pytest.mark.parametrize(
    ("call", "ok", "expected"),
    [
        ("js_regex()", True, {"id": "2024"}),  # the repaired schema is the one that checks
        ("text_only()", True, {"n": 1}),  # no structured content: the text is the result
        ("wrong_type()", False, "does not match its output schema: $.n: 'x' is not of type"),
    ],
)
async def test_results_are_checked_against_the_registered_output_schema(
    session: ClientSession, call: str, ok: bool, expected: object
) -> None:
    registry = cm.ToolRegistry()
    made = await register_mcp_tools(registry, session, namespace="out")
    assert made.repairs == ("js_regex: output schema: dropped properties/id/pattern",)
    async with cm.CodeMode(registry, executor=cm.InProcessExecutor()) as mode:
        run = await mode.run(
            f"try:\n    r = await tools.out.{call}\n"
            "except ToolCallError as e:\n    r = e.message\nr"
        )
    assert run.ok, run.error
    if ok:
        assert run.value == expected
    else:
        assert isinstance(expected, str) and expected in run.value
        assert "RuntimeError" not in run.value


class _Listing:
    """A session serving one tool with the given schemas; it records the arguments it gets."""

    def __init__(self, params: dict[str, Any], output: dict[str, Any] | None = None) -> None:
        self.tool = types.Tool(name="t", input_schema=params, output_schema=output)
        self.calls: list[dict[str, Any] | None] = []

    async def list_tools(self, *, params: Any = None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[self.tool])

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: Any = None,
    ) -> types.CallToolResult:
        self.calls.append(arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


DROPPED = "dropped properties/a/$ref (unresolvable)"


def _with(a: dict[str, Any], **root: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": a}, **root}


@pytest.mark.parametrize(
    ("params", "repairs"),
    [
        (_with({"$ref": "#/definitions/Missing"}), [DROPPED]),
        (_with({"$ref": "https://example.com/a.json"}), [DROPPED]),
        (_with({"$ref": "a.json#/$defs/B"}, **{"$defs": {"A": {"$id": "https://x/a.json"}}}),
         [DROPPED]),
        (_with({"$ref": "#/$defs/A"}, **{"$defs": {"A": {"type": "string"}}}), []),
        (_with({"$ref": "#/definitions/A"}, definitions={"A": {"type": "string"}}), []),
        (_with({"$ref": "#"}), []),
        (_with({"$ref": "#name"}, **{"$defs": {"A": {"$anchor": "name"}}}), []),
        (_with({"$ref": "https://x/a.json#/$defs/B"},
               **{"$defs": {"A": {"$id": "https://x/a.json", "$defs": {"B": {}}}}}), []),
        (_with({"enum": [{"$ref": "#/nowhere"}]}), []),  # a value, not a schema
    ],
)  # fmt: skip
async def test_refs_that_resolve_nowhere_are_dropped(
    params: dict[str, Any], repairs: list[str]
) -> None:
    """Validation would fail on every call reaching them ("internal error"); nothing is fetched."""
    session = _Listing(params, output={"type": "object", "properties": {"r": {"$ref": "#/x"}}})
    registry = cm.ToolRegistry()
    made = await register_mcp_tools(registry, session, namespace="ns")
    assert made.repairs == (
        *(f"t: {note}" for note in repairs),
        "t: output schema: dropped properties/r/$ref (unresolvable)",
    )
    result = await registry.execute(cm.ToolCall(call_id="c", name="t", arguments={"a": "x"}))
    if repairs:
        assert not result.is_error and session.calls == [{"a": "x"}]
    else:
        assert "$ref" in str(registry.specs()[0].parameters)


@pytest.mark.parametrize(
    ("support", "registered"), [(None, True), ("forbidden", True), ("optional", True),
                                ("required", False)]
)  # fmt: skip
async def test_a_tool_only_callable_as_a_task_is_not_offered(
    support: Literal["forbidden", "optional", "required"] | None, registered: bool
) -> None:
    """A plain ``tools/call`` to it fails; a script should not see it at all."""
    session = _Listing({"type": "object"})
    if support is not None:
        session.tool.execution = types.ToolExecution(task_support=support)
    registry = cm.ToolRegistry()
    made = await register_mcp_tools(registry, session, namespace="ns", prefix="p_")
    assert made.names == (("p_t",) if registered else ())
    assert made.skipped == (() if registered else (
        "p_t: only callable as a task (execution.taskSupport 'required')",))  # fmt: skip


class _NoTools(_Listing):
    """A server without the tools capability: ``tools/list`` is not a method it knows."""

    def __init__(self, code: int) -> None:
        super().__init__({"type": "object"})
        self.code = code

    async def list_tools(self, *, params: Any = None) -> types.ListToolsResult:
        from mcp.shared.exceptions import MCPError

        raise MCPError(self.code, "Method not found" if self.code == -32601 else "boom")


async def test_a_server_without_tools_registers_none() -> None:
    registry = cm.ToolRegistry()
    made = await register_mcp_tools(registry, _NoTools(types.METHOD_NOT_FOUND), namespace="ns")
    assert made.names == () and len(registry) == 0


async def test_other_listing_errors_still_fail_registration() -> None:
    from mcp.shared.exceptions import MCPError

    registry = cm.ToolRegistry()
    with pytest.raises(MCPError, match="boom"):
        await register_mcp_tools(registry, _NoTools(types.INTERNAL_ERROR), namespace="ns")
    assert len(registry) == 0


async def test_a_second_server_with_the_same_tool_names_is_told_to_use_a_prefix() -> None:
    registry = cm.ToolRegistry()
    await register_mcp_tools(registry, _Listing({"type": "object"}), namespace="one")
    with pytest.raises(cm.DuplicateToolError, match=r"1 of this server's tools .*'t'.*prefix="):
        await register_mcp_tools(registry, _Listing({"type": "object"}), namespace="two")
    assert [spec.namespace for spec in registry.specs()] == ["one"]
    made = await register_mcp_tools(
        registry, _Listing({"type": "object"}), namespace="two", prefix="two_"
    )
    assert made.names == ("two_t",)
    assert sorted(cm.CodeMode(registry).sdk().names.tools) == ["one.t", "two.two_t"]


class _Tools(_Listing):
    """A session listing several tools (any names, even repeated ones)."""

    def __init__(self, *tools: types.Tool) -> None:
        super().__init__({"type": "object"})
        self.tools = list(tools)

    async def list_tools(self, *, params: Any = None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)


async def test_an_output_schema_that_cannot_be_repaired_is_dropped_not_the_tool() -> None:
    """A draft-4 ``id`` names the ``$ref``'s target, which 2020-12 does not read: every
    result would fail its check, so the tool is registered without an output schema."""
    output = {
        "type": "object",
        "properties": {"a": {"$ref": "https://x/b.json"}},
        "$defs": {"b": {"id": "https://x/b.json", "type": "string"}},
    }
    session = _Listing({"type": "object"}, output=output)
    registry = cm.ToolRegistry()
    made = await register_mcp_tools(registry, session, namespace="ns")
    assert made.names == ("t",)
    assert made.repairs == ("t: output schema dropped",)
    assert registry.specs()[0].output_schema is None
    result = await registry.execute(cm.ToolCall(call_id="c", name="t", arguments={"q": 1}))
    assert not result.is_error and result.text == "ok"
    assert session.calls == [{"q": 1}]


@pytest.mark.parametrize(
    ("dialect", "repairs"),
    [
        # Draft 7 says exclusiveMinimum is a number: the boolean is what its metaschema refuses.
        ("http://json-schema.org/draft-07/schema#", ("t: dropped properties/n/exclusiveMinimum",)),
        # Draft 4 is where a boolean exclusiveMinimum is right: nothing to drop.
        ("http://json-schema.org/draft-04/schema#", ()),
        (None, ()),  # undeclared: read in the older draft that accepts it
    ],
    ids=["declared-draft-7", "declared-draft-4", "undeclared"],
)
async def test_a_declared_schema_dialect_decides_what_is_dropped(
    dialect: str | None, repairs: tuple[str, ...]
) -> None:
    params: dict[str, Any] = {
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 1, "exclusiveMinimum": True}},
    }
    if dialect is not None:
        params["$schema"] = dialect
    session = _Listing(params)
    registry = cm.ToolRegistry()
    made = await register_mcp_tools(registry, session, namespace="ns")
    assert made.repairs == repairs
    kept = registry.specs()[0].parameters["properties"]["n"]
    assert ("exclusiveMinimum" in kept) is (not repairs)
    ok = await registry.execute(cm.ToolCall(call_id="c1", name="t", arguments={"n": 2}))
    assert not ok.is_error and session.calls == [{"n": 2}]
    low = await registry.execute(cm.ToolCall(call_id="c2", name="t", arguments={"n": 0}))
    assert low.is_error and low.error is not None and low.error.kind == "invalid_arguments"
    assert session.calls == [{"n": 2}], "refused by the pipeline, not sent to the server"


async def test_a_registration_failing_half_way_is_rolled_back() -> None:
    """The second of two tools listed under one name fails to register after the first
    did: the first is removed again, so the registry is as it was."""
    async def local(args: Any) -> str:
        return "local"

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="mine", execute=local))
    session = _Tools(
        types.Tool(name="a", input_schema={"type": "object"}),
        types.Tool(name="dup", input_schema={"type": "object"}),
        types.Tool(name="dup", input_schema={"type": "object", "properties": {"x": {}}}),
    )
    version = registry.version
    with pytest.raises(cm.DuplicateToolError, match="dup"):
        await register_mcp_tools(registry, session, namespace="ns")
    assert [spec.name for spec in registry.specs()] == ["mine"]
    assert "a" not in registry and "dup" not in registry
    assert sorted(cm.CodeMode(registry).sdk().names.tools) == ["mine"]
    assert registry.version != version  # registered, then disposed: the SDK was rebuilt


@pytest.mark.parametrize("entry", ["run", "run_code"])
async def test_scripts_over_mcp_tools_get_the_same_preflight_and_error_paths(entry: str) -> None:
    params = {
        "type": "object",
        "properties": {"from": {"type": "array", "items": {"type": "integer"}}},
        "required": ["from"],
    }
    session = _Listing(params)
    registry = cm.ToolRegistry()
    await register_mcp_tools(registry, session, namespace="ns")
    async with cm.CodeMode(registry, executor=cm.InProcessExecutor()) as mode:
        registry.register(mode.as_tool())

        async def run(script: str) -> tuple[Any, Any]:
            if entry == "run":
                result = await mode.run(script)
                return result.value, None if result.error is None else result.error.to_json()
            outcome = await registry.execute(
                cm.ToolCall(call_id="c", name="run_code", arguments={"code": script}))
            assert outcome.meta is not None
            return outcome.text, outcome.meta["error"]

        _, refused = await run("await tools.ns.t(from_=[1], frm=2)")
        assert refused is not None and refused["type"] == "PreflightError"
        assert session.calls == [], "a script that fails preflight reaches no server"
        value, error = await run(
            "n = len('ab')\n"
            "try:\n"
            "    await tools.ns.t(from_=[1, str(n)])\n"
            "except ToolCallError as e:\n"
            "    r = e.path\n"
            "r"
        )
    assert error is None
    if entry == "run":
        assert value == "$.from_[1]"
    else:
        assert value.startswith('value: "$.from_[1]"')
    assert session.calls == []
