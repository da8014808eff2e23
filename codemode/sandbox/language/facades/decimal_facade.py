"""``decimal`` for scripts: ``Decimal``, contexts and the rounding modes, one context per run.

A script's ``Decimal`` is a sandbox value holding a real ``decimal.Decimal`` (whose class
and module stay in the host). Every operation runs under the run's own context, set for
that one call and restored: a script setting ``getcontext().prec`` changes neither the host
(whose thread context an in-process run shares) nor the next run.

Sizes are decided before C runs: precision is at most ``MAX_PREC`` digits (``ln``, ``exp``
and ``**`` at 1,000 digits take ~15 ms, at 5,000 one to two seconds of one C call); a
coefficient has at most ``MAX_DIGITS`` digits; what the exponent alone makes huge
(``int(Decimal('1e999999999'))``, ``as_integer_ratio()``, ``f'{d:f}'``) is sized first.
``exp``, ``ln``, ``log10`` and ``**`` also cost with their operands' length, not only the
precision (``Decimal('9'*3000) ** Decimal('0.5')`` held the GIL 2.5 s at precision 28, 33 s
at 10,000 digits), so their operands have at most ``MAX_HEAVY_DIGITS`` digits, and a
modular ``pow`` is sized by its exponent and modulus.
"""

from __future__ import annotations

import decimal
import re
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Literal, final

from codemode.sandbox.language.builtins import shown_type
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.collections_facade import namedtuple
from codemode.sandbox.language.facades.number_ops import (
    HOST_NUMBERS,
    CNamed,
    host_number,
    operand,
    type_name,
    with_operators,
)
from codemode.sandbox.language.guards import (
    ATTRIBUTES,
    ScriptMeta,
    SelfGuarded,
    SelfWritable,
    refuse,
)
from codemode.sandbox.language.sizes import (
    RENDER_SIZERS,
    charge_operations,
    ensure_size,
    spec_number,
)
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FACADE", "HOST_NUMBERS", "MAX_DIGITS", "MAX_EXPONENT_DIGITS", "MAX_HEAVY_DIGITS",
           "MAX_INT_DIGITS", "MAX_POWMOD_WORK", "MAX_PREC", "Context", "Decimal",
           "exact_digits", "host_number", "script_number"]

MAX_PREC: Final = 1000
"""Largest precision a script's context may have."""

MAX_DIGITS: Final = 100_000
"""Most coefficient digits of a Decimal made from text or a tuple (hashing and printing it
are linear: ~0.5 ms at this size)."""

MAX_INT_DIGITS: Final = 5000
"""Most digits of an int a Decimal converts to (the conversion is quadratic: 2 ms here,
0.17 s at 39,000 digits)."""

MAX_HEAVY_DIGITS: Final = 400
"""Most digits of an operand of ``exp``, ``ln``, ``log10`` or ``**`` (at precision 1000:
~0.1 s with 400-digit operands; 0.44 s for ``ln`` of a 1,000-digit one, 0.8 s for
``**`` of a 2,000-digit one)."""

MAX_EXPONENT_DIGITS: Final = 100
"""Most digits of the exponent of ``**`` (a base near 1 to a 400-digit integer power took
0.4-0.6 s at precision 1000, to a 100-digit one ~0.06 s)."""

MAX_POWMOD_WORK: Final = 300 ** 3
"""Most exponent digits times modulus digits squared of a three-argument ``pow`` (a
300-digit exponent and modulus took ~0.06 s, 1,000 digits each 1-1.8 s of one C call)."""

_REAL: Final = decimal.Decimal
_TEXT_UNIT: Final = 64
_SIGNALS: Final = (decimal.Clamped, decimal.DivisionByZero, decimal.Inexact,
                   decimal.InvalidOperation, decimal.Overflow, decimal.Rounded,
                   decimal.Subnormal, decimal.Underflow, decimal.FloatOperation)
_ROUNDINGS: Final = ("ROUND_UP", "ROUND_DOWN", "ROUND_CEILING", "ROUND_FLOOR",
                     "ROUND_HALF_UP", "ROUND_HALF_DOWN", "ROUND_HALF_EVEN", "ROUND_05UP")
_SPEC_NUMBERS: Final = re.compile(r"\d+")
_SPEC: Final = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?"
    r"(?P<type>[eEfFgGn%]?)", re.DOTALL)
