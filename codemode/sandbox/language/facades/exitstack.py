"""``contextlib.ExitStack`` and ``AsyncExitStack`` for scripts: several contexts and
callbacks entered one by one, unwound in reverse as CPython's stacks do (an exit that
answers true swallows the error, one that raises hands its error on to the next).

Entering a context calls its ``__enter__``/``__aenter__`` as ``with`` does, so a stack
reaches nothing a ``with`` statement does not. The host's own stops (a tripped limit, a
cancellation, ``GeneratorExit``) are not the script's to hold or swallow: every exit and
callback still runs, each sees a ``RuntimeError`` in the stop's place, and the stop goes
on whatever they answer or raise. No exit gets a traceback (its frames hold the host's
globals).
"""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.guards import ScriptMeta, SelfGuarded, refuse
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import CURRENT_RUN, current_run, tracked

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["AsyncExitStack", "ExitStack"]

MAX_EXITS: Final = 10_000
"""Exits and callbacks one stack holds (each pushed by a script call)."""

_Exit = tuple[bool, "Callable[..., Any]"]
"""(whether it is a plain function, the exit called with the error's kind and value)."""


def _protocol(cm: Any, enter: str, exit_: str, what: str) -> tuple[Any, Any]:
    """``cm``'s class's ``enter`` and ``exit_`` methods, looked up as ``with`` does."""
    cls = type(cm)
    try:
        return getattr(cls, enter), getattr(cls, exit_)
    except AttributeError:
        raise TypeError(f"'{cls.__module__}.{cls.__qualname__}' object does not support the "
                        f"{what} protocol") from None


def _unentered_exit(exit_: Any, name: str, push: str, enter: str) -> Any:
    """The ``name`` method of ``exit_``'s class, called without its enter: a script
    class's, or a stack's. A facade's context (``asyncio.timeout()``, a task group …) is
    only ever exited after its enter, as ``with`` does: its host code never runs in a
    state it was not written for."""
    cls = type(exit_)
    method = getattr(cls, name, None)
    if method is None or isinstance(cls, ScriptMeta) or isinstance(exit_, _Stack):
        return method
    raise TypeError(f"{push}() takes a script's own context or exit function in the "
                    f"sandbox; enter {exit_!r} with {enter}() instead")


