"""The one dispatch pipeline, as explicit stages.

resolve → prepare & validate → pre_execute → guards → gate → wrappers → handler
→ normalise → post_execute → observers, with ``tool/call`` and ``tool/result``
events around it. Domain failures become ``is_error`` results at the stage
that found them; host bugs in hooks raise (after a ``tool/result`` event).

Only cancellation propagates as a ``BaseException``: a handler (or
``prepare_arguments``) raising ``SystemExit``, ``KeyboardInterrupt``,
``GeneratorExit`` or any other ``BaseException`` fails its call like any exception
(argparse and click exit that way), and a hook doing so raises ``PipelineError``,
so no tool or hook can end the host process or escape as a ``BaseExceptionGroup``.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections import abc
from contextvars import ContextVar
from contextvars import Token as Token_
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, final

import anyio
import anyio.to_thread

from codemode.dispatch.content import (
    ErrorKind,
    InvalidResult,
    ToolResult,
    content_of,
    error_result,
    normalise,
    normalise_timed,
    timed,
)
from codemode.dispatch.context import Allow, Ask, CancelSignal, Deny, ExecContext, Token, ToolCall
from codemode.dispatch.events import EventType, ToolEvent, now
from codemode.dispatch.failure import failure_text
from codemode.dispatch.frozen import HEAVY_VALUES, NotJSONError, constructor, freeze, heavy
from codemode.dispatch.labels import refusal
from codemode.dispatch.task_scope import NO_TASKS, TaskScope
from codemode.errors import PipelineError, UnknownToolError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from codemode.dispatch.agent import AgentSession
    from codemode.dispatch.gate import ExecutionGate
    from codemode.dispatch.hooks import Hook, Hooks
    from codemode.dispatch.tool import Tool

__all__ = ["CallExtras", "DispatchTable", "dispatch", "dispatch_with", "dry_run", "hand_off",
           "is_cancellation"]


class DispatchTable(Protocol):
    """What the pipeline needs from a registry: tools by name, hooks, gate, approver."""

    hooks: Hooks
    gate: ExecutionGate
    approver: Callable[[ExecContext, str], bool | Awaitable[bool]] | None

    def get(self, name: str) -> Tool:
        """The tool called ``name``; raises ``UnknownToolError`` (with close matches)."""
        ...

_perf = time.perf_counter
_MAX_PROBLEMS = 5


class _Stop(Exception):
    """Internal: a stage produced the final (error) result."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result


async def _invoke(hook: Hook, *args: Any) -> Any:
    out = hook.fn(*args)
    if hook.is_async or inspect.isawaitable(out):
        out = await out
    return out


def _emit(registry: DispatchTable, event: ToolEvent) -> None:
    for subscriber in tuple(registry.hooks.subscribers):
        subscriber(event)


def _event(
    call: ToolCall, token: Token, parent: str | None, kind: EventType, **fields: Any
) -> ToolEvent:
    return ToolEvent(
        type=kind,
        call_id=call.call_id,
        name=call.name,
        token=str(token),
        parent=parent,
        agent=call.agent,
        time=now(),
        **fields,
    )


def _parent_of(call: ToolCall) -> str | None:
    return str(call.parent) if call.parent is not None else None


def is_cancellation(exc: BaseException) -> bool:
    """True for a cancellation of the calling task. A cancellation exception a handler or
    hook raised on its own (a library leaking one from an inner task it cancelled) is
    its failure: passed on, it would cancel the run's task or kill a worker's answer."""
    return isinstance(exc, anyio.get_cancelled_exc_class()) and _cancel_requested()


def _cancel_requested() -> bool:
    """Is something cancelling the calling task: an enclosing cancel scope, or on asyncio a
    ``Task.cancel()`` (``asyncio.wait_for``, a plain task group)? True where that cannot
    be told (no asyncio task), so a real cancellation is never swallowed."""
    if anyio.current_effective_deadline() == -math.inf:
        return True
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return True
    return task is None or task.cancelling() > 0


def _failure_text(exc: BaseException) -> str:
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return f"{type(exc).__name__} raised while nothing was cancelling the call"
    return failure_text(exc)


def _hook_failure(call: ToolCall, exc: BaseException) -> PipelineError:
    """What a hook or subscriber raising a ``BaseException`` (not cancellation) becomes."""
    return PipelineError(call.name, f"a hook raised {_failure_text(exc)}")


