"""``codemode serve`` over stdio answers every request line a client sends, also those the
MCP SDK's server dropped unanswered (the client waited forever): a line that is no JSON,
a batch (MCP 2025-03-26 allows them), a request whose params are no object. The client
is raw JSON-RPC over the pipes of a real ``codemode serve`` process."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import anyio
import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_every_request_line_is_answered(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}
    lines = [
        # before the handshake: the SDK said only "Invalid request parameters"
        b'{"jsonrpc": "2.0", "id": 12, "method": "tools/list"}',
        json.dumps(hello).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'[{"jsonrpc": "2.0", "id": 2, "method": "ping"},'
        b' {"jsonrpc": "2.0", "method": "notifications/whatever"},'
        b' {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, 7]',
        b"{not json",
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": "no object"}',
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 5}',
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}',
        b"[]",
        b'{"jsonrpc": "2.0", "id": 5, "method": "resources/list"}',
        # params the SDK's model refuses: it said only "Invalid request parameters"
        b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "run_code",'
        b' "arguments": [1]}}',
        b'{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"arguments": {}}}',
        b'{"jsonrpc": "2.0", "id": 11, "method": "logging/setLevel", "params": {"level": "x"}}',
        # ids no string or integer: read as notifications, never answered
        b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',
        # JSON nested deeper than the SDK's parser reads: was "no JSON", with id null
        b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "run_code",'
        b' "arguments": {"code": ' + b"[" * 300 + b"]" * 300 + b"}}}",
        b'{"jsonrpc": "2.0", "id": 6, "method": "ping"}',
    ]
    serve = [sys.executable, "-m", "codemode.cli", "serve", "--executor", "inprocess",
             "--config", str(config)]
    async with await anyio.open_process(serve, stderr=subprocess.DEVNULL) as process:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send(b"\n".join(lines) + b"\n")
        answers: list[dict[str, Any]] = []
        buffer = b""
        with anyio.fail_after(60):
            while not any(a.get("id") == 6 for a in answers):
                buffer += await process.stdout.receive()
                *done, buffer = buffer.split(b"\n")
                answers += [json.loads(line) for line in done if line.strip()]
        process.kill()
    by_id = {a["id"]: a for a in answers if a.get("id") is not None}
    assert by_id[12]["error"] == {"code": -32602, "message": (
        "tools/list before initialize: the connection starts with an initialize request")}
    assert by_id[2]["result"] == {}
    assert {t["name"] for t in by_id[3]["result"]["tools"]} >= {"run_code"}
    assert by_id[5]["error"]["code"] == -32601  # no resources: method not found, answered
    unnamed = sorted((a["error"]["code"], a["error"]["message"]) for a in answers
                     if a.get("id") is None)
    # ids 4 and 7: params that are no object. Before, the SDK's parser kept only the bad
    # part: both were answered with id null, and 7's list taken for a batch of one ``1``;
    # the notification with bad params was answered too (id null)
    assert unnamed == [
        (-32700, "Parse error: the line is no JSON"),
        (-32600, "Invalid request: Input should be a valid dictionary or instance of"
                 " JSONRPCRequest"),
        (-32600, "Invalid request: an empty batch"),
        (-32600, "Invalid request: the id must be a string or an integer"),
        (-32600, "Invalid request: the id must be a string or an integer"),
    ]
    assert [by_id[i]["error"] for i in (9, 10)] == [
        {"code": -32602, "message": "Invalid params: arguments: Input should be a valid"
                                    " dictionary"},
        {"code": -32602, "message": "Invalid params: name: Field required"}]
    assert by_id[11]["error"]["message"].startswith("Invalid params: level: Input should be")
    assert by_id[8]["error"] == {"code": -32600, "message": (
        "Invalid request: the message nests deeper than the MCP SDK's JSON parser reads"
        " (about 200 levels of objects and arrays)")}
    for request_id in (4, 7):
        assert by_id[request_id]["error"] == {
            "code": -32602, "message": "Invalid params: params: Input should be an object"}
