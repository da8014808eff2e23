"""What a stdio client sends that the MCP SDK's server drops unanswered: answered.

The SDK's stdio server hands a line its JSON-RPC parser refuses to the session, which
logs it: a client that sent ``{not json``, a batch (``[{...}, {...}]``, MCP 2025-03-26
allows them) or a request whose params are no object waited forever for its answer. Here
such a line gets its JSON-RPC answer (parse error or invalid request, id null), and a
batch's messages are handled one by one (each request answered on its own line, matched
by its id). A request whose only fault is its params (``"params": 5``, ``"params": [1]``)
is answered with its id, ``-32602``: the SDK's parser keeps only the part it refused, so
the line itself (``ClientLines`` keeps each until its message is handled) is read again
for the id; a notification, even one with bad params, is never answered. A request whose
id is no string or integer reads as a notification to the SDK: it gets ``-32600`` (id
null). A line nested deeper than the SDK's JSON parser reads (about 200 levels) is no
parse error: it is answered ``-32600`` with its id when Python's parser finds it.
"""

from __future__ import annotations

import contextlib
import json
from collections import deque
from typing import TYPE_CHECKING, Any, final

import anyio
from pydantic import ValidationError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["BAD_ID", "TOO_DEEP", "ClientLines", "answer_refused"]


@final
class ClientLines:
    """The client's lines as the SDK's reader takes them (one message each), each kept
    until ``answer_refused`` has its message: a refused one is read again for its id."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self._kept: deque[str] = deque()

    def __aiter__(self) -> ClientLines:
        return self

    async def __anext__(self) -> str:
        line = await self._lines.__anext__()
        self._kept.append(line)
        return line

    def taken(self) -> str | None:
        """The line of the message read next from the SDK's reader (None: not known)."""
        return self._kept.popleft() if self._kept else None


async def answer_refused(read: Any, write: Any, send: Any,
                         lines: ClientLines | None = None) -> None:
    """Pass ``read``'s items to ``send``, answering on ``write`` what the SDK would drop;
    ``send`` is closed when ``read`` ends. ``lines``: what the SDK's reader read."""
    async with send:
        try:
            async for item in read:
                line = lines.taken() if lines is not None else None
                for message, answered in _messages(item, line):
                    await (write if answered else send).send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


def _messages(item: Any, line: str | None) -> list[tuple[Any, bool]]:
    """The messages one item of the SDK's reader (read from ``line`` when known) stands
    for, each with True for an answer to the client (else it goes to the session)."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    if not isinstance(item, ValidationError):
        if line is not None and '"id"' in line and isinstance(
                getattr(item, "message", None), types.JSONRPCNotification):
            return _bad_id(item, line)
        return [(item, False)]
    problems = item.errors(include_url=False)
    given = problems[0].get("input") if problems else None
    if problems and problems[0]["type"] == "json_invalid":
        if "recursion limit" not in problems[0]["msg"]:
            return [_error(None, types.PARSE_ERROR, "Parse error: the line is no JSON")]
        # JSON, nested deeper than the SDK's parser goes: answered with its id when
        # Python's parser finds it (with id null, a client waited for its answer forever)
        request_id = None
        if line is not None:
            with contextlib.suppress(ValueError, RecursionError):
                found = json.loads(line)
                request_id = found.get("id") if isinstance(found, dict) else None
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            request_id = None
        return [_error(request_id, types.INVALID_REQUEST, TOO_DEEP)]
    if line is not None and problems and len(problems[0]["loc"]) > 1:  # inside a message
        with contextlib.suppress(ValueError, RecursionError):  # the SDK's part is kept
            given = json.loads(line)
    if isinstance(given, list) and given:
        out: list[tuple[Any, bool]] = []
        for entry in given:
            try:
                out.append((SessionMessage(types.jsonrpc_message_adapter.validate_python(
                    entry, by_name=False)), False))
            except ValidationError as exc:
                out += _invalid(entry, exc)
        return out
    return _invalid(given, item)


def _bad_id(item: Any, line: str) -> list[tuple[Any, bool]]:
    """A request whose id is no string or number (``null``, an object) reads as a
    notification to the SDK, which never answers one: the client waited forever."""
    from mcp import types

    with contextlib.suppress(ValueError, RecursionError):
        given = json.loads(line)
        if isinstance(given, dict) and "id" in given:
            return [_error(None, types.INVALID_REQUEST, BAD_ID)]
    return [(item, False)]


TOO_DEEP = ("Invalid request: the message nests deeper than the MCP SDK's JSON parser"
            " reads (about 200 levels of objects and arrays)")
BAD_ID = "Invalid request: the id must be a string or an integer"
"""Both said over HTTP too (``http_guard``)."""


def _invalid(given: Any, error: ValidationError) -> list[tuple[Any, bool]]:
    """An invalid request's answer; none for what has no id (a notification)."""
    from mcp import types

    request_id = given.get("id") if isinstance(given, dict) else None
    if isinstance(given, dict) and "method" in given and request_id is None:
        return []  # a notification is never answered
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        request_id = None
    if isinstance(given, list):
        return [_error(request_id, types.INVALID_REQUEST, "Invalid request: an empty batch")]
    first = error.errors(include_url=False)[0]
    steps = [str(step) for step in first["loc"][1:]]
    where = ".".join(steps)
    said = f"{where + ': ' if where else ''}{first['msg']}"
    if request_id is not None and steps[:1] == ["params"] and isinstance(
            given, dict) and isinstance(given.get("method"), str):
        return [_error(request_id, types.INVALID_PARAMS, f"Invalid params: {said}")]
    return [_error(request_id, types.INVALID_REQUEST, f"Invalid request: {said}")]


def _error(request_id: Any, code: int, message: str) -> tuple[Any, bool]:
    from mcp import types
    from mcp.shared.message import SessionMessage

    error = types.JSONRPCError(jsonrpc="2.0", id=request_id,
                               error=types.ErrorData(code=code, message=message))
    return SessionMessage(error), True