async def dispatch(
    registry: DispatchTable,
    call: ToolCall,
    *,
    session: AgentSession | None = None,
    signal: CancelSignal | None = None,
    deadline: float | None = None,
    on_update: Callable[[Any], None] | None = None,
) -> ToolResult:
    """Run ``call`` through every stage and return its normalised result.

    ``session``, ``signal`` and ``deadline`` go into the call's ``ctx``; ``on_update``
    receives each partial result the handler reports (``ctx.progress``). Raises only
    ``Exception``s (hook bugs) and cancellation; see the module docstring.
    """
    if session is None and signal is None and deadline is None and on_update is None:
        extras = _HANDOFF.get()
        if extras is None:
            extras = _NO_EXTRAS
        else:
            _HANDOFF.set(None)
    else:
        extras = CallExtras(session, signal, deadline, on_update, False, None)
    return await dispatch_with(registry, call, extras)


async def dispatch_with(registry: DispatchTable, call: ToolCall,
                        extras: CallExtras) -> ToolResult:
    """:func:`dispatch` with the per-call inputs given as one value (a run's bridge makes
    one per call and hands it through its ledger; see :class:`hand_off` for the fields)."""
    try:
        return await _dispatch(registry, call, extras)
    except Exception:
        raise
    except BaseException as exc:
        if is_cancellation(exc):
            raise
        raise _hook_failure(call, exc) from exc


@final
class CallExtras:
    """Per-call inputs that are not identity: the session, signal, deadline, update sink,
    whether the caller enforces the signal and deadline itself (``watched``), and who to
    tell while an approver is being waited for (``on_hold``); see :class:`hand_off`."""

    __slots__ = ("deadline", "on_hold", "on_update", "session", "signal", "watched")

    def __init__(self, session: AgentSession | None, signal: CancelSignal | None,
                 deadline: float | None, on_update: Callable[[Any], None] | None,
                 watched: bool, on_hold: Callable[[bool], None] | None) -> None:
        self.session = session
        self.signal = signal
        self.deadline = deadline
        self.on_update = on_update
        self.watched = watched
        self.on_hold = on_hold


_NO_EXTRAS = CallExtras(None, None, None, None, False, None)
_HANDOFF: ContextVar[CallExtras | None] = ContextVar("codemode_dispatch_handoff", default=None)


@final
class hand_off:
    """Within the block, the next ``dispatch`` this task starts gets these, once (it takes
    them, so calls its handler makes do not inherit them). For a caller whose call passes
    through a layer that forwards only the ``ToolCall`` (a run's ledger). A class, not a
    generator: it is on every nested call's path.

    ``watched``: the caller stops the call itself when the signal fires or the deadline
    passes (a run stops all its calls at once), so the pipeline only shows them in ``ctx``
    and pays for no cancel scope or timer per call; a wrapper that replaces either still
    gets it enforced.

    ``on_hold(True)`` is called when the call starts waiting for the registry's approver
    and ``on_hold(False)`` when the approver answered: a run pauses its clock meanwhile
    (a person's answer is not the script's time)."""

    __slots__ = ("_extras", "_token")

    def __init__(
        self,
        *,
        session: AgentSession | None = None,
        signal: CancelSignal | None = None,
        deadline: float | None = None,
        on_update: Callable[[Any], None] | None = None,
        watched: bool = False,
        on_hold: Callable[[bool], None] | None = None,
    ) -> None:
        self._extras = CallExtras(session, signal, deadline, on_update, watched, on_hold)
        self._token: Token_[CallExtras | None] | None = None

    def __enter__(self) -> None:
        self._token = _HANDOFF.set(self._extras)

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        _HANDOFF.reset(self._token)


async def _dispatch(registry: DispatchTable, call: ToolCall,
                    extras: CallExtras = _NO_EXTRAS) -> ToolResult:
    start = _perf()
    token = Token()
    if registry.hooks.subscribers:
        _emit(registry, _event(call, token, _parent_of(call), "tool/call",
                               arguments=_loggable(call.arguments)))
    try:
        try:
            result = await _stages(registry, call, token, extras, start)
        except _Stop as stop:
            result = timed(stop.result, _perf() - start)
        for observer in registry.hooks.observers:
            await _invoke(observer, result)
    except BaseException as exc:
        if registry.hooks.subscribers:
            cancelled = is_cancellation(exc)
            message = "cancelled" if cancelled else f"internal error: {failure_text(exc)}"
            _emit(
                registry,
                _event(
                    call,
                    token,
                    _parent_of(call),
                    "tool/result",
                    is_error=True,
                    error=message,
                    duration=_perf() - start,
                ),
            )
        raise
    if registry.hooks.subscribers:
        _emit(
            registry,
            _event(
                call,
                token,
                _parent_of(call),
                "tool/result",
                is_error=result.is_error,
                error=result.error.message if result.error else None,
                duration=result.duration,
                meta=result.meta,
                content=result.content,
            ),
        )
    return result


