"""Tool definition: a frozen model-visible spec plus host-side behaviour.

``define_tool`` checks everything once (name, schemas, options) so that a
registry never holds a tool that could fail for a definitional reason later.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, final

from codemode.dispatch.schema import CompiledSchema, compile_schema, normalise_parameters
from codemode.dispatch.spec import ToolSpec
from codemode.errors import ToolDefinitionError

if TYPE_CHECKING:
    from codemode.dispatch.cards import PresentCall, PresentResult

__all__ = ["ExecutionMode", "Handler", "Replay", "Tool", "define_tool"]

Handler: TypeAlias = Callable[..., Any]
"""``async def handler(args, ctx)`` (or sync, or taking only ``args``)."""
ExecutionMode = Literal["parallel", "sequential"]
Replay = Literal["side_effects", "always_live"]
"""Whether a journal may answer a repeated call: ``side_effects`` (it changed the world, do
not do it twice) or ``always_live`` (a read that must be fresh)."""

_MAX_NAME = 128
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f]")


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(str(name), "name must be a non-empty string")
    if len(name) > _MAX_NAME:
        raise ToolDefinitionError(name[:40] + "…", f"name is longer than {_MAX_NAME} characters")
    if name != name.strip() or _BAD_NAME.search(name):
        raise ToolDefinitionError(
            name, "name has leading/trailing whitespace or control characters"
        )
    return name


def is_async_callable(fn: object) -> bool:
    """True for ``async def`` functions and objects whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the method, not callability
    return not inspect.isfunction(fn) and inspect.iscoroutinefunction(call)


def _arity(tool: str, handler: Handler) -> int:
    """How many positional arguments the handler takes: 1 (args) or 2 (args, ctx)."""
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return 2
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(positional) >= 2:
        return 2
    if len(positional) == 1:
        return 1
    raise ToolDefinitionError(tool, "handler must accept (args) or (args, ctx)")


