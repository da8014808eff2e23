"""``CodeMode``: the registry, the SDK generator and the sandbox joined into one product.

A script's ``await tools.<name>(...)`` becomes a ``ToolCall`` with the wire
name and wire argument names, ``call_id`` ``<outer>:code:<n>`` and ``parent``
= the token of the run (the ``run_code`` call's token when it came through
the registry), and goes through ``registry.execute`` like any other call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import keyword
import logging
import math
import re
import sys
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, final

import anyio

from codemode.dispatch.content import Envelope
from codemode.dispatch.content import text as text_block
from codemode.dispatch.context import CancelSignal, ExecContext, Token
from codemode.dispatch.frozen import thaw
from codemode.dispatch.registry import ToolRegistry
from codemode.dispatch.tool import Tool, define_tool
from codemode.errors import ScriptCompileError
from codemode.mode.stuck import unless_stuck
from codemode.sandbox import Executor, Limits, ScriptError, ScriptResult

if TYPE_CHECKING:
    import ast
    from collections.abc import AsyncIterator, Callable, Mapping

    import sdk_gen
    from codemode.dispatch.agent import AgentSession
    from codemode.dispatch.spec import ToolSpec
    from codemode.mode.approval import Approve
    from codemode.mode.bridge import RunSummary
    from codemode.mode.journal import Journal
    from codemode.mode.ledger import RunLedger, RunResult
    from codemode.mode.preflight import Problem
    from codemode.mode.session import Session
    from codemode.mode.stream import RunEvent, RunStream

__all__ = ["CodeMode"]

# The SDK generator, the preflight, the dialects, the compiler and the run's bridge and
# ledger load with the first prompt, check or run (below, where each is used), not with
# this module: a new CodeMode's first run starts its pool's template before them
# (``_boot_soon``), and the template's boot then overlaps their ~45 ms of imports.

_LOG: Final = logging.getLogger("codemode.mode")


def _check_limits(limits: object) -> None:
    """A wrong ``limits`` fails where it is passed, not as an AttributeError mid-run."""
    if limits is not None and not isinstance(limits, Limits):
        raise TypeError(f"limits must be a codemode.Limits, not {type(limits).__name__}")

_INTRO = """\
Write a Python script to do the task. The script runs in a sandbox:
- Tool calls are async: always `await` them. Run independent calls concurrently with
  `results = await asyncio.gather(*[tools.x(a=i) for i in items])` (`asyncio` is preloaded).
- The value of the last expression statement is the script's result; keep it compact JSON.
- `print()` for short notes; output is capped.
- `-> str # text`: the tool answers text as sent; if that holds JSON, `json.loads()` it.
  A tool without `-> type` answers data (dict, list) or text.
- A failed call raises `ToolCallError` (`.tool`, `.message`, `.path`); catch it with
  `try: ... except ToolCallError as e: ...`.
- Imports are limited to: {modules}.
  No files, network or OS access except through tools.

Available tools:
"""

_DESCRIBE = (
    "- A description ending in ` …` is cut short; call the `{}` tool (not from a script)"
    " for whole ones.\n\nAvailable tools:"
)

_VALUE_CAP = 20_000
_PREPARED_SIZE = 64
"""Scripts whose preflight a CodeMode keeps (see ``CodeMode._prepare``)."""
_WARM_SCRIPT: Final = """\
import json
rows = [{'name': 'r' + str(i), 'n': i * 3} for i in range(4)]
kept = []
for row in rows:
    if row['n'] > 2 and row.get('name'):
        kept.append(row['name'])
total = 0
for i in range(len(rows)):
    total += rows[i]['n']
