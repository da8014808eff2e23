"""An upstream MCP server over streamable HTTP, its messages bounded as stdio lines are.

The MCP SDK's HTTP client parses each SSE event (up to the ``max_sse_event_size`` it is
given) with no count of the JSON values in it, and reads a JSON answer whole
(``response.aread()``): a hostile upstream's event of ``{},`` cost the host GBs, and an
answer that never ends grew without bound. Each response's byte stream is wrapped here
(an httpx response hook, so proxies from the environment still apply): a JSON body is held
to ``MAX_LINE`` bytes, a JSON body or one SSE event to ``upstream_stdio``'s count of
values, and a compressed body (which those counts could not see; ``Accept-Encoding:
identity`` is asked for) is refused. The SDK then fails that one request at once (a parse
error, or "SSE stream failed") instead of parsing it: the connection serves on.

A 400 or 404 answer to a request that carried an ``Mcp-Session-Id`` is reported to the
``refused`` callback: 404 is how MCP (2025-06-18, Session Management) says the server ended
the session, and servers built on the TypeScript SDK's examples (``server-everything``)
answer 400 for a session they no longer know (after a restart). The SDK's client turns
either into an error of that one request and keeps the dead session; the gateway checks
the connection instead, and starts a new session when it is gone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final, final

import httpx2

from codemode.integrations.upstream_stdio import MAX_LINE, MAX_VALUES, too_many_values

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

__all__ = ["MessageTooLarge", "bounded_client"]

_EVENT_END: Final = re.compile(rb"\r\n\r\n|\n\n|\r\r")
"""A blank line: where an SSE event ends (``\\r\\n`` is what the SDK's server sends)."""
_IDENTITY: Final = frozenset({"", "identity"})
_SESSION_REFUSED: Final = frozenset({400, 404})
"""Statuses a server answers a request of a session it ended (404) or does not know (400)."""


class MessageTooLarge(httpx2.SSEError, httpx2.StreamError):
    """An upstream's answer holds more than one message may: an ``SSEError`` for the SDK's
    SSE reading and a ``StreamError`` for its JSON reading, which fail the request on each."""

    def __init__(self, message: str) -> None:
        httpx2.SSEError.__init__(self, message)


@final
class _Bounded(httpx2.AsyncByteStream):
    """A response body that raises :class:`MessageTooLarge` before its bytes pass a bound."""

    def __init__(self, inner: Any, *, events: bool, encoding: str, max_bytes: int,
                 max_values: int) -> None:
        self._inner = inner
        self._events = events
        self._encoding = encoding
        self._max_bytes = max_bytes
        self._max_values = max_values
        self._size = self._containers = self._commas = 0
        self._tail = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._encoding not in _IDENTITY:
            raise MessageTooLarge(f"a body with Content-Encoding {self._encoding!r} (identity"
                                  " was asked for: its messages could not be bounded)")
        async for chunk in self._inner:
            if self._events:
                self._feed_events(chunk)
            else:
                self._size += len(chunk)
                if self._size > self._max_bytes:
                    raise MessageTooLarge(
                        f"a JSON answer longer than {self._max_bytes:,} bytes")
                self._count(chunk)
            yield chunk

    def _feed_events(self, chunk: bytes) -> None:
        joined = self._tail + chunk
        offset = len(self._tail)
        start = 0
        for end in (m.end() - offset for m in _EVENT_END.finditer(joined)):
            if end > start:
                self._count(chunk[start:end])
                self._containers = self._commas = 0
                start = end
        self._count(chunk[start:])
        self._tail = joined[-3:]

    def _count(self, piece: bytes) -> None:
        self._containers += piece.count(b"{") + piece.count(b"[")
        self._commas += piece.count(b",")
        problem = too_many_values(self._containers, self._commas, self._max_values)
        if problem is not None:
            what = "an SSE event" if self._events else "a JSON answer"
            raise MessageTooLarge(f"{what} of {problem}")

    async def aclose(self) -> None:
        await self._inner.aclose()


def bounded_client(headers: Mapping[str, str], *, max_bytes: int = MAX_LINE,
                   max_values: int = MAX_VALUES,
                   transport: httpx2.AsyncBaseTransport | None = None,
                   refused: Callable[[], None] | None = None) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` (``headers`` sent with every request) whose responses are
    bounded as the module says; ``transport``: httpx's, for a fake server; ``refused`` is
    called for each 400 or 404 answer to a request of a session (see the module)."""

    async def bound(response: httpx2.Response) -> None:
        if (refused is not None and response.status_code in _SESSION_REFUSED
                and "mcp-session-id" in response.request.headers):
            refused()
        kind = response.headers.get("content-type", "").lower()
        response.stream = _Bounded(
            response.stream, events=kind.startswith("text/event-stream"),
            encoding=response.headers.get("content-encoding", "").strip().lower(),
            max_bytes=max_bytes, max_values=max_values)

    asked = {key.lower() for key in headers}
    sent = {**({} if "accept-encoding" in asked else {"Accept-Encoding": "identity"}),
            **headers}
    return httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(30.0, read=300.0),
                              event_hooks={"response": [bound]}, transport=transport)
