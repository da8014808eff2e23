"""Scripted fake tools: each answers from a queue of canned results and records its calls.

A harness test states what every tool will answer, in order, then asserts on
what was asked. A queue that runs dry is a test bug, not a tool failure: the
call fails with a message saying so, and ``check()`` (run by the pytest
fixture at teardown) fails the test even if the script swallowed the error.
"""

from __future__ import annotations

import inspect
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, final

from codemode.dispatch.content import Envelope
from codemode.dispatch.frozen import thaw
from codemode.dispatch.tool import Tool, define_tool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from codemode.dispatch.context import ExecContext
    from codemode.dispatch.registry import Registration, ToolRegistry
    from codemode.dispatch.spec import ToolSpec
    from codemode.dispatch.tool import ExecutionMode

__all__ = ["OPEN_PARAMETERS", "RecordedCall", "ScriptedTool", "ScriptedTools", "ToolFailure"]

OPEN_PARAMETERS: Final[Mapping[str, Any]] = {"type": "object", "additionalProperties": True}
"""Parameters of a scripted tool declared without a schema: any keyword arguments."""


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A canned domain failure: the call's result is ``is_error`` with ``message`` as its text."""

    message: str
    """What the caller (model or script) reads; a script sees it as ``ToolCallError.message``."""
    meta: Mapping[str, Any] | None = field(default=None, kw_only=True)
    """Host-side meta attached to the error result."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedCall:
    """One call a scripted tool received, as its handler saw it."""

    name: str
    """Wire name of the tool."""
    arguments: dict[str, Any]
    """Validated arguments, as a plain (mutable, detached) copy."""
    call_id: str
    """The call's id (``<outer>:code:<n>`` for calls made by a script)."""
    token: str
    """The dispatch's token."""
    parent: str | None
    """The parent dispatch's token (the ``run_code`` call's token for script calls)."""
    agent: str | None
    """Who called."""
    sequence: int
    """Position of this call among all calls to the kit's tools, from 1."""


_NO_DEFAULT: Final = object()


@final
class ScriptedTool:
    """A registered fake tool answering from its queue (then ``default``, if given)."""

    def __init__(self, kit: ScriptedTools, name: str, results: Iterable[Any],
                 default: Any) -> None:
        self.name = name
        self._kit = kit
        self._queue: deque[Any] = deque(results)
        self._scripted = len(self._queue)
        self._default = default
        self.calls: list[RecordedCall] = []
        """Every call received, in order."""
        self.dry_calls: list[RecordedCall] = []
        """Calls that found the queue empty and no default."""
        self._registration: Registration | None = None

    @property
    def registration(self) -> Registration:
        """The registry handle; ``dispose()`` removes the tool (hot reload in tests)."""
        if self._registration is None:
            raise RuntimeError(f"scripted tool {self.name!r} is not registered")
        return self._registration

    @property
    def remaining(self) -> int:
        """Canned results not consumed yet."""
        return len(self._queue)

    def push(self, *results: Any) -> ScriptedTool:
        """Queue more canned results."""
        self._queue.extend(results)
        self._scripted += len(results)
        return self

    @property
    def last_call(self) -> RecordedCall:
        """The most recent call (AssertionError if there was none)."""
        if not self.calls:
            raise AssertionError(f"scripted tool {self.name!r} was never called")
        return self.calls[-1]

    async def handle(self, args: Mapping[str, Any], ctx: ExecContext) -> Any:
        """The tool's handler: record the call, answer from the queue."""
        record = RecordedCall(
            name=self.name, arguments=thaw(args), call_id=ctx.call_id, token=str(ctx.token),
            parent=str(ctx.parent) if ctx.parent is not None else None, agent=ctx.agent,
            sequence=self._kit._next_sequence())
        self.calls.append(record)
        self._kit._all.append(record)
        if self._queue:
            item = self._queue.popleft()
        elif self._default is not _NO_DEFAULT:
            item = self._default
        else:
            self.dry_calls.append(record)
            raise AssertionError(self._dry_message(record))
        return await _answer(item, record.arguments)

    def _dry_message(self, record: RecordedCall) -> str:
        return (f"scripted tool {self.name!r} has no result left for call #{len(self.calls)} "
                f"(call_id {record.call_id!r}, arguments {record.arguments!r}); "
                f"{self._scripted} result(s) were scripted: add more with results=[...], "
                "push(...) or default=...")

    def __repr__(self) -> str:
        return f"<ScriptedTool {self.name!r} calls={len(self.calls)} remaining={self.remaining}>"


