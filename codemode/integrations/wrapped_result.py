"""Results an MCP server wrapped as ``{"result": x}``: read as ``x``, and served so.

MCP says structured content is a JSON object, so servers built on the Python SDKs wrap a
function's other returns (``str``, ``int``, a list) as ``{"result": x}`` with an output
schema of one ``result`` property. Read as it is, a script got ``{"result": "hi"}`` and
the prompt said ``-> {result: str}``. A listing is taken as wrapped only where the server
marks it so:

- FastMCP (``fastmcp``) marks the schema ``"x-fastmcp-wrap-result": true`` (its client
  unwraps on it);
- the MCP SDK's ``MCPServer`` (formerly its ``FastMCP``) marks nothing but the shape it
  makes with ``create_model(f"{function}Output", result=...)``: exactly ``type``,
  ``properties`` (``result`` only), ``required: ["result"]`` and the title
  ``"<tool name>Output"``. A tool renamed from its function (``@mcp.tool(name="loud")`` on
  ``shout``) keeps the function's name in the title, ``"shoutOutput"``: any title
  ``"<identifier>Output"`` is taken when the ``result`` property has pydantic's title
  ``"Result"`` as well. A model of the server's own with that very shape (one required
  ``result``, a class named ``...Output``) cannot be told apart: it is read unwrapped too,
  the prompt and the script's value agreeing on ``x``.

Any other object with a ``result`` key is data, left as it is. Served again (``codemode
serve --expose-upstream``), a schema that is no object schema is wrapped back the
FastMCP way, so the listing and its structured content stay valid MCP.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MARK", "unwrapped_schema", "wire_schema", "wire_structured", "wraps"]

MARK: Final = "x-fastmcp-wrap-result"
"""The key FastMCP marks a wrapped output schema with (its client unwraps on it)."""

_SDK_KEYS: Final = frozenset({"type", "properties", "required", "title", "$defs"})
_CARRIED: Final = ("$defs", "definitions")
"""Where pydantic puts the definitions the ``result`` schema refers to: the root."""


def unwrapped_schema(schema: Any, tool: str) -> dict[str, Any] | None:
    """The schema of ``x`` when ``schema`` (a listed output schema of ``tool``) says its
    results come as ``{"result": x}``, with the root's definitions carried; else None."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or set(properties) != {"result"}:
        return None
    inner = properties["result"]
    if not isinstance(inner, dict) or schema.get("required") != ["result"]:
        return None
    marked = schema.get(MARK) is True
    made_by_sdk = set(schema) <= _SDK_KEYS and _sdk_title(schema.get("title"), inner, tool)
    if not (marked or made_by_sdk):
        return None
    carried = {key: schema[key] for key in _CARRIED if key in schema and key not in inner}
    return {**inner, **carried}


def _sdk_title(title: Any, inner: dict[str, Any], tool: str) -> bool:
    """Whether ``title`` is the one the MCP SDK gives a wrapped output of ``tool``, or of a
    function listed under another name (then the property has pydantic's title too)."""
    if not isinstance(title, str) or not title.endswith("Output"):
        return False
    return title == f"{tool}Output" or (
        title[:-len("Output")].isidentifier() and inner.get("title") == "Result")


def wraps(schema: Any) -> bool:
    """Whether a result of ``schema`` is served as ``{"result": x}``: MCP's output schemas
    are object schemas (a typeless one with ``properties`` is read as one)."""
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    return kind != "object" and not (kind is None and "properties" in schema)


def wire_schema(schema: Any) -> Any:
    """``schema`` as an MCP ``outputSchema``: wrapped (and marked) unless it is an object
    schema already."""
    if not wraps(schema):
        return schema
    inner = {k: v for k, v in schema.items() if k not in _CARRIED} if isinstance(
        schema, dict) else schema
    carried = {k: schema[k] for k in _CARRIED if isinstance(schema, dict) and k in schema}
    return {"type": "object", "properties": {"result": inner}, "required": ["result"],
            MARK: True, **carried}


def wire_structured(schema: Any, structured: Any) -> Any:
    """``structured`` (a result of ``schema``) as MCP structured content."""
    return {"result": structured} if wraps(schema) else structured
