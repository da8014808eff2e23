"""What the sandbox's number types (``Decimal``, ``Fraction``) share: their operators.

Each type is a sandbox value holding a host number; its operators unwrap the other
operand (a sandbox number, an int, a float or a bool), run the host operation and wrap
the outcome. Built here once so the two facades cannot drift apart.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ARITHMETIC", "HOST_NUMBERS", "BinaryFactory", "CNamed", "host_number", "operand",
           "type_name", "with_operators"]

HOST_NUMBERS: Final[dict[type, Callable[[Any], Any]]] = {}
"""Sandbox number type -> what gives the host number it holds (each facade registers its
own)."""

_OPERAND_TYPES: Final = (int, bool, float)

ARITHMETIC: Final[dict[str, tuple[Callable[[Any, Any], Any], str]]] = {
    "add": (operator.add, "+"), "sub": (operator.sub, "-"), "mul": (operator.mul, "*"),
    "truediv": (operator.truediv, "/"), "floordiv": (operator.floordiv, "//"),
    "mod": (operator.mod, "%"),
}
"""Name of a reflected pair (``__add__``/``__radd__``) -> the operation and its symbol."""

_COMPARISONS: Final = ("eq", "lt", "le", "gt", "ge")


def host_number(value: Any) -> Any:
    """The host number a script number stands for (a sandbox Decimal or Fraction holds
    one); any other value as it is."""
    held = HOST_NUMBERS.get(type(value))
    if held is not None:
        return held(value)
    # An int or float subclass (an ``IntEnum``/``IntFlag`` member): CPython's number types
    # take its plain value, read without the subclass's own methods (the same size).
    if isinstance(value, int) and type(value) not in _OPERAND_TYPES:
        return int.__int__(value)
    if isinstance(value, float) and type(value) is not float:
        return float.__float__(value)
    return value


def operand(value: Any) -> Any:
    """The host operand for a binary operation, or ``NotImplemented`` for another type."""
    held = host_number(value)
    if held is not value or type(value) in _OPERAND_TYPES or type(held) in _OPERAND_TYPES:
        return held
    return NotImplemented


def type_name(kind: type) -> str:
    """The name CPython's operator errors give a type (``'datetime.date'``, ``'str'``)."""
    module = getattr(kind, "__module__", "builtins")
    if module == "builtins" or kind.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
        return kind.__name__
    return f"{module}.{kind.__name__}"


class CNamed(type):
    """Metaclass of a number type standing for a C type: the errors Python itself raises
    (``'<' not supported between instances of 'decimal.Decimal' and 'str'``, ``can only
    concatenate str (not "decimal.Decimal")``) name a type by its C name, which setting
    ``__name__`` (the facade does, with the module) makes ``<module>.<name>``, while a
    script reading ``__name__`` gets the short one, as in CPython."""

    @property
    def __name__(cls) -> str:
        return cls.__qualname__

    @__name__.setter
    def __name__(cls, value: str) -> None:
        cls.__qualname__ = value
        type.__dict__["__name__"].__set__(cls, f"{cls.__module__}.{value}")


class BinaryFactory(Protocol):
    """Builds one operator method of a number type."""

    def __call__(self, func: Callable[[Any, Any], Any], symbol: str, *,
                 reflected: bool = False) -> Callable[..., Any]: ...


_T = TypeVar("_T", bound=type)




def with_operators(binary: BinaryFactory) -> Callable[[_T], _T]:
    """Class decorator: the arithmetic operators (each with its reflected form) and the
    comparisons, built by ``binary``."""
    def install(cls: _T) -> _T:
        for name, (func, symbol) in ARITHMETIC.items():
            setattr(cls, f"__{name}__", binary(func, symbol))
            setattr(cls, f"__r{name}__", binary(func, symbol, reflected=True))
        for name in _COMPARISONS:
            setattr(cls, f"__{name}__", binary(getattr(operator, name), name))
        return cls
    return install