def _loggable(arguments: Any) -> Any:
    try:
        return freeze(arguments)
    except NotJSONError:
        return repr(arguments)


def _fail(call: ToolCall, kind: ErrorKind, message: str, path: str | None = None) -> _Stop:
    return _Stop(error_result(call.call_id, call.name, kind, message, path))


def _resolve(registry: DispatchTable, call: ToolCall) -> Tool:
    try:
        return registry.get(call.name)
    except UnknownToolError as error:
        raise _fail(call, "unknown_tool", str(error)) from None


def _validate(tool: Tool, call: ToolCall) -> Mapping[str, Any]:
    return _checked(tool, call, _prepared(tool, call))


def _prepared(tool: Tool, call: ToolCall) -> dict[str, Any]:
    """The arguments as the tool's validator reads them: ``prepare_arguments`` applied
    (host code: on the loop, like every hook), a mapping made a dict."""
    raw: Any = call.arguments
    if tool.prepare_arguments is not None:
        try:
            raw = tool.prepare_arguments(raw)
        except BaseException as exc:  # SystemExit from argparse too; never cancellation (sync)
            raise _fail(
                call,
                "invalid_arguments",
                f"invalid arguments for {tool.name!r}: {failure_text(exc)}",
            ) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict) and isinstance(raw, abc.Mapping):
        raw = dict(raw)  # ToolCall.arguments may be any mapping; the validators want a dict
    if not isinstance(raw, dict):
        raise _fail(
            call,
            "invalid_arguments",
            f"invalid arguments for {tool.name!r}: expected a JSON object, got "
            f"{type(raw).__name__}",
            "$",
        )
    return raw


def _checked(tool: Tool, call: ToolCall, raw: dict[str, Any],
             valid: bool | None = None) -> Mapping[str, Any]:
    """``raw`` validated against the tool's schema and frozen (pure: any thread); ``valid``
    is the fast validator's answer when it is known already."""
    if not (tool.validator.is_valid(raw) if valid is None else valid):
        problems = tool.validator.problems(raw)
        if problems:
            shown = "; ".join(str(p) for p in problems[:_MAX_PROBLEMS])
            more = (
                f" (and {len(problems) - _MAX_PROBLEMS} more)"
                if len(problems) > _MAX_PROBLEMS
                else ""
            )
            raise _fail(
                call,
                "invalid_arguments",
                f"invalid arguments for {tool.name!r}: {shown}{more}",
                problems[0].path,
            )
    try:
        frozen: Mapping[str, Any] = freeze(raw)
    except NotJSONError as exc:
        raise _fail(
            call, "invalid_arguments", f"invalid arguments for {tool.name!r}: {exc}", exc.path
        ) from None
    return frozen


async def _policy(registry: DispatchTable, ctx: ExecContext, call: ToolCall,
                  extras: CallExtras = _NO_EXTRAS) -> None:
    for hook in registry.hooks.pre:
        decision = await _invoke(hook, ctx)
        if decision is None or isinstance(decision, Allow):
            continue
        if isinstance(decision, Deny):
            raise _fail(call, "denied", f"call to {ctx.name!r} denied: {decision.reason}")
        if isinstance(decision, Ask):
            await _ask(registry, ctx, call, decision.prompt, extras.on_hold)
            continue
        raise PipelineError(
            ctx.name,
            f"pre_execute hook {hook.fn!r} returned {decision!r}; "
            "expected None, Allow(), Deny(reason) or Ask(prompt)",
        )
    for hook in registry.hooks.guards:
        decision = await _invoke(hook, ctx)
        if decision is None or isinstance(decision, Allow):
            continue
        if isinstance(decision, Deny):
            raise _fail(call, "denied", f"call to {ctx.name!r} denied: {decision.reason}")
        raise PipelineError(
            ctx.name,
            f"guard {hook.fn!r} returned {decision!r}; guards may only return None or Deny(reason)",
        )


