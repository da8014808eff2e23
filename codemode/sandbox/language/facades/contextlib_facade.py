"""``contextlib`` for scripts: ``suppress``, ``contextmanager``, ``asynccontextmanager``,
``nullcontext``, ``closing`` and the exit stacks (:mod:`.exitstack`).

``with suppress(E):`` swallows an ``Exception`` of the given types, as in CPython, but
never one of the host's stops, which are not ``Exception`` (a tripped limit, a
cancellation, ``GeneratorExit``, ``final_answer``): ``suppress(BaseException)`` keeps
catching errors and cannot outlive a timeout. ``@contextmanager`` drives the script's own
generator as CPython's does, ``@asynccontextmanager`` the script's own async generator
(the dialects make a ``@contextmanager`` generator that calls tools one, its ``with``
statements ``async with``); a host stop reaches either as a ``RuntimeError`` it cannot
swallow, as it reaches a script class's ``__exit__``.
"""

from __future__ import annotations

import functools
from types import AsyncGeneratorType, GeneratorType
from typing import TYPE_CHECKING, Any, Final, Literal, final

from codemode.sandbox.language.builtins import shown_type
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.exitstack import AsyncExitStack, ExitStack
from codemode.sandbox.language.guards import SelfGuarded, guarded_getattr
from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.state import CURRENT_RUN, current_run

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FACADE"]

_MAX_KINDS: Final = 64


@final
class Suppress(SelfGuarded):
    """The context manager ``suppress(...)`` returns (no attribute for scripts)."""

    __slots__ = ("_kinds",)

    def __init__(self, kinds: tuple[type[BaseException], ...]) -> None:
        self._kinds = kinds

    def __repr__(self) -> str:
        return f"<suppress {', '.join(kind.__name__ for kind in self._kinds)}>"

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        # Once the run has ended, nothing is swallowed: a generator the run's close reached
        # raises an error in its stop's place wherever host code stands in for a script's
        # exit (``ExitStack``, a ``@contextmanager``, a script class's ``__exit__``), and
        # swallowed here it went on past the close to yield again, suspended for the life
        # of the process with all it referenced (an in-process host grew by every run's).
        run = CURRENT_RUN.get(None)
        if run is None or run.ended:
            return False
        return isinstance(error, Exception) and isinstance(error, self._kinds)


def suppress(*exceptions: Any) -> Suppress:
    """A context manager that swallows the listed exception types (``Exception``s only)."""
    kinds: list[type[BaseException]] = []
    for item in exceptions:
        for kind in item if type(item) is tuple else (item,):
            if not (isinstance(kind, type) and issubclass(kind, BaseException)):
                raise TypeError("contextlib.suppress() takes exception classes, not "
                                f"{type(kind).__name__!r} objects")
            kinds.append(kind)
            if len(kinds) > _MAX_KINDS:
                raise ValueError(f"contextlib.suppress() takes at most {_MAX_KINDS} "
                                 "exception classes")
    return Suppress(tuple(kinds))


class _ScriptContext(SelfGuarded):
    """A context over the script's own generator, usable in its own run only."""

    __slots__ = ("_generator", "_meter")

    def __init__(self, generator: Any) -> None:
        self._generator = generator
        self._meter = current_run().meter

    def _check(self) -> None:
        run = CURRENT_RUN.get(None)
        if run is None or run.meter is not self._meter or self._meter.ended:
            raise TypeError("script code cannot run after the script ended "
                            f"({self!r})")


def _thrown(error: BaseException) -> tuple[bool, BaseException]:
    """(whether ``error`` is the script's own, what to throw in): the host's own stops
    never reach script code, a RuntimeError stands in for them."""
    own = isinstance(error, Exception)
    return own, error if own else RuntimeError(
        f"the with block was stopped ({type(error).__name__})")


def _settle(own: bool, thrown: BaseException, raised: BaseException | None,
            stop: type[BaseException]) -> bool:
    """What ``__exit__`` answers once ``thrown`` was thrown in and the generator raised
    ``raised`` (None: it yielded again); ``stop``: its end (StopIteration or
    StopAsyncIteration)."""
    if raised is None:
        if not own:
            return False
        raise RuntimeError("generator didn't stop after throw()")
    if isinstance(raised, stop):
        return own and raised is not thrown
    if raised is thrown or not own:
        return False
    raise raised


