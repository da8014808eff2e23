"""What an upstream MCP server sends, made readable before the SDK's client session sees it.

The SDK's session is strict where one bad piece costs much more than itself:

- a ``tools/list`` answer with one entry the MCP schema refuses (no ``inputSchema``, a
  number for a name) fails the whole listing, so the whole upstream, at every reconnection;
- a line the SDK's JSON parser refuses is dropped, so the call it answered waits for its
  timeout: Python's ``json`` reads what JavaScript servers send for a string cut inside
  a surrogate pair (``"\\ud83d"``), the SDK's parser does not.

``mended(transport, dropped)`` wraps a transport: such entries are left out of the listing
(why, in ``dropped``), such lines are read with ``json`` (a lone surrogate becomes U+FFFD).
"""

from __future__ import annotations

import json
import re
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, final

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["mended"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DROPPED = 1_000
"""Listing entries whose reasons are kept (a listing of 10,000 bad entries keeps these)."""


@asynccontextmanager
async def mended(transport: Any, dropped: list[str]) -> AsyncIterator[tuple[Any, Any]]:
    """``transport``'s streams, with refused listing entries left out (``"<name>: <why>"``
    appended to ``dropped``) and lines only Python's ``json`` reads read by it."""
    async with transport as (read, write):
        wire = _Wire(dropped)
        yield _Reading(read, wire), _Writing(write, wire)


@final
class _Wire:
    """What the two directions share: the requests whose answers are mended."""

    def __init__(self, dropped: list[str]) -> None:
        self.dropped = dropped
        self.listings: set[Any] = set()
        self.handshakes: set[Any] = set()
        self.version: str | None = None

    def sent(self, item: Any) -> None:
        message = getattr(item, "message", None)
        method = getattr(message, "method", None)
        if method == "tools/list":
            self.listings.add(message.id)  # type: ignore[union-attr]
        elif method == "initialize":
            self.handshakes.add(message.id)  # type: ignore[union-attr]

    def received(self, item: Any) -> Any:
        from mcp.shared.message import SessionMessage

        if isinstance(item, Exception):
            item = _reparsed(item) or item
        if not isinstance(item, SessionMessage):
            return item
        answered = getattr(item.message, "id", None)
        result = getattr(item.message, "result", None)
        if answered is None or not isinstance(result, dict):
            return item
        if answered in self.handshakes:
            self.handshakes.discard(answered)
            said = result.get("protocolVersion")
            self.version = said if isinstance(said, str) else None
        elif answered in self.listings:
            self.listings.discard(answered)
            _keep_tools(result, self.version, self.dropped)
        return item


@final
class _Reading:
    """The transport's read stream, each item mended as it is received."""

    def __init__(self, inner: Any, wire: _Wire) -> None:
        self._inner = inner
        self._wire = wire

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        return self._wire.received(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _Reading:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Reading:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@final
class _Writing:
    """The transport's write stream, noting the requests whose answers are mended."""

    def __init__(self, inner: Any, wire: _Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def send(self, item: Any, /) -> None:
        self._wire.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Writing:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _reparsed(error: Exception) -> Any:
    """The message of a line the SDK's parser refused, read by ``json``, or None."""
    from mcp import types
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return None
    problems = error.errors(include_url=False)
    line = problems[0].get("input") if len(problems) == 1 else None
    if problems[0]["type"] != "json_invalid" or not isinstance(line, str):
        return None
    try:
        data = _mended(json.loads(line, object_hook=_mended_object))
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(data,
                                                                            by_name=False))
    except (ValueError, RecursionError):  # not JSON either, or no JSON-RPC message
        return None


def _mended_object(node: dict[str, Any]) -> dict[str, Any]:
    """``json``'s object_hook: an object's keys and values mended as it is read."""
    return {_mended(k): _mended(v) for k, v in node.items()}


def _mended(node: Any) -> Any:
    """Lone surrogates in a string, or in a list's strings, as U+FFFD. An object was
    mended by the hook when it was read: walked again from each enclosing object, a line
    of objects nested in lists cost its depth times its size (a 100 KB line, 1 s of the
    gateway's loop)."""
    if isinstance(node, str):
        return _LONE_SURROGATE.sub("\ufffd", node)
    if isinstance(node, list):
        return [_mended(item) for item in node]
    return node


def _keep_tools(result: dict[str, Any], version: str | None, dropped: list[str]) -> None:
    """Leave out of a ``tools/list`` result the entries the MCP schema (of the negotiated
    ``version``, as the SDK checks it) refuses."""
    from pydantic import ValidationError

    tools = result.get("tools")
    if not isinstance(tools, list):
        return
    kept = []
    for index, entry in enumerate(tools):
        try:
            _check(entry, version)
        except ValidationError as exc:
            name = entry.get("name") if isinstance(entry, dict) else None
            label = name[:80] if isinstance(name, str) and name else f"entry {index}"
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(step) for step in first["loc"][2:])
            if len(dropped) < _MAX_DROPPED:
                dropped.append(f"{label}: {where + ': ' if where else ''}{first['msg']}"
                               " (the MCP schema refuses it)")
            continue
        kept.append(entry)
    result["tools"] = kept


def _check(entry: Any, version: str | None) -> None:
    """Raise ``ValidationError`` if the SDK's check of a listing refuses ``entry``."""
    from mcp import types
    from mcp_types.methods import validate_server_result
    from pydantic import ValidationError

    listing = {"tools": [entry]}
    try:
        validate_server_result("tools/list", version or "2025-11-25", listing)
    except ValidationError:
        raise
    except (KeyError, ValueError):  # a version the SDK has no surface for
        types.ListToolsResult.model_validate(listing, by_name=False)
