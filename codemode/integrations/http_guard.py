"""ASGI in front of the MCP SDK's streamable HTTP app, for what the SDK leaves undone.

- Every error answer is a JSON-RPC error: the SDK (and starlette) answered some as plain
  text or nothing (400 ``Invalid Content-Type header``, 413 ``Request body too large``,
  405 with no body), which a client's JSON parser cannot read. A POST whose
  ``Content-Type`` is not JSON gets 415.
- A body that is no one JSON-RPC message (a batch, a number, an object without
  ``method``) got ``-32602`` with a pydantic dump of four union branches: it gets
  ``-32600`` (invalid request) and one line. A request whose only fault is its params
  (``"params": 5``) gets ``-32602`` with its own id, as over stdio.
- A request whose id is no string or integer (``null``, an object) read as a notification
  to the SDK (202, never answered): ``-32600``, id null, 400. A body nested deeper than the
  SDK's JSON parser reads (about 200 levels) is no parse error (``-32700``): ``-32600``
  with its id when Python's parser finds it. Both as over stdio.
- A handshake-era client that goes away before its request is answered: the SDK kept the
  request running (a ``run_code`` to its timeout, its answer written nowhere). The request
  is cancelled as if the client had sent ``notifications/cancelled``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, final

from codemode.integrations.stdio_requests import BAD_ID, TOO_DEEP

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]
    App = Callable[[Scope, Receive, Send], Awaitable[None]]

__all__ = ["guarded"]

_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_INVALID_PARAMS = -32602
_NOT_ONE_MESSAGE = (
    "Invalid Request: the body must be one JSON-RPC request, notification or response"
    " object (batches are not accepted)"
)


def guarded(app: App) -> App:
    """``app`` with the guards above."""

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers") or ()}
        if scope["method"] == "POST" and not headers.get(b"content-type", b"").lower(
        ).startswith(b"application/json"):
            await _answer(send, 415, _error(
                _INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"))
            return
        exchange = _Exchange(receive, send, in_session=b"mcp-session-id" in headers)
        await app(scope, exchange.receive, exchange.send)
        request_id = exchange.abandoned_request()
        if request_id is not None and scope["method"] == "POST":
            await _cancel(app, scope, request_id)

    return guard


@final
class _Exchange:
    """One request's messages both ways: its body (to learn its id), whether the client
    left, whether the answer was finished, and error answers rewritten."""

    def __init__(self, receive: Receive, send: Send, *, in_session: bool) -> None:
        self._receive = receive
        self._send = send
        self._in_session = in_session
        self._body: list[bytes] = []
        self._gone = False
        self._finished = False
        self._held: Message | None = None
        self._held_body: list[bytes] = []

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self._body.append(message.get("body", b""))
        elif message["type"] == "http.disconnect":
            self._gone = True
        return message

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and (
                message["status"] >= 400 or (message["status"] == 202 and self._bad_id())):
            self._held = message  # the error answer is rewritten once whole
            return
        if message["type"] == "http.response.body":
            more = bool(message.get("more_body", False))
            if self._held is not None:
                self._held_body.append(message.get("body", b""))
                if not more:
                    self._finished = True
                    await self._send_error(self._held, b"".join(self._held_body))
                return
            if not more:
                self._finished = True
        await self._send(message)

    async def _send_error(self, start: Message, body: bytes) -> None:
        status = int(start["status"])
        kind = dict(start.get("headers") or ()).get(b"content-type", b"")
        payload = _read(body) if kind.startswith(b"application/json") else None
        if status == 202:  # accepted as a notification, but it has an id
            status, payload = 400, _error(_INVALID_REQUEST, BAD_ID)
        elif isinstance(payload, dict) and isinstance(payload.get("error"), dict):
            error = payload["error"]
            if payload.get("id") is None and error.get("code") == _INVALID_PARAMS:
                # the SDK's parser refused the body: its params alone, or the whole of it
                payload = _bad_params(_read(b"".join(self._body))) or _error(
                    _INVALID_REQUEST, _NOT_ONE_MESSAGE)
            elif payload.get("id") is None and error.get("code") == _PARSE_ERROR:
                payload = _too_deep(b"".join(self._body)) or payload
        else:
            text = body.decode("utf-8", "replace").strip() or _PHRASES.get(status, "Error")
            payload = _error(_INVALID_REQUEST, text)
        extra = [(k, v) for k, v in start.get("headers") or ()
                 if k.lower() not in (b"content-type", b"content-length")]
        await _answer(self._send, status, payload, extra)

    def _bad_id(self) -> bool:
        """Whether the body is a request whose id is no string or integer."""
        message = _read(b"".join(self._body))
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            return False
        request_id = message["id"]
        return isinstance(request_id, bool) or not isinstance(request_id, int | str)

    def abandoned_request(self) -> Any:
        """The id of a request whose client left before its answer ended, else None."""
        if not self._gone or self._finished or not self._in_session:
            return None
        message = _read(b"".join(self._body))
        if isinstance(message, dict) and isinstance(message.get("method"), str) and (
                isinstance(message.get("id"), str | int)):
            return message["id"]
        return None


_PHRASES = {405: "Method Not Allowed", 404: "Not Found", 413: "Request body too large"}


def _read(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _too_deep(body: bytes) -> dict[str, Any] | None:
    """The answer to a body the SDK's parser refused for its depth (pydantic's JSON parser
    stops near 200 levels, Python's goes on), else None (it is no JSON)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not _deeper_than(message, _SDK_DEPTH):
        return None  # refused for something else: its -32700 stands
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    return _error(_INVALID_REQUEST, TOO_DEEP, request_id)


_SDK_DEPTH = 150
"""Levels below pydantic's JSON parser limit: a body Python reads but the SDK refused,
deeper than this, was refused for its depth."""


def _deeper_than(value: Any, levels: int) -> bool:
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(levels):
        level = [v for node in level for v in (node.values() if isinstance(node, dict) else node)
                 if isinstance(v, dict | list)]
        if not level:
            return False
    return True


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _bad_params(message: Any) -> dict[str, Any] | None:
    """The answer to ``message`` when all that is wrong with it is params that are no
    object (with its id; a notification's has none), else None."""
    if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0"
            and isinstance(message.get("method"), str) and "params" in message
            and not isinstance(message["params"], dict)):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str | None):
        return None
    return _error(_INVALID_PARAMS, "Invalid params: params must be an object", request_id)


async def _answer(send: Send, status: int, payload: dict[str, Any],
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        *(headers or ()), (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _cancel(app: App, scope: Scope, request_id: Any) -> None:
    """``notifications/cancelled`` for ``request_id``, posted to the app in the name of the
    session that sent it (same headers), its answer (202) dropped."""
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
        "requestId": request_id, "reason": "the client disconnected"}}).encode()
    headers = [(k, v) for k, v in scope.get("headers") or ()
               if k.lower() not in (b"content-length", b"content-type")]
    headers += [(b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode())]
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def drop(message: Message) -> None:
        return None

    await app({**scope, "headers": headers}, receive, drop)
