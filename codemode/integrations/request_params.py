"""Checks of a client's request params that the MCP SDK's server misses or words badly,
as ``Server.middleware`` (they see the raw params, before the SDK's models read them).

- ``named_params_errors``: the SDK answers params its model refuses with only "Invalid
  request parameters"; the answer names the field and the problem.
- ``progress_token_check``: MCP's progress token is a string or an integer; the SDK's model
  read ``true`` as the integer 1 while its dispatcher dropped it as no token, so the request
  ran and its client, which asked for progress, got none and was not told why.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["named_params_errors", "progress_token_check"]


async def progress_token_check(ctx: Any, call_next: Any) -> Any:
    """A request whose ``_meta.progressToken`` is no string or integer (``true``, ``1.5``,
    ``2.0``, ``null``, an object) gets ``-32602`` naming it, whatever its method; a notification
    passes (it cannot be answered)."""
    from mcp import types
    from mcp.shared.exceptions import MCPError

    params = ctx.params
    meta = params.get("_meta") if isinstance(params, dict) else None
    if ctx.request_id is not None and isinstance(meta, dict) and "progressToken" in meta:
        token = meta["progressToken"]
        if isinstance(token, bool) or not isinstance(token, str | int):
            raise MCPError(code=types.INVALID_PARAMS, message=(
                "Invalid params: _meta.progressToken: must be a string or an integer (MCP's"
                f" ProgressToken), not {_shown(token)}"))
    return await call_next(ctx)


def _shown(value: Any) -> str:
    """The token as its JSON, cut to 60 characters (``2.0`` too: JSON Schema would take it
    for an integer, but the SDK's dispatcher sends no progress for it)."""
    said = json.dumps(value, ensure_ascii=False, default=str)
    return said if len(said) <= 60 else said[:57] + "..."


def named_params_errors(server: Any) -> Any:
    """A middleware for ``server``: the SDK answers a request whose params its model
    refuses with only "Invalid request parameters" (``data`` empty), so a client that sent
    ``"arguments": [1]``, no tool name, or ``logging/setLevel`` ``"loud"`` could not tell
    what was wrong. The params are the client's own: what is wrong is said (field,
    problem). A request before ``initialize`` got the same bare text: it says so."""
    from mcp import types
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    # what the SDK answers a request sent before ``initialize`` (kept so for compat)
    uninitialized = types.ErrorData(
        code=types.INVALID_PARAMS, message="Invalid request parameters", data="")

    async def said(ctx: Any, call_next: Any) -> Any:
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if exc.error != uninitialized:
                raise
            # the SDK's answer before the handshake: the same code, saying what to send
            raise MCPError(code=types.INVALID_PARAMS, message=(
                f"{ctx.method} before initialize: the connection starts with an initialize"
                " request")) from None
        except ValidationError as exc:
            problems = exc.errors(include_url=False)
            loc = list(problems[0]["loc"]) if problems else []
            entry = server.get_request_handler(ctx.method)
            if exc.title.endswith("Request") and loc[:1] == ["params"]:
                loc = loc[1:]  # the check of a request MCP defines, by its request model
            elif entry is None or exc.title != entry.params_type.__name__ or not problems:
                raise  # not the params' check: the SDK's answer
            first = problems[0]
            where = ".".join(str(step) for step in loc)
            raise MCPError(code=types.INVALID_PARAMS, message=(
                f"Invalid params: {where + ': ' if where else ''}{first['msg']}"[:300]
            )) from None

    return said
