"""Size guards: refuse allocations past ``Limits.memory`` before they happen.

The policy rewrites ``a * b``, ``a ** b``, ``a << b``, ``a + b`` and ``a % b``
(and the augmented forms) into these guards unless it can prove the operands
are small ints (e.g. ``i * i`` for a ``range`` loop variable). Each guard lets
numbers through on a fast path and otherwise estimates the result size first,
so ``10**10**10``, ``'a' * 10**10``, doubling ``x = x + x`` or
``'%*d' % (10**9, 1)`` never allocate, even in-process where no rlimit
applies. A single object may not exceed ``Limits.memory``; big integers are
capped at ``MAX_INT_BITS`` (beyond that arithmetic costs seconds of C time).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Final

from codemode.errors import LimitExceeded

from .render import charge_render
from .state import current_run

__all__ = [
    "MAX_INT_BITS",
    "augmented_attr",
    "augmented_item",
    "ensure_size",
    "guarded_add",
    "guarded_inplace",
    "guarded_lshift",
    "guarded_mod",
    "guarded_mul",
    "guarded_pow",
    "guarded_slice",
    "percent_format_ok",
    "poll_memory",
    "repeat_ok",
]

MAX_INT_BITS: Final = 1 << 17
"""Largest integer result (bits) a script may build: ~39 000 decimal digits.

Kept small because CPython's big-int division and conversion are quadratic:
at this size every operation stays in the milliseconds.
"""

MAX_MODPOW_COST: Final = 1 << 26
"""Largest ``bits(exponent) * bits(modulus)`` for three-argument ``pow``."""

MODULAR_INVERSE_DIVISOR: Final = 16
"""``pow(a, -1, m)`` runs Euclid on ``m`` in one C call (quadratic: ~1 s at 131 000 bits);
it is charged ``bits(m)**2 / 16`` against ``MAX_MODPOW_COST`` (allowed up to ~32 000 bits)."""

_FAST_OK: Final = 1 << 16
"""Sizes below this never need the run's memory limit looked up."""

_SMALL: Final = 1 << 62
_TEXT: Final = (str, bytes, bytearray)
_SEQUENCES: Final = (str, bytes, bytearray, list, tuple, deque)
_CONCAT: Final = (str, bytes, bytearray, list, tuple)
_PERCENT: Final = re.compile(rb"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")


def _too_big(what: str, size: int) -> None:
    current_run().too_big(what, size)


OBJECT_SHARE: Final = 4
"""One object may take at most ``Limits.memory // OBJECT_SHARE`` bytes (in-process there is
no rlimit, and building an object usually keeps its predecessor alive for a moment)."""


def ensure_size(size: int, what: str) -> None:
    """Trip the memory limit if one object of ``size`` bytes would exceed its share."""
    if size > _FAST_OK:
        run = current_run()
        if size > run.limits.memory // OBJECT_SHARE:
            _too_big(what, size)
        run.meter.poll_memory()


def poll_memory() -> None:
    """Let the current run check its aggregate memory growth (rate-limited)."""
    current_run().meter.poll_memory()


def guarded_slice(obj: Any, key: Any) -> Any:
    """``obj[a:b]``: a copy; big ones let the run's aggregate memory check look first."""
    if isinstance(obj, _CONCAT) and len(obj) > _FAST_OK:
        poll_memory()
    return obj[key]


def _item_size(seq: Any) -> int:
    return 1 if isinstance(seq, _TEXT) else 8


