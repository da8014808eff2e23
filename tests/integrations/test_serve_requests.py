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
        json.dumps(hello).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'[{"jsonrpc": "2.0", "id": 2, "method": "ping"},'
        b' {"jsonrpc": "2.0", "method": "notifications/whatever"},'
        b' {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, 7]',
        b"{not json",
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": "no object"}',
        b"[]",
        b'{"jsonrpc": "2.0", "id": 5, "method": "resources/list"}',
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
    assert by_id[2]["result"] == {}
    assert {t["name"] for t in by_id[3]["result"]["tools"]} >= {"run_code"}
    assert by_id[5]["error"]["code"] == -32601  # no resources: method not found, answered
    unnamed = sorted((a["error"]["code"], a["error"]["message"]) for a in answers
                     if a.get("id") is None)
    # id 4's params are no object: the SDK's parser keeps only the bad part, so its id is
    # lost and the answer has none (as JSON-RPC says when the id cannot be read)
    assert unnamed == [
        (-32700, "Parse error: the line is no JSON"),
        (-32600, "Invalid request: Input should be a valid dictionary or instance of"
                 " JSONRPCRequest"),
        (-32600, "Invalid request: an empty batch"),
        (-32600, "Invalid request: params: Input should be an object"),
    ]
    assert 4 not in by_id
