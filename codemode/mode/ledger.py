"""What a run keeps around each of its calls: the journal, its labels, its approvals.

The run's bridge hands every ``ToolCall`` to :meth:`RunLedger.execute` instead of
``registry.execute``: the ledger stamps the labels the run carries and any up-front
approval on the call, answers it from the journal when the run is resuming (emitting
``tool/call`` and ``tool/result`` events marked ``replayed``, no handler runs), records
it, and adds the labels of what the tool returned to the run.
"""

from __future__ import annotations

import weakref
from collections import Counter
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, final

from codemode.dispatch.events import ToolEvent, now
from codemode.dispatch.labels import LabelTrail
from codemode.dispatch.pipeline import dispatch_with
from codemode.mode.preflight import call_lines, static_calls
from codemode.sandbox import ScriptError, ScriptResult
from codemode.sandbox.language.parsing import parse_tree

if TYPE_CHECKING:
    import ast
    from collections.abc import Awaitable, Iterable, Mapping

    from codemode.dispatch.content import ToolResult
    from codemode.dispatch.context import Token, ToolCall
    from codemode.dispatch.pipeline import CallExtras
    from codemode.dispatch.registry import ToolRegistry
    from codemode.dispatch.tool import Tool
    from codemode.mode.approval import ApprovalRequest, Approve
    from codemode.mode.journal import Journal, Resume

__all__ = ["RunLedger", "RunResult", "consults", "open_ledger"]


@dataclass(frozen=True, kw_only=True, slots=True)
class RunResult(ScriptResult):
    """A :class:`ScriptResult` plus what the run's ledger knows."""

    replayed: tuple[int, ...] = ()
    """Positions (0-based, the ``calls`` indexes) of the calls answered from the journal:
    their handlers did not run again."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the run read, each with where it first read it."""
    approval: ApprovalRequest | None = None
    """The up-front approval request, when policy asked about statically known calls."""

    @classmethod
    def of(cls, result: ScriptResult, **extra: Any) -> RunResult:
        """``result`` as a RunResult (``extra`` sets the fields a ScriptResult lacks, or
        replaces one it has)."""
        values = {name: getattr(result, name) for name in _SCRIPT_FIELDS}
        values.update(extra)
        return cls(**values)


_SCRIPT_FIELDS = tuple(f.name for f in fields(ScriptResult))


_REFUSING: weakref.WeakKeyDictionary[ToolRegistry, tuple[int, bool]] = (
    weakref.WeakKeyDictionary())
"""Per registry: (its version, whether a tool of it refuses labels)."""


def consults(registry: ToolRegistry) -> bool:
    """Whether the dry pass has anything to consult: a ``pre_execute`` hook, a guard, or a
    tool that refuses labels. ``CodeMode(policy_preflight=None)`` (the default) runs the
    pass exactly then, so a registry without policy pays nothing (nor loads the approval
    and journal modules: a run imports them only when it uses them)."""
    hooks = registry.hooks
    if hooks.pre or hooks.guards:
        return True
    cached = _REFUSING.get(registry)
    if cached is None or cached[0] != registry.version:
        refusing = any(registry.get(spec.name).refuses for spec in registry.specs())
        cached = _REFUSING[registry] = (registry.version, refusing)
    return cached[1]


async def open_ledger(registry: ToolRegistry, script: str, *, tools: Mapping[str, str],
                      arguments: Mapping[str, Mapping[str, str]], token: Token,
                      agent: str | None, call_id: str, journal: Journal | None,
                      resume: bool | None, policy: bool | None,
                      approve: Approve | None,
                      labels: Mapping[str, str] | None = None) -> RunLedger | RunResult:
    """The ledger of a run about to start, or the result refusing it (a call policy denies,
    an approval refused). ``resume=None`` resumes when the journal's last run failed;
    ``policy=None`` runs the policy pass when the registry has policy to consult.
    ``labels``: what the run starts out carrying (a session's state was derived from them)."""
    request: ApprovalRequest | None = None
    approved: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    if approve is not None or (consults(registry) if policy is None else policy):
        try:
            tree: ast.Module | None = parse_tree(script)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            from codemode.mode.approval import review

            calls, unresolved = static_calls(tree, tools=tools, arguments=arguments)
            verdict = await review(registry, script, calls, unresolved, approve=approve,
                                   parent=token, agent=agent, call_id=call_id, tree=tree,
                                   labels=labels)
            if verdict.problem is not None:
                return RunResult(approval=verdict.request, error=ScriptError(
                    type="PreflightError",
                    message=f"the script was not run:\n{verdict.problem}",
                    line=verdict.problem.line, column=verdict.problem.column))
            request, approved = verdict.request, verdict.approved
    started: Resume | None = None
    if journal is not None:
        from codemode.mode.journal import registry_digest, spec_digest

        digests = {}
        for wire in tools.values():
            if wire in registry:
                digests[wire] = spec_digest(registry.get(wire))
        replay = resume if resume is not None else journal.failed is not False
        started = journal.begin(registry_digest(digests), resume=replay)
    return RunLedger(registry, resume=started, approved=approved, script=script, tools=tools,
                     approval=request, labels=labels)

_NOTHING_READ = frozenset({"denied", "invalid_arguments", "unknown_tool"})
"""Error kinds where no handler ran, so the script read nothing from the tool."""


