"""Register an MCP server's tools in a registry, under a namespace.

Each MCP tool becomes a ``Tool`` whose spec is the server's own (name,
description, input and output schemas, namespace) and whose handler calls the
server through an initialised ``mcp.ClientSession``. Calls therefore go
through the same pipeline as local tools, and scripts reach them as
``tools.<namespace>.<name>(...)``. Needs the ``mcp`` extra.

Servers publish schemas the metaschema refuses (draft-3 ``required: true``,
JavaScript-only ``pattern`` regexes, a root without ``type``) or whose ``$ref``
points nowhere. The server validates its own arguments, so such a tool is
registered with the refused keywords dropped (listed in ``McpTools.repairs``)
instead of failing the server, or every call.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, final
from urllib.parse import unquote

import anyio
import jsonschema
import jsonschema.exceptions
import jsonschema.validators
from pydantic import ValidationError

from codemode.dispatch.content import Envelope
from codemode.dispatch.frozen import thaw
from codemode.dispatch.tool import Tool, define_tool
from codemode.errors import DuplicateToolError, ToolDefinitionError
from codemode.integrations.wrapped_result import unwrapped_schema

if TYPE_CHECKING:
    from collections.abc import Mapping

    from codemode.dispatch.context import ExecContext
    from codemode.dispatch.registry import Registration, ToolRegistry

__all__ = [
    "McpListingError",
    "McpTools",
    "list_tool_entries",
    "mcp_tools",
    "register_mcp_listing",
    "register_mcp_tools",
]


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


async def list_tool_entries(session: McpSession) -> list[Any]:
    """Every entry of the server's ``tools/list`` (all pages), as JSON objects.

    A cursor the server already gave raises ``McpListingError`` (its pages would loop
    forever); a server without the tools capability lists none.
    """
    from mcp import types
    from mcp.shared.exceptions import MCPError

    tools: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        try:
            page = _dump(await session.list_tools(params=params))
        except MCPError as exc:
            if cursor is None and exc.code == types.METHOD_NOT_FOUND:
                return []  # a server without the tools capability offers no tools
            raise
        tools.extend(page.get("tools", []))
        cursor = page.get("nextCursor")
        if not cursor:
            return tools
        if cursor in seen:
            raise McpListingError(f"tools/list pages loop (cursor {cursor[:60]!r} came twice)")
        seen.add(cursor)


class McpListingError(Exception):
    """An MCP server's ``tools/list`` answer cannot be read as a listing at all."""


async def _call_tool(
    session: McpSession, remote: str, arguments: dict[str, Any], progress: Any
) -> Any:
    """Send ``tools/call``, without ``ClientSession.call_tool``'s check of the result.

    That check uses the output schema as the server published it: a schema repaired here
    (a JavaScript-only ``pattern``) fails every call, and a result without structured
    content fails though it has text. The pipeline checks structured content against the
    registered (repaired) schema instead. Sessions without ``send_request`` use ``call_tool``.
    """
    send = getattr(session, "send_request", None)
    if send is None:
        return await session.call_tool(remote, arguments, progress_callback=progress)
    from mcp import types

    params = types.CallToolRequestParams(name=remote, arguments=arguments)
    request = types.CallToolRequest(params=params)
    return await send(request, types.CallToolResult, progress_callback=progress)


class McpCallCancelled(Exception):
    """A call of an MCP server's tool stopped because its cancellation signal fired."""

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"the call of {tool!r} was cancelled ({reason}); the server was told")


class McpResultError(Exception):
    """An MCP server answered ``tools/call`` with a result the MCP schema refuses."""

    def __init__(self, tool: str, error: ValidationError) -> None:
        problems = error.errors(include_url=False)
        first: Any = problems[0] if problems else {"loc": (), "msg": str(error), "input": None}
        loc = list(first["loc"])
        # a union (content blocks): pydantic names each member tried, as a loc step
        member = next((i for i, step in enumerate(loc)
                       if isinstance(step, str) and step[:1].isupper()), None)
        if member is not None:
            loc = loc[:member]
            given = first.get("input")
            kind = given.get("type") if isinstance(given, dict) else None
            said = f"matches no type MCP defines (type {kind!r})" if kind is not None else (
                "matches no type MCP defines")
            more = ""
        else:
            said = first["msg"]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        where = ".".join(str(step) for step in loc) or "result"
        super().__init__(
            f"the server's result for {tool!r} is not a valid MCP tools/call result:"
            f" {where}: {said}{more}"
        )