async def _ask(registry: DispatchTable, ctx: ExecContext, call: ToolCall, prompt: str,
               on_hold: Callable[[bool], None] | None = None) -> None:
    if call.approved:
        return
    if registry.approver is None:
        raise _fail(
            call,
            "denied",
            f"call to {ctx.name!r} needs approval ({prompt}) and no approver is configured",
        )
    if on_hold is not None:
        on_hold(True)
    try:
        answer = registry.approver(ctx, prompt)
        if inspect.isawaitable(answer):
            answer = await answer
    finally:
        if on_hold is not None:
            on_hold(False)
    if isinstance(answer, Deny):
        raise _fail(call, "denied", f"call to {ctx.name!r} not approved: {answer.reason}")
    if answer is True or isinstance(answer, Allow):
        return
    if answer is False or answer is None:
        raise _fail(call, "denied", f"call to {ctx.name!r} not approved ({prompt})")
    raise PipelineError(ctx.name, f"approver returned {answer!r}; expected a bool, Allow or Deny")


def _check_wrapped(original: ExecContext, passed: object) -> ExecContext:
    if not isinstance(passed, ExecContext):
        raise PipelineError(
            original.name,
            "an execute wrapper passed something other than an ExecContext to call_next",
        )
    if passed is original:
        return passed
    for name in ("call_id", "name", "arguments", "token", "parent", "agent", "spec", "report",
                 "labels", "dry_run", "session", "tasks"):
        if getattr(passed, name) is not getattr(original, name):
            raise PipelineError(
                original.name,
                f"an execute wrapper changed ctx.{name}; wrappers "
                "may only change the signal or the deadline",
            )
    return passed


async def _run_handler(tool: Tool, ctx: ExecContext, extras: CallExtras = _NO_EXTRAS) -> Any:
    args = (ctx.arguments, ctx) if tool.takes_context else (ctx.arguments,)
    signal = ctx.signal
    if ctx.deadline is None and signal is None:
        return await _call_handler(tool, args)
    if signal is not None and signal.cancelled:
        raise _SignalFired
    if extras.watched and signal is extras.signal and ctx.deadline == extras.deadline:
        return await _call_handler(tool, args)  # the caller cuts it (see ``hand_off``)
    if not tool.is_async and not tool.threaded:
        out = tool.handler(*args)  # nothing interrupts a sync handler: no scope to pay for
        if not inspect.isawaitable(out):
            return out
        return await _bounded(ctx, signal, out)
    return await _bounded(ctx, signal, _call_handler(tool, args))


async def _bounded(ctx: ExecContext, signal: CancelSignal | None, work: Awaitable[Any]) -> Any:
    """Await ``work`` under the context's deadline and signal."""
    # One scope for both: the deadline is its deadline, the signal cancels it (after its
    # grace) through a callback rather than a watcher task, so calls stay cheap.
    with anyio.CancelScope(
        deadline=ctx.deadline if ctx.deadline is not None else float("inf")
    ) as scope:
        remove = None
        if signal is not None:

            def fire() -> None:
                if signal.grace > 0:  # the handler may stop by itself (and answer) meanwhile
                    scope.deadline = min(scope.deadline, anyio.current_time() + signal.grace)
                else:
                    scope.cancel()

            remove = signal.on_cancel(fire)
        try:
            result = await work
        finally:
            if remove is not None:
                remove()
    if scope.cancelled_caught:
        raise _SignalFired if signal is not None and signal.cancelled else _DeadlineHit
    return result


class _DeadlineHit(Exception):
    """Internal: the context's deadline cancelled the handler."""


class _SignalFired(Exception):
    """Internal: the context's cancellation signal fired."""


