"""The host side of one run: a script's ``tools.<path>(...)`` call becomes a
``ToolCall`` (wire name, wire argument names, ``<outer>:code:<n>`` call id, the run's
token as parent) that goes through the registry's pipeline, or the run's ledger, and
its result becomes the plain data the script sees.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, final

import anyio
import anyio.to_thread

from codemode.dispatch.content import text
from codemode.dispatch.context import CancelSignal, Token, ToolCall
from codemode.dispatch.frozen import HEAVY_VALUES, constructor, heavy, thaw
from codemode.dispatch.pipeline import CallExtras, dispatch_with
from codemode.errors import ToolCallError
from codemode.mode.preflight import spelling_alias
from codemode.sandbox.executors.broker import current_call

if TYPE_CHECKING:
    import sdk_gen
    from codemode.dispatch.agent import AgentSession
    from codemode.dispatch.content import ToolResult
    from codemode.dispatch.registry import ToolRegistry
    from codemode.dispatch.spec import ToolSpec
    from codemode.mode.ledger import RunLedger
    from codemode.mode.stream import CallEndEvent, CallStartEvent, RunEvent

__all__ = ["Bridge", "RunSummary"]


@dataclass(frozen=True, kw_only=True, slots=True)
class RunSummary:
    """Internal state of one run shared with the host callback."""

    outer_id: str
    """Call id the nested call ids derive from."""
    token: Token
    """Parent token for nested calls."""
    agent: str | None
    """Agent recorded on nested calls."""
    session: AgentSession | None = None
    """The agent session nested calls inherit (``ctx.session``, ``ctx.tasks``)."""
    signal: CancelSignal | None = None
    """The run's signal; each nested call gets a child of it (fired before a hard cancel)."""
    deadline: float | None = None
    """When the run's timeout ends (``anyio.current_time()``); a nested call's
    ``ctx.deadline`` is ``grace`` seconds later, plus the time approvers took so far."""
    grace: float = 0.0
    """Seconds a nested handler has, once its signal fired, to stop by itself."""
    progress: Callable[[Any], None] | None = None
    """Where nested calls' partial results go (the run's own progress)."""



_new_call = constructor(ToolCall)
_NO_RENAMES: Final[Mapping[str, str]] = {}
_NULL_CONTENT: Final = (text("null"),)
"""What a handler returning JSON null (``None``) answers: its compact JSON as one text block."""


