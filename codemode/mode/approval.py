"""Approve before run: the preflight puts every statically known call through policy.

Before a script runs, each call :func:`~codemode.mode.preflight.static_calls` resolves
(literal or constant arguments, loops over literals) goes through the registry's
``pre_execute`` hooks and guards with ``ctx.dry_run`` set. A ``Deny`` refuses the script,
naming the line, before any side effect; the ``Ask``\\ s become one
:class:`ApprovalRequest` (the code and the calls it will make) for the ``approve``
callback; approved calls then run without asking again. Calls the preflight cannot
resolve still ask at run time.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codemode.dispatch.context import Allow, Ask, Deny, ToolCall
from codemode.dispatch.pipeline import dry_run
from codemode.mode.journal import canonical
from codemode.mode.preflight import Problem

if TYPE_CHECKING:
    from codemode.dispatch.context import Token
    from codemode.dispatch.registry import ToolRegistry
    from codemode.mode.preflight import StaticCall

__all__ = ["ApprovalRequest", "Approve", "PlannedCall", "Review", "review"]


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
    approved: tuple[tuple[str, str], ...] = ()
    """(tool, canonical arguments) of each approved call, once per approval."""
    request: ApprovalRequest | None = None
    """The request shown to ``approve``, when policy asked anything."""


async def review(registry: ToolRegistry, code: str, calls: list[StaticCall], unresolved: int,
                 *, approve: Approve | None, parent: Token, agent: str | None,
                 call_id: str) -> Review:
    """Put ``calls`` through policy in dry mode; ask ``approve`` once for every ``Ask``."""
    planned: list[PlannedCall] = []
    for index, static in enumerate(calls):
        decision = await dry_run(registry, ToolCall(
            call_id=f"{call_id}:preflight:{index + 1}", name=static.tool,
            arguments=static.arguments, parent=parent, agent=agent))
        if isinstance(decision, Deny):
            return Review(problem=Problem(line=static.line, column=1, message=decision.reason))
        prompt = decision.prompt if isinstance(decision, Ask) else None
        planned.append(PlannedCall(line=static.line, tool=static.tool,
                                   arguments=static.arguments, prompt=prompt))
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
        (call.tool, canonical(call.arguments)) for call in request.asks))
