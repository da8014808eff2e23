"""The tool registry: names → tools, hooks, subscribers; ``execute`` runs the pipeline."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar, final

from codemode.dispatch.gate import ExecutionGate
from codemode.dispatch.hooks import Hooks, make_hook
from codemode.dispatch.pipeline import dispatch
from codemode.dispatch.tool import Tool
from codemode.errors import DuplicateToolError, ToolDefinitionError, UnknownToolError

if TYPE_CHECKING:
    from types import TracebackType

    from codemode.dispatch.agent import AgentSession
    from codemode.dispatch.content import ToolResult
    from codemode.dispatch.context import CancelSignal, ExecContext, ToolCall
    from codemode.dispatch.events import ToolEvent
    from codemode.dispatch.spec import ToolSpec
    from codemode.dispatch.tasks import TaskManager

__all__ = ["DuplicatePolicy", "Registration", "ToolRegistry"]

DuplicatePolicy = Literal["error", "replace"]
F = TypeVar("F", bound=Callable[..., Any])
Approver = Callable[["ExecContext", str], "bool | Awaitable[bool]"]


@final
class Registration:
    """Handle returned by ``register``; ``dispose()`` unregisters the tool (idempotent)."""

    __slots__ = ("_disposed", "_registry", "tool")

    def __init__(self, registry: ToolRegistry, tool: Tool) -> None:
        self._registry = registry
        self.tool = tool
        self._disposed = False

    @property
    def active(self) -> bool:
        """Whether this registration still provides its tool."""
        return not self._disposed and self._registry._owners.get(self.tool.name) is self

    def dispose(self) -> None:
        """Unregister the tool, unless it was already replaced by a newer registration."""
        if self._disposed:
            return
        self._disposed = True
        if self._registry._owners.get(self.tool.name) is self:
            del self._registry._tools[self.tool.name]
            del self._registry._owners[self.tool.name]
            self._registry._changed()

    def __enter__(self) -> Registration:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.dispose()

    def __repr__(self) -> str:
        state = "active" if self.active else "disposed"
        return f"<Registration {self.tool.name!r} {state}>"


@final
class ToolRegistry:
    """Tools by wire name plus the pipeline's hooks; the one place calls are dispatched."""

    def __init__(
        self, *, duplicates: DuplicatePolicy = "error", approver: Approver | None = None
    ) -> None:
        if duplicates not in ("error", "replace"):
            raise ValueError(f"duplicates must be 'error' or 'replace', got {duplicates!r}")
        self.duplicates: DuplicatePolicy = duplicates
        self.approver = approver
        self._tools: dict[str, Tool] = {}
        self._owners: dict[str, Registration] = {}
        self.hooks = Hooks()
        """What the pipeline runs around every call; add to it through the methods below."""
        self.gate = ExecutionGate()
        """Orders sequential and parallel tools (``execution_mode``) across all calls."""
        self.version = 0
        """Incremented on every register/dispose, so caches can tell the tool set changed."""
        self.tasks: TaskManager | None = None
        """The control plane for background tasks (``ctx.tasks``); a running
        ``TaskManager`` the host sets, or None (tools that start tasks are refused)."""

    def _changed(self) -> None:
        self.version += 1

    def register(self, tool: Tool, *, replace: bool | None = None) -> Registration:
        """Add ``tool``; a duplicate name raises unless ``replace`` (or the policy) allows it."""
        if not isinstance(tool, Tool):
            raise ToolDefinitionError(
                getattr(tool, "name", repr(tool)),
                "register() takes a Tool made by define_tool() or @tool",
            )
        allow_replace = self.duplicates == "replace" if replace is None else replace
        if tool.name in self._tools and not allow_replace:
            raise DuplicateToolError(tool.name)
        registration = Registration(self, tool)
        self._tools[tool.name] = tool
        self._owners[tool.name] = registration
        self._changed()
        return registration

    def get(self, name: str) -> Tool:
        """The tool called ``name``; ``UnknownToolError`` lists close matches otherwise."""
        tool = self._tools.get(name)
        if tool is None:
            import difflib  # the error path only

            raise UnknownToolError(name, difflib.get_close_matches(name, list(self._tools), n=3))
        return tool

    def lookup(self, name: str) -> Tool | None:
        """The tool called ``name``, or None (no close matches looked up)."""
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Model-visible specs, in registration order; never handlers."""
        return tuple(tool.spec for tool in self._tools.values())

    def pre_execute(self, fn: F) -> F:
        """Add a policy hook ``fn(ctx) -> None | Allow() | Deny(reason) | Ask(prompt)``."""
        self.hooks.pre.append(make_hook(fn))
        return fn

    def guard(self, fn: F) -> F:
        """Add a final guard ``fn(ctx) -> None | Deny(reason)``: it only denies; denial is final."""
        self.hooks.guards.append(make_hook(fn))
        return fn

    def wrap_execute(self, fn: F) -> F:
        """Add an around-handler wrapper ``async fn(ctx, call_next) -> value``.

        ``call_next(ctx)`` runs the rest of the chain; the wrapper may only pass
        a context whose signal or deadline differ (``ctx.with_deadline``,
        ``ctx.with_signal``). The first wrapper added is the outermost.
        """
        self.hooks.wrappers.append(make_hook(fn))
        return fn

    def post_execute(self, fn: F) -> F:
        """Add ``fn(ctx, result) -> None | ToolResult | str | blocks``: rewrites visible content."""
        self.hooks.post.append(make_hook(fn))
        return fn

    def on_result(self, fn: F) -> F:
        """Add an observer ``fn(result)`` that sees every final, immutable result."""
        self.hooks.observers.append(make_hook(fn))
        return fn

    def subscribe(self, fn: Callable[[ToolEvent], Any]) -> Callable[[], None]:
        """Deliver every ``tool/*`` event to ``fn`` (sync, fast); returns an unsubscribe."""
        self.hooks.subscribers.append(fn)

        def unsubscribe() -> None:
            if fn in self.hooks.subscribers:
                self.hooks.subscribers.remove(fn)

        return unsubscribe

    async def execute(
        self,
        call: ToolCall,
        *,
        session: AgentSession | None = None,
        signal: CancelSignal | None = None,
        deadline: float | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> ToolResult:
        """Dispatch ``call`` through the full pipeline; domain failures come back ``is_error``.

        ``session`` (the calling agent), ``signal`` and ``deadline`` (absolute
        ``anyio.current_time()``) reach the handler's ``ctx``; ``on_update`` (sync, must
        not block) gets each partial result the handler reports.
        """
        if session is None and signal is None and deadline is None and on_update is None:
            return await dispatch(self, call)
        return await dispatch(self, call, session=session, signal=signal, deadline=deadline,
                              on_update=on_update)