summary = {'kept': sorted(kept), 'total': total, 'text': f"{total:>4}"}
json.dumps(summary)
"""
"""What :meth:`CodeMode.prompt` prepares while the model writes the script: the first
preparation in a process runs every step's code cold (1.1 ms for a 15-line parse that
takes 0.1 ms warm; a first run 5-7 ms of host CPU against ~1 ms later)."""

_WARM_DELAY: Final = 0.02
"""Seconds after ``prompt()`` returns that the warm-up runs (on the loop, once)."""

OFF_LOOP_SOURCE: Final = 2_000
"""Characters past which a run prepares a new script on a worker thread (``_aprepare``):
about 5 ms of the host's time here. Shorter scripts, what models mostly send, are
prepared in place: the thread hop would cost a 15-line script a tenth of its cold path."""


@final
class CodeMode:
    """Run model-written scripts against a registry's tools, through its pipeline."""

    cancel_grace: float = 1.0
    """Seconds a nested call's handler has to stop by itself once the run's end (its
    timeout, its caller cancelling) fired the call's signal, before a hard cancel."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        limits: Limits | None = None,
        executor: Executor | None = None,
        tool_name: str = "run_code",
        allow_recursion: bool = False,
        preflight: bool = True,
        strict: bool = False,
        inputs: Mapping[str, Any] | None = None,
        policy_preflight: bool | None = None,
        approve: Approve | None = None,
    ) -> None:
        if not isinstance(registry, ToolRegistry):
            raise TypeError(f"CodeMode takes a ToolRegistry, not {type(registry).__name__}")
        _check_limits(limits)
        self.registry = registry
        self.limits = limits or Limits()
        self._executor = executor
        self._owns_executor = executor is None
        self._closed = False
        self._warmed = False
        self.tool_name = tool_name
        self.allow_recursion = allow_recursion
        self.preflight = preflight
        self.strict = strict
        """No dialects: bare tool names, positional arguments, calls without ``await``,
        ``final_answer`` … are preflight errors (see docs/writing-scripts.md)."""
        self.inputs: dict[str, Any] = _checked_inputs(inputs or {})
        """Host inputs every run binds as globals (``run(inputs=...)`` adds to them)."""
        self.policy_preflight = True if approve is not None else policy_preflight
        """Put statically known calls through policy (``ctx.dry_run``) before a run starts:
        a denial refuses the script (docs/trust.md). None (the default): whenever the
        registry has policy to consult (hooks, guards, a tool refusing labels); False: never."""
        self.approve = approve
        """Answers the one up-front approval request of a script whose calls policy asks
        about; approved calls do not ask again."""
        self._sdk_cache: sdk_gen.SdkCache | None = None
        self._sdk: tuple[int, sdk_gen.GeneratedSDK, dict[str, ToolSpec]] | None = None
        self._sdk_lock = threading.Lock()  # prompt() may run on a worker thread (aprompt)
        self._runs = itertools.count(1)
        self._describer: str | None = None
        self._prepared: dict[tuple[int, bool, str], tuple[tuple[Problem, ...], str]] = {}
        self._prepared_lock = threading.Lock()
        self._paths: tuple[sdk_gen.GeneratedSDK, tuple[str, ...]] | None = None

    @property
    def executor(self) -> Executor:
        """The executor scripts run in (a worker pool unless one was given)."""
        if self._executor is None:
            from codemode.sandbox.executors.pool import WorkerPoolExecutor

            self._executor = WorkerPoolExecutor()
        return self._executor

    def _tool_paths(self, sdk: sdk_gen.GeneratedSDK) -> tuple[str, ...]:
        """The SDK's tool paths, one tuple per SDK: executors cache what they derive from
        it by identity (the set a broker checks, a worker's copy), so a run's cost does
        not grow with the registry."""
        paths = self._paths
        if paths is None or paths[0] is not sdk:
            paths = self._paths = (sdk, tuple(sdk.names.tools))
        return paths[1]

    def _boot_soon(self) -> None:
        """Let a worker pool start its missing workers now: a new CodeMode's first run
        builds its SDK and preflight while they boot, instead of before. An in-process
        executor starts its script thread. The default pool's template is started before
        the pool's module loads (``launch.prestart``)."""
        if self._executor is None:
            from codemode.sandbox.executors.launch import prestart

            prestart()
        executor = self.executor
        # Not loaded: no such executor exists, and a host never pays for the other's import.
        pool = sys.modules.get("codemode.sandbox.executors.pool")
        if pool is not None and isinstance(executor, pool.WorkerPoolExecutor):
            executor.spawn()
            return
        inprocess = sys.modules.get("codemode.sandbox.executors.inprocess")
        if inprocess is not None and isinstance(executor, inprocess.InProcessExecutor):
            executor.spawn()

    def _boot_on_loop(self) -> None:
        """:meth:`_boot_soon` when called on an event loop's thread (a pool is driven from
        its loop; elsewhere, e.g. on ``aprompt``'s worker thread, nothing starts)."""
        if self._closed:
            return
        try:
            anyio.get_current_task()
        except RuntimeError:  # no event loop runs in this thread
            return
        try:
            self._boot_soon()
        except Exception:  # the first run boots them again and reports why it cannot
            _LOG.debug("workers could not start before the first run", exc_info=True)
        if not self._warmed:
            self._warmed = True
            with contextlib.suppress(RuntimeError):  # not an asyncio loop: no warm-up
                asyncio.get_running_loop().call_later(_WARM_DELAY, self._warm_up)

    def _warm_up(self) -> None:
        """Prepare :data:`_WARM_SCRIPT` once (its problems, if any, are nobody's), and load
        the modules a run adds to a check's (its bridge and ledger): during the model's
        turn, not in its first run."""
        if self._closed:
            return
        try:
            import codemode.mode.bridge
            import codemode.mode.ledger  # noqa: F401

            self.check(_WARM_SCRIPT)
        except Exception:  # a registry that cannot make its SDK: the first run says why
            _LOG.debug("the warm-up preparation failed", exc_info=True)

    async def aclose(self) -> None:
        """Stop the executor if this CodeMode created it."""
        self._closed = True
        if self._executor is not None and self._owns_executor:
            await self._executor.aclose()
            self._executor = None

    async def __aenter__(self) -> CodeMode:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def visible_specs(self) -> list[ToolSpec]:
        """Specs scripts may call: visible in code, and not ``run_code`` itself."""
        return [
            spec
            for spec in self.registry.specs()
            if spec.visible_in_code and (self.allow_recursion or spec.name != self.tool_name)
        ]

    def _current(self) -> tuple[sdk_gen.GeneratedSDK, dict[str, ToolSpec]]:
        current = self._versioned()
        return current[1], current[2]

    def _versioned(self) -> tuple[int, sdk_gen.GeneratedSDK, dict[str, ToolSpec]]:
        with self._sdk_lock:
            version = self.registry.version
            if self._sdk is None or self._sdk[0] != version:
                import sdk_gen

                if self._sdk_cache is None:
                    self._sdk_cache = sdk_gen.SdkCache()
                specs = self.visible_specs()
                sdk = sdk_gen.generate(specs, cache=self._sdk_cache)
                self._sdk = (version, sdk, {spec.name: spec for spec in specs})
            return self._sdk

    def sdk(self) -> sdk_gen.GeneratedSDK:
        """The generated SDK for the tools scripts can call right now."""
        return self._current()[0]

    def prompt(self, *, inputs: Mapping[str, Any] | None = None) -> str:
        """The model-facing text: how to write a script, then the SDK's signatures.

        Host inputs (this CodeMode's and ``inputs``) are listed as predefined globals.
        Asked on an event loop, it also lets a worker pool start its missing workers: they
        boot while the model writes the script, not when its first run arrives.
        """
        self._boot_on_loop()  # first: the pool's template boots while the facades load
        from codemode.sandbox.language.facades import LISTED_NAMES

        intro = _INTRO.format(modules=", ".join(sorted(LISTED_NAMES)))
        if self._describer is not None and self._describer in self.registry:
            intro = intro.replace("\nAvailable tools:", _DESCRIBE.format(self._describer), 1)
        merged = {**self.inputs, **_checked_inputs(inputs or {})}
        if merged:
            lines = [f"  {name}: {_preview(value)}" for name, value in sorted(merged.items())]
            intro = intro.replace(
                "\nAvailable tools:",
                "- Inputs, already defined as globals (use them by name):\n"
                + "\n".join(lines) + "\n\nAvailable tools:", 1)
        return intro + self.sdk().prompt

    async def aprompt(self, *, inputs: Mapping[str, Any] | None = None) -> str:
        """``prompt()`` on a worker thread: a server's event loop never waits while the SDK
        of a large registry is generated (later calls hit the cache and return at once)."""
        self._boot_soon()
        return await anyio.to_thread.run_sync(lambda: self.prompt(inputs=inputs))

    def check(self, script: str, *, inputs: Mapping[str, Any] | None = None) -> list[Problem]:
        """Static problems in ``script`` (nothing runs): compile errors, unknown tools and
        names, arguments that cannot match, literal values that fail their schema, an entry
        function never called, a script without a result (the last two only when strict)."""
        return self._prepare(script, inputs)[0]

    def _prepare(self, script: str,
                 inputs: Mapping[str, Any] | None) -> tuple[list[Problem], str]:
        """(problems, the source to hand the executor: dialects rewritten, prelude attached).

        Pure in the script, the SDK's registry version, ``strict`` and the inputs, so a
        script seen again without inputs is answered from a small cache (a retried or
        repeated script skips its parse, dialect plan and preflight)."""
        job = self._prepare_job(script, inputs)
        if isinstance(job, tuple):
            return job
        return job()

    async def _aprepare(self, script: str,
                        inputs: Mapping[str, Any] | None) -> tuple[list[Problem], str]:
        """``_prepare`` for a run: a new script longer than ``OFF_LOOP_SOURCE`` is parsed,
        checked and compiled on a worker thread, so the host's event loop keeps serving
        its other tasks meanwhile (a 95 kB script held it for ~490 ms; off the loop, only
        the longest single C call, CPython's own parse or compile, still holds the GIL)."""
        job = self._prepare_job(script, inputs)
        if isinstance(job, tuple):
            return job
        if len(script) <= OFF_LOOP_SOURCE:
            return job()
        return await anyio.to_thread.run_sync(job, abandon_on_cancel=True)

    def _prepare_job(self, script: str, inputs: Mapping[str, Any] | None
                     ) -> tuple[list[Problem], str] | Callable[[], tuple[list[Problem], str]]:
        """The cached answer for ``script``, or the work that makes (and caches) it."""
        version, sdk, specs = self._versioned()
        merged = {**self.inputs, **_checked_inputs(inputs or {})}
        key = (version, self.strict, script) if not merged and type(script) is str else None
        if key is not None:
            hit = self._prepared.get(key)
            if hit is not None:
                return list(hit[0]), hit[1]

        def prepare() -> tuple[list[Problem], str]:
            problems, source = self._prepare_new(script, sdk, specs, merged)
            if key is not None:
                with self._prepared_lock:  # a run may prepare on a thread meanwhile
                    if len(self._prepared) >= _PREPARED_SIZE:
                        self._prepared.pop(next(iter(self._prepared)), None)
                    self._prepared[key] = (tuple(problems), source)
            return problems, source

        return prepare

    def _prepare_new(self, script: str, sdk: sdk_gen.GeneratedSDK, specs: dict[str, ToolSpec],
                     merged: dict[str, Any]) -> tuple[list[Problem], str]:
        from codemode.mode.dialects import plan
        from codemode.mode.preflight import check_script
        from codemode.mode.rewritten import rewritten_tree
        from codemode.sandbox.language.compile import MAX_SOURCE
        from codemode.sandbox.language.parsing import parse_tree
        from codemode.sandbox.runtime.prelude import PRELUDE_MARK, Prelude, attach

        tools, arguments = sdk.names.tools, sdk.names.arguments
        tree: ast.Module | None = None
        if isinstance(script, str) and len(script) <= MAX_SOURCE:
            try:
                tree = parse_tree(script)
            except (SyntaxError, RecursionError, MemoryError, ValueError):
                tree = None
        if tree is None:
            problems = check_script(script, tools=tools, arguments=arguments, specs=specs)
            return problems or self._compile_problems(script), script
        try:
            found = plan(script, tree, tools=tools, arguments=arguments, specs=specs,
                         inputs=merged, strict=self.strict)
        except (RecursionError, MemoryError):
            problems = check_script(script, tools=tools, arguments=arguments, specs=specs)
            return problems or self._compile_problems(script), script
        problems = found.problems + check_script(
            script, tools=tools, arguments=arguments, specs=specs, tree=tree,
            tool_of=found.tool_of, orders=None if self.strict else found.prelude.orders,
            nodes=found.nodes, parents=found.parents, kinds=found.kinds)
        problems.sort(key=lambda p: (p.line, p.column))
        if not problems:
            # the script's tree (with the lines a dialect appended): compiled, not parsed again
            problems = self._compile_problems(found.source, rewritten_tree(script, tree, found))
        source = found.source
        if not self.strict or merged or source.startswith(PRELUDE_MARK):
            # (a script's own first line that looks like a prelude stays its comment)
            source = attach(source, found.prelude if not self.strict else Prelude(
                inputs=merged, dialects=False))
        return problems, source

    def _compile_problems(self, script: str,
                          parsed: tuple[ast.Module, dict[type, list[ast.AST]]] | None = None
                          ) -> list[Problem]:
        from codemode.mode.preflight import Problem
        from codemode.sandbox.language.compile import compile_script, compile_tree

        try:
            if parsed is None:
                compile_script(script)
            else:
                compile_tree(script, parsed[0], kinds=parsed[1])
        except ScriptCompileError as exc:
            if len(exc.problems) > 1:
                return [Problem(line=line or 1, column=column or 1, message=message)
                        for line, column, message in exc.problems]
            message = re.sub(r"^Line \d+: ", "", exc.message)
            return [Problem(line=exc.line or 1, column=exc.column or 1, message=message)]
        return []

    async def run(
        self,
        script: str,
        *,
        agent: str | None = None,
        parent: Token | None = None,
        call_id: str | None = None,
        limits: Limits | None = None,
        inputs: Mapping[str, Any] | None = None,
        on_event: Callable[[RunEvent], Any] | None = None,
        session: AgentSession | None = None,
        signal: CancelSignal | None = None,
        on_update: Callable[[Any], None] | None = None,
        journal: Journal | None = None,
        resume: bool | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> ScriptResult:
        """Run ``script``; every tool call goes through ``registry.execute``.

        ``parent`` is the token nested calls name as their parent (a fresh token
        when None); ``call_id`` is the prefix of nested call ids. ``inputs`` (JSON
        values) are bound as globals of the script, over this CodeMode's ``inputs``.
        Nested calls carry ``session``, a child of ``signal`` and the run's deadline in
        their ``ctx``; ``on_update`` gets their partial results as
        ``{"call_id", "tool", "update"}`` (docs/writing-tools.md).
        ``on_event`` receives the run's live events (printed output, nested calls, then
        :class:`RunEndEvent`) on the host's loop while it runs; it must not block, and
        an exception it raises is logged (``codemode.mode``), not raised.
        With a ``journal`` the run records its calls and, when resuming (``resume``; by
        default when the journal's last run failed), answers the calls the last run already
        made from it (docs/trust.md). ``labels`` (label → where it was read) are carried
        from the start, as if the run had read them (a session's state came from them).
        The result is a :class:`RunResult`.
        """
        if not isinstance(script, str):
            raise TypeError(f"run() takes the script's source as a str, not "
                            f"{type(script).__name__}")
        _check_limits(limits)
        deliver = None
        if on_event is not None:  # events (``mode.stream``) load with the first run that asks
            from codemode.mode.stream import guarded

            deliver = guarded(on_event)
        result = await self._run(script, agent=agent, parent=parent, call_id=call_id,
                                 limits=limits, inputs=inputs, deliver=deliver,
                                 journal=journal, resume=resume, labels=labels,
                                 session=session, signal=signal, on_update=on_update)
        from codemode.mode.ledger import RunResult

        if not isinstance(result, RunResult):  # refused before it started (preflight)
            result = RunResult.of(result)
        if deliver is not None:
            from codemode.mode.stream import RunEndEvent

            deliver(RunEndEvent(result=result))
        return result

    @contextlib.asynccontextmanager
    async def stream(
        self,
        script: str,
        *,
        agent: str | None = None,
        parent: Token | None = None,
        call_id: str | None = None,
        limits: Limits | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[RunStream]:
        """Run ``script`` as :meth:`run` does, its events readable while it runs::

            async with mode.stream(script) as events:
                async for event in events:   # OutputEvent, CallStartEvent, CallEndEvent …
                    ...                      # … and last RunEndEvent (events.result)

        Leaving the block stops a run that is still going. The events are bounded by the
        run's limits (output bytes, two per call), so none is dropped or waits.
        """
        from codemode.mode.stream import RunEvent, RunStream

        send, receive = anyio.create_memory_object_stream[RunEvent](math.inf)
        events = RunStream(receive)

        async def go() -> None:
            with send:
                events.result = await self.run(
                    script, agent=agent, parent=parent, call_id=call_id, limits=limits,
                    inputs=inputs, on_event=send.send_nowait)

        with receive:
            async with anyio.create_task_group() as tg:
                tg.start_soon(go)
                try:
                    yield events
                finally:
                    tg.cancel_scope.cancel()

    async def _run(
        self,
        script: str,
        *,
        agent: str | None,
        parent: Token | None,
        call_id: str | None,
        limits: Limits | None,
        inputs: Mapping[str, Any] | None,
        deliver: Callable[[RunEvent], None] | None,
        journal: Journal | None = None,
        resume: bool | None = None,
        labels: Mapping[str, str] | None = None,
        session: AgentSession | None = None,
        signal: CancelSignal | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> ScriptResult:
        self._boot_soon()  # first: the pool's template boots while the modules below load
        from codemode.mode.bridge import Bridge, RunSummary
        from codemode.mode.ledger import RunLedger

        sdk, specs = self._current()
        limits = limits or self.limits
        problems, source = await self._aprepare(script, inputs)
        if self.preflight and problems:
            first = problems[0]
            return ScriptResult(
                error=ScriptError(
                    type="PreflightError",
                    message="the script was not run:\n" + "\n".join(map(str, problems)),
                    line=first.line,
                    column=first.column,
                )
            )
        run = RunSummary(
            outer_id=call_id or f"run-{next(self._runs)}", token=parent or Token(), agent=agent,
            session=session, signal=signal.child() if signal is not None else CancelSignal(),
            deadline=anyio.current_time() + limits.timeout, grace=self.cancel_grace,
            progress=on_update,
        )
        ledger = await self._ledger(script, sdk, run, journal, resume, labels)
        if not isinstance(ledger, RunLedger):
            return ledger
        bridge = Bridge(self.registry, sdk, specs, run, deliver, ledger=ledger,
                        aliases=not self.strict)
        try:
            if deliver is None:
                result = await unless_stuck(self.executor.run(
                    source, call_tool=bridge, tool_paths=self._tool_paths(sdk),
                    limits=limits
                ), bridge, limits.timeout, self.executor)
            else:
                from codemode.mode.stream import OutputEvent

                emit = deliver
                result = await unless_stuck(self.executor.run(
                    source, call_tool=bridge, tool_paths=self._tool_paths(sdk),
                    limits=limits, on_output=lambda text: emit(OutputEvent(text=text)),
                ), bridge, limits.timeout, self.executor)
        except BaseException:
            ledger.finish(None)
            raise
        done = ledger.finish(result, attachments=tuple(bridge.attachments))
        assert done is not None
        return done

    async def _ledger(self, script: str, sdk: sdk_gen.GeneratedSDK, run: RunSummary,
                      journal: Journal | None, resume: bool | None,
                      labels: Mapping[str, str] | None = None) -> RunLedger | RunResult:
        """The run's ledger (journal, labels, approvals), or the result refusing the run."""
        from codemode.mode.ledger import open_ledger

        return await open_ledger(
            self.registry, script, tools=sdk.names.tools, arguments=sdk.names.arguments,
            token=run.token, agent=run.agent, call_id=run.outer_id, journal=journal,
            resume=resume, policy=self.policy_preflight, approve=self.approve, labels=labels)

    def session(self, *, max_bytes: int = 100_000) -> Session:
        """An opt-in session: the JSON globals a script leaves are the next script's
        globals, listed with their types in :meth:`Session.prompt` (docs/trust.md)."""
        from codemode.mode.session import Session

        return Session(self, max_bytes=max_bytes)

    def as_tool(self, *, description: str | None = None, journal: Journal | None = None,
                session: Session | None = None) -> Tool:
        """The ``run_code`` tool, dispatched through the registry like any other tool.

        With a ``journal``, each script resumes the previous one when that one failed (or
        when the model passes ``resume``): calls it already made are not made again. With a
        ``session``, each script starts with the JSON globals the previous ones left.
        """
        from codemode.mode.run_card import present_run_call, present_run_result

        mode = self

        async def run_code(args: Mapping[str, Any], ctx: ExecContext) -> Envelope:
            limits = mode.limits
            requested = args.get("timeout")
            if requested is not None and requested < limits.timeout:
                # compared before float(): a huge integer overflows it, and caps anyway
                limits = replace(limits, timeout=float(requested))
            if session is not None:
                done = await session.run(args["code"], agent=ctx.agent, parent=ctx.token,
                                         call_id=ctx.call_id, limits=limits, journal=journal,
                                         resume=args.get("resume"))
                return _tool_result(done, list(done.attachments), limits)
            mode._boot_soon()
            from codemode.mode.bridge import Bridge, RunSummary
            from codemode.mode.ledger import RunLedger

            sdk, specs = mode._current()
            problems, source = mode._prepare(args["code"], None)
            if problems and mode.preflight:
                result = ScriptResult(
                    error=ScriptError(
                        type="PreflightError",
                        message="the script was not run:\n" + "\n".join(map(str, problems)),
                        line=problems[0].line,
                        column=problems[0].column,
                    )
                )
                return _tool_result(result, [], mode.limits)
            run = RunSummary(
                outer_id=ctx.call_id, token=ctx.token, agent=ctx.agent, session=ctx.session,
                signal=ctx.signal.child() if ctx.signal is not None else CancelSignal(),
                deadline=anyio.current_time() + limits.timeout, grace=mode.cancel_grace,
                progress=ctx.progress)
            ledger = await mode._ledger(args["code"], sdk, run, journal, args.get("resume"))
            if not isinstance(ledger, RunLedger):
                return _tool_result(ledger, [], mode.limits)
            bridge = Bridge(mode.registry, sdk, specs, run, ledger=ledger,
                            aliases=not mode.strict)
            try:
                # printed output goes to whoever listens to this call's progress
                # (``codemode serve`` turns it into MCP progress), as it is printed
                report = ctx.report
                result = await unless_stuck(mode.executor.run(
                    source,
                    call_tool=bridge,
                    tool_paths=mode._tool_paths(sdk),
                    limits=limits,
                    on_output=None if report is None
                    else lambda text: report({"output": text}),
                ), bridge, limits.timeout, mode.executor)
            except BaseException:
                ledger.finish(None)
                raise
            return _tool_result(ledger.finish(result) or result, bridge.attachments, limits)

        return define_tool(
            name=self.tool_name,
            description=description
            or (
                "Run a short async Python script that calls the other tools as "
                "`await tools.<name>(...)` and returns its last expression. "
                "See the tool SDK in the system prompt."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The Python script to run.",
                    },
                    "timeout": {
                        "type": "number",
                        "exclusiveMinimum": 0,
                        "description": "Wall-time limit in seconds (capped by the host).",
                    },
                    **({} if journal is None else {"resume": {
                        "type": "boolean",
                        "description": "true: this script fixes the previous one; calls it "
                        "already made with the same arguments are answered from the journal, "
                        "not made again (default: only when the previous script failed).",
                    }}),
                },
                "required": ["code"],
                "additionalProperties": False,
            },
            execute=run_code,
            visible_in_code=False,
            present_call=present_run_call,
            present_result=present_run_result,
        )

    def describe_tool(self, *, name: str = "describe_tools") -> Tool:
        """A tool that returns the full definitions of the tools scripts can call.

        The prompt cuts long descriptions (they end in `` …``); register this next to
        :meth:`as_tool` and the model can read the whole text and the JSON Schemas on
        demand, instead of every prompt carrying them.
        """
        mode = self
        self._describer = name

        async def describe_tools(args: Mapping[str, Any], ctx: ExecContext) -> list[Any]:
            sdk, specs = mode._current()
            return _definitions(args["tools"], sdk, specs)

        return define_tool(
            name=name,
            description=(
                "Full definitions of tools scripts can call: whole descriptions (the SDK "
                "prompt cuts long ones, marked ` …`), argument names and JSON Schemas."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tools": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "maxItems": 50,
                        "description": "Tools by SDK path (`ns.name`) or wire name.",
                    },
                },
                "required": ["tools"],
                "additionalProperties": False,
            },
            execute=describe_tools,
            visible_in_code=False,
        )