async def _answer(item: Any, arguments: dict[str, Any]) -> Any:
    if isinstance(item, ToolFailure):
        return Envelope(item.message, meta=None if item.meta is None else dict(item.meta),
                        is_error=True)
    if isinstance(item, BaseException):
        raise item
    if callable(item):
        out = item(arguments)
        if inspect.isawaitable(out):
            out = await out
        return await _answer(out, arguments) if isinstance(out, ToolFailure) else out
    return item


@final
class ScriptedTools:
    """Builds scripted fake tools into a registry and keeps every call they receive.

    A canned result may be anything a handler can return (data, text, content
    blocks, a ``{content, meta}`` envelope), a ``ToolFailure`` (an error result),
    an exception instance (raised by the handler), or a callable
    ``fn(arguments) -> result`` (sync or async) for answers that depend on the call.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._tools: dict[str, ScriptedTool] = {}
        self._all: list[RecordedCall] = []
        self._sequence = itertools.count(1)

    def _next_sequence(self) -> int:
        return next(self._sequence)

    def add(
        self,
        name: str,
        *,
        parameters: Mapping[str, Any] | None = None,
        results: Iterable[Any] = (),
        default: Any = _NO_DEFAULT,
        description: str | None = None,
        output_schema: Mapping[str, Any] | None = None,
        execution_mode: ExecutionMode = "parallel",
        namespace: str | None = None,
        visible_in_code: bool = True,
        replace: bool | None = None,
    ) -> ScriptedTool:
        """Register a fake tool ``name`` answering ``results`` in order, then ``default``.

        Without ``parameters`` the tool accepts any keyword arguments; give the real
        tool's schema to test validation and the SDK the model sees.
        """
        scripted = ScriptedTool(self, name, results, default)
        made: Tool = define_tool(
            name=name,
            description=f"Scripted fake of {name!r}." if description is None else description,
            parameters=OPEN_PARAMETERS if parameters is None else parameters,
            execute=scripted.handle, output_schema=output_schema,
            execution_mode=execution_mode, namespace=namespace, visible_in_code=visible_in_code)
        scripted._registration = self.registry.register(made, replace=replace)
        self._tools[name] = scripted
        return scripted

    def fake(self, spec: ToolSpec | Tool, *, results: Iterable[Any] = (),
             default: Any = _NO_DEFAULT, replace: bool | None = None) -> ScriptedTool:
        """A scripted stand-in with exactly the spec of a real tool (name, schemas, options).

        Scripts then see the real SDK and arguments are validated against the real
        schema, while answers come from the queue. Pass ``replace=True`` to shadow
        a real tool already in the registry.
        """
        real = spec.spec if isinstance(spec, Tool) else spec
        mode = spec.execution_mode if isinstance(spec, Tool) else "parallel"
        return self.add(real.name, parameters=real.parameters, results=results, default=default,
                        description=real.description, output_schema=real.output_schema,
                        namespace=real.namespace, visible_in_code=real.visible_in_code,
                        execution_mode=mode, replace=replace)

    def __getitem__(self, name: str) -> ScriptedTool:
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"no scripted tool {name!r}; added: {sorted(self._tools)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ScriptedTool]:
        return iter(tuple(self._tools.values()))

    def calls(self, name: str | None = None, *,
              where: Callable[[RecordedCall], bool] | None = None) -> list[RecordedCall]:
        """Calls to the kit's tools in the order they arrived, optionally filtered."""
        return [c for c in self._all
                if (name is None or c.name == name) and (where is None or where(c))]

    @property
    def dry_calls(self) -> list[RecordedCall]:
        """Calls that found their tool's queue empty."""
        return [c for tool in self._tools.values() for c in tool.dry_calls]

    def check(self) -> None:
        """Fail (AssertionError) if any tool ran out of canned results."""
        failures = [tool._dry_message(call) for tool in self._tools.values()
                    for call in tool.dry_calls]
        if failures:
            raise AssertionError("scripted tools ran dry:\n" + "\n".join(failures))

    def assert_consumed(self) -> None:
        """Fail if any tool still has canned results queued (fewer calls than scripted)."""
        left = {tool.name: tool.remaining for tool in self._tools.values() if tool.remaining}
        if left:
            detail = ", ".join(f"{name}: {n} left" for name, n in left.items())
            raise AssertionError(f"scripted results were not all used ({detail})")

    def dispose(self) -> None:
        """Unregister every scripted tool."""
        for tool in self._tools.values():
            tool.registration.dispose()