def _handler(session: McpSession, remote: str, *, wrapped: bool) -> Any:
    """The tool's handler; ``wrapped``: structured answers come as ``{"result": x}`` (see
    ``wrapped_result``) and the script gets ``x``."""

    async def call(args: Mapping[str, Any], ctx: ExecContext) -> Envelope:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            ctx.progress({"progress": done, "total": total, "message": message})

        # the call stops as soon as its signal fires (the run ended, its caller cancelled):
        # the SDK tells the server (``notifications/cancelled``) at once, not after the
        # grace the pipeline gives a handler to stop by itself (1 s)
        signal = ctx.signal
        with anyio.CancelScope() as scope:
            remove = signal.on_cancel(scope.cancel) if signal is not None else None
            try:
                answer = await _call_tool(session, remote, thaw(args), progress)
            except ValidationError as exc:  # the SDK's check of the result's shape
                raise McpResultError(remote, exc) from None
            finally:
                if remove is not None:
                    remove()
        if scope.cancelled_caught:
            reason = signal.reason if signal is not None else None
            raise McpCallCancelled(remote, reason or "cancelled")
        result = _dump(answer)
        is_error = bool(result.get("isError"))
        content = result.get("content") or ""
        if is_error and not _says_anything(content):
            # an error with no content (``[]``, or empty texts): its caller, a model, would
            # read an empty message (``raw.fail: ``) and MCP gives error results content
            content = (f"{remote!r} answered an error result with no content"
                       " (the server said nothing about what went wrong)")
        structured = result.get("structuredContent")
        # an error's structured content is its details as data: kept (the script reads
        # it in the error's message, a direct call relays it), never unwrapped
        given = structured is not None
        if given and wrapped and not is_error and isinstance(structured, dict) and set(
                structured) == {"result"}:
            structured = structured["result"]
            if structured is None:  # JSON null, as a handler returning None gives it
                return Envelope(None, meta=_meta(result))
        return Envelope(
            content,
            meta=_meta(result),
            is_error=is_error,
            **({"structured": structured} if given else {}),
        )

    return call


def _says_anything(content: Any) -> bool:
    """Whether an MCP result's content has a block that is not an empty text."""
    return any(not (isinstance(block, dict) and block.get("type") == "text"
                    and not str(block.get("text") or "").strip())
               for block in (content or ()))


def _meta(result: dict[str, Any]) -> dict[str, Any] | None:
    return {"mcp": result["_meta"]} if result.get("_meta") else None


def mcp_tools(
    specs: list[dict[str, Any]], session: McpSession, *, namespace: str | None, prefix: str = ""
) -> list[Tool]:
    """``Tool``s for MCP tool listings (``tools/list`` entries) served by ``session``.

    Tools only callable as tasks are left out (see ``McpTools.skipped``).
    """
    usable = [spec for spec in specs if _unusable(spec) is None]
    return [tool for tool, _ in _tools(usable, session, namespace=namespace, prefix=prefix)]


def _unusable(spec: dict[str, Any]) -> str | None:
    """Why a listed tool cannot be called here, or None.

    ``execution.taskSupport: "required"`` refuses a plain ``tools/call``: offered to a
    script, every call would fail.
    """
    execution = spec.get("execution")
    if isinstance(execution, dict) and execution.get("taskSupport") == "required":
        return "only callable as a task (execution.taskSupport 'required')"
    return None


def _tools(
    specs: list[dict[str, Any]], session: McpSession, *, namespace: str | None, prefix: str
) -> list[tuple[Tool, tuple[str, ...]]]:
    return [_tool(spec, session, namespace=namespace, prefix=prefix) for spec in specs]


def _entry_problem(entry: Any) -> str | None:
    """What makes a listing entry no tool at all (the MCP schema's own refusals), or None."""
    if not isinstance(entry, dict):
        return f"the listing entry is {type(entry).__name__}, not an object"
    if not isinstance(entry.get("name"), str):
        return "MCP tool listing without a string name"
    schema = entry.get("inputSchema")
    if schema is not None and not isinstance(schema, dict):
        return f"inputSchema is {type(schema).__name__}, not an object"
    return None


