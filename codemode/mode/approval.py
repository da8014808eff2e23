"""Approve before run: the preflight puts every statically known call through policy.

Before a script runs, each call :func:`~codemode.mode.preflight.static_calls` resolves
(literal or constant arguments, loops over literals) goes through the registry's
``pre_execute`` hooks and guards with ``ctx.dry_run`` set, and past the labels its tool
refuses. A ``Deny`` refuses the script, naming the line, before any side effect; the
``Ask``\\ s become one :class:`ApprovalRequest` (the code and the calls it will make) for
the ``approve`` callback; approved calls then run without asking again. Calls the
preflight cannot resolve still ask at run time.

Labels in the dry pass: a statically known call of an *earlier* top-level statement has
run, and succeeded, by the time a later statement runs (a failed call raises at the top
level and ends the script), so its tool's labels are carried by every call of the later
statements; calls of one statement (a ``gather``, a loop) add nothing to each other. What
the dry pass carries is therefore a subset of what the run will carry at that call.
"""

from __future__ import annotations

import bisect
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codemode.dispatch.context import Allow, Ask, Deny, ToolCall
from codemode.dispatch.labels import refusal
from codemode.dispatch.pipeline import dry_run, is_cancellation
from codemode.errors import UnknownToolError
from codemode.mode.journal import canonical
from codemode.mode.preflight import Problem

if TYPE_CHECKING:
    import ast

    from codemode.dispatch.context import Token
    from codemode.dispatch.registry import ToolRegistry
    from codemode.mode.preflight import StaticCall

__all__ = ["ApprovalRequest", "Approve", "PlannedCall", "Review", "review"]

_log = logging.getLogger("codemode.mode")

@dataclass(frozen=True, kw_only=True, slots=True)
class PlannedCall:
    """A call the script will make, known before it runs."""

    line: int
    """1-based line in the script."""
    tool: str
    """Wire name of the tool."""
    arguments: Mapping[str, Any]
    """Its arguments (JSON)."""
    prompt: str | None = None
    """What policy asks about it; None when policy allows it outright."""
    labels: tuple[str, ...] = ()
    """The labels the run carries when it makes the call, as far as the preflight knows
    (sorted): policy decided with these, so the approval holds only for them."""

    def __str__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.arguments.items())
        ask = f"  -- {self.prompt}" if self.prompt else ""
        return f"line {self.line}: {self.tool}({args}){ask}"


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequest:
    """One up-front question: may this script make these calls?"""

    code: str
    """The script as submitted."""
    calls: tuple[PlannedCall, ...]
    """Every statically known call, in script order (``prompt`` set on those policy asks
    about)."""
    unresolved: int
    """Call sites the preflight could not resolve: they ask at run time, if policy asks."""

    @property
    def asks(self) -> tuple[PlannedCall, ...]:
        """The calls policy asks about."""
        return tuple(call for call in self.calls if call.prompt is not None)

    def __str__(self) -> str:
        lines = ["Approve this script?", "", *("    " + line for line in self.code.splitlines()),
                 "", "It will make these calls:", *(f"  {call}" for call in self.calls)]
        if self.unresolved:
            lines.append(f"  (and {self.unresolved} call site(s) decided when they run)")
        return "\n".join(lines)


Approve = Callable[[ApprovalRequest], "bool | Awaitable[bool]"]
"""``approve(request) -> bool`` (or awaitable): True approves every asked call at once."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Review:
    """What the preflight's policy pass decided."""

    problem: Problem | None = None
    """Why the script is refused (a denial, or the approval was refused); None to run."""
    approved: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """(tool, canonical arguments, labels) of each approved call, once per approval: a run
    that carries other labels when it makes the call (a call the preflight could not see
    read them) asks again, since policy may ask something else (``ctx.labels``)."""
    request: ApprovalRequest | None = None
    """The request shown to ``approve``, when policy asked anything."""


def _statements(tree: ast.Module | None) -> Callable[[int], int]:
    """line → index of the top-level statement holding it (all 0 without a tree)."""
    if tree is None or not tree.body:
        return lambda line: 0
    starts = [stmt.lineno for stmt in tree.body]
    return lambda line: bisect.bisect_right(starts, line) - 1


async def review(registry: ToolRegistry, code: str, calls: list[StaticCall], unresolved: int,
                 *, approve: Approve | None, parent: Token, agent: str | None,
                 call_id: str, tree: ast.Module | None = None,
                 labels: Mapping[str, str] | None = None) -> Review:
    """Put ``calls`` through policy in dry mode; ask ``approve`` once for every ``Ask``.

    With the script's ``tree``, the labels of calls of earlier top-level statements are
    carried into later ones (``ctx.labels``, and the tools' ``refuses``). A hook that raises
    in the dry pass leaves its call to run time (where it raises again), logged. ``labels``:
    what the run carries before its first call (a session's state was derived from them)."""
    planned: list[PlannedCall] = []
    statement_of = _statements(tree)
    carried: dict[str, str] = dict(labels or {})
    pending: dict[str, str] = {}
    at = -1
    for index, static in enumerate(calls):
        statement = statement_of(static.line) if tree is not None else -1
        if statement != at:
            for label, where in pending.items():
                carried.setdefault(label, where)
            pending, at = {}, statement
        try:
            tool = registry.get(static.tool)
        except UnknownToolError:
            tool = None
        if tool is not None and tool.refuses and carried:
            refused = refusal(tool.name, tool.refuses, carried)
            if refused is not None:
                return Review(problem=Problem(line=static.line, column=1,
                                              message=f"call to {tool.name!r} denied: {refused}"))
        try:
            decision = await dry_run(registry, ToolCall(
                call_id=f"{call_id}:preflight:{index + 1}", name=static.tool,
                arguments=static.arguments, parent=parent, agent=agent,
                labels=dict(carried)))
        except BaseException as exc:  # as the live pipeline: only cancellation propagates
            if is_cancellation(exc):
                raise
            _log.warning("a policy hook raised in the dry pass for %s at line %d; the call "
                         "is decided when it runs", static.tool, static.line, exc_info=True)
            unresolved += 1
            continue
        if isinstance(decision, Deny):
            return Review(problem=Problem(line=static.line, column=1, message=decision.reason))
        if isinstance(decision, Ask) and approve is None and registry.approver is None:
            # nobody could approve it, up front or when it is made: the run would deny it
            return Review(problem=Problem(line=static.line, column=1, message=(
                f"call to {static.tool!r} needs approval ({decision.prompt}) and no "
                "approver is configured")))
        if tool is not None and tree is not None:
            for label in sorted(tool.labels):
                pending.setdefault(label, f"{tool.name} at line {static.line}")
        prompt = decision.prompt if isinstance(decision, Ask) else None
        planned.append(PlannedCall(line=static.line, tool=static.tool,
                                   arguments=static.arguments, prompt=prompt,
                                   labels=tuple(sorted(carried))))
    request = ApprovalRequest(code=code, calls=tuple(planned), unresolved=unresolved)
    if not request.asks or approve is None:
        return Review(request=request if request.asks else None)
    answer: Any = approve(request)
    if inspect.isawaitable(answer):
        answer = await answer
    if not (answer is True or isinstance(answer, Allow)):
        first = request.asks[0]
        reason = answer.reason if isinstance(answer, Deny) else "not approved"
        return Review(request=request, problem=Problem(
            line=first.line, column=1,
            message=f"the calls were not approved ({reason}): {first}"))
    return Review(request=request, approved=tuple(
        (call.tool, canonical(call.arguments), call.labels) for call in request.asks))