def _int_bits(bits: int) -> None:
    if bits > MAX_INT_BITS:
        _too_big(f"an integer of {bits} bits", bits // 8)


def repeat_ok(seq: Any, times: Any) -> None:
    """Trip the memory limit if ``seq * times`` would be too large."""
    if not isinstance(seq, _SEQUENCES) or not isinstance(times, int):
        return
    times = int(times)
    if times > 1:
        ensure_size(len(seq) * times * _item_size(seq), f"repeating a sequence {times} times")


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
    if isinstance(a, int) and isinstance(b, int):
        _int_bits(int(a).bit_length() + int(b).bit_length())
    elif isinstance(b, int):
        repeat_ok(a, b)
    elif isinstance(a, int):
        repeat_ok(b, a)
    return a * b


def guarded_add(a: Any, b: Any) -> Any:
    """``a + b`` with concatenation size checked first (``x = x + x`` doubling)."""
    ta = type(a)
    if ta is int or ta is float:
        return a + b
    if isinstance(a, _CONCAT) and isinstance(b, _CONCAT):
        ensure_size((len(a) + len(b)) * _item_size(a), "concatenating sequences")
    return a + b


def percent_format_ok(fmt: Any, args: Any) -> None:
    """Refuse ``%`` formatting whose widths or precisions would allocate huge strings."""
    data = fmt.encode("utf-8", "surrogatepass") if isinstance(fmt, str) else bytes(fmt)
    if b"%" not in data:
        return
    values = list(args) if isinstance(args, tuple) else [args]
    total = len(data)
    for match in _PERCENT.finditer(data):
        for part in match.groups():
            if part == b"*":
                value = values.pop(0) if values else 0
                total += abs(value) if isinstance(value, int) else 0
            elif part is not None:
                total += int(part[:12])
    ensure_size(total, "%-formatting")


def guarded_mod(a: Any, b: Any) -> Any:
    """``a % b``: numbers pass; ``%``-formatting has its widths checked first."""
    if isinstance(a, _TEXT):
        percent_format_ok(a, b)
        charge_render(b)
    return a % b


def guarded_pow(a: Any, b: Any, mod: Any = None) -> Any:
    """``a ** b`` / ``pow(a, b[, mod])`` with the integer result size checked first."""
    if mod is None:
        if isinstance(a, int) and isinstance(b, int) and b > 0 and (a > 1 or a < -1):
            big = b >= (1 << 40)
            _int_bits(MAX_INT_BITS + 1 if big else (int(a).bit_length() - 1) * int(b) + 1)
        return a ** b
    if isinstance(mod, int) and isinstance(b, int):
        bits = abs(int(mod)).bit_length()
        cost = bits * abs(int(b)).bit_length()
        if b < 0:
            cost += bits * bits // MODULAR_INVERSE_DIVISOR  # a modular inverse first
        if cost > MAX_MODPOW_COST:
            run = current_run()
            run.meter.trip(LimitExceeded("operations", run.limits.operations,
                                         "modular power with huge operands"))
    return pow(a, b, mod)


def guarded_lshift(a: Any, b: Any) -> Any:
    """``a << b`` with the result size checked first."""
    if isinstance(a, int) and isinstance(b, int) and a and b > 0:
        _int_bits(int(a).bit_length() + int(b) if b < (1 << 40) else MAX_INT_BITS + 1)
    return a << b


def augmented_item(obj: Any, key: Any, op: str, value: Any) -> None:
    """``obj[key] op= value`` (``obj`` already passed ``_write_``) through the size guards."""
    obj[key] = guarded_inplace(op, obj[key], value)


def augmented_attr(obj: Any, name: str, op: str, value: Any) -> None:
    """``obj.name op= value`` (``obj`` already passed ``_write_``) through the size guards."""
    setattr(obj, name, guarded_inplace(op, getattr(obj, name), value))


def guarded_inplace(op: str, x: Any, y: Any) -> Any:
    """``x op= y`` for the guarded operators, keeping in-place semantics (``list += …``)."""
    if op == "+=":
        if isinstance(x, list | bytearray | deque):
            if isinstance(y, _CONCAT):
                ensure_size((len(x) + len(y)) * _item_size(x), "extending a sequence")
            x += y
            return x
        return guarded_add(x, y)
    if op == "*=":
        if isinstance(x, list | bytearray) and isinstance(y, int):
            repeat_ok(x, y)
            x *= y
            return x
        return guarded_mul(x, y)
    if op == "%=":
        return guarded_mod(x, y)
    if op == "**=":
        return guarded_pow(x, y)
    if op == "<<=":
        return guarded_lshift(x, y)
    raise SyntaxError(f"unsupported augmented assignment {op}")
