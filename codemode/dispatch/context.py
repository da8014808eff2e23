"""Call identity: the request, the frozen execution context, and policy decisions."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, final

import anyio

from codemode.dispatch.signal import CancelSignal
from codemode.dispatch.task_scope import NO_TASKS, TaskScope

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from codemode.dispatch.agent import AgentSession
    from codemode.dispatch.spec import ToolSpec

__all__ = [
    "Allow",
    "Ask",
    "CancelSignal",
    "Decision",
    "Deny",
    "ExecContext",
    "Token",
    "ToolCall",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    """A request to run one tool, as a caller (model, harness, script) makes it."""

    call_id: str
    """Caller-chosen id, echoed on the result and every event."""
    name: str
    """Wire name of the tool."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """Raw JSON arguments; validated and frozen by the pipeline, never mutated."""
    parent: Token | None = None
    """Token of the call that caused this one (e.g. the ``run_code`` call of a script)."""
    agent: str | None = None
    """Who is calling, for policies and logs."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the calling run carries, each with where it was read (``get_credentials at
    line 3``); a tool that refuses one of them is denied, with that chain in the message."""
    approved: bool = False
    """An up-front approval covers this call: a policy's ``Ask`` is granted without asking
    again (a ``Deny`` still denies)."""


_TOKEN_PREFIX = os.urandom(6).hex()
_token_counter = itertools.count(1)


@final
class Token:
    """Opaque, unique identity of one dispatch; compare and hash it, nothing else."""

    __slots__ = ("_number",)
    _number: int

    def __init__(self) -> None:
        object.__setattr__(self, "_number", next(_token_counter))

    def __str__(self) -> str:
        return f"{_TOKEN_PREFIX}-{self._number}"

    def __repr__(self) -> str:
        return f"Token({self})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Token is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Token is immutable")


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecContext:
    """Immutable identity of one dispatch, shared by every hook and the handler."""

    call_id: str
    """The caller's id for this call."""
    name: str
    """Wire name of the tool."""
    arguments: Mapping[str, Any]
    """Validated arguments: a detached, deep-frozen JSON copy made once."""
    token: Token
    """Opaque unique identity of this dispatch; nested calls name it as ``parent``."""
    parent: Token | None = None
    """Token of the dispatch that caused this one."""
    agent: str | None = None
    """Who is calling."""
    spec: ToolSpec
    """The model-visible spec of the tool being called."""
    signal: CancelSignal | None = None
    """Cancellation signal; the only field (with ``deadline``) wrappers may change."""
    deadline: float | None = None
    """Absolute ``anyio.current_time()`` after which the handler is cancelled."""
    report: Callable[[Any], None] | None = field(default=None, repr=False, compare=False)
    """Internal: where ``progress()`` sends partial results."""
    labels: frozenset[str] = frozenset()
    """Labels the calling run carries (what it has read), for policies."""
    dry_run: bool = False
    """True when the preflight puts a statically known call through policy before the script
    runs: nothing will execute now; a policy must not act, only decide."""
    session: AgentSession | None = field(default=None, repr=False, compare=False)
    """The agent session the call belongs to (``session.inject(...)``); None when the host
    passed none. Nested calls from a script inherit it."""
    tasks: TaskScope = field(default=NO_TASKS, repr=False, compare=False)
    """Background tasks owned by ``session`` (``ctx.tasks.start(kind=, label=, run=)``);
    refuses with ``TaskError`` when the host set up no task runtime."""

    def progress(self, data: Any) -> None:
        """Report a partial result (Pi's ``onUpdate``): a ``tool/update`` event, the
        ``on_update`` of ``registry.execute``, a run's progress; never in the result."""
        if self.report is not None:
            self.report(data)

    def on_update(self, data: Any) -> None:
        """The same as :meth:`progress`, under the name of the tool contract."""
        if self.report is not None:
            self.report(data)

    def with_deadline(self, seconds: float | None) -> ExecContext:
        """A copy whose handler is cancelled ``seconds`` from now (None removes the deadline)."""
        deadline = None if seconds is None else anyio.current_time() + seconds
        return replace(self, deadline=deadline)

    def with_signal(self, signal: CancelSignal | None) -> ExecContext:
        """A copy with ``signal`` attached (None removes it)."""
        return replace(self, signal=signal)


@dataclass(frozen=True, slots=True)
class Allow:
    """A pre_execute decision: no objection to this call."""


@dataclass(frozen=True, slots=True)
class Deny:
    """A pre_execute or guard decision: refuse the call; the reason reaches the model."""

    reason: str = "denied by policy"
    """Shown to the model in the error result."""


@dataclass(frozen=True, slots=True)
class Ask:
    """A pre_execute decision: ask the registry's approver before running the call."""

    prompt: str
    """What the approver is asked."""


Decision = Allow | Deny | Ask | None