class _ThreadExit(Exception):
    """Internal: a threaded handler raised a ``BaseException``; carried as an ``Exception``
    (thrown into the awaiting coroutines, ``GeneratorExit`` would close them instead)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")


def _normalise_in_steps(call_id: str, name: str, raw: Any) -> ToolResult:
    """``normalise`` of a heavy result, on a worker thread (its JSON text in steps)."""
    return normalise(call_id, name, raw, steps=True)


def _in_thread(tool: Tool, args: tuple[Any, ...]) -> Any:
    try:
        return tool.handler(*args)
    except Exception:
        raise
    except BaseException as exc:
        raise _ThreadExit(exc) from None


async def _call_handler(tool: Tool, args: tuple[Any, ...]) -> Any:
    if tool.is_async:
        return await tool.handler(*args)
    if tool.threaded:
        return await anyio.to_thread.run_sync(_in_thread, tool, args)
    out = tool.handler(*args)
    if inspect.isawaitable(out):
        out = await out
    return out


async def _execute(registry: DispatchTable, tool: Tool, ctx: ExecContext,
                   extras: CallExtras = _NO_EXTRAS) -> Any:
    chain: Callable[[ExecContext], Awaitable[Any]] = (  # noqa: E731
        lambda c: _run_handler(tool, c, extras))
    for hook in reversed(registry.hooks.wrappers):
        chain = _wrap(hook, chain, ctx)
    return await chain(ctx)


def _wrap(
    hook: Hook, inner: Callable[[ExecContext], Awaitable[Any]], original: ExecContext
) -> Callable[[ExecContext], Awaitable[Any]]:
    async def call_next(passed: ExecContext) -> Any:
        return await inner(_check_wrapped(original, passed))

    async def outer(ctx: ExecContext) -> Any:
        return await _invoke(hook, ctx, call_next)

    return outer


def _check_output(tool: Tool, call: ToolCall, result: ToolResult) -> ToolResult:
    if tool.output_validator is None or result.structured is None or result.is_error:
        return result  # an error's data (its details) is no output
    from codemode.dispatch.frozen import thaw

    data = thaw(result.structured)
    if tool.output_validator.is_valid(data):
        return result
    problems = tool.output_validator.problems(data)
    detail = str(problems[0]) if problems else "not valid"
    raise _fail(
        call,
        "invalid_result",
        f"{tool.name!r} returned data that does not match its output schema: {detail}",
    )


async def _post(registry: DispatchTable, ctx: ExecContext, result: ToolResult) -> ToolResult:
    for hook in registry.hooks.post:
        out = await _invoke(hook, ctx, result)
        if out is None:
            continue
        try:
            if isinstance(out, ToolResult):
                # Content is the hook's to rewrite; host-side meta is not.
                result = replace(normalise(result.call_id, result.name, out), meta=result.meta)
                continue
            content, structured = content_of(out)
        except InvalidResult as exc:
            raise PipelineError(
                ctx.name,
                f"post_execute hook {hook.fn!r} returned content that cannot be normalised: {exc}",
            ) from None
        result = replace(result, content=content, structured=structured)
    return result


_new_context = constructor(ExecContext)
_NO_LABELS: frozenset[str] = frozenset()


async def _stages(registry: DispatchTable, call: ToolCall, token: Token,
                  extras: CallExtras, start: float) -> ToolResult:
    """Every stage after the ``tool/call`` event; the result's ``duration`` counts from
    ``start``. Stages with nothing to consult (no hooks, no output schema, no labels, no
    session …) cost one check each."""
    tool = _resolve(registry, call)
    raw = _prepared(tool, call)
    if tool.validator.timed or heavy(raw, HEAVY_VALUES):
        # checked and frozen on a worker thread, so the loop keeps serving (a cancelled
        # call does not wait for the thread: its work is pure); a schema's ``pattern``
        # searches may take ``PATTERN_BUDGET`` whatever the size of the arguments
        arguments = await anyio.to_thread.run_sync(_checked, tool, call, raw,
                                                   abandon_on_cancel=True)
    elif tool.validator.is_valid(raw):
        arguments = _checked(tool, call, raw, True)
    else:
        # jsonschema explains the failure in Python, its messages quoting the bad value
        # whole (an ``anyOf`` of eight branches quoted 8 MB of a script's text eight
        # times: 0.4 s): off the loop too
        arguments = await anyio.to_thread.run_sync(_checked, tool, call, raw, False,
                                                   abandon_on_cancel=True)
    report = None
    on_update = extras.on_update
    if registry.hooks.subscribers or on_update is not None:
        parent = str(call.parent) if call.parent is not None else None

        def report(data: Any) -> None:
            loggable = _loggable(data)
            if registry.hooks.subscribers:
                _emit(registry, _event(call, token, parent, "tool/update", data=loggable))
            if on_update is not None:
                on_update(loggable)

    session = extras.session
    manager = getattr(registry, "tasks", None)
    tasks = NO_TASKS if session is None and manager is None else TaskScope(
        manager, session, extras.signal, tool.labels)

    ctx = _new_context(
        call_id=call.call_id,
        name=tool.name,
        arguments=arguments,
        token=token,
        parent=call.parent,
        agent=call.agent,
        spec=tool.spec,
        report=report,
        labels=frozenset(call.labels) if call.labels else _NO_LABELS,
        session=session,
        tasks=tasks,
        signal=extras.signal,
        deadline=extras.deadline,
    )
    if tool.refuses and call.labels:
        refused = refusal(tool.name, tool.refuses, call.labels)
        if refused is not None:
            raise _fail(call, "denied", f"call to {tool.name!r} denied: {refused}")
    if registry.hooks.pre or registry.hooks.guards:
        await _policy(registry, ctx, call, extras)
    gate = registry.gate
    if not gate.try_enter(token, call.parent, tool.execution_mode):
        await gate.acquire(token, call.parent, tool.execution_mode)
    try:
        try:
            if registry.hooks.wrappers:
                raw = await _execute(registry, tool, ctx, extras)
            elif tool.is_async and (extras.watched or (ctx.signal is None
                                                       and ctx.deadline is None)):
                # the common case, without the intermediate coroutines
                if extras.watched and ctx.signal is not None and ctx.signal.cancelled:
                    raise _SignalFired
                raw = await (
                    tool.handler(arguments, ctx) if tool.takes_context else tool.handler(arguments)
                )
            else:
                raw = await _run_handler(tool, ctx, extras)
        except (PipelineError, _Stop):
            raise
        except _DeadlineHit:
            raise _fail(call, "timeout", f"{tool.name!r} timed out (deadline passed)") from None
        except _SignalFired:
            raise _fail(call, "cancelled", f"{tool.name!r} was cancelled") from None
        except _ThreadExit as exc:
            raise _fail(call, "handler_error", str(exc)) from None
        except Exception as exc:
            raise _fail(call, "handler_error", failure_text(exc)) from None
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit …
            if is_cancellation(exc):
                raise
            raise _fail(call, "handler_error", _failure_text(exc)) from None
    finally:
        if gate.leave(token):
            await gate.wake()
    try:
        if heavy(raw, HEAVY_VALUES):  # copied into a result on a worker thread, as arguments
            result = await anyio.to_thread.run_sync(_normalise_in_steps, call.call_id,
                                                    tool.name, raw, abandon_on_cancel=True)
        elif tool.output_validator is None and not registry.hooks.post:
            return normalise_timed(call.call_id, tool.name, raw, start)
        else:
            result = normalise(call.call_id, tool.name, raw)
    except InvalidResult as exc:
        raise _fail(
            call, "invalid_result", f"{tool.name!r} returned an invalid result: {exc}"
        ) from None
    result = _check_output(tool, call, result)
    if registry.hooks.post:
        result = await _post(registry, ctx, result)
    return timed(result, _perf() - start)


async def dry_run(registry: DispatchTable, call: ToolCall) -> Deny | Ask | None:
    """What policy says of ``call`` before anything runs: resolve, validate, then every
    ``pre_execute`` hook and guard with ``ctx.dry_run`` set; no handler, gate or approver.

    Returns the first ``Deny`` (an unknown tool or invalid arguments deny too), else an
    ``Ask`` joining every hook's prompt, else None.
    """
    try:
        tool = _resolve(registry, call)
        arguments = _validate(tool, call)
    except _Stop as stop:
        return Deny(stop.result.error.message if stop.result.error else "refused")
    ctx = ExecContext(call_id=call.call_id, name=tool.name, arguments=arguments, token=Token(),
                      parent=call.parent, agent=call.agent, spec=tool.spec,
                      labels=frozenset(call.labels), dry_run=True)
    prompts: list[str] = []
    for hooks, what in ((registry.hooks.pre, "pre_execute hook"), (registry.hooks.guards, "guard")):
        for hook in hooks:
            decision = await _invoke(hook, ctx)
            if decision is None or isinstance(decision, Allow):
                continue
            if isinstance(decision, Deny):
                return Deny(f"call to {ctx.name!r} denied: {decision.reason}")
            if isinstance(decision, Ask) and what == "pre_execute hook":
                prompts.append(decision.prompt)
                continue
            raise PipelineError(ctx.name, f"{what} {hook.fn!r} returned {decision!r} in a dry run")
    return Ask("; ".join(prompts)) if prompts else None
