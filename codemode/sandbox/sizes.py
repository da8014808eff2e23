"""Size guards: refuse ``*``, ``**``, ``<<``, ``pow`` and repetition before they allocate.

The policy rewrites ``a * b`` to ``_mul_(a, b)`` (and so on); each guard lets
small numbers through on a fast path and otherwise estimates the result size
first. Oversized results trip the ``memory`` limit, so ``10**10**10`` or
``'a' * 10**10`` never allocate, even in-process where no rlimit applies.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final

from .state import current_run

__all__ = ["MAX_INT_BITS", "guarded_inplace", "guarded_lshift", "guarded_mul", "guarded_pow",
           "guarded_width", "repeat_ok"]

MAX_INT_BITS: Final = 1 << 22
"""Largest integer result (bits) a script may build: ~1.26 million decimal digits."""

MAX_WIDTH: Final = 1 << 20
"""Largest padding width (characters) for ljust/center/zfill/format specs."""

_SMALL: Final = 1 << 62
_TEXT: Final = (str, bytes, bytearray)
_SEQUENCES: Final = (str, bytes, bytearray, list, tuple, deque)


def _too_big(what: str, size: int) -> None:
    current_run().too_big(what, size)


def _int_bits(bits: int) -> None:
    if bits > MAX_INT_BITS:
        _too_big(f"an integer of {bits} bits", bits // 8)


def repeat_ok(seq: Any, times: int) -> None:
    """Trip the memory limit if ``seq * times`` would be too large."""
    if times <= 1 or not isinstance(seq, _SEQUENCES):
        return
    per_item = 1 if isinstance(seq, _TEXT) else 8
    size = len(seq) * times * per_item
    if size > current_run().limits.memory:
        _too_big(f"repeating a sequence {times} times", size)


def guarded_mul(a: Any, b: Any) -> Any:
    """``a * b`` with int growth and sequence repetition checked first."""
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        if not (-_SMALL < a < _SMALL and -_SMALL < b < _SMALL):
            _int_bits(a.bit_length() + b.bit_length())
        return a * b
    if ta is float or tb is float:
        return a * b
    if isinstance(b, int):
        repeat_ok(a, b)
    elif isinstance(a, int):
        repeat_ok(b, a)
    return a * b


def guarded_pow(a: Any, b: Any, mod: Any = None) -> Any:
    """``a ** b`` / ``pow(a, b[, mod])`` with the integer result size checked first."""
    if mod is None:
        if isinstance(a, int) and isinstance(b, int) and b > 0 and (a > 1 or a < -1):
            big = b >= (1 << 40)
            _int_bits(MAX_INT_BITS + 1 if big else (int(a).bit_length() - 1) * int(b) + 1)
        return a ** b
    if isinstance(mod, int):
        _int_bits(abs(mod).bit_length())
    return pow(a, b, mod)


def guarded_lshift(a: Any, b: Any) -> Any:
    """``a << b`` with the result size checked first."""
    if isinstance(a, int) and isinstance(b, int) and a and b > 0:
        _int_bits(a.bit_length() + b if b < (1 << 40) else MAX_INT_BITS + 1)
    return a << b


def guarded_inplace(op: str, x: Any, y: Any) -> Any:
    """``x op= y`` for the guarded operators, keeping in-place semantics (``list *= n``)."""
    if op == "*=":
        if isinstance(x, list | bytearray) and isinstance(y, int):
            repeat_ok(x, y)
            x *= y
            return x
        return guarded_mul(x, y)
    if op == "**=":
        return guarded_pow(x, y)
    if op == "<<=":
        return guarded_lshift(x, y)
    raise SyntaxError(f"unsupported augmented assignment {op}")


def guarded_width(width: Any, what: str) -> None:
    """Refuse padding widths that would allocate huge strings."""
    if isinstance(width, int) and width > MAX_WIDTH:
        _too_big(f"{what} to width {width}", width)
