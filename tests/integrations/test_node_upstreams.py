"""codemode as the client and gateway of MCP servers written with the TypeScript SDK.

The peers are the official reference servers, pinned in ``.ci/node`` (``node_peers``):
``server-everything`` (stdio, and its streamable HTTP mode), ``server-memory`` and
``server-filesystem`` confined to a temporary folder; with them ``node/changing_server.cjs``
(the SDK's ``McpServer``, whose tools add and remove tools). One gateway over the four
serves the module: its SDK is generated from their real schemas, and model-style scripts call their
tools (structured, annotated, image and resource results, progress, errors, logging).
"""

from __future__ import annotations

import base64
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm
import sdk_gen
from codemode.integrations.gateway import Gateway, connect, load_config
from sdk_gen._audit import audit_prompt
from tests.integrations.node_peers import (
    CHANGING,
    NODE_MODULES,
    everything_http,
    node_or_skip,
    peer,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
"""A 1x1 PNG for ``read_media_file``."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The only folder ``server-filesystem`` may reach."""
    folder = tmp_path_factory.mktemp("fs-root")
    (folder / "notes.txt").write_text("first\nsecond\n", encoding="utf-8")
    (folder / "dot.png").write_bytes(PNG)
    return folder


@pytest.fixture(scope="module")
async def gateway(root: Path, tmp_path_factory: pytest.TempPathFactory,
                  ) -> AsyncIterator[Gateway]:
    node = node_or_skip()
    memory = tmp_path_factory.mktemp("memory") / "graph.jsonl"
    config = {"mcpServers": {
        "everything": {"command": peer("mcp-server-everything"), "args": ["stdio"]},
        "memory": {"command": peer("mcp-server-memory"),
                   "env": {"MEMORY_FILE_PATH": str(memory)}},
        "fs": {"command": peer("mcp-server-filesystem"), "args": [str(root)]},
        "changing": {"command": node, "args": [CHANGING, str(NODE_MODULES)]},
    }}
    async with cm.InProcessExecutor() as executor, connect(
            config, executor=executor, limits=cm.Limits(timeout=60)) as gateway:
        yield gateway


async def test_their_real_schemas_make_a_typed_sdk(gateway: Gateway) -> None:
    """Every listed tool is registered (the one that needs MCP tasks is left out, saying
    so), and the SDK, stub and prompt generated from the schemas lose nothing."""
    status = {s.name: s for s in gateway.status()}
    assert {n: (s.state, s.tools) for n, s in status.items()} == {
        "everything": ("up", 12), "memory": ("up", 9), "fs": ("up", 14),
        "changing": ("up", 2)}
    assert status["everything"].skipped == (
        "simulate-research-query: only callable as a task (execution.taskSupport 'required')",)
    specs = gateway.upstream_specs()
    sdk = sdk_gen.generate(specs)
    assert sdk.warnings == ()
    compile(sdk.module_source, "tools.py", "exec")
    compile(sdk.stub_source, "tools.pyi", "exec")
    assert audit_prompt(specs, sdk)[1] == []
    prompt = gateway.run_code_description()
    for line in (' location: "New York"|"Chicago"|"Los Angeles" # Choose city',
                 " duration?: float = 10 # Duration of the operation in seconds",
                 "search_nodes: Search for nodes in the knowledge graph based on a query",
                 " edits: list[dict]"):
        assert line in prompt.splitlines()


async def _run(gateway: Gateway, script: str, root: Path | None = None) -> cm.RunResult:
    """Run ``script``, its ``ROOT`` the filesystem server's folder."""
    return await gateway.mode.run(script.replace("ROOT", repr(str(root))))


SCRIPTS: list[tuple[str, Any]] = [
    ('await tools.everything.echo(message="héllo ☃")', "Echo: héllo ☃"),
    ("await tools.everything.get_sum(a=2, b=3.5)", "The sum of 2 and 3.5 is 5.5."),
    ('sorted(await tools.everything.get_structured_content(location="Chicago"))',
     ["conditions", "humidity", "temperature"]),
    ("await tools.everything.trigger_long_running_operation(duration=0.2, steps=2)",
     "Long running operation completed. Duration: 0.2 seconds, Steps: 2."),
    ("""
rs = await asyncio.gather(*[tools.everything.get_sum(a=i, b=1) for i in range(8)])
[r.split()[-1] for r in rs]
""", [f"{i + 1}." for i in range(8)]),
    ("""
await tools.memory.create_entities(entities=[
    {"name": "Ada", "entityType": "person", "observations": ["maths"]},
    {"name": "Charles", "entityType": "person", "observations": []}])
await tools.memory.create_relations(relations=[
    {"from": "Ada", "to": "Charles", "relationType": "wrote_notes_on"}])
await tools.memory.add_observations(
    observations=[{"entityName": "Ada", "contents": ["poetry"]}])
found = await tools.memory.search_nodes(query="Ada")
[found["entities"][0]["observations"], found["relations"][0]["to"]]
""", [["maths", "poetry"], "Charles"]),
    ("""
try:
    await tools.memory.add_observations(
        observations=[{"entityName": "Nobody", "contents": ["x"]}])
except ToolCallError as e:
    caught = [e.tool, e.message]
caught
""", ["memory.add_observations", "Entity with name Nobody not found"]),
    ("""
await tools.fs.write_file(path=ROOT + "/new.txt", content="one\\ntwo\\n")
await tools.fs.edit_file(path=ROOT + "/new.txt", edits=[{"oldText": "two", "newText": "2"}])
[(await tools.fs.read_text_file(path=ROOT + "/new.txt"))["content"],
 (await tools.fs.read_text_file(path=ROOT + "/notes.txt", head=1))["content"]]
""", ["one\n2\n", "first"]),
    ("""
try:
    await tools.fs.read_text_file(path="/etc/hostname")
except ToolCallError as e:
    caught = e.message.split(" - ")[0]
caught
""", "Access denied"),
    ('(await tools.fs.read_media_file(path=ROOT + "/dot.png"))["content"][0]["mimeType"]',
     "image/png"),
]


@pytest.mark.parametrize(("script", "value"), SCRIPTS)
async def test_scripts_call_their_tools(gateway: Gateway, root: Path, script: str,
                                       value: Any) -> None:
    result = await _run(gateway, script, root)
    assert result.error is None, result.error
    assert result.value == value
    assert result.calls


@pytest.mark.parametrize(("script", "error"), [
    ('await tools.everything.get_structured_content(location="Paris")',
     "'Paris' is not one of ['New York', 'Chicago', 'Los Angeles']"),
    ("await tools.everything.echo()", "missing required argument(s): message"),
    ('await tools.memory.open_nodes(names="Ada")', "'Ada' is not of type 'array'"),
])
async def test_arguments_their_schemas_refuse_are_not_sent(
        gateway: Gateway, script: str, error: str) -> None:
    result = await _run(gateway, script)
    assert result.error is not None and error in result.error.message
    assert result.calls == ()


async def test_image_and_resource_blocks_travel_up_as_attachments(gateway: Gateway) -> None:
    result = await _run(gateway, """
image = await tools.everything.get_annotated_message(messageType="error", includeImage=True)
resource = await tools.everything.get_resource_reference(resourceType="Blob", resourceId=2)
links = await tools.everything.get_resource_links(count=2)
[image.splitlines()[0], links.splitlines()[1:]]
""")
    assert result.error is None
    assert result.value == ["Error: Operation failed", [
        "[resource link demo://resource/dynamic/blob/1 (Blob Resource 1, text/plain)]",
        "[resource link demo://resource/dynamic/text/2 (Text Resource 2, text/plain)]"]]
    image, resource = result.attachments
    assert (image["type"], image["mimeType"], dict(image["annotations"])) == (
        "image", "image/png", {"audience": ("user",), "priority": 0.5})
    assert base64.b64decode(resource["resource"]["blob"]).startswith(b"Resource 2: ")


async def test_their_log_messages_reach_the_gateway(gateway: Gateway) -> None:
    """``logging/setLevel`` goes to the upstream that declares logging; its
    ``notifications/message`` come back naming it."""
    logged: list[tuple[str, Any]] = []
    arrived = anyio.Event()

    def log(upstream: str, params: Any) -> None:
        logged.append((upstream, params))
        arrived.set()

    stop = gateway.on_log(log)
    gateway.set_log_level("debug")
    try:
        result = await _run(gateway, "await tools.everything.toggle_simulated_logging()\n"
                                     "await tools.everything.toggle_simulated_logging()")
        assert result.error is None and result.value.startswith("Stopped simulated logging")
        with anyio.fail_after(30):
            await arrived.wait()
    finally:
        stop()
    upstream, params = logged[0]
    assert upstream == "everything"
    # "Debug-level message", ..., "Alert level-message": the level it was sent at
    assert params.data.lower().startswith(params.level)


async def _until_listed(gateway: Gateway, script: str, *, present: bool) -> cm.RunResult:
    """Run ``script``, then wait for the gateway to (un)register ``changing.extra_1``."""
    changed = anyio.Event()
    stop = gateway.on_change(changed.set)
    try:
        result = await _run(gateway, script)
        with anyio.fail_after(30):
            while ("extra_1" in gateway.registry) != present:
                await changed.wait()
                changed = anyio.Event()
    finally:
        stop()
    return result


async def test_a_tool_an_upstream_adds_or_removes_follows_its_list_changed(
        gateway: Gateway) -> None:
    """The TypeScript SDK sends ``tools/list_changed`` when a tool is registered or removed
    at run time: the gateway re-lists, so the next script (and the SDK) has the new tool,
    and a removed one is gone."""
    grown = await _until_listed(gateway, "await tools.changing.grow()", present=True)
    assert grown.value == "extra_1"
    assert "extra_1: Added tool extra_1." in gateway.run_code_description().splitlines()
    used = await _run(gateway, "await tools.changing.extra_1()")
    assert used.error is None and used.value == "extra_1 answers"
    shrunk = await _until_listed(gateway, "await tools.changing.shrink()", present=False)
    assert shrunk.value == "removed extra_1"
    assert "extra_1" not in gateway.run_code_description()


async def test_an_http_upstream_that_restarted_gets_a_new_session() -> None:
    """``server-everything`` over streamable HTTP, restarted on its port: it answers the old
    session's requests with 400 (MCP says 404: the session ended). The SDK's client failed
    each call with "Server returned an error response" until the next ping (5 s) found the
    connection dead; the gateway checks the connection at once, starts a new session and
    sends the refused request again, so the script does not see the restart.

    The call must be what meets the restart: the loop stands still while the new server
    starts (``everything_http``), and on a loaded machine its first ping (5 s after the
    session began) was then due; it found the old session refused and took the upstream
    down for a reconnection, and a call in that window fails at once ("not connected (the
    gateway is reconnecting)"). So this gateway does not ping during the test."""
    with ExitStack() as first_server:
        url = first_server.enter_context(everything_http())
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        servers = load_config({"mcpServers": {"everything": {"url": url}}})
        async with cm.InProcessExecutor() as executor, Gateway(
                servers, executor=executor, ping_interval=3600) as gateway:
            first = await _run(gateway, 'await tools.everything.echo(message="one")')
            assert first.value == "Echo: one"
            first_server.close()
            with everything_http(port):
                again = await _run(gateway, 'await tools.everything.echo(message="two")')
                status = gateway.status()[0]
    assert again.error is None, again.error
    assert again.value == "Echo: two"
    assert (status.state, status.restarts) == ("up", 1)
