"""``math`` for scripts: pure functions, with size guards where results can explode."""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import (
    MAX_INT_BITS,
    charge_operations,
    guarded_mul,
    guarded_pow,
)
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["FACADE"]

_MAX_FACTORIAL: Final = 10_000


def _bounded(n: Any, what: str) -> None:
    if isinstance(n, int) and n > _MAX_FACTORIAL:
        current_run().too_big(f"math.{what}({n})", n)


def factorial(n: int) -> int:
    """n! (n is bounded)."""
    _bounded(n, "factorial")
    return math.factorial(n)


def comb(n: int, k: int) -> int:
    """Binomial coefficient (n is bounded)."""
    _bounded(n, "comb")
    return math.comb(n, k)


def perm(n: int, k: int | None = None) -> int:
    """Permutations count (n is bounded)."""
    _bounded(n, "perm")
    return math.perm(n, k)


def prod(iterable: Iterable[Any], *, start: Any = 1) -> Any:
    """Product of the items, each step size-guarded and counted."""
    result = start
    for item in counted(iterable):
        result = guarded_mul(result, item)
    return result


_LCM_STEP_BITS: Final = 64
"""Bits of the running result charged as one operation per :func:`lcm` step (each step
divides and multiplies it in C)."""


def lcm(*integers: Any) -> int:
    """Least common multiple, one argument at a time, each step's work (the running
    result's size) charged and the result's size checked.

    Without the charge ``lcm(*range(1, 100000))`` ran 90 000 steps on a result growing to
    the integer cap (2.5 s) before its size check; now the operations limit ends it in
    0.7 s at the default limits. Pairing the arguments in a tree would be faster, but
    CPython 3.12 divides two such big integers in ``_pylong``, which a script's import
    refuses. A 0 makes the result 0 whatever the rest, as in CPython."""
    values = [operator.index(value) for value in counted(integers)]
    if 0 in values:
        return 0
    result = 1
    for value in values:
        charge_operations(result.bit_length() // _LCM_STEP_BITS)
        result = math.lcm(result, value)
        if result.bit_length() > MAX_INT_BITS:
            current_run().too_big("math.lcm()", result.bit_length() // 8)
    return result


def gcd(*integers: int) -> int:
    """Greatest common divisor, one counted step per argument: in one C call the steps
    over a thousand 100 000-bit integers held an in-process host's loop for 8 s."""
    result = 0
    for value in counted(integers):
        result = math.gcd(result, value)
    return result


def fsum(iterable: Iterable[float]) -> float:
    """Accurate float sum (counted)."""
    return math.fsum(counted(iterable))


def pow_(x: float, y: float) -> float:
    """Float power."""
    return float(guarded_pow(float(x), float(y)))


_NAMES: Final[dict[str, Any]] = {
    name: getattr(math, name) for name in (
        "pi", "e", "tau", "inf", "nan", "sqrt", "isqrt", "floor", "ceil", "trunc", "log",
        "log2", "log10", "log1p", "exp", "expm1", "sin", "cos", "tan", "asin", "acos", "atan",
        "atan2", "sinh", "cosh", "tanh", "hypot", "fabs", "copysign", "fmod", "modf", "frexp",
        "ldexp", "isclose", "isfinite", "isinf", "isnan", "degrees", "radians",
        "dist", "remainder", "erf", "erfc", "gamma", "lgamma", "asinh", "acosh", "atanh",
        "cbrt", "exp2", "ulp",
    )
}
FACADE: Final = Facade("math", {**_NAMES, "factorial": factorial, "comb": comb, "perm": perm,
                                "prod": prod, "fsum": fsum, "pow": pow_, "lcm": lcm,
                                "gcd": gcd})
