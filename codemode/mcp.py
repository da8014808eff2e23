"""Register an MCP server's tools in a registry, under a namespace.

Each MCP tool becomes a ``Tool`` whose spec is the server's own (name,
description, input and output schemas, namespace) and whose handler calls the
server through an initialised ``mcp.ClientSession``. Calls therefore go
through the same pipeline as local tools, and scripts reach them as
``tools.<namespace>.<name>(...)``. Needs the ``mcp`` extra.

Servers publish schemas the metaschema refuses (draft-3 ``required: true``,
JavaScript-only ``pattern`` regexes, a root without ``type``). The server
validates its own arguments, so such a tool is registered with the refused
keywords dropped (listed in ``McpTools.repairs``) instead of failing the server.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, final

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from .errors import ToolDefinitionError
from .frozen import thaw
from .tool import Tool, define_tool

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .context import ExecContext
    from .registry import Registration, ToolRegistry

__all__ = ["McpTools", "mcp_tools", "register_mcp_tools"]


class McpSession(Protocol):
    """What the adapter needs of ``mcp.ClientSession``."""

    async def list_tools(self, *, params: Any = None) -> Any: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: Any = None,
    ) -> Any: ...


def _dump(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


async def _list(session: McpSession) -> list[dict[str, Any]]:
    from mcp import types

    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = _dump(await session.list_tools(params=params))
        tools.extend(page.get("tools", []))
        cursor = page.get("nextCursor")
        if not cursor:
            return tools


def _handler(session: McpSession, remote: str) -> Any:
    async def call(args: Mapping[str, Any], ctx: ExecContext) -> dict[str, Any]:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            ctx.progress({"progress": done, "total": total, "message": message})

        result = _dump(await session.call_tool(remote, thaw(args), progress_callback=progress))
        envelope: dict[str, Any] = {
            "content": result.get("content") or "",
            "is_error": bool(result.get("isError")),
        }
        if result.get("structuredContent") is not None and not envelope["is_error"]:
            envelope["structured"] = result["structuredContent"]
        if result.get("_meta"):
            envelope["meta"] = {"mcp": result["_meta"]}
        return envelope

    return call


def mcp_tools(
    specs: list[dict[str, Any]], session: McpSession, *, namespace: str | None, prefix: str = ""
) -> list[Tool]:
    """``Tool``s for MCP tool listings (``tools/list`` entries) served by ``session``."""
    return [tool for tool, _ in _tools(specs, session, namespace=namespace, prefix=prefix)]


def _tools(
    specs: list[dict[str, Any]], session: McpSession, *, namespace: str | None, prefix: str
) -> list[tuple[Tool, tuple[str, ...]]]:
    out: list[tuple[Tool, tuple[str, ...]]] = []
    for spec in specs:
        name = spec.get("name")
        if not isinstance(name, str):
            raise ToolDefinitionError(repr(name), "MCP tool listing without a string name")
        params = spec.get("inputSchema") or {"type": "object"}
        output = spec.get("outputSchema")
        try:
            out.append((_define(spec, name, params, output, session, namespace, prefix), ()))
            continue
        except ToolDefinitionError as refused:
            first = refused
        loose, repairs = _loosen(params, root=True)
        if isinstance(output, dict):
            output, dropped = _loosen(output, root=False)
            repairs += [f"output schema: {note}" for note in dropped]
        try:
            tool = _define(spec, name, loose, output, session, namespace, prefix)
        except ToolDefinitionError:
            if output is None:
                raise first from None
            try:
                tool = _define(spec, name, loose, None, session, namespace, prefix)
            except ToolDefinitionError:
                raise first from None
            repairs.append("output schema dropped")
        out.append((tool, tuple(f"{prefix + name}: {note}" for note in repairs)))
    return out


def _define(
    spec: dict[str, Any],
    remote: str,
    params: Any,
    output: Any,
    session: McpSession,
    namespace: str | None,
    prefix: str,
) -> Tool:
    return define_tool(
        name=prefix + remote,
        description=spec.get("description") or "",
        parameters=params,
        output_schema=output,
        execute=_handler(session, remote),
        namespace=namespace,
    )


_DIALECTS = (
    jsonschema.Draft202012Validator,
    jsonschema.Draft7Validator,
    jsonschema.Draft4Validator,
)
_DECLARABLE = (
    jsonschema.Draft202012Validator,
    jsonschema.Draft201909Validator,
    jsonschema.Draft7Validator,
    jsonschema.Draft6Validator,
    jsonschema.Draft4Validator,
    jsonschema.Draft3Validator,
)
_MAX_REPAIRS = 100


def _loosen(schema: Any, *, root: bool) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``schema`` with what its metaschema refuses dropped, and what was dropped.

    Without a known ``$schema``, the draft (2020-12, 7, 4) needing the fewest drops is used.
    """
    base = copy.deepcopy(thaw(schema)) if isinstance(schema, dict) else {}
    notes: list[str] = []
    _lift_required(base, notes, "")
    kind = base.get("type")
    if root and (kind is None or (isinstance(kind, list) and "object" in kind)):
        if kind is not None or "properties" not in base:  # else define_tool reads it so too
            notes.append(f"root type {kind!r} read as 'object'")
        base["type"] = "object"
    best: tuple[dict[str, Any], list[str]] | None = None
    for dialect in _declared(base.get("$schema")) or _DIALECTS:
        loose, dropped = _drop_refused(copy.deepcopy(base), dialect)
        if best is None or len(dropped) < len(best[1]):
            best = (loose, dropped)
    assert best is not None
    return best[0], notes + best[1]


