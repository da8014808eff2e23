"""``@tool``: define a tool from a typed Python function.

The parameters schema comes from the signature's type hints (through
pydantic, which understands ``Annotated``, ``Literal``, TypedDicts, defaults)
and the descriptions from the docstring (Google ``Args:`` or Sphinx ``:param``).
The same pydantic model turns each call's validated JSON into the annotated types.

A signature of plain JSON types only (``str``, ``int``, ``float``, ``bool``, ``Any``,
``Literal`` of texts or ints, ``list``/``dict`` of those, each optionally ``| None``) is
read here instead (:mod:`codemode.dispatch.plain_signature`), to the same schema and the
same values: importing pydantic and building the model cost a process some 170 ms, most
of a tool module's import, for what JSON already is.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import inspect
import re
import sys
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, final, get_type_hints, overload

import anyio
import anyio.to_thread

from codemode.dispatch.context import ExecContext
from codemode.dispatch.frozen import HEAVY_VALUES, heavy, thaw
from codemode.dispatch.plain_signature import Converter, plain_schema
from codemode.dispatch.tool import ExecutionMode, Tool, define_tool
from codemode.errors import ToolDefinitionError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import pydantic

__all__ = ["FunctionSignature", "read_signature", "schema_from_function", "tool"]

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


@final
@dataclass(frozen=True, kw_only=True, slots=True)
class FunctionSignature:
    """What ``@tool`` reads from a function once, at definition."""

    schema: dict[str, Any]
    """The parameters JSON Schema."""
    description: str
    """The docstring's summary."""
    context: str | None
    """Name of the ``ExecContext`` parameter, if any."""
    model: type[pydantic.BaseModel] | Converter
    """Turns validated JSON into the annotated types: the arguments as a pydantic model,
    or for a plain signature the few conversions JSON needs (``1`` for a ``float``)."""


def schema_from_function(
    fn: Callable[..., Any], name: str
) -> tuple[dict[str, Any], str, str | None]:
    """(parameters schema, description, name of the ExecContext parameter or None)."""
    found = read_signature(fn, name)
    return found.schema, found.description, found.context


def read_signature(fn: Callable[..., Any], name: str) -> FunctionSignature:
    """Schema, description, context parameter and arguments model of ``fn``."""
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(name, f"cannot resolve type hints: {exc}") from None
    description, docs = parse_docstring(fn.__doc__)
    params: list[tuple[str, Any, Any, str | None]] = []
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
        params.append((param.name, hint, default, docs.get(param.name)))
    plain = plain_schema(params)
    if plain is not None:
        return FunctionSignature(schema=plain[0], description=description, context=ctx_param,
                                 model=plain[1])
    import pydantic

    fields: dict[str, Any] = {key: (hint, pydantic.Field(default, description=doc))
                              for key, hint, default, doc in params}
    try:
        model = pydantic.create_model(f"{name}_arguments", **fields)
        schema = model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(name, f"cannot derive a JSON Schema: {exc}") from None
    schema = _strip_titles(schema)
    schema["additionalProperties"] = False
    return FunctionSignature(schema=schema, description=description, context=ctx_param,
                             model=model)


def _typed_arguments(model: type[pydantic.BaseModel] | Converter,
                     args: Mapping[str, Any]) -> dict[str, Any]:
    """Validated JSON arguments as the annotated types (a pydantic model argument as that
    model, ``date``/``datetime``/``Enum``/``UUID`` as themselves). Only the keys sent are
    passed: the function's own defaults fill the rest, as in a plain call."""
    raw = thaw(args)
    if isinstance(model, Converter):
        return model.convert(raw)
    parsed = model.model_validate(raw)
    return {key: getattr(parsed, key) for key in raw}


async def _typed_off_loop(model: type[pydantic.BaseModel] | Converter,
                          args: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`_typed_arguments`, on a worker thread for heavy arguments: copying and
    validating them is about a microsecond of Python work per value, on the loop that
    would be a stall (the pipeline froze them off the loop too: ``HEAVY_VALUES``)."""
    if heavy(args, HEAVY_VALUES):
        return await anyio.to_thread.run_sync(_typed_arguments, model, args,
                                              abandon_on_cancel=True)
    return _typed_arguments(model, args)


_JSONABLE = (datetime.date, datetime.time, datetime.timedelta, enum.Enum, uuid.UUID)
"""What a handler may return that ``@tool`` turns into JSON (the pipeline takes only JSON),
besides pydantic models and dataclass instances."""


def _model(value: Any) -> bool:
    """``value`` is a pydantic model (none can be while pydantic was never imported)."""
    loaded = sys.modules.get("pydantic")
    return loaded is not None and isinstance(value, loaded.BaseModel)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    """``value`` with pydantic models, dataclass instances, dates, enums and UUIDs (at any
    depth) as JSON (plain JSON values are answered first: most results are only those)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        items = {key: _jsonable(item) for key, item in value.items()}
        return items if any(items[k] is not value[k] for k in value) else value
    if kind is list or kind is tuple:
        converted = [_jsonable(item) for item in value]
        changed = any(a is not b for a, b in zip(converted, value, strict=True))
        return converted if changed else value
    if isinstance(value, _JSONABLE) or _model(value) or (
            dataclasses.is_dataclass(value) and not isinstance(value, type)):
        import pydantic_core

        return pydantic_core.to_jsonable_python(value)
    return value


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
    threaded: bool = False,
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
    threaded: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a ``Tool`` from ``fn(**arguments)``; a parameter typed ``ExecContext`` gets the context.

    Arguments are validated against the schema, then handed over as their annotated types
    (a pydantic model or dataclass as that type, ``date``, ``Enum``, ``UUID`` … as
    themselves); such values in the result go back as JSON. The tool stays callable as the
    plain function. ``threaded=True`` runs a sync function in a worker thread, off the event loop.
    """

    def build(func: Callable[..., Any]) -> Tool:
        if not callable(func):
            raise ToolDefinitionError(repr(func)[:60], f"@tool takes a function, not "
                                                       f"{type(func).__name__}")
        tool_name = name or func.__name__
        found = read_signature(func, tool_name)
        model, ctx_param = found.model, found.context

        if inspect.iscoroutinefunction(func):

            async def handler(args: Mapping[str, Any], ctx: ExecContext) -> Any:
                kwargs = await _typed_off_loop(model, args)
                if ctx_param:
                    kwargs[ctx_param] = ctx
                return _jsonable(await func(**kwargs))
        elif threaded:

            def handler(args: Mapping[str, Any], ctx: ExecContext) -> Any:  # type: ignore[misc]
                kwargs = _typed_arguments(model, args)
                if ctx_param:
                    kwargs[ctx_param] = ctx
                return _jsonable(func(**kwargs))
        else:

            async def handler(args: Mapping[str, Any], ctx: ExecContext) -> Any:
                # the function runs on the loop, as a sync handler would; only heavy
                # arguments are converted off it
                kwargs = await _typed_off_loop(model, args)
                if ctx_param:
                    kwargs[ctx_param] = ctx
                return _jsonable(func(**kwargs))

        handler.__name__ = func.__name__
        handler.__doc__ = func.__doc__
        made = define_tool(
            name=tool_name,
            description=description if description is not None else found.description,
            parameters=found.schema,
            execute=handler,
            output_schema=output_schema,
            execution_mode=execution_mode,
            namespace=namespace,
            visible_in_code=visible_in_code,
            threaded=threaded,
        )
        return replace(made, function=func)

    if fn is not None:
        return build(fn)
    return build