def _checked_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Host inputs as JSON values under names a script can read; ValueError otherwise."""
    out: dict[str, Any] = {}
    if not inputs:
        return out
    from codemode.mode.dialects import SANDBOX_GLOBALS
    from codemode.sandbox.language.builtins import SAFE_BUILTINS

    for name, value in inputs.items():
        if not (isinstance(name, str) and name.isidentifier()) or name.startswith("_") or (
                keyword.iskeyword(name) or name in SANDBOX_GLOBALS or name in SAFE_BUILTINS):
            raise ValueError(f"input name {name!r} cannot be a script global (an identifier "
                             "not starting with '_', not a keyword, builtin, `tools` or "
                             "`asyncio`)")
        try:
            out[name] = json.loads(json.dumps(value, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"input {name!r} must be JSON data ({exc})") from None
    return out


def _preview(value: Any) -> str:
    kind = {dict: "dict", list: "list", str: "str", bool: "bool", int: "int",
            float: "float", type(None): "None"}.get(type(value), "value")
    text = json.dumps(value, ensure_ascii=False)
    return f"{kind} = {text}" if len(text) <= 80 else f"{kind} ({len(text)} characters of JSON)"


def _definitions(
    wanted: list[str], sdk: sdk_gen.GeneratedSDK, specs: Mapping[str, ToolSpec]
) -> list[Any]:
    """Each wanted tool's definition; unknown names fail the call, listing them all."""
    paths = {wire: path for path, wire in sdk.names.tools.items()}
    found: list[Any] = []
    unknown: list[str] = []
    seen: set[str] = set()
    for key in wanted:
        wire = sdk.names.tools.get(key, key if key in paths else None)
        if wire is None:
            unknown.append(key)
            continue
        if wire in seen:
            continue
        seen.add(wire)
        spec = specs[wire]
        entry: dict[str, Any] = {
            "tool": paths[wire],
            "name": wire,
            "description": spec.description,
            "parameters": thaw(spec.parameters),
        }
        renamed = {py: w for py, w in sdk.names.arguments[wire].items() if py != w}
        if renamed:
            entry["python_arguments"] = renamed
        if spec.output_schema is not None:
            entry["output_schema"] = thaw(spec.output_schema)
        found.append(entry)
    if unknown:
        raise LookupError(
            f"no such tool: {', '.join(map(repr, unknown))}"
            f" (known: {len(paths)} tools, named as in the SDK prompt)"
        )
    return found


