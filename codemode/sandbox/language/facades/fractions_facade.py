"""``fractions`` for scripts: ``Fraction``, exact ratios of bounded ints.

A script's ``Fraction`` is a sandbox value holding a real ``fractions.Fraction`` (pure
Python stdlib code: every operation is big-int products and a ``gcd`` without ticks). Its
numerator and denominator stay under ``MAX_BITS`` (~4,900 digits, about what ``str`` of an
int may print): at that size an operation is well under 10 ms and ``limit_denominator``
~45 ms, while at the general int cap (131,000 bits) one ``%`` took 0.25 s and
``limit_denominator`` 2 s. Results past it, a power or ``round`` that would pass it, and
text such as ``'1e999999999'`` trip the memory limit before the arithmetic runs.
"""

from __future__ import annotations

import fractions
import operator
import re
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.decimal_facade import Decimal, exact_digits, script_number
from codemode.sandbox.language.facades.number_ops import (
    HOST_NUMBERS,
    host_number,
    operand,
    with_operators,
)
from codemode.sandbox.language.guards import ATTRIBUTES, SelfGuarded, refuse
from codemode.sandbox.language.sizes import (
    RENDER_SIZERS,
    charge_operations,
    ensure_size,
    spec_number,
)
from codemode.sandbox.language.state import current_run

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FACADE", "MAX_BITS", "Fraction"]

MAX_BITS: Final = 1 << 14
"""Largest numerator or denominator (bits) of a script's Fraction."""

_MAX_DIGITS: Final = MAX_BITS * 3 // 10
_REAL: Final = fractions.Fraction
_EXPONENT: Final = re.compile(r"[eE]\s*([-+]?[\d_]+)")
_SPEC_NUMBERS: Final = re.compile(r"\d+")
_SPEC_PRECISION: Final = re.compile(r"\.(\d+)")
_MAX_TEXT: Final = 10_000