@final
class GeneratorContext(_ScriptContext):
    """What a ``@contextmanager`` function returns: ``with`` runs the generator to its
    ``yield``, then on past it, or throws the block's error in (no attribute for scripts)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<contextmanager>"

    def __enter__(self) -> Any:
        self._check()
        try:
            return next(self._generator)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        self._check()
        if error is None:
            try:
                next(self._generator)
            except StopIteration:
                return False
            raise RuntimeError("generator didn't stop")
        own, thrown = _thrown(error)
        try:
            self._generator.throw(thrown)
        except BaseException as raised:
            return _settle(own, thrown, raised, StopIteration)
        return _settle(own, thrown, None, StopIteration)


def _factory(function: Any, name: str, context: type[_ScriptContext],
             script_generator: Callable[[Any], bool], kind: str) -> Callable[..., Any]:
    """``@<name>`` over ``function``: each call gives a ``context`` over the generator it
    returns, which must be the script's own (``script_generator``): a facade's would run
    host code when the block's error is thrown in."""
    if not callable(function):
        raise TypeError(f"contextlib.{name}() takes a function")

    @functools.wraps(function, assigned=("__name__", "__qualname__", "__doc__"), updated=())
    def helper(*args: Any, **kwargs: Any) -> _ScriptContext:
        generator = function(*args, **kwargs)
        if not script_generator(generator):
            raise TypeError(f"a @{name} function must be {kind} (yield once), "
                            f"not return {type(generator).__name__!r}")
        return context(generator)
    return helper


def contextmanager(function: Callable[..., Any]) -> Callable[..., Any]:
    """``@contextmanager``: ``function`` (a script generator function yielding once) becomes
    a context manager factory."""
    return _factory(function, "contextmanager", GeneratorContext, lambda g: isinstance(
        g, GeneratorType) and g.gi_code.co_filename == SCRIPT_FILENAME, "a generator")


@final
class AsyncGeneratorContext(_ScriptContext):
    """What an ``@asynccontextmanager`` function returns: ``async with`` runs the async
    generator to its ``yield``, then on past it, or throws the block's error in (no
    attribute for scripts)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<asynccontextmanager>"

    async def __aenter__(self) -> Any:
        self._check()
        try:
            return await anext(self._generator)
        except StopAsyncIteration:
            raise RuntimeError("generator didn't yield") from None

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        self._check()
        if error is None:
            try:
                await anext(self._generator)
            except StopAsyncIteration:
                return False
            raise RuntimeError("generator didn't stop")
        own, thrown = _thrown(error)
        try:
            await self._generator.athrow(thrown)
        except BaseException as raised:
            return _settle(own, thrown, raised, StopAsyncIteration)
        return _settle(own, thrown, None, StopAsyncIteration)


def asynccontextmanager(function: Callable[..., Any]) -> Callable[..., Any]:
    """``@asynccontextmanager``: ``function`` (a script async generator function yielding
    once) becomes an async context manager factory."""
    return _factory(function, "asynccontextmanager", AsyncGeneratorContext, lambda g: isinstance(
        g, AsyncGeneratorType) and g.ag_code.co_filename == SCRIPT_FILENAME,
        "an async generator")


class _Holding(SelfGuarded):
    """A context whose ``with`` gives the value it holds."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def __enter__(self) -> Any:
        return self._value


@final
class NullContext(_Holding):
    """``nullcontext(value)``: ``with`` gives ``value`` and does nothing else."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<nullcontext>"

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> Literal[False]:
        return False


def nullcontext(enter_result: Any = None) -> NullContext:
    """A context manager that does nothing (``with nullcontext(x) as y:`` binds ``x``)."""
    return NullContext(enter_result)


@final
class Closing(_Holding):
    """``closing(thing)``: ``with`` gives ``thing`` and calls its ``close()`` at the end,
    read as the script would read it (no attribute for scripts). During a host stop what
    ``close`` raises does not replace the stop."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<closing>"

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> Literal[False]:
        try:
            guarded_getattr(self._value, "close")()
        except Exception:
            if error is None or isinstance(error, Exception):
                raise
        return False


def closing(thing: Any) -> Closing:
    """``with closing(thing) as t:`` calls ``thing.close()`` when the block ends."""
    return Closing(thing)


shown_type(Suppress, "contextlib", "suppress")
shown_type(NullContext, "contextlib", "nullcontext")

FACADE: Final = Facade("contextlib", {"suppress": suppress, "contextmanager": contextmanager,
                                      "asynccontextmanager": asynccontextmanager,
                                      "nullcontext": nullcontext, "closing": closing,
                                      "ExitStack": ExitStack,
                                      "AsyncExitStack": AsyncExitStack})