def _tool(
    spec: dict[str, Any], session: McpSession, *, namespace: str | None, prefix: str
) -> tuple[Tool, tuple[str, ...]]:
    name = spec.get("name")
    if not isinstance(name, str):
        raise ToolDefinitionError(repr(name), "MCP tool listing without a string name")
    params, repairs = _cut_dangling_refs(spec.get("inputSchema") or {"type": "object"})
    output = spec.get("outputSchema")
    if isinstance(output, dict):
        output, cut = _cut_dangling_refs(output)
        repairs += [f"output schema: {note}" for note in cut]
        output = unwrapped_schema(output, name) or output
    try:
        tool = _define(spec, name, params, output, session, namespace, prefix)
    except ToolDefinitionError as refused:
        loose, loosened = _define_loose(spec, name, params, output, session, namespace, prefix)
        if loose is None:
            raise refused from None
        tool, repairs = loose, repairs + loosened
    return tool, tuple(f"{prefix + name}: {note}" for note in repairs)


def _define_loose(
    spec: dict[str, Any],
    remote: str,
    params: Any,
    output: Any,
    session: McpSession,
    namespace: str | None,
    prefix: str,
) -> tuple[Tool | None, list[str]]:
    """The tool with what the metaschema refuses dropped (else None), and what was dropped."""
    loose, repairs = _loosen(params, root=True)
    if isinstance(output, dict):
        output, dropped = _loosen(output, root=False)
        repairs += [f"output schema: {note}" for note in dropped]
    try:
        return _define(spec, remote, loose, output, session, namespace, prefix), repairs
    except ToolDefinitionError:
        if output is None:
            return None, repairs
    try:
        tool = _define(spec, remote, loose, None, session, namespace, prefix)
    except ToolDefinitionError:
        return None, repairs
    return tool, [*repairs, "output schema dropped"]


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
        execute=_handler(session, remote, wrapped=unwrapped_schema(
            spec.get("outputSchema"), remote) is not None),
        namespace=namespace,
        # no outputSchema listed: the answers are content blocks, a script receives their
        # text (an output schema this side had to drop still means structured answers)
        returns_text=output is None and not isinstance(spec.get("outputSchema"), dict),
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


def _cut_dangling_refs(schema: Any) -> tuple[Any, list[str]]:
    """``schema`` without the ``$ref``s that point nowhere in it, and where they were.

    Validation fails on every call whose arguments reach one (a server's stale
    ``#/definitions/X``, a URL: nothing is fetched). Without its ``$ref`` the node accepts
    what the rest of it allows, as the SDK generator already reads it.
    """
    if not isinstance(schema, dict):
        return schema, []
    dangling = [path for path, ref in _refs(schema, ()) if not _resolves(schema, ref)]
    if not dangling:
        return schema, []
    loose = copy.deepcopy(thaw(schema))
    for path in dangling:
        node = loose
        for step in path:
            node = node[step]
        del node["$ref"]
    return loose, [
        "dropped " + "/".join(str(step) for step in (*path, "$ref")) + " (unresolvable)"
        for path in dangling
    ]


