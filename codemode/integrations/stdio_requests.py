"""What a stdio client sends that the MCP SDK's server drops unanswered: answered.

The SDK's stdio server hands a line its JSON-RPC parser refuses to the session, which
logs it: a client that sent ``{not json``, a batch (``[{...}, {...}]``, MCP 2025-03-26
allows them) or a request whose params are no object waited forever for its answer. Here
such a line gets its JSON-RPC answer (parse error or invalid request, id null), and a
batch's messages are handled one by one (each request answered on its own line, matched
by its id). An object that is no valid message
is answered without its id: the SDK's parser keeps only the part it refused.
"""

from __future__ import annotations

from typing import Any

import anyio
from pydantic import ValidationError

__all__ = ["answer_refused"]


async def answer_refused(read: Any, write: Any, send: Any) -> None:
    """Pass ``read``'s items to ``send``, answering on ``write`` what the SDK would drop;
    ``send`` is closed when ``read`` ends."""
    async with send:
        try:
            async for item in read:
                for message, answered in _messages(item):
                    await (write if answered else send).send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


def _messages(item: Any) -> list[tuple[Any, bool]]:
    """The messages one item of the SDK's reader stands for, each with True for an answer
    to the client (else it goes to the session)."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    if not isinstance(item, ValidationError):
        return [(item, False)]
    problems = item.errors(include_url=False)
    given = problems[0].get("input") if problems else None
    if problems and problems[0]["type"] == "json_invalid":
        return [_error(None, types.PARSE_ERROR, "Parse error: the line is no JSON")]
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


def _invalid(given: Any, error: ValidationError) -> list[tuple[Any, bool]]:
    """An invalid request's answer; none for what has no id (a notification)."""
    from mcp import types

    request_id = given.get("id") if isinstance(given, dict) else None
    if isinstance(given, dict) and "method" in given and request_id is None:
        return []  # a notification is never answered
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        request_id = None
    if isinstance(given, list):
        said = "an empty batch"
    else:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(step) for step in first["loc"][1:])
        said = f"{where + ': ' if where else ''}{first['msg']}"
    return [_error(request_id, types.INVALID_REQUEST, f"Invalid request: {said}")]


def _error(request_id: Any, code: int, message: str) -> tuple[Any, bool]:
    from mcp import types
    from mcp.shared.message import SessionMessage

    error = types.JSONRPCError(jsonrpc="2.0", id=request_id,
                               error=types.ErrorData(code=code, message=message))
    return SessionMessage(error), True