def _too_big(what: str, bits: int) -> None:
    current_run().too_big(f"{what} (numerator and denominator of at most {MAX_BITS} bits "
                          "in the sandbox)", bits // 8)


def _checked(value: Any) -> Any:
    """``value`` as a script sees it: a host Fraction wrapped, its size checked."""
    if type(value) is _REAL:
        bits = max(value.numerator.bit_length(), value.denominator.bit_length())
        if bits > MAX_BITS:
            _too_big(f"a Fraction of {bits} bits", bits)
        made = object.__new__(Fraction)
        made._value = value
        return made
    return script_number(value)


def _binary(func: Callable[[Any, Any], Any], symbol: str, *,
            reflected: bool = False) -> Callable[..., Any]:
    def method(self: Fraction, other: Any) -> Any:
        theirs = operand(other)
        if theirs is NotImplemented:
            return NotImplemented
        return _checked(func(theirs, self._value) if reflected else func(self._value, theirs))
    return method


def _power_ok(base: Any, exponent: Any) -> None:
    """Trip the memory limit before ``base ** exponent`` builds a huge exact ratio."""
    if type(exponent) is _REAL and exponent.denominator == 1:
        exponent = exponent.numerator
    if type(exponent) is not int or type(base) not in (_REAL, int, bool):
        return
    parts = (base.numerator, base.denominator) if type(base) is _REAL else (int(base),)
    bits = max(max(abs(p).bit_length() - 1, 0) for p in parts) * abs(exponent)
    if bits > MAX_BITS:
        _too_big("a Fraction raised to a power", bits)


def _convert(value: Any) -> Any:
    """A host value ``Fraction(value)`` may take, its size checked first."""
    if type(value) is str:
        if len(value) > _MAX_TEXT:
            current_run().too_big(f"Fraction() of {len(value)} characters", len(value))
        found = _EXPONENT.search(value)
        if found and spec_number(found.group(1).replace("_", "").lstrip("+-")) > _MAX_DIGITS:
            _too_big(f"Fraction({value[:40]!r})", 4 * len(found.group(1)))
        return value
    held = host_number(value)
    if type(value) is Decimal:  # as long as its exponent
        digits = exact_digits(held)
        if digits > _MAX_DIGITS:
            _too_big(f"a Fraction of a Decimal of {digits} digits", 4 * digits)
    return held


@final
@with_operators(_binary)
class Fraction(SelfGuarded):
    """``fractions.Fraction(numerator=0, denominator=None)``."""

    __slots__ = ("_value",)

    def __init__(self, numerator: Any = 0, denominator: Any = None) -> None:
        first = _convert(numerator)
        real = _REAL(first) if denominator is None else _REAL(first, _convert(denominator))
        self._value: fractions.Fraction = _checked(real)._value

    @classmethod
    def from_float(cls, value: Any) -> Any:
        """``Fraction.from_float(0.1)``: the float's exact value."""
        if not isinstance(value, int | float):
            raise TypeError(f"{cls.__name__}.from_float() only takes floats, not "
                            f"{type(value).__name__!r}")
        return _checked(_REAL.from_float(host_number(value)))

    @classmethod
    def from_decimal(cls, value: Any) -> Any:
        """``Fraction.from_decimal(Decimal('1.1'))``: the Decimal's exact value."""
        if type(value) is not Decimal and not isinstance(value, int):
            raise TypeError(f"{cls.__name__}.from_decimal() only takes Decimals, not "
                            f"{type(value).__name__!r}")
        return _checked(_REAL.from_decimal(_convert(value)))

    def held(self) -> fractions.Fraction:
        """The host Fraction (for the facades; scripts read no such attribute)."""
        return self._value

    def __divmod__(self, other: Any) -> Any:
        theirs = operand(other)
        if theirs is NotImplemented:
            return NotImplemented
        quotient, rest = divmod(self._value, theirs)
        return quotient, _checked(rest)

    def __rdivmod__(self, other: Any) -> Any:
        theirs = operand(other)
        if theirs is NotImplemented:
            return NotImplemented
        quotient, rest = divmod(theirs, self._value)
        return quotient, _checked(rest)

    def __pow__(self, other: Any) -> Any:
        theirs = operand(other)
        if theirs is NotImplemented:
            return NotImplemented
        _power_ok(self._value, theirs)
        return _checked(self._value ** theirs)

    def __rpow__(self, other: Any) -> Any:
        theirs = operand(other)
        if theirs is NotImplemented:
            return NotImplemented
        _power_ok(theirs, self._value)
        return _checked(theirs ** self._value)

    def __neg__(self) -> Any:
        return _checked(-self._value)

    def __pos__(self) -> Any:
        return _checked(+self._value)

    def __abs__(self) -> Any:
        return _checked(abs(self._value))

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __trunc__(self) -> int:
        return self._value.__trunc__()

    def __floor__(self) -> int:
        return self._value.__floor__()

    def __ceil__(self) -> int:
        return self._value.__ceil__()

    def __round__(self, ndigits: Any = None) -> Any:
        if ndigits is None:
            return round(self._value)
        # an int, read as C reads it: the stdlib's round computes ``10**abs(ndigits)``, so
        # an IntEnum member or a script object whose ``__abs__`` answers 10**7 made that one
        # C call of seconds (CPython's round fails for any other type soon after)
        digits = operator.index(ndigits)
        if abs(digits) > _MAX_DIGITS:
            _too_big(f"round() to {digits} digits", abs(digits) * 4)
        return _checked(round(self._value, digits))

    def __str__(self) -> str:
        return str(self._value)

    def __repr__(self) -> str:
        return repr(self._value)

    def __format__(self, spec: str) -> str:
        if type(spec) is not str:
            raise TypeError("format spec must be a str")
        size = len(spec) + sum(spec_number(n) for n in _SPEC_NUMBERS.findall(spec))
        ensure_size(2 * size, "formatting a Fraction")
        found = _SPEC_PRECISION.search(spec)
        if found and spec_number(found.group(1)) > _MAX_DIGITS:
            # 3.12+ builds the int of 10**precision times the ratio first (one C call of
            # 2 s at a precision of 1,000,000), then refuses to print past 4,300 digits
            _too_big(f"formatting a Fraction to {found.group(1)} digits", 4 * len(spec))
        return format(self._value, spec)

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("numerator", "denominator"):
            return getattr(self._value, name)
        if name in ("real", "imag"):
            return _checked(getattr(self._value, name))
        if name == "limit_denominator":
            return self._limit_denominator
        if name in _METHODS:
            return getattr(self._value, name)
        if name in ("from_float", "from_decimal"):
            return getattr(self, name)
        if name == "conjugate":
            return lambda: _checked(self._value.conjugate())
        raise refuse(self, name)

    def _limit_denominator(self, max_denominator: int = 1_000_000) -> Any:
        # a loop over the continued fraction, one step per bit or so, without ticks
        charge_operations(self._value.denominator.bit_length())
        return _checked(self._value.limit_denominator(host_number(max_denominator)))


_METHODS: Final = frozenset({"as_integer_ratio", "is_integer"} & set(dir(_REAL)))
"""``is_integer`` is Python 3.12+, as in CPython."""

HOST_NUMBERS[Fraction] = Fraction.held
ATTRIBUTES[Fraction] = frozenset({"from_float", "from_decimal"})  # as for Decimal
RENDER_SIZERS.setdefault(Fraction, lambda value: 32 + (
    value.held().numerator.bit_length() + value.held().denominator.bit_length()) * 3 // 10)

FACADE: Final = Facade("fractions", {"Fraction": Fraction})