@final
@dataclass(frozen=True, kw_only=True, slots=True)
class Tool:
    """A registered-ready tool: the spec that leaves the core and the handler that never does."""

    spec: ToolSpec
    """Model-visible projection."""
    handler: Handler = field(repr=False)
    """Host-side implementation."""
    validator: CompiledSchema = field(repr=False)
    """Compiled parameters schema (built once)."""
    output_validator: CompiledSchema | None = field(default=None, repr=False)
    """Compiled output schema, when declared."""
    prepare_arguments: Callable[[Mapping[str, Any]], Any] | None = field(default=None, repr=False)
    """Normalises raw model arguments before validation; its output is what gets validated."""
    execution_mode: ExecutionMode = "parallel"
    """``sequential`` tools never overlap with another call of the same registry."""
    is_async: bool = field(default=True, repr=False)
    """Whether the handler returns an awaitable."""
    takes_context: bool = field(default=True, repr=False)
    """Whether the handler takes ``ctx`` as its second argument."""
    threaded: bool = False
    """Run a sync handler in a worker thread instead of on the event loop."""
    replay: Replay = "side_effects"
    """Whether a resumed run may answer this call from its journal instead of running it."""
    labels: frozenset[str] = frozenset()
    """Labels of what the tool returns (``untrusted``, ``secret`` …); a run that read them
    carries them."""
    refuses: frozenset[str] = frozenset()
    """Labels this tool must not receive: a call from a run carrying one is denied."""
    present_call: PresentCall | None = field(default=None, repr=False)
    """Pure ``(args) -> Card | None``: the editor's pending card (``dispatch.cards``)."""
    present_result: PresentResult | None = field(default=None, repr=False)
    """Pure ``(args, CardResult) -> Card | None``: the finished card."""
    function: Callable[..., Any] | None = field(default=None, repr=False)
    """The Python function ``@tool`` made this from: calling the tool calls it, directly."""

    @property
    def name(self) -> str:
        """The wire name."""
        return self.spec.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the decorated function as plain Python (no validation, no pipeline)."""
        if self.function is None:
            raise TypeError(
                f"tool {self.name!r} was made by define_tool(); call it through a registry"
            )
        return self.function(*args, **kwargs)


def define_tool(
    *,
    name: str,
    description: str = "",
    parameters: Mapping[str, Any] | None = None,
    execute: Handler,
    output_schema: Mapping[str, Any] | None = None,
    prepare_arguments: Callable[[Mapping[str, Any]], Any] | None = None,
    execution_mode: ExecutionMode = "parallel",
    namespace: str | None = None,
    visible_in_code: bool = True,
    returns_text: bool = False,
    threaded: bool = False,
    replay: Replay = "side_effects",
    labels: Iterable[str] = (),
    refuses: Iterable[str] = (),
    present_call: PresentCall | None = None,
    present_result: PresentResult | None = None,
) -> Tool:
    """Define a tool; every definitional mistake raises ``ToolDefinitionError`` here.

    ``parameters`` is a full JSON Schema with an object root or the compact form
    ``{"path": {"type": "string", "required": True}}``. ``returns_text`` says the tool
    answers text (``ToolSpec.returns_text``); it cannot go with an ``output_schema``.
    """
    name = _check_name(name)
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise ToolDefinitionError(name, "description must be a string")
    if not callable(execute):
        raise ToolDefinitionError(name, "execute must be callable")
    if prepare_arguments is not None and not callable(prepare_arguments):
        raise ToolDefinitionError(name, "prepare_arguments must be callable")
    if execution_mode not in ("parallel", "sequential"):
        raise ToolDefinitionError(
            name, f"execution_mode must be 'parallel' or 'sequential', got {execution_mode!r}"
        )
    schema = normalise_parameters(name, parameters)
    validator = compile_schema(name, schema)
    output_validator = None
    if output_schema is not None:
        if not isinstance(output_schema, Mapping):
            raise ToolDefinitionError(name, "output_schema must be a JSON Schema object")
        output_validator = compile_schema(name, output_schema, what="output")
    if returns_text and output_schema is not None:
        raise ToolDefinitionError(name, "returns_text=True says there is no output_schema")
    if replay not in ("side_effects", "always_live"):
        raise ToolDefinitionError(
            name, f"replay must be 'side_effects' or 'always_live', got {replay!r}"
        )
    for what, presenter in (("present_call", present_call), ("present_result", present_result)):
        if presenter is not None and not callable(presenter):
            raise ToolDefinitionError(name, f"{what} must be callable")
    is_async = is_async_callable(execute)
    if threaded and is_async:
        raise ToolDefinitionError(name, "threaded=True is for sync handlers only")
    spec = ToolSpec(
        name=name,
        description=description,
        parameters=validator.schema,
        output_schema=output_validator.schema if output_validator else None,
        namespace=namespace,
        visible_in_code=visible_in_code,
        returns_text=bool(returns_text),
    )
    return Tool(
        spec=spec,
        handler=execute,
        validator=validator,
        output_validator=output_validator,
        prepare_arguments=prepare_arguments,
        execution_mode=execution_mode,
        is_async=is_async,
        takes_context=_arity(name, execute) == 2,
        threaded=threaded,
        replay=replay,
        labels=_label_set(name, "labels", labels),
        refuses=_label_set(name, "refuses", refuses),
        present_call=present_call,
        present_result=present_result,
    )


def _label_set(tool: str, what: str, labels: Iterable[str]) -> frozenset[str]:
    if isinstance(labels, str):
        raise ToolDefinitionError(tool, f"{what} must be a collection of names, not a string")
    out = frozenset(labels)
    if not all(isinstance(label, str) and label.strip() == label and label for label in out):
        raise ToolDefinitionError(tool, f"{what} must be non-empty names without spaces around")
    return out


AsyncHandler = Callable[..., Awaitable[Any]]