"""A Decimal's format spec: the numbers and the type that decide the text's length."""


def _fresh() -> decimal.Context:
    """Python's default context, built from values (``decimal.DefaultContext`` is the
    host's to change)."""
    return decimal.Context(prec=28, rounding=decimal.ROUND_HALF_EVEN, Emin=-999999,
                           Emax=999999, capitals=1, clamp=0, flags=[],
                           traps=[decimal.InvalidOperation, decimal.DivisionByZero,
                                  decimal.Overflow])


def _under(ctx: decimal.Context, func: Callable[..., Any], *args: Any,
           **kwargs: Any) -> Any:
    """``func(*args)`` with ``ctx`` the thread's context for that call only; a signal is
    raised again as a fresh exception of its class (C puts host classes in its args)."""
    saved = decimal.getcontext()
    decimal.setcontext(ctx)
    try:
        return func(*args, **kwargs)
    except decimal.DecimalException as exc:
        raise type(exc)(str(exc)) from None
    finally:
        decimal.setcontext(saved)


def exact_digits(value: decimal.Decimal) -> int:
    """Digits of the ints that hold ``value`` exactly (its integer ratio)."""
    if not (value.is_finite() and value):
        return 0
    exponent = int(value.as_tuple().exponent)
    return max(value.adjusted() + 1, 0) + max(-exponent, 0)


