"""The registry's extension points as one value the pipeline reads.

The registry adds to these lists (``pre_execute``, ``guard``, ``wrap_execute``,
``post_execute``, ``on_result``, ``subscribe``); the pipeline only iterates them.
Keeping them here, not as registry privates, is what lets the pipeline depend on
a small surface instead of on the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, final

from codemode.dispatch.tool import is_async_callable

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemode.dispatch.events import ToolEvent

__all__ = ["Hook", "Hooks", "make_hook"]


@dataclass(frozen=True, slots=True)
class Hook:
    """A registered hook and whether calling it returns an awaitable."""

    fn: Callable[..., Any]
    """The hook as registered."""
    is_async: bool
    """Whether ``fn`` is an ``async def`` (checked once, at registration)."""


def make_hook(fn: Callable[..., Any]) -> Hook:
    """Wrap ``fn`` as a :class:`Hook`; a non-callable is refused when registered, not called."""
    if not callable(fn):
        raise TypeError(f"hook must be callable, got {type(fn).__name__}")
    return Hook(fn, is_async_callable(fn))


@final
@dataclass(slots=True)
class Hooks:
    """Every hook of one registry, each list in the order its hooks were added."""

    pre: list[Hook] = field(default_factory=list)
    """Policy hooks: ``fn(ctx) -> None | Allow | Deny | Ask``."""
    guards: list[Hook] = field(default_factory=list)
    """Final guards: ``fn(ctx) -> None | Deny``."""
    wrappers: list[Hook] = field(default_factory=list)
    """Around-handler wrappers, outermost first."""
    post: list[Hook] = field(default_factory=list)
    """Content rewriters run after the result is normalised."""
    observers: list[Hook] = field(default_factory=list)
    """Observers of every final result."""
    subscribers: list[Callable[[ToolEvent], Any]] = field(default_factory=list)
    """Receivers of every ``tool/*`` event (sync, fast)."""
