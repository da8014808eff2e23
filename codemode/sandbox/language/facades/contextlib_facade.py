"""``contextlib`` for scripts: ``suppress`` only.

``with suppress(E):`` swallows an ``Exception`` of the given types, as in CPython, but
never one of the host's stops, which are not ``Exception`` (a tripped limit, a
cancellation, ``GeneratorExit``, ``final_answer``): ``suppress(BaseException)`` keeps
catching errors and cannot outlive a timeout.
"""

from __future__ import annotations

from typing import Any, Final, final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded

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


FACADE: Final = Facade("contextlib", {"suppress": suppress})