def _summary(result: ScriptResult) -> str:
    if not result.calls:
        return "no tool calls"
    counts: dict[str, int] = {}
    failed = 0
    for record in result.calls:
        counts[record.name] = counts.get(record.name, 0) + 1
        failed += not record.ok
    parts = ", ".join(f"{name} ×{n}" for name, n in counts.items())
    tail = f"; {failed} failed" if failed else ""
    return f"{len(result.calls)} tool call(s): {parts}{tail}"


def _tool_result(
    result: ScriptResult, attachments: list[Mapping[str, Any]], limits: Limits
) -> Envelope:
    lines: list[str] = []
    if result.error is None:
        value = json.dumps(result.value, ensure_ascii=False, default=str)
        if len(value) > _VALUE_CAP:
            value = value[:_VALUE_CAP] + f"…[value truncated at {_VALUE_CAP} characters]"
        lines.append(f"value: {value}")
    else:
        error = result.error
        where = f" at line {error.line}" if error.line else ""
        lines.append(f"error: {error.type}{where}: {error.message}")
    if result.output:
        lines.append("output:\n" + result.output.rstrip("\n"))
    lines.append(f"calls: {_summary(result)}")
    meta: dict[str, Any] = {
        "calls": [record.to_json() for record in result.calls],
        "usage": result.usage.to_json(),
        "error": None if result.error is None else result.error.to_json(),
        "limits": limits.to_json(),
    }
    from codemode.mode.ledger import RunResult

    if isinstance(result, RunResult):
        if result.replayed:
            meta["replayed"] = list(result.replayed)
            lines.append(f"replayed from the journal (not run again): calls "
                         f"{', '.join(str(i + 1) for i in result.replayed)}")
        if result.labels:
            meta["labels"] = dict(result.labels)
    blocks: list[Any] = [text_block("\n".join(lines)), *attachments]
    return Envelope(blocks, meta=meta, is_error=result.error is not None)
