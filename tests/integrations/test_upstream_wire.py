"""An upstream's line only Python's ``json`` reads is mended on the gateway's loop: its
cost must follow the line's size, whatever its shape (a hostile upstream picks it)."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import types

from codemode.integrations import upstream_wire
from codemode.integrations.upstream_wire import mended

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from types import FrameType

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _refused(line: str) -> Exception:
    """What the SDK's reader hands on for a line its parser refuses."""
    try:
        types.jsonrpc_message_adapter.validate_json(line)
    except ValueError as exc:
        return exc
    raise AssertionError("the SDK read the line")


async def _received(item: Any) -> Any:
    """``item`` as the mended read stream hands it to the SDK's session."""
    inbound_send, inbound = anyio.create_memory_object_stream[Any](1)
    outbound, outbound_read = anyio.create_memory_object_stream[Any](1)

    @asynccontextmanager
    async def transport() -> AsyncIterator[tuple[Any, Any]]:
        yield inbound, outbound

    async with inbound_send, inbound, outbound, outbound_read, mended(transport(), []) as (
            read, _):
        await inbound_send.send(item)
        return await read.receive()


def _nested(depth: int, bottom: Any) -> dict[str, Any]:
    """A result holding ``bottom`` under ``depth`` objects, each in a list."""
    value = bottom
    for _ in range(depth):
        value = [{"a": value}]
    return {"jsonrpc": "2.0", "id": 1, "result": {"cut": "\ud83d", "a": value}}


async def test_a_lone_surrogate_line_is_mended_in_every_object() -> None:
    line = json.dumps(_nested(3, ["x\ud83d", {"k\udc00": "v"}]))
    message = (await _received(_refused(line))).message
    inner = message.result["a"]
    for _ in range(3):
        inner = inner[0]["a"]
    assert message.result["cut"] == "\ufffd"
    assert inner == ["x\ufffd", {"k\ufffd": "v"}]


async def test_mending_walks_each_value_once() -> None:
    """Objects nested in lists were walked again from each enclosing object: a 100 KB
    line held the gateway's loop a second, a megabyte one minutes."""
    strings = 2_000
    line = json.dumps(_nested(40, ["x"] * strings))
    refused = _refused(line)
    calls = 0
    wire = upstream_wire.__file__

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename == wire:
            calls += 1

    sys.setprofile(count)
    try:
        received = await _received(refused)
    finally:
        sys.setprofile(None)
    assert received.message.result["cut"] == "\ufffd"
    assert calls < 3 * strings, calls
