"""``typing`` for scripts: the names models import for annotations, as inert placeholders.

The policy drops every annotation unevaluated, so ``from typing import List`` only has
to succeed and ``List[dict]`` (a type alias, a ``cast``) only has to evaluate. Each name
is a :class:`Placeholder`: subscriptable, combinable with ``|``, shown as
``typing.Name``, and nothing else (no attributes, no ``__dict__``, no real typing
object). ``List``, ``Dict``, ``Set``, ``FrozenSet``, ``Tuple`` and ``Type`` also answer
``isinstance`` like the builtin they stand for, as in Python. Not offered: the names
that only work as a class's base (``Generic``, ``Protocol``, ``TypedDict``,
``NamedTuple``): script classes may subclass only ``object``, exceptions and their own.
"""

from __future__ import annotations

from typing import Any, Final, final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded

__all__ = ["FACADE", "Placeholder"]

_MAX_NAME: Final = 100


@final
class Placeholder(SelfGuarded):
    """A typing name: ``X[...]`` and ``X | Y`` give placeholders; ``isinstance`` works
    only for an unsubscripted alias of a builtin type (``origin``)."""

    __slots__ = ("_name", "_origin")

    def __init__(self, name: str, origin: type | None = None) -> None:
        self._name = name
        self._origin = origin

    def __repr__(self) -> str:
        return self._name if self._name.startswith("~") else f"typing.{self._name}"

    def __getitem__(self, params: Any) -> Placeholder:
        # The parameters are not rendered: their text could be as big as the script likes.
        return Placeholder(f"{self._name.lstrip('~')}[...]")

    def __or__(self, other: Any) -> Placeholder:
        return Placeholder("Union[...]")

    __ror__ = __or__

    def __instancecheck__(self, obj: Any) -> bool:
        if self._origin is None:
            raise TypeError(f"{self!r} cannot be used with isinstance() in the sandbox: "
                            "check against a builtin type such as list or dict")
        return isinstance(obj, self._origin)


_ALIASES: Final[dict[str, type]] = {
    "List": list, "Dict": dict, "Set": set, "FrozenSet": frozenset, "Tuple": tuple,
    "Type": type,
}
"""Aliases of builtin types: ``isinstance(x, List)`` is ``isinstance(x, list)``."""

_NAMES: Final = (
    "Any", "Optional", "Union", "Callable", "Iterable", "Iterator", "Sequence", "Mapping",
    "MutableMapping", "Literal", "Awaitable", "Coroutine", "AsyncIterator", "AsyncIterable",
    "Generator", "AsyncGenerator", "ClassVar", "Final", "Annotated", "NoReturn",
)
"""The other placeholders (special forms and abstract collections)."""


def cast(typ: Any, val: Any) -> Any:
    """``val`` itself: a cast only informs a type checker."""
    return val


def TypeVar(name: str, *constraints: Any, **options: Any) -> Placeholder:
    """A placeholder named ``~name`` (constraints and ``bound=`` are not checked)."""
    if not isinstance(name, str):
        raise TypeError("TypeVar name must be a string")
    if len(name) > _MAX_NAME:
        raise ValueError(f"TypeVar names are at most {_MAX_NAME} characters in the sandbox")
    return Placeholder(f"~{name}")


FACADE: Final = Facade("typing", {
    **{name: Placeholder(name, origin) for name, origin in _ALIASES.items()},
    **{name: Placeholder(name) for name in _NAMES},
    "TYPE_CHECKING": False,
    "TypeVar": TypeVar,
    "cast": cast,
})