def _int_digits(value: decimal.Decimal, what: str) -> None:
    """Trip the memory limit if the exact int of ``value`` (or its ratio) is too long."""
    digits = exact_digits(value)
    if digits > MAX_INT_DIGITS:
        current_run().too_big(f"{what} of a Decimal (an int of {digits} digits; at most "
                              f"{MAX_INT_DIGITS} in the sandbox)", digits // 2)


def _coefficient(digits: int) -> None:
    if digits > MAX_DIGITS:
        current_run().too_big(f"a Decimal of {digits} digits (at most {MAX_DIGITS} in the "
                              "sandbox)", digits)
    charge_operations(digits // _TEXT_UNIT)


def _digits(value: Any) -> int:
    """Coefficient digits of a host Decimal or int operand (0 for anything else)."""
    if type(value) is _REAL:
        return len(value.as_tuple().digits) if value.is_finite() else 0
    if isinstance(value, int):  # an IntEnum member too: C reads its digits as an int's
        return int(abs(value).bit_length()) * 3 // 10 + 1
    return 0


def _heavy(operand: Any, most: int = MAX_HEAVY_DIGITS) -> None:
    """Trip the memory limit before a transcendental C call on a too long operand."""
    digits = _digits(operand)
    if digits > most:
        current_run().too_big(f"exp/ln/log10/** with a number of {digits} digits (at most "
                              f"{most} in the sandbox)", digits)


def _powmod(exponent: Any, modulus: Any) -> None:
    """Trip the memory limit before a modular ``pow`` that would run for seconds."""
    work = _digits(exponent) * _digits(modulus) ** 2
    if work > MAX_POWMOD_WORK:
        current_run().too_big(f"a modular pow of a {_digits(exponent)}-digit exponent and a "
                              f"{_digits(modulus)}-digit modulus", work // 1000)


def _power_sized(base: Any, exponent: Any, modulus: Any = None) -> None:
    """Trip the memory limit before a ``pow`` (plain or modular) that would run long."""
    if modulus is None:
        _heavy(base)
        _heavy(exponent, MAX_EXPONENT_DIGITS)
    else:
        _powmod(exponent, modulus)


def _power(base: Any, exponent: Any, modulus: Any = None) -> Any:
    """``pow`` with its operands sized first."""
    _power_sized(base, exponent, modulus)
    return pow(base, exponent) if modulus is None else pow(base, exponent, modulus)


def script_number(value: Any) -> Any:
    """What a script gets for a host result: a sandbox Decimal for a ``decimal.Decimal``,
    anything else as it is (the fractions facade wraps its own)."""
    return Decimal.wrap(value) if type(value) is _REAL else value


def _refused(symbol: str, mine: str, other: Any, reflected: bool) -> Any:
    """``NotImplemented`` for an operand the script's own class may answer, and for a
    sequence's ``+`` or ``*`` (concatenation, repetition: Python words that error); for
    any other, CPython's error, which names the C type ``decimal.Decimal``."""
    if isinstance(type(other), ScriptMeta) or (
            type(other) in _SEQUENCES and (symbol == "*" or (symbol == "+" and reflected))):
        return NotImplemented
    theirs = type_name(type(other))
    pair = f"'{theirs}' and '{mine}'" if reflected else f"'{mine}' and '{theirs}'"
    raise TypeError(f"unsupported operand type(s) for {symbol}: {pair}")


def _binary(func: Callable[[Any, Any], Any], symbol: str, *,
            reflected: bool = False) -> Callable[..., Any]:
    def method(self: Decimal, other: Any) -> Any:
        theirs = operand(other)
        if theirs is NotImplemented:
            if symbol in _ORDERINGS:
                return NotImplemented
            return _refused(symbol, "decimal.Decimal", other, reflected)
        pair = (theirs, self._value) if reflected else (self._value, theirs)
        outcome = _under(_active(), func, *pair)
        if type(outcome) is tuple:  # divmod
            return tuple(script_number(x) for x in outcome)
        return script_number(outcome)
    return method


_SEQUENCES: Final = frozenset({str, bytes, bytearray, list, tuple, deque})
_ORDERINGS: Final = frozenset({"eq", "lt", "le", "gt", "ge"})
"""Comparisons: Python tries the reflected one, then raises (or, for ``==``, compares
identities)."""


def _unwrapped(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[
        tuple[Any, ...], dict[str, Any], decimal.Context]:
    """Arguments with sandbox numbers and contexts unwrapped, and the context to use."""
    ctx = kwargs.pop("context", None)
    real_ctx = _active() if ctx is None else _context_of(ctx)
    return (tuple(host_number(a) for a in args),
            {k: host_number(v) for k, v in kwargs.items()}, real_ctx)


def _context_of(value: Any) -> decimal.Context:
    if type(value) is not Context:
        raise TypeError(f"context must be a decimal.Context, not {type(value).__name__!r}")
    return value.held_context()


_HEAVY_METHODS: Final = frozenset({"exp", "ln", "log10"})
"""Decimal and Context methods that cost with their operand's length (:func:`_heavy`)."""


def _sized_method(real: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A Context method ``real``, its operands sized first where their length costs."""
    def heavy(operand: Any, *args: Any) -> Any:
        _heavy(operand)
        return real(operand, *args)

    def power(*args: Any) -> Any:
        _power_sized(*args[:3])
        return real(*args)
    return power if name == "power" else heavy if name in _HEAVY_METHODS else real


_NUMBER_METHODS: Final = frozenset({
    "adjusted", "canonical", "compare", "compare_signal", "compare_total", "compare_total_mag",
    "conjugate", "copy_abs", "copy_negate", "copy_sign", "exp", "fma", "is_canonical",
    "is_finite", "is_infinite", "is_nan", "is_normal", "is_qnan", "is_signed", "is_snan",
    "is_subnormal", "is_zero", "ln", "log10", "logb", "max", "max_mag", "min", "min_mag",
    "next_minus", "next_plus", "next_toward", "normalize", "number_class", "quantize",
    "radix", "remainder_near", "same_quantum", "scaleb", "sqrt", "to_eng_string",
    "to_integral", "to_integral_exact", "to_integral_value",
})
"""Decimal methods whose result is a Decimal, a bool, a small int or a short text."""


@final
@with_operators(_binary)
class Decimal(SelfGuarded, metaclass=CNamed):
    """``decimal.Decimal(value='0', context=None)``: exact unless a context is given."""

    __slots__ = ("_value",)

    def __init__(self, value: Any = "0", context: Any = None) -> None:
        real = _convert(value)
        if context is not None:
            real = _under(_context_of(context), _context_of(context).create_decimal, real)
        self._value: decimal.Decimal = real

    @classmethod
    def wrap(cls, value: decimal.Decimal) -> Decimal:
        """A sandbox Decimal holding ``value``."""
        made = object.__new__(cls)
        made._value = value
        return made

    @classmethod
    def from_float(cls, value: Any) -> Decimal:
        """``Decimal.from_float(0.1)``: the float's exact value."""
        if not isinstance(value, int | float):
            raise TypeError("argument must be int or float")
        return cls.wrap(_REAL.from_float(host_number(value)))

    def held(self) -> decimal.Decimal:
        """The host Decimal (for the facades; scripts read no such attribute)."""
        return self._value

    __divmod__ = _binary(divmod, "divmod()")
    __rdivmod__ = _binary(divmod, "divmod()", reflected=True)
    __rpow__ = _binary(_power, "** or pow()", reflected=True)

    def __pow__(self, other: Any, modulo: Any = None) -> Any:
        theirs = operand(other)
        if theirs is NotImplemented:
            return _refused("** or pow()", "decimal.Decimal", other, reflected=False)
        return script_number(_under(_active(), _power, self._value, theirs,
                                    host_number(modulo)))

    def __neg__(self) -> Decimal:
        return Decimal.wrap(_under(_active(), decimal.Decimal.__neg__, self._value))

    def __pos__(self) -> Decimal:
        return Decimal.wrap(_under(_active(), decimal.Decimal.__pos__, self._value))

    def __abs__(self) -> Decimal:
        return Decimal.wrap(_under(_active(), decimal.Decimal.__abs__, self._value))

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        _int_digits(self._value, "int()")
        return int(self._value)

    __trunc__ = __int__

    def __floor__(self) -> int:
        _int_digits(self._value, "math.floor()")
        return self._value.__floor__()

    def __ceil__(self) -> int:
        _int_digits(self._value, "math.ceil()")
        return self._value.__ceil__()

    def __round__(self, ndigits: Any = None) -> Any:
        if ndigits is None:
            _int_digits(self._value, "round()")
            return _under(_active(), round, self._value)
        return script_number(_under(_active(), round, self._value, ndigits))

    def __str__(self) -> str:
        return str(self._value)

    def __repr__(self) -> str:
        return f"Decimal('{self._value}')"

    def __format__(self, spec: str) -> str:
        if type(spec) is not str:
            raise TypeError("format spec must be a str")
        ensure_size(2 * _formatted_size(self._value, spec), "formatting a Decimal")
        return str(_under(_active(), format, self._value, spec))

    def sandbox_getattr(self, name: str) -> Any:
        if name in _NUMBER_METHODS:
            return _method(self._value, name)
        if name == "as_integer_ratio":
            return self._ratio
        if name == "as_tuple":
            return self._as_tuple
        if name == "from_float":
            return self.from_float
        if name in ("real", "imag"):
            return script_number(getattr(self._value, name))
        raise refuse(self, name)

    def _ratio(self) -> tuple[int, int]:
        _int_digits(self._value, "as_integer_ratio()")
        return self._value.as_integer_ratio()

    def _as_tuple(self) -> Any:
        sign, digits, exponent = self._value.as_tuple()
        return namedtuple("DecimalTuple", "sign digits exponent")(sign, digits, exponent)


def _formatted_size(value: decimal.Decimal, spec: str) -> int:
    """About how long ``format(value, spec)`` is, from the digits it prints: the fixed
    point forms (``f``, ``%``) print the integer digits and the precision's (or the
    exponent's) fraction digits, the others at most the precision's or the value's own
    digits and an exponent (``f"{Decimal('1e-9999999999999'):.2f}"`` is ``'0.00'``)."""
    size = len(spec) + 32
    found = _SPEC.fullmatch(spec)
    if found is None:  # an invalid spec: format() says so; a bound on what it might print
        size += sum(spec_number(n) for n in _SPEC_NUMBERS.findall(spec))
        if value.is_finite():
            size += len(value.as_tuple().digits) + abs(value.adjusted())
        return size
    size += spec_number(found["width"])
    if not value.is_finite():
        return size
    digits = len(value.as_tuple().digits)
    precision = None if found["precision"] is None else spec_number(found["precision"])
    kind = found["type"]
    if kind in ("f", "F", "%"):
        shift = 2 if kind == "%" else 0
        exponent = int(value.as_tuple().exponent) + shift
        whole = max(value.adjusted() + 1 + shift, 1)
        return size + whole * 4 // 3 + (max(-exponent, 0) if precision is None else precision)
    return size + (digits if precision is None else precision)


def _method(value: decimal.Decimal, name: str) -> Callable[..., Any]:
    real = getattr(value, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        args, kwargs, ctx = _unwrapped(args, kwargs)
        if name in _HEAVY_METHODS:
            _heavy(value)
        return script_number(_under(ctx, real, *args, **kwargs))
    call.__name__ = name
    call.__qualname__ = f"Decimal.{name}"
    return call


def _convert(value: Any) -> Any:
    """A host Decimal for ``Decimal(value)``, its size checked first."""
    kind = type(value)
    if kind is Decimal:
        return value.held()
    if kind is str:
        _coefficient(len(value))
        return _under(_active(), _REAL, value)
    if isinstance(value, int | float):  # an IntEnum member too, as its int
        return _REAL(host_number(value))
    if kind in (tuple, list):
        parts = list(counted(value))
        if len(parts) == 3 and type(parts[1]) in (tuple, list):
            digits = tuple(counted(parts[1]))
            _coefficient(len(digits))
            return _under(_active(), _REAL, (parts[0], digits, parts[2]))
        return _under(_active(), _REAL, tuple(parts))
    raise TypeError(f"conversion from {kind.__name__} to Decimal is not supported")


HOST_NUMBERS[Decimal] = Decimal.held
ATTRIBUTES[Decimal] = frozenset({"from_float"})  # ``type(d)`` answers; the class's own names
RENDER_SIZERS.setdefault(Decimal, lambda value: 32 + len(value.held().as_tuple().digits))

_CONTEXT_FIELDS: Final = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")
_CONTEXT_METHODS: Final = frozenset({
    "abs", "add", "compare", "divide", "divide_int", "divmod", "exp", "fma", "ln", "log10",
    "max", "min", "minus", "multiply", "normalize", "plus", "power", "quantize", "remainder",
    "sqrt", "subtract", "to_eng_string", "to_integral_value", "to_sci_string",
})


@final
class Context(SelfWritable):
    """``decimal.Context(prec=None, rounding=None, ...)``: starts from Python's defaults."""

    __slots__ = ("_ctx",)
    _ctx: decimal.Context

    def __init__(self, prec: Any = None, rounding: Any = None, Emin: Any = None,
                 Emax: Any = None, capitals: Any = None, clamp: Any = None,
                 flags: Any = None, traps: Any = None) -> None:
        object.__setattr__(self, "_ctx", _fresh())
        for name, value in zip(_CONTEXT_FIELDS, (prec, rounding, Emin, Emax, capitals, clamp),
                               strict=True):
            if value is not None:
                self.__setattr__(name, value)
        for name, value in (("flags", flags), ("traps", traps)):
            if value is not None:
                chosen = _signals(value, name)
                setattr(self._ctx, name, {s: s in chosen for s in _SIGNALS})

    @classmethod
    def wrap(cls, ctx: decimal.Context) -> Context:
        """A sandbox context holding ``ctx``."""
        made: Context = object.__new__(cls)
        object.__setattr__(made, "_ctx", ctx)
        return made

    def held_context(self) -> decimal.Context:
        """The host context (for the facade; scripts read no such attribute)."""
        return self._ctx

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _CONTEXT_FIELDS:
            raise AttributeError(f"'decimal.Context' object attribute {name!r} cannot be set "
                                 "in the sandbox")
        if name == "prec" and isinstance(value, int) and value > MAX_PREC:  # IntEnum too
            current_run().too_big(f"a decimal precision of {value} digits (at most {MAX_PREC} "
                                  "in the sandbox)", value)
        setattr(self._ctx, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"'decimal.Context' object attribute {name!r} cannot be deleted")

    def __repr__(self) -> str:
        return repr(self._ctx)

    def sandbox_getattr(self, name: str) -> Any:
        if name in _CONTEXT_FIELDS:
            return getattr(self._ctx, name)
        if name in _CONTEXT_METHODS:
            return _context_method(self._ctx, name)
        if name == "copy":
            return lambda: Context.wrap(self._ctx.copy())
        if name == "create_decimal":
            return lambda num="0": Decimal.wrap(_under(self._ctx, self._ctx.create_decimal,
                                                       _convert(num)))
        if name == "clear_flags":
            return self._ctx.clear_flags
        if name in ("flags", "traps"):
            return _Signals(getattr(self._ctx, name))
        raise refuse(self, name)


@final
class _Signals(SelfWritable):
    """``ctx.flags`` / ``ctx.traps``: the context's own table of signals, read and set by
    signal (``ctx.traps[decimal.DivisionByZero] = False``)."""

    __slots__ = ("_table",)
    _table: Any

    def __init__(self, table: Any) -> None:
        object.__setattr__(self, "_table", table)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"'dict' object attribute {name!r} is read-only")

    def __getitem__(self, signal: Any) -> bool:
        return bool(self._table[_signal(signal)])

    def __setitem__(self, signal: Any, value: Any) -> None:
        self._table[_signal(signal)] = bool(value)

    def __iter__(self) -> Any:
        return iter(list(self._table))

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, signal: Any) -> bool:
        return signal in _SIGNALS

    def __repr__(self) -> str:
        return repr(self._table)

    def sandbox_getattr(self, name: str) -> Any:
        if name == "keys":
            return lambda: list(self._table)
        if name == "values":
            return lambda: [bool(self._table[s]) for s in self._table]
        if name == "items":
            return lambda: [(s, bool(self._table[s])) for s in self._table]
        if name == "get":
            return lambda signal, default=None: (
                bool(self._table[signal]) if signal in _SIGNALS else default)
        if name == "copy":
            return lambda: {s: bool(self._table[s]) for s in self._table}
        raise refuse(self, name)


def _signal(value: Any) -> Any:
    if value not in _SIGNALS:
        raise KeyError(value)
    return value


def _context_method(ctx: decimal.Context, name: str) -> Callable[..., Any]:
    real = getattr(ctx, name)

    def call(*args: Any) -> Any:
        held = tuple(host_number(a) for a in args)
        outcome = _under(ctx, _sized_method(real, name), *held)
        if type(outcome) is tuple:
            return tuple(script_number(x) for x in outcome)
        return script_number(outcome)
    return call


def _signals(value: Any, what: str) -> set[Any]:
    items = list(counted(value.keys() if type(value) is dict else value))
    if type(value) is dict:
        items = [k for k in items if value[k]]
    if not all(item in _SIGNALS for item in items):
        raise TypeError(f"Context({what}=...) takes decimal signals (decimal.Inexact ...)")
    return set(items)


_KEY: Final = "decimal.contexts"


def _stack() -> list[Context]:
    """The run's contexts: the one ``getcontext()`` answers is last."""
    run = current_run()
    stack: list[Context] | None = run.extras.get(_KEY)
    if stack is None:
        stack = run.extras[_KEY] = [Context.wrap(_fresh())]
    return stack


def _active() -> decimal.Context:
    return _stack()[-1].held_context()


def getcontext() -> Context:
    """This run's current context (each run starts from Python's defaults)."""
    return _stack()[-1]


def setcontext(context: Context) -> None:
    """Make ``context`` this run's current context."""
    _context_of(context)
    _stack()[-1] = context


@final
class _LocalContext(SelfGuarded):
    """What ``with localcontext() as ctx:`` enters: ``ctx`` is current inside the block."""

    __slots__ = ("_context", "_stack")

    def __init__(self, context: Context) -> None:
        self._context = context
        self._stack: list[Context] = []

    def __enter__(self) -> Context:
        self._stack = _stack()
        self._stack.append(self._context)
        return self._context

    def __exit__(self, *exc: object) -> Literal[False]:
        for i in range(len(self._stack) - 1, 0, -1):
            if self._stack[i] is self._context:
                del self._stack[i]
                break
        return False


def localcontext(ctx: Any = None, **kwargs: Any) -> _LocalContext:
    """A with-block whose context is a copy of ``ctx`` (the current one by default)."""
    base = getcontext() if ctx is None else ctx
    local = Context.wrap(_context_of(base).copy())
    for name, value in kwargs.items():
        if name not in _CONTEXT_FIELDS:
            raise TypeError(f"'{name}' is an invalid keyword argument for this function")
        setattr(local, name, value)
    return _LocalContext(local)


shown_type(_Signals, "abc", "SignalDict")  # CPython's ``type(ctx.traps)``

FACADE: Final = Facade("decimal", {
    "Decimal": Decimal, "Context": Context, "getcontext": getcontext,
    "setcontext": setcontext, "localcontext": localcontext,
    **{name: getattr(decimal, name) for name in _ROUNDINGS},
    "DecimalException": decimal.DecimalException,
    **{signal.__name__: signal for signal in _SIGNALS},
    "MAX_EMAX": decimal.MAX_EMAX, "MIN_EMIN": decimal.MIN_EMIN,
})