def _lift_required(node: Any, notes: list[str], where: str) -> None:
    """Draft 3's ``"required": true`` on a property becomes its name in the parent's list."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            _lift_required(item, notes, f"{where}/{index}")
        return
    if not isinstance(node, dict):
        return
    props = node.get("properties")
    for name, sub in props.items() if isinstance(props, dict) else ():
        flag = sub.get("required") if isinstance(sub, dict) else None
        if isinstance(flag, bool):
            del sub["required"]
            if flag and isinstance(node.setdefault("required", []), list):
                node["required"].append(name)
            notes.append(f"{where}/properties/{name}/required ({flag}) lifted into the parent")
    for key, value in node.items():
        if key not in _VALUES:
            _lift_required(value, notes, f"{where}/{key}")


_VALUES = frozenset({"enum", "const", "default", "examples"})
"""Keywords holding instances, not schemas: never rewritten."""


def _declared(uri: object) -> tuple[type[jsonschema.protocols.Validator], ...]:
    if not isinstance(uri, str):
        return ()
    for dialect in _DECLARABLE:
        meta = dialect.META_SCHEMA
        if str(meta.get("$id", meta.get("id", ""))).rstrip("#") == uri.rstrip("#"):
            return (dialect,)
    return ()


def _drop_refused(
    schema: dict[str, Any], dialect: type[jsonschema.protocols.Validator]
) -> tuple[dict[str, Any], list[str]]:
    checker = dialect(dialect.META_SCHEMA, format_checker=dialect.FORMAT_CHECKER)
    dropped: list[str] = []
    for _ in range(_MAX_REPAIRS):
        error = jsonschema.exceptions.best_match(checker.iter_errors(schema))
        path = list(error.absolute_path) if error is not None else []
        if not path:
            break
        parent: Any = schema
        for step in path[:-1]:
            parent = parent[step]
        del parent[path[-1]]
        dropped.append("dropped " + "/".join(str(step) for step in path))
    return schema, dropped


@final
@dataclass(frozen=True, slots=True)
class McpTools:
    """The registrations made for one server; ``dispose()`` removes them all."""

    registrations: tuple[Registration, ...]
    """One per tool, in listing order."""
    repairs: tuple[str, ...] = ()
    """``"<tool>: dropped <path>"`` for each schema keyword the metaschema refused."""

    @property
    def names(self) -> tuple[str, ...]:
        """Wire names registered."""
        return tuple(r.tool.name for r in self.registrations)

    def dispose(self) -> None:
        """Unregister every tool of this server (idempotent)."""
        for registration in self.registrations:
            registration.dispose()


async def register_mcp_tools(
    registry: ToolRegistry, session: McpSession, *, namespace: str | None, prefix: str = ""
) -> McpTools:
    """List the server's tools (all pages) and register them; all or nothing.

    ``prefix`` is prepended to wire names when two servers' tool names collide
    in one registry. A schema keyword the metaschema refuses is dropped (see
    ``McpTools.repairs``); a tool still invalid after that raises
    ``ToolDefinitionError`` before anything is registered.
    """
    tools = _tools(await _list(session), session, namespace=namespace, prefix=prefix)
    made: list[Registration] = []
    try:
        for tool, _ in tools:
            made.append(registry.register(tool))
    except BaseException:
        for registration in made:
            registration.dispose()
        raise
    return McpTools(tuple(made), tuple(note for _, notes in tools for note in notes))
