"""``contextlib`` for scripts: ``suppress``, ``contextmanager`` and ``nullcontext``.

``with suppress(E):`` swallows an ``Exception`` of the given types, as in CPython, but
never one of the host's stops, which are not ``Exception`` (a tripped limit, a
cancellation, ``GeneratorExit``, ``final_answer``): ``suppress(BaseException)`` keeps
catching errors and cannot outlive a timeout. ``@contextmanager`` drives the script's own
generator as CPython's does; a host stop reaches it as a ``RuntimeError`` it cannot
swallow, as it reaches a script class's ``__exit__``.
"""

from __future__ import annotations

import functools
from types import GeneratorType
from typing import TYPE_CHECKING, Any, Final, Literal, final

from codemode.sandbox.language.builtins import shown_type
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded
from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.state import CURRENT_RUN, current_run

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

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


@final
class GeneratorContext(SelfGuarded):
    """What a ``@contextmanager`` function returns: ``with`` runs the generator to its
    ``yield``, then on past it, or throws the block's error in (no attribute for scripts)."""

    __slots__ = ("_generator", "_meter")

    def __init__(self, generator: Generator[Any, None, None]) -> None:
        self._generator = generator
        self._meter = current_run().meter

    def __repr__(self) -> str:
        return "<contextmanager>"

    def _check(self) -> None:
        run = CURRENT_RUN.get(None)
        if run is None or run.meter is not self._meter or self._meter.ended:
            raise TypeError("script code cannot run after the script ended (a @contextmanager)")

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
        # The host's own stops never reach script code: a RuntimeError stands in for them.
        own = isinstance(error, Exception)
        thrown = error if own else RuntimeError(
            f"the with block was stopped ({type(error).__name__})")
        try:
            self._generator.throw(thrown)
        except StopIteration as stop:
            return own and stop is not thrown
        except BaseException as raised:
            if raised is thrown or not own:
                return False
            raise
        if not own:
            return False
        raise RuntimeError("generator didn't stop after throw()")


def contextmanager(function: Callable[..., Any]) -> Callable[..., GeneratorContext]:
    """``@contextmanager``: ``function`` (a script generator function yielding once) becomes
    a context manager factory."""
    if not callable(function):
        raise TypeError("contextlib.contextmanager() takes a function")

    @functools.wraps(function, assigned=("__name__", "__qualname__", "__doc__"), updated=())
    def helper(*args: Any, **kwargs: Any) -> GeneratorContext:
        generator = function(*args, **kwargs)
        # The script's own generator only: a facade's would run host code on `throw`.
        if not (isinstance(generator, GeneratorType)
                and generator.gi_code.co_filename == SCRIPT_FILENAME):
            raise TypeError(f"a @contextmanager function must be a generator (yield once), "
                            f"not return {type(generator).__name__!r}")
        return GeneratorContext(generator)
    return helper


@final
class NullContext(SelfGuarded):
    """``nullcontext(value)``: ``with`` gives ``value`` and does nothing else."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def __repr__(self) -> str:
        return "<nullcontext>"

    def __enter__(self) -> Any:
        return self._value

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> Literal[False]:
        return False


def nullcontext(enter_result: Any = None) -> NullContext:
    """A context manager that does nothing (``with nullcontext(x) as y:`` binds ``x``)."""
    return NullContext(enter_result)


shown_type(Suppress, "contextlib", "suppress")
shown_type(NullContext, "contextlib", "nullcontext")

FACADE: Final = Facade("contextlib", {"suppress": suppress, "contextmanager": contextmanager,
                                      "nullcontext": nullcontext})
