"""The host side of one run: a script's ``tools.<path>(...)`` call becomes a
``ToolCall`` (wire name, wire argument names, ``<outer>:code:<n>`` call id, the run's
token as parent) that goes through the registry's pipeline, or the run's ledger, and
its result becomes the plain data the script sees.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

import anyio

from codemode.dispatch.context import CancelSignal, Token, ToolCall
from codemode.dispatch.frozen import thaw
from codemode.dispatch.pipeline import hand_off
from codemode.errors import ToolCallError
from codemode.mode.stream import CallEndEvent, CallStartEvent, RunEvent

if TYPE_CHECKING:
    import sdk_gen
    from codemode.dispatch.agent import AgentSession
    from codemode.dispatch.content import ToolResult
    from codemode.dispatch.registry import ToolRegistry
    from codemode.dispatch.spec import ToolSpec
    from codemode.mode.ledger import RunLedger

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
    """When the run's timeout ends (``anyio.current_time()``); nested calls' hard cancel
    comes ``grace`` seconds later at the latest."""
    grace: float = 0.0
    """Seconds a nested handler has, once its signal fired, to stop by itself."""
    progress: Callable[[Any], None] | None = None
    """Where nested calls' partial results go (the run's own progress)."""



@final
class Bridge:
    """Host side of one run: maps script calls to ``ToolCall``s and results back to data."""

    def __init__(
        self,
        registry: ToolRegistry,
        sdk: sdk_gen.GeneratedSDK,
        specs: Mapping[str, ToolSpec],
        run: RunSummary,
        deliver: Callable[[RunEvent], None] | None = None,
        *,
        ledger: RunLedger | None = None,
    ) -> None:
        self.registry = registry
        self.execute = registry.execute if ledger is None else ledger.execute
        """Where calls go: the run's ledger (journal, labels, approvals) or the registry."""
        self.sdk = sdk
        self.specs = specs
        self.run = run
        self.deliver = deliver
        """Where the run's live call events go (``CodeMode.run(on_event=...)``), if anywhere."""
        self.counter = itertools.count(1)
        self.attachments: list[Mapping[str, Any]] = []

    async def call(self, path: str, kwargs: dict[str, Any]) -> Any:
        wire = self.sdk.names.tools.get(path)
        if wire is None:
            raise ToolCallError(path, f"unknown tool tools.{path}")
        argmap = self.sdk.names.arguments.get(wire, {})
        arguments = {argmap.get(key, key): value for key, value in kwargs.items()}
        call = ToolCall(
            call_id=f"{self.run.outer_id}:code:{next(self.counter)}",
            name=wire,
            arguments=arguments,
            parent=self.run.token,
            agent=self.run.agent,
        )
        if self.deliver is None:
            result = await self._execute(call, path)
        else:
            self.deliver(CallStartEvent(call_id=call.call_id, name=wire, tool=path,
                                        arguments=call.arguments))
            try:
                result = await self._execute(call, path)
            except BaseException:  # cancelled with the run, or a hook bug: still ends the call
                self.deliver(CallEndEvent(call_id=call.call_id, name=wire, tool=path,
                                          is_error=True, error="cancelled", duration=None))
                raise
            self.deliver(CallEndEvent(
                call_id=call.call_id, name=wire, tool=path, is_error=result.is_error,
                error=(result.error.message if result.error is not None else result.text)
                if result.is_error else None, duration=result.duration))
        if result.is_error:
            error = result.error
            message = error.message if error is not None else result.text
            path_ = error.path if error is not None else None
            raise ToolCallError(path, message, _python_path(path_, argmap))
        return self.to_script(self.specs.get(wire), result)

    async def _execute(self, call: ToolCall, path: str) -> ToolResult:
        """The call with the run's session, a child signal, the deadline and progress
        (``hand_off``, so a layer in between need not know them). When the run is
        cancelled (its timeout, its caller) while an async handler runs, the child
        signal fires first and the handler has ``grace`` seconds to stop by itself
        before the hard cancel (a sync handler cannot watch it, so it is not waited
        for: it costs a task per call)."""
        run = self.run
        assert run.signal is not None
        # The run, not the pipeline, cancels hard (``grace`` seconds after the signal):
        # the pipeline's own cut on this signal is off, its deadline is the backstop.
        signal = run.signal.child(grace=math.inf)
        progress = run.progress
        on_update = None if progress is None else (
            lambda data: progress({"call_id": call.call_id, "tool": path, "update": data}))
        deadline = None if run.deadline is None else run.deadline + run.grace
        try:
            if run.grace <= 0 or not self._cooperative(call.name):
                with hand_off(session=run.session, signal=signal, deadline=deadline,
                              on_update=on_update):
                    return await self.execute(call)
            return await self._graceful(call, path, signal, deadline, on_update)
        finally:
            run.signal.release(signal)

    def _cooperative(self, name: str) -> bool:
        """Whether the tool's handler can watch its signal while it runs (async)."""
        if name not in self.registry:
            return False
        return self.registry.get(name).is_async

    async def _graceful(self, call: ToolCall, path: str, signal: CancelSignal,
                        deadline: float | None,
                        on_update: Callable[[Any], None] | None) -> ToolResult:
        """Run the call in a shielded task of its own, so that this task's cancellation
        becomes the signal first and the hard cancel ``grace`` seconds later."""
        run = self.run
        box: list[ToolResult] = []
        failure: list[Exception] = []
        finished = anyio.Event()
        inner = anyio.CancelScope(shield=True)

        async def go() -> None:
            try:
                with inner, hand_off(session=run.session, signal=signal, deadline=deadline,
                                     on_update=on_update):
                    box.append(await self.execute(call))
            except Exception as exc:  # re-raised below, outside the task group
                failure.append(exc)
            finally:
                finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(go)
            try:
                await finished.wait()
            except anyio.get_cancelled_exc_class():
                signal.cancel("the run was cancelled or timed out")
                with anyio.CancelScope(shield=True), anyio.move_on_after(run.grace):
                    await finished.wait()
                inner.cancel()
                raise
        if failure:
            raise failure[0]
        if not box:  # the hard cancel ended the call
            raise ToolCallError(path, "cancelled")
        return box[0]

    def to_script(self, spec: ToolSpec | None, result: ToolResult) -> Any:
        if result.structured is not None:
            return thaw(result.structured)
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


def _python_path(path: str | None, argmap: Mapping[str, str]) -> str | None:
    """Rewrite ``$.from.x`` to the script's spelling ``$.from_.x``."""
    if not path or not path.startswith("$."):
        return path
    head, _, rest = path[2:].partition(".")
    key, bracket, index = head.partition("[")
    wire_to_py = {w: p for p, w in argmap.items()}
    key = wire_to_py.get(key, key)
    return "$." + key + (bracket + index if bracket else "") + ("." + rest if rest else "")
