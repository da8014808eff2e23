"""OpenTelemetry spans for every dispatch (the ``otel`` extra).

``instrument(registry)`` gives each ``registry.execute`` call one span named
``execute_tool <name>`` with the GenAI semantic-convention attributes
(``gen_ai.operation.name``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``gen_ai.tool.type``, ``gen_ai.tool.description``, ``error.type``). Parents come
from the pipeline's own tokens, not from context variables: a script's nested calls
name their ``run_code`` call as ``parent``, so their spans are children of its span
whichever executor, thread or task dispatched them. A call whose parent has no span
(a direct ``CodeMode.run``, a top-level call) is a child of the caller's current span.

The span is current while the handler runs, so spans a handler opens (an HTTP
client's) nest under it. Failures set the span status to ``ERROR`` with the error
text; a ``run_code`` call that hit a limit names it (``codemode.limit``), and its
usage is recorded (``codemode.run.*``). Every text attribute is clipped
(``max_text``): what a script or a tool writes cannot grow a span without bound.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Final, final

try:
    from opentelemetry import trace
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "codemode.integrations.otel needs OpenTelemetry: pip install 'codemode[otel]'"
    ) from exc

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from opentelemetry.trace import Span, Tracer, TracerProvider

    from codemode.dispatch.content import ToolResult
    from codemode.dispatch.context import ExecContext
    from codemode.dispatch.events import ToolEvent
    from codemode.dispatch.registry import ToolRegistry

__all__ = ["Instrumentation", "instrument"]

MAX_TEXT: Final = 1024
"""Default cap, in characters, of every text attribute and status description."""

_SCOPE: Final = "codemode"


def _version() -> str:
    try:
        return version("codemode")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0"


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap] + "…"


@final
class Instrumentation:
    """The hooks ``instrument`` added to one registry; ``close()`` removes them."""

    def __init__(self, registry: ToolRegistry, tracer: Tracer, *, record_arguments: bool,
                 max_text: int) -> None:
        self.registry = registry
        self.tracer = tracer
        self.record_arguments = record_arguments
        self.max_text = max_text
        self._spans: dict[str, Span] = {}
        """Open spans by dispatch token: a nested call finds its parent's here."""
        self._kinds: dict[str, str] = {}
        """Error kinds of finished calls by call id, from the result observer until the
        ``tool/result`` event that follows it."""
        self._unsubscribe = registry.subscribe(self._on_event)
        registry.wrap_execute(self._around)
        registry.on_result(self._on_result)

    def close(self) -> None:
        """Stop making spans for this registry (open spans are ended as they finish)."""
        self._unsubscribe()
        hooks = self.registry.hooks
        hooks.wrappers[:] = [h for h in hooks.wrappers if h.fn != self._around]
        hooks.observers[:] = [h for h in hooks.observers if h.fn != self._on_result]

    async def _around(self, ctx: ExecContext, call_next: Callable[[ExecContext],
                                                                  Awaitable[Any]]) -> Any:
        span = self._spans.get(str(ctx.token))
        if span is None:
            return await call_next(ctx)
        with trace.use_span(span, end_on_exit=False, record_exception=False,
                            set_status_on_exception=False):
            return await call_next(ctx)

    def _on_result(self, result: ToolResult) -> None:
        if result.error is not None:
            self._kinds[result.call_id] = result.error.kind

    def _on_event(self, event: ToolEvent) -> None:
        if event.type == "tool/call":
            self._start(event)
        elif event.type == "tool/result":
            self._end(event)
        elif event.type == "tool/update":
            span = self._spans.get(event.token)
            if span is not None:
                span.add_event("gen_ai.tool.progress")

    def _start(self, event: ToolEvent) -> None:
        parent = self._spans.get(event.parent) if event.parent is not None else None
        context = trace.set_span_in_context(parent) if parent is not None else None
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.call_id,
            "gen_ai.tool.type": "function",
        }
        if event.name in self.registry:
            description = self.registry.get(event.name).spec.description
            if description:
                attributes["gen_ai.tool.description"] = _clip(description, self.max_text)
        if event.agent is not None:
            attributes["gen_ai.agent.name"] = _clip(event.agent, self.max_text)
        if self.record_arguments and event.arguments is not None:
            text = json.dumps(event.arguments, ensure_ascii=False, default=str)
            attributes["gen_ai.tool.call.arguments"] = _clip(text, self.max_text)
        self._spans[event.token] = self.tracer.start_span(
            f"execute_tool {event.name}", context=context, kind=trace.SpanKind.INTERNAL,
            attributes=attributes)

    def _end(self, event: ToolEvent) -> None:
        span = self._spans.pop(event.token, None)
        kind = self._kinds.pop(event.call_id, None)
        if span is None:
            return
        meta = event.meta if isinstance(event.meta, Mapping) else None
        if meta is not None:
            self._run_attributes(span, meta)
        if event.is_error:
            error = event.error or "error"
            limit = _limit_of(meta)
            if limit is not None:
                span.set_attribute("codemode.limit", limit)
                kind = "limit_exceeded"
            elif kind is None:
                kind = "cancelled" if error == "cancelled" else (
                    "internal_error" if error.startswith("internal error") else "tool_error")
            span.set_attribute("error.type", kind)
            span.set_status(trace.Status(trace.StatusCode.ERROR, _clip(error, self.max_text)))
        span.end()

    def _run_attributes(self, span: Span, meta: Mapping[str, Any]) -> None:
        """Usage of a ``run_code`` call (its result's meta), when that is what this is."""
        usage = meta.get("usage")
        if not isinstance(usage, Mapping) or not isinstance(meta.get("calls"), list | tuple):
            return
        span.set_attribute("codemode.run.calls", len(meta["calls"]))
        for key in ("operations", "output_bytes", "peak_memory"):
            value = usage.get(key)
            if type(value) is int:
                span.set_attribute(f"codemode.run.{key}", value)
        error = meta.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("type"), str):
            span.set_attribute("codemode.run.error", _clip(error["type"], 100))


def _limit_of(meta: Mapping[str, Any] | None) -> str | None:
    error = meta.get("error") if meta is not None else None
    limit = error.get("limit") if isinstance(error, Mapping) else None
    return limit if isinstance(limit, str) else None


def instrument(
    registry: ToolRegistry,
    *,
    tracer_provider: TracerProvider | None = None,
    record_arguments: bool = False,
    max_text: int = MAX_TEXT,
) -> Instrumentation:
    """Make a span for every call ``registry`` dispatches (see the module docstring).

    ``tracer_provider`` defaults to the global one. ``record_arguments`` adds the
    call's JSON arguments (``gen_ai.tool.call.arguments``, clipped): off by default,
    as arguments may hold what a user would not want in a trace backend.
    """
    if max_text < 1:
        raise ValueError(f"max_text must be at least 1, got {max_text}")
    tracer = trace.get_tracer(_SCOPE, _version(), tracer_provider=tracer_provider)
    return Instrumentation(registry, tracer, record_arguments=record_arguments,
                           max_text=max_text)