@final
class Bridge:
    """Host side of one run: maps script calls to ``ToolCall``s and results back to data."""

    fresh_results: ClassVar[bool] = True
    """What :meth:`call` returns is thawed for that call (plain JSON nothing else holds), so
    the executor's broker hands it to the script without a copy (``broker.CallTool``)."""

    def __init__(
        self,
        registry: ToolRegistry,
        sdk: sdk_gen.GeneratedSDK,
        specs: Mapping[str, ToolSpec],
        run: RunSummary,
        deliver: Callable[[RunEvent], None] | None = None,
        *,
        ledger: RunLedger | None = None,
        aliases: bool = True,
    ) -> None:
        self.registry = registry
        self.execute: Callable[[ToolCall, CallExtras], Awaitable[ToolResult]] = (
            functools.partial(dispatch_with, registry) if ledger is None else ledger.execute)
        """Where calls go: the run's ledger (journal, labels, approvals) or the pipeline."""
        self.sdk = sdk
        self.specs = specs
        self.run = run
        self.deliver = deliver
        """Where the run's live call events go (``CodeMode.run(on_event=...)``), if anywhere."""
        self._events: tuple[type[CallStartEvent], type[CallEndEvent]] | None = None
        """The event classes, loaded (``mode.stream``) only for a run that delivers events."""
        if deliver is not None:
            from codemode.mode.stream import CallEndEvent, CallStartEvent

            self._events = (CallStartEvent, CallEndEvent)
        self.aliases = aliases
        """An argument spelled in another case style (``per_page`` for ``perPage``) is sent
        as the one parameter it spells (the dialects; not in strict mode)."""
        self.counter = itertools.count(1)
        self.attachments: list[Mapping[str, Any]] = []
        self._inflight: dict[int, CancelSignal] = {}
        """The signals of the calls in flight by key (``broker.current_call``)."""
        self._ended: anyio.Event | None = None
        """Set when a call in flight ends, while :meth:`stop_calls` waits for one."""
        self._paths: dict[int, str] = {}
        """The tool of each call in flight, by the same key."""
        self.on_stop: Callable[[], object] | None = None
        """Called when the run's calls are stopped, all of them (``mode.stuck``)."""

    async def call(self, path: str, kwargs: dict[str, Any]) -> Any:
        wire = self.sdk.names.tools.get(path)
        if wire is None:
            raise ToolCallError(path, f"unknown tool tools.{path}")
        argmap = self.sdk.names.arguments.get(wire, _NO_RENAMES)
        arguments = {argmap.get(key, key): value for key, value in kwargs.items()}
        if self.aliases and not kwargs.keys() <= argmap.keys():
            arguments = _respelled(kwargs, argmap, arguments)
        run = self.run
        call = _new_call(call_id=f"{run.outer_id}:code:{next(self.counter)}", name=wire,
                         arguments=arguments, parent=run.token, agent=run.agent, labels={})
        events = self._events
        if self.deliver is None or events is None:
            result = await self._execute(call, path)
        else:
            start_event, end_event = events
            self.deliver(start_event(call_id=call.call_id, name=wire, tool=path,
                                     arguments=call.arguments))
            try:
                result = await self._execute(call, path)
            except BaseException:  # cancelled with the run, or a hook bug: still ends the call
                self.deliver(end_event(call_id=call.call_id, name=wire, tool=path,
                                       is_error=True, error="cancelled", duration=None))
                raise
            self.deliver(end_event(
                call_id=call.call_id, name=wire, tool=path, is_error=result.is_error,
                error=(result.error.message if result.error is not None else result.text)
                if result.is_error else None, duration=result.duration))
        if result.is_error:
            error = result.error
            message = error.message if error is not None else result.text
            path_ = error.path if error is not None else None
            raise ToolCallError(path, message, _python_path(path_, argmap))
        if result.structured is not None and heavy(result.structured, HEAVY_VALUES):
            # the script's own copy of a heavy result is made off the loop (``thaw``)
            return await anyio.to_thread.run_sync(self.to_script, self.specs.get(wire), result,
                                                  abandon_on_cancel=True)
        return self.to_script(self.specs.get(wire), result)

    __call__ = call
    """The bridge is the executor's ``call_tool`` (its broker finds :meth:`stop_calls`)."""

    async def _execute(self, call: ToolCall, path: str) -> ToolResult:
        """The call with the run's session, a child signal, the deadline and progress
        (``CallExtras``, through the ledger). The pipeline does not
        cut the call on them (``watched``): the run does, all its calls at once, in
        :meth:`stop_calls`; a call costs no task, timer or cancel scope of its own. While
        the call waits for the registry's approver, the run's clock stands still
        (``broker.hold``): the deadline moves by the time approvers took."""
        run = self.run
        assert run.signal is not None
        signal = run.signal.child()
        progress = run.progress
        on_update = None if progress is None else (
            lambda data: progress({"call_id": call.call_id, "tool": path, "update": data}))
        deadline = None if run.deadline is None else run.deadline + run.grace
        slot = current_call()
        if slot is None:  # not called through an executor's broker
            key, hold = -id(signal), None
        else:
            broker, key = slot
            hold = broker.hold
            if broker.paused and deadline is not None:
                deadline += broker.paused  # the run's clock stood still that long
        inflight = self._inflight
        inflight[key] = signal
        self._paths[key] = path
        try:
            return await self.execute(call, CallExtras(run.session, signal, deadline, on_update,
                                                       True, hold))
        finally:
            del inflight[key]
            del self._paths[key]
            run.signal.release(signal)
            ended, self._ended = self._ended, None
            if ended is not None:
                ended.set()

    @property
    def in_flight(self) -> int:
        """How many of the run's calls have started and not ended."""
        return len(self._inflight)

    def in_flight_tools(self) -> list[str]:
        """The tools (script paths) of the run's calls in flight."""
        return list(self._paths.values())

    async def stop_calls(self, key: int | None = None) -> None:
        """Calls in flight are about to be cancelled (all: the run is ending, its timeout,
        its caller, the script done; or the one ``key`` names, which the script
        cancelled): fire their signals, then return once they ended or ``grace`` seconds
        passed, whichever is first; the executor then cancels what is left.

        Executors call it through their broker (``CallBroker.stop_calls``) before the hard
        cancel, so a handler that watches its signal stops by itself."""
        inflight = self._inflight
        if key is None and self.on_stop is not None:
            self.on_stop()
        targets = tuple(inflight) if key is None else (key,) if key in inflight else ()
        for target in targets:
            inflight[target].cancel("the run was cancelled or timed out")
        if self.run.grace <= 0:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.run.grace):
            while any(target in inflight for target in targets):
                if self._ended is None:
                    self._ended = anyio.Event()
                await self._ended.wait()

    def to_script(self, spec: ToolSpec | None, result: ToolResult) -> Any:
        if result.structured is not None:
            return thaw(result.structured)
        if result.content == _NULL_CONTENT:
            # JSON null, the one data value whose structured form reads as "no data": a
            # handler returning None (a side-effect tool) gives the script None, not "null"
            return None
        parts = [self._script_text(block) for block in result.content]
        joined = "\n".join(parts)
        if spec is not None and spec.output_schema is not None and len(parts) == 1:
            try:
                return json.loads(joined)
            except ValueError:
                return joined
        return joined

    def _script_text(self, block: Mapping[str, Any]) -> str:
        """What a script sees of one content block: text as is, binary data as a note
        (the block itself is attached to the ``run_code`` result, for the model)."""
        kind = block.get("type")
        if kind == "text":
            return str(block["text"])
        if kind == "resource_link":
            what = ", ".join(str(block[k]) for k in ("name", "mimeType") if block.get(k))
            return f"[resource link {block.get('uri')}{f' ({what})' if what else ''}]"
        inner = block.get("resource") if kind == "resource" else None
        if isinstance(inner, Mapping) and isinstance(inner.get("text"), str):
            return str(inner["text"])
        self.attachments.append(block)
        data = inner.get("blob") if isinstance(inner, Mapping) else block.get("data")
        mime = (inner or block).get("mimeType") or kind
        where = f" {inner.get('uri')}" if isinstance(inner, Mapping) and inner.get("uri") else ""
        size = len(data) if isinstance(data, str) else 0
        return f"[{kind}{where} {mime}, {size} base64 chars: attached to the run_code result]"


def _respelled(kwargs: Mapping[str, Any], argmap: Mapping[str, str],
               arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with each key that spells one parameter in another case style
    (``per_page`` for ``perPage``) sent as that parameter, unless the call also gave it."""
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        alias = None if key in argmap else spelling_alias(key, argmap)
        wire = argmap[alias] if alias is not None and alias not in kwargs else argmap.get(key, key)
        if wire in out:
            wire = argmap.get(key, key)
        out[wire] = value
    return out if len(out) == len(arguments) else arguments


def _python_path(path: str | None, argmap: Mapping[str, str]) -> str | None:
    """Rewrite ``$.from.x`` to the script's spelling ``$.from_.x``."""
    if not path or not path.startswith("$."):
        return path
    head, _, rest = path[2:].partition(".")
    key, bracket, index = head.partition("[")
    wire_to_py = {w: p for p, w in argmap.items()}
    key = wire_to_py.get(key, key)
    return "$." + key + (bracket + index if bracket else "") + ("." + rest if rest else "")
