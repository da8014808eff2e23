"""``@tool``: define a tool from a typed Python function.

The parameters schema comes from the signature's type hints (through
pydantic, which understands ``Annotated``, ``Literal``, TypedDicts, defaults)
and the descriptions from the docstring (Google ``Args:`` or Sphinx ``:param``).
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any, get_type_hints, overload

import pydantic

from codemode.dispatch.context import ExecContext
from codemode.dispatch.frozen import thaw
from codemode.dispatch.tool import ExecutionMode, Tool, define_tool
from codemode.errors import ToolDefinitionError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["tool"]

_SPHINX = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+):\s*(.*)$")
_GOOGLE_ITEM = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {param: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        sphinx = _SPHINX.match(line)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            section = "sphinx"
            continue
        if stripped.rstrip(":").lower() in {
            "args",
            "arguments",
            "parameters",
            "params",
        } and stripped.endswith(":"):
            section, current = "args", None
            continue
        if stripped.endswith(":") and stripped[:-1].lower() in {
            "returns",
            "return",
            "raises",
            "yields",
            "examples",
            "example",
            "notes",
            "note",
        }:
            section, current = "other", None
            continue
        if section == "args":
            item = _GOOGLE_ITEM.match(line)
            if item and (line.startswith((" ", "\t")) or not current):
                current = item.group(1)
                params[current] = item.group(2).strip()
            elif current and stripped:
                params[current] = f"{params[current]} {stripped}".strip()
            continue
        if section in ("sphinx", "other"):
            if section == "sphinx" and current and stripped and line.startswith((" ", "\t")):
                params[current] = f"{params[current]} {stripped}"
            continue
        summary.append(line)
    return "\n".join(summary).strip(), params


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def schema_from_function(
    fn: Callable[..., Any], name: str
) -> tuple[dict[str, Any], str, str | None]:
    """(parameters schema, description, name of the ExecContext parameter or None)."""
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(name, f"cannot resolve type hints: {exc}") from None
    description, docs = parse_docstring(fn.__doc__)
    fields: dict[str, Any] = {}
    ctx_param = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(name, f"@tool functions cannot take *{param.name}/**")
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                name, f"@tool functions are called by keyword; {param.name!r} is positional-only"
            )
        hint = hints.get(param.name, Any)
        if hint is ExecContext:
            ctx_param = param.name
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hint, pydantic.Field(default, description=docs.get(param.name)))
    try:
        model = pydantic.create_model(f"{name}_arguments", **fields)
        schema = model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(name, f"cannot derive a JSON Schema: {exc}") from None
    schema = _strip_titles(schema)
    schema["additionalProperties"] = False
    return schema, description, ctx_param


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    output_schema: Mapping[str, Any] | None = None,
    execution_mode: ExecutionMode = "parallel",
    namespace: str | None = None,
    visible_in_code: bool = True,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    output_schema: Mapping[str, Any] | None = None,
    execution_mode: ExecutionMode = "parallel",
    namespace: str | None = None,
    visible_in_code: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a ``Tool`` from ``fn(**arguments)``; a parameter typed ``ExecContext`` gets the context.

    Arguments arrive as plain (mutable) Python values, validated first.
    """

    def build(func: Callable[..., Any]) -> Tool:
        tool_name = name or func.__name__
        schema, doc, ctx_param = schema_from_function(func, tool_name)
        is_async = inspect.iscoroutinefunction(func)

        if is_async:

            async def handler(args: Mapping[str, Any], ctx: ExecContext) -> Any:
                kwargs = thaw(args)
                if ctx_param:
                    kwargs[ctx_param] = ctx
                return await func(**kwargs)
        else:

            def handler(args: Mapping[str, Any], ctx: ExecContext) -> Any:  # type: ignore[misc]
                kwargs = thaw(args)
                if ctx_param:
                    kwargs[ctx_param] = ctx
                return func(**kwargs)

        handler.__name__ = func.__name__
        handler.__doc__ = func.__doc__
        return define_tool(
            name=tool_name,
            description=description if description is not None else doc,
            parameters=schema,
            execute=handler,
            output_schema=output_schema,
            execution_mode=execution_mode,
            namespace=namespace,
            visible_in_code=visible_in_code,
        )

    if fn is not None:
        return build(fn)
    return build