@final
class RunLedger:
    """Journal, labels and approvals of one run (host side)."""

    def __init__(self, registry: ToolRegistry, *, resume: Resume | None = None,
                 approved: Iterable[tuple[str, str, tuple[str, ...]]] = (), script: str = "",
                 tools: Mapping[str, str] | None = None,
                 approval: ApprovalRequest | None = None,
                 labels: Mapping[str, str] | None = None) -> None:
        self.registry = registry
        self.resume = resume
        self.approved = Counter(approved)
        self.approval = approval
        self.trail = LabelTrail(labels)
        self._script = script
        self._tools = tools or {}
        self._lines: Mapping[str, tuple[int, ...]] | None = None
        self._digests: dict[str, tuple[Tool, str]] = {}

    def finish(self, result: ScriptResult | None, *,
               attachments: tuple[Any, ...] | None = None) -> RunResult | None:
        """The run ended (``None``: it raised or was cancelled); frees the journal.
        ``attachments`` replace the result's."""
        if self.resume is not None:
            self.resume.finish(failed=result is None or result.error is not None)
            replayed = tuple(self.resume.replayed)
            self.resume = None
        else:
            replayed = ()
        if result is None:
            return None
        return RunResult.of(result, replayed=replayed, labels=self.trail.carried,
                            approval=self.approval,
                            attachments=result.attachments if attachments is None
                            else attachments)

    async def execute(self, call: ToolCall, extras: CallExtras | None = None) -> ToolResult:
        """Run ``call`` through the registry (or the journal); see the module docstring.
        ``extras``: the call's session, signal, deadline … (``pipeline.dispatch_with``)."""
        tool = self.registry.lookup(call.name)
        if tool is None or (self.resume is None and not self.approved
                            and not self.trail and not tool.labels):
            result = await self._dispatch(call, extras)
            if result.meta is not None and "labels" in result.meta:
                self._read_carried(call, result)
            return result
        text = ""
        if self.resume is not None or self.approved:
            from codemode.mode.journal import canonical

            text = canonical(call.arguments)
        approved = False
        if self.approved:
            # approved as policy saw it: with the labels the run carries now, or asked again
            key = (call.name, text, tuple(sorted(self.trail.carried)))
            approved = self.approved[key] > 0
            if approved:
                self.approved[key] -= 1
        carried = self.trail.carried if self.trail else None
        if approved or carried:
            call = replace(call, approved=approved, labels=carried or {})
        if self.resume is None:
            result = await self._dispatch(call, extras)
        else:
            result = await self._journaled(tool, call, text, extras)
        error = result.error
        if (tool.labels and not tool.labels <= self.trail.carried.keys()
                and (error is None or error.kind not in _NOTHING_READ)):
            self.trail.read(tool.labels, self._where(call.name))
        if result.meta is not None and "labels" in result.meta:
            self._read_carried(call, result)
        return result

    def _read_carried(self, call: ToolCall, result: ToolResult) -> None:
        """Labels a result carries beyond its tool's own (``meta["labels"]``, label ->
        where from: a background task's, a nested run's): only ever added to the run."""
        carried = result.meta["labels"] if result.meta is not None else None
        if result.error is not None and result.error.kind in _NOTHING_READ:
            return
        if isinstance(carried, dict):  # a FrozenDict of label -> where from
            for label, source in carried.items():
                if isinstance(label, str):
                    self.trail.read((label,), f"{self._where(call.name)} ({source})")

    def _dispatch(self, call: ToolCall, extras: CallExtras | None) -> Awaitable[ToolResult]:
        if extras is None:
            return self.registry.execute(call)
        return dispatch_with(self.registry, call, extras)

    async def _journaled(self, tool: Tool, call: ToolCall, text: str,
                         extras: CallExtras | None) -> ToolResult:
        assert self.resume is not None
        cached = self._digests.get(call.name)
        if cached is None or cached[0] is not tool:
            from codemode.mode.journal import spec_digest

            cached = self._digests[call.name] = (tool, spec_digest(tool))
        digest = cached[1]
        seq, group, entry = await self.resume.start(call.name, digest, text,
                                              tool.replay == "always_live")
        if entry is not None:
            result = entry.result(call.call_id)
            self._announce(call, result)
            self.resume.done(seq, group, call.name, digest, text, result, live=False)
            return result
        try:
            result = await self._dispatch(call, extras)
        except BaseException:
            self.resume.done_cancelled()
            raise
        self.resume.done(seq, group, call.name, digest, text, result, live=True)
        return result

    def _announce(self, call: ToolCall, result: ToolResult) -> None:
        subscribers = tuple(self.registry.hooks.subscribers)
        if not subscribers:
            return
        common: dict[str, Any] = {
            "call_id": call.call_id, "name": call.name, "token": "journal",
            "parent": None if call.parent is None else str(call.parent),
            "agent": call.agent, "replayed": True}
        events = (ToolEvent(type="tool/call", time=now(), arguments=call.arguments, **common),
                  ToolEvent(type="tool/result", time=now(), is_error=result.is_error,
                            duration=0.0, **common))
        for event in events:
            for subscriber in subscribers:
                subscriber(event)

    def _where(self, tool: str) -> str:
        if self._lines is None:
            try:
                self._lines = call_lines(parse_tree(self._script), self._tools)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._lines = {}
        lines = self._lines.get(tool, ())
        if len(lines) == 1:
            return f"{tool} at line {lines[0]}"
        if lines:
            return f"{tool} (called at lines {', '.join(map(str, lines))})"
        return tool

    @property
    def labels(self) -> Mapping[str, str]:
        """Label → where the run first read it."""
        return self.trail.carried