class _Stack(SelfGuarded):
    """What both stacks share: the exits, the run they belong to, their pushes."""

    __slots__ = ("_exits", "_meter")

    _NAMES: frozenset[str] = frozenset({"enter_context", "push", "callback", "pop_all"})

    def __init__(self) -> None:
        self._exits: list[_Exit] = []
        self._meter = current_run().meter

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self._exits)}>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in self._NAMES:
            raise refuse(self, name)
        method = getattr(self, name)
        # a coroutine the script drops is the run's to report, never a host warning
        return tracked(method) if inspect.iscoroutinefunction(method) else method

    def _check(self) -> None:
        run = CURRENT_RUN.get(None)
        if run is None or run.meter is not self._meter or self._meter.ended:
            raise TypeError(f"script code cannot run after the script ended ({self!r})")

    def _room(self) -> None:
        """Refuse before a context is entered, not after: entered with no room for its
        exit, it would never be exited (a timeout left armed, a lock left held)."""
        self._check()
        if len(self._exits) >= MAX_EXITS:
            raise ValueError(f"an exit stack holds at most {MAX_EXITS} exits in the sandbox")

    def _push(self, plain: bool, exit_: Callable[..., Any]) -> None:
        self._room()
        self._exits.append((plain, exit_))

    def enter_context(self, cm: Any) -> Any:
        """Enter ``cm`` as ``with`` does; its ``__exit__`` joins the stack."""
        enter, exit_ = _protocol(cm, "__enter__", "__exit__", "context manager")
        self._room()
        entered = enter(cm)
        self._push(True, functools.partial(exit_, cm))
        return entered

    def push(self, exit_: Any) -> Any:
        """A context's ``__exit__`` (not entered here), or a function called as one."""
        method = _unentered_exit(exit_, "__exit__", "push", "enter_context")
        self._push(True, exit_ if method is None else functools.partial(method, exit_))
        return exit_

    def callback(self, callback: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``callback(*args, **kwargs)`` at the unwinding, whatever the error."""
        def call(kind: Any, error: Any, traceback: Any) -> None:
            callback(*args, **kwargs)
        self._push(True, call)
        return callback

    def pop_all(self) -> Any:
        """A new stack with these exits; this one is left empty."""
        self._check()
        moved = type(self)()
        moved._exits, self._exits = self._exits, []
        return moved

    def _pop(self) -> _Exit | None:
        return self._exits.pop() if self._exits else None


_CHAIN_WALK: Final = 1000
"""Contexts followed back to find where a new error's chain meets the block's."""

_CHAIN_UNIT: Final = 8
"""Contexts followed for one charged operation: an exit re-raising one error whose chain
the script made long (no exception being handled: ``close()``) cost a 1,000-step walk of
host code for one call, ten million for a stack of 10,000 such exits."""


def _stand_in(stop: BaseException) -> RuntimeError:
    return RuntimeError(f"the with block was stopped ({type(stop).__name__})")


@final
class _Unwinding:
    """One unwinding's state, as CPython's ``__exit__`` keeps it in locals; a host stop
    (the block's, or one raised by an exit) is held apart from what the exits see."""

    __slots__ = ("block_error", "error", "pending", "received", "stop", "stop_raised",
                 "suppressed")

    def __init__(self, error: Any) -> None:
        self.received = error is not None
        self.stop: BaseException | None = None
        self.stop_raised = False
        self.block_error: BaseException | None = None
        if error is not None and not isinstance(error, Exception):
            self.stop, error = error, _stand_in(error)
        else:
            self.block_error = error
        self.error: BaseException | None = error
        self.suppressed = False
        self.pending = False

    def details(self) -> tuple[Any, Any, None]:
        return (None if self.error is None else type(self.error)), self.error, None

    def answered(self, suppress: Any) -> None:
        if suppress and self.stop is None:
            self.suppressed, self.pending, self.error = True, False, None

    def raised(self, error: BaseException) -> None:
        if self.stop is not None:
            return  # the stop goes on; what an exit raised meanwhile is dropped
        if not isinstance(error, Exception):  # a stop while unwinding
            self.stop, self.stop_raised, self.error = error, True, _stand_in(error)
            return
        steps = self._chain(error)
        self.pending, self.error = True, error
        try:
            charge_operations(steps // _CHAIN_UNIT)
        except BaseException as stop:  # the operations limit: a stop as any other
            self.raised(stop)

    def _chain(self, error: BaseException) -> int:
        """CPython's ``_fix_exception_context``: the new error's context is the one it
        replaced, not the block's. Answers the contexts followed."""
        old = self.error
        for step in range(_CHAIN_WALK):
            context = error.__context__
            if context is None or context is old:
                return step
            if context is self.block_error:
                break
            error = context
        else:
            step = _CHAIN_WALK
        error.__context__ = old
        return step

    def outcome(self) -> bool:
        if self.stop is not None:
            if self.stop_raised:
                raise self.stop
            return False  # the block's own stop goes on
        if self.pending:
            assert self.error is not None
            context = self.error.__context__
            try:
                raise self.error
            except BaseException:
                self.error.__context__ = context
                raise
        return self.received and self.suppressed


@final
class ExitStack(_Stack):
    """``with ExitStack() as stack:``: ``stack.enter_context(cm)``, ``stack.callback(f,
    *args)``, ``stack.push(exit)``, ``stack.pop_all()``, ``stack.close()``."""

    __slots__ = ()

    _NAMES = _Stack._NAMES | {"close"}

    def __enter__(self) -> ExitStack:
        self._check()
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        self._check()
        state = _Unwinding(error)
        while (item := self._pop()) is not None:
            try:
                state.answered(item[1](*state.details()))
            except BaseException as raised:  # the next exit sees it, as in CPython
                state.raised(raised)
        return state.outcome()

    def close(self) -> None:
        """Unwind now, as the end of the ``with`` block would."""
        self.__exit__(None, None, None)


@final
class AsyncExitStack(_Stack):
    """``async with AsyncExitStack() as stack:``: ExitStack's methods, and
    ``await stack.enter_async_context(cm)``, ``stack.push_async_exit(exit)``,
    ``stack.push_async_callback(f, *args)``, ``await stack.aclose()``."""

    __slots__ = ()

    _NAMES = _Stack._NAMES | {"enter_async_context", "push_async_exit",
                              "push_async_callback", "aclose"}

    async def __aenter__(self) -> AsyncExitStack:
        self._check()
        return self

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        self._check()
        state = _Unwinding(error)
        while (item := self._pop()) is not None:
            plain, exit_ = item
            try:
                answer = exit_(*state.details())
                state.answered(answer if plain else await answer)
            except BaseException as raised:  # the next exit sees it, as in CPython
                state.raised(raised)
        return state.outcome()

    async def enter_async_context(self, cm: Any) -> Any:
        """Enter ``cm`` as ``async with`` does; its ``__aexit__`` joins the stack."""
        enter, exit_ = _protocol(cm, "__aenter__", "__aexit__",
                                 "asynchronous context manager")
        self._room()
        entered = await enter(cm)
        self._push(False, functools.partial(exit_, cm))
        return entered

    def push_async_exit(self, exit_: Any) -> Any:
        """A context's ``__aexit__`` (not entered here), or an async function called as
        one."""
        method = _unentered_exit(exit_, "__aexit__", "push_async_exit",
                                 "enter_async_context")
        self._push(False, exit_ if method is None else functools.partial(method, exit_))
        return exit_

    def push_async_callback(self, callback: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``await callback(*args, **kwargs)`` at the unwinding, whatever the error."""
        async def call(kind: Any, error: Any, traceback: Any) -> None:
            await callback(*args, **kwargs)
        self._push(False, call)
        return callback

    async def aclose(self) -> None:
        """Unwind now, as the end of the ``async with`` block would."""
        await self.__aexit__(None, None, None)