def _refs(node: Any, path: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    if isinstance(node, list):
        return [found for i, item in enumerate(node) for found in _refs(item, (*path, i))]
    if not isinstance(node, dict):
        return []
    found = [(path, node["$ref"])] if isinstance(node.get("$ref"), str) else []
    for key, value in node.items():
        if key not in _VALUES:
            found += _refs(value, (*path, key))
    return found


def _resolves(root: dict[str, Any], ref: str) -> bool:
    """Whether ``ref`` names a schema inside ``root`` (by pointer, anchor or ``$id``)."""
    base, _, fragment = ref.partition("#")
    target: Any = root
    if base:
        ids = [node for node in _schemas(root) if _declares(node, base)]
        if not ids:
            return False
        target = ids[0]
    if not fragment:
        return True
    if not fragment.startswith("/"):
        return any(
            node.get("$anchor") == fragment or f"#{fragment}" in (node.get("$id"), node.get("id"))
            for node in _schemas(target)
        )
    for token in unquote(fragment).split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            return False
    return isinstance(target, dict | bool)


def _schemas(node: Any) -> list[dict[str, Any]]:
    """Every object in ``node`` outside instance-valued keywords."""
    if isinstance(node, list):
        return [found for item in node for found in _schemas(item)]
    if not isinstance(node, dict):
        return []
    return [node] + [
        found for key, value in node.items() if key not in _VALUES for found in _schemas(value)
    ]


def _declares(node: dict[str, Any], base: str) -> bool:
    """Whether ``node`` declares the URI ``base`` (a relative one would need the root's URI)."""
    declared = node.get("$id", node.get("id"))
    if not isinstance(declared, str):
        return False
    return declared.rstrip("#") == base


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
    """``"<tool>: dropped <path>"`` for each schema keyword the metaschema refused (or each
    ``$ref`` that resolves nowhere)."""
    skipped: tuple[str, ...] = ()
    """``"<tool>: <why>"`` for each listed tool not registered: it cannot be called (task
    only), or, with ``skip_invalid``, no valid tool can be made of its entry."""

    @property
    def names(self) -> tuple[str, ...]:
        """Wire names registered."""
        return tuple(r.tool.name for r in self.registrations)

    def dispose(self) -> None:
        """Unregister every tool of this server (idempotent)."""
        for registration in self.registrations:
            registration.dispose()


async def register_mcp_tools(
    registry: ToolRegistry,
    session: McpSession,
    *,
    namespace: str | None,
    prefix: str = "",
    skip_invalid: bool = False,
) -> McpTools:
    """List the server's tools (all pages) and register them; all or nothing.

    ``prefix`` is prepended to wire names when two servers' tool names collide
    in one registry. A schema keyword the metaschema refuses is dropped (see
    ``McpTools.repairs``); a tool still invalid after that raises
    ``ToolDefinitionError`` before anything is registered, unless ``skip_invalid``: then
    it is left out (see ``McpTools.skipped``) and the others are registered. A tool only
    callable as a task is not registered (see ``McpTools.skipped``).
    """
    listed = await list_tool_entries(session)
    return register_mcp_listing(registry, listed, session, namespace=namespace, prefix=prefix,
                                skip_invalid=skip_invalid)


def register_mcp_listing(
    registry: ToolRegistry,
    listed: list[Any],
    session: McpSession,
    *,
    namespace: str | None,
    prefix: str = "",
    skip_invalid: bool = False,
) -> McpTools:
    """Register the ``tools/list`` entries ``listed`` (see ``list_tool_entries``) as tools
    served by ``session``, as ``register_mcp_tools`` does.

    With ``skip_invalid`` one entry no tool can be made of (no string name, an
    ``inputSchema`` that is no object, a name ``define_tool`` refuses, a schema still invalid
    after the repairs, a name listed twice: the first entry wins) is left out with its
    reason in ``McpTools.skipped``: one bad entry does not cost the server's other tools.
    """
    tools: list[tuple[Tool, tuple[str, ...]]] = []
    skipped: list[str] = []
    names: set[str] = set()
    for index, entry in enumerate(listed):
        label = (f"{prefix}{entry.get('name')}" if isinstance(entry, dict)
                 and isinstance(entry.get("name"), str) else f"entry {index}")
        problem = _entry_problem(entry)
        if problem is None and (why := _unusable(entry)) is not None:
            skipped.append(f"{label}: {why}")
            continue
        try:
            if problem is not None:
                raise ToolDefinitionError(label, problem)
            tool, notes = _tool(entry, session, namespace=namespace, prefix=prefix)
            if tool.name in names and skip_invalid:
                raise DuplicateToolError(tool.name, "listed more than once (the first entry"
                                         " is registered)")
        except ToolDefinitionError as exc:
            if not skip_invalid:
                raise
            skipped.append(f"{label[:80]}: {exc.problem}")
            continue
        names.add(tool.name)
        tools.append((tool, notes))
    taken = sorted(tool.name for tool, _ in tools if tool.name in registry)
    if taken and registry.duplicates != "replace":
        raise DuplicateToolError(
            taken[0],
            f"{len(taken)} of this server's tools are named like registered ones"
            f" ({', '.join(map(repr, taken[:5]))}{', …' if len(taken) > 5 else ''});"
            " register it with prefix='...' to rename its tools",
        )
    made: list[Registration] = []
    try:
        for tool, _ in tools:
            made.append(registry.register(tool))
    except BaseException:
        for registration in made:
            registration.dispose()
        raise
    repairs = tuple(note for _, notes in tools for note in notes)
    return McpTools(tuple(made), repairs, tuple(skipped))
