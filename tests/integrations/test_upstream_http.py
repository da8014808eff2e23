"""An HTTP upstream's answers are bounded as a stdio line is: a JSON body's bytes, and the
JSON values of a JSON body or of one SSE event (``upstream_http``).

Before, a hostile upstream's 3,000,000 empty objects in one SSE event cost the gateway
~1 GB and a 9.6 s stall of its loop (4.5 s as a JSON body), and a JSON body that never
ended grew its memory without bound (1.5 GB in 15 s). The upstream here is
``hostile_http_server.py``, a real HTTP server in a process of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import pytest

import codemode as cm
from codemode.integrations.gateway import connect
from codemode.integrations.upstream_http import MessageTooLarge, bounded_client
from codemode.integrations.upstream_stdio import MAX_VALUES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode.integrations.gateway import Gateway

SERVER = str(Path(__file__).resolve().parent / "hostile_http_server.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with await anyio.open_process([sys.executable, SERVER],
                                        stderr=subprocess.DEVNULL) as process:
        assert process.stdout is not None
        try:
            with anyio.fail_after(30):
                port = (await process.stdout.receive()).decode().strip()
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.kill()


@pytest.fixture
async def gateway(url: str) -> AsyncIterator[Gateway]:
    config = {"mcpServers": {"h": {"url": url}}}
    async with cm.InProcessExecutor() as executor, connect(
            config, executor=executor, limits=cm.Limits(timeout=60)) as gateway:
        yield gateway


async def _call(gateway: Gateway, name: str, n: int = 0) -> cm.ToolResult:
    with anyio.fail_after(60):
        return await gateway.registry.execute(
            cm.ToolCall(call_id="c", name=name, arguments={"n": n}))


@pytest.mark.parametrize(("tool", "n", "said"), [
    ("sse_values", MAX_VALUES + 50_000, "SSE stream failed: an SSE event of up to"),
    ("json_values", MAX_VALUES + 50_000, "Failed to parse JSON response: a JSON answer of up"),
    ("sse_commas", 4 * MAX_VALUES + 50_000, "SSE stream failed: an SSE event of up to"),
    ("endless", 0, "a JSON answer longer than 67,108,864 bytes"),
    ("gzip", 0, "a body with Content-Encoding 'gzip'"),
])
async def test_an_answer_past_the_bounds_fails_its_call_unparsed(
        gateway: Gateway, tool: str, n: int, said: str) -> None:
    """The call fails with the bound's message, raised from the byte stream before the
    SDK's parse could see the whole (it parses only complete events and bodies); the
    connection serves the next call."""
    failed = await _call(gateway, tool, n)
    assert failed.is_error
    assert said in failed.text
    fine = await _call(gateway, "fine")
    assert (fine.is_error, fine.text) == (False, "ok")
    assert gateway.status()[0].state == "up"


async def test_an_answer_within_the_bounds_is_read(gateway: Gateway) -> None:
    """One below the bound still arrives whole."""
    result = await _call(gateway, "json_values", 1000)
    assert not result.is_error, result.text
    many = await _call(gateway, "sse_commas", 100_000)
    assert (many.is_error, many.text.count(",")) == (False, 99_999)


def _events(*chunks: bytes) -> httpx2.MockTransport:
    async def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               stream=_Chunks(chunks))

    return httpx2.MockTransport(answer)


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


async def _read(transport: Any) -> bytes:
    async with bounded_client({}, max_values=10, transport=transport) as client:
        response = await client.get("http://upstream/mcp")
        return response.content


async def test_values_are_counted_per_event_across_chunk_edges() -> None:
    """Each event's count starts again after its blank line, also when the blank line is
    split between two chunks (``\\r\\n`` | ``\\r\\n``); one event past the bound fails."""
    event = b"data: " + b",".join([b"{}"] * 8) + b"\r\n"
    body = await _read(_events(event + b"\r\n" + event, b"\r", b"\n" + event + b"\r\n", b"\r\n"))
    assert body.count(b"{}") == 24
    with pytest.raises(MessageTooLarge, match="an SSE event of up to"):
        await _read(_events(event, event + b"\r\n\r\n"))


async def test_the_client_asks_for_identity_unless_told_otherwise() -> None:
    seen: list[str] = []

    async def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers["accept-encoding"])
        return httpx2.Response(200, json={})

    for headers in ({}, {"accept-encoding": "br"}):
        async with bounded_client(headers, transport=httpx2.MockTransport(answer)) as client:
            await client.get("http://upstream/mcp")
    assert seen == ["identity", "br"]


@pytest.mark.parametrize(("status", "session", "refused"), [
    (404, True, True), (400, True, True), (404, False, False), (400, False, False),
    (200, True, False), (500, True, False),
])
async def test_the_http_client_reports_a_refused_session(
        status: int, session: bool, refused: bool) -> None:
    """What ``refused`` is told: a 400/404 answer to a request that carried a session id."""
    seen: list[None] = []
    transport = httpx2.MockTransport(lambda request: httpx2.Response(status, json={}))
    headers = {"Mcp-Session-Id": "s1"} if session else {}
    async with bounded_client(headers, transport=transport,
                              refused=lambda: seen.append(None)) as client:
        await client.post("http://upstream/mcp", json={})
    assert len(seen) == refused


async def test_a_session_the_upstream_ended_is_started_again(gateway: Gateway) -> None:
    """The upstream ended the session (``end_session``): it answers the session's next
    request 404, and MCP says the client MUST start a new session. Before, each call failed
    (``MCPError: Session terminated``) until the next ping found the connection dead, up to
    5 s later; the gateway checks at once, starts a new session and sends the call again."""
    ended = await _call(gateway, "end_session")
    assert (ended.is_error, ended.text) == (False, "ok")
    fine = await _call(gateway, "fine")
    assert (fine.is_error, fine.text) == (False, "ok")
    (status,) = gateway.status()
    assert (status.state, status.restarts) == ("up", 1)


async def test_the_gateway_names_itself_to_its_upstreams(gateway: Gateway) -> None:
    """MCP's ``clientInfo`` describes the client implementation: the gateway sent the MCP
    SDK's placeholder (``mcp`` 0.1.0) to every upstream; it says ``codemode`` and its
    version."""
    said = await _call(gateway, "client_info")
    assert json.loads(said.text) == {"name": "codemode", "version": cm.__version__}
