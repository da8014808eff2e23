"""``enum`` for scripts: ``Enum``, ``IntEnum``, ``StrEnum``, ``Flag``, ``IntFlag``, ``auto``
and ``unique``, built here.

The real ``enum`` module is metaclass machinery (``EnumType``, ``_EnumDict``, descriptors
and ``_missing_``/``_generate_next_value_`` hooks that Python calls implicitly), so it is
not handed to scripts. A script's ``class Color(Enum)`` goes to :func:`_build` (through
:data:`~codemode.sandbox.language.guards.CLASS_BUILDERS`): the body's plain values become
the members, in order (a repeated value is an alias), each an instance of the class with
``name`` and ``value``; its functions, properties, class and static methods stay methods.
The class is a script class (``ScriptMeta``'s checks, its methods wrapped to their run)
whose metaclass :class:`EnumMeta` answers ``Color(1)``, ``Color["RED"]``, iteration,
``len`` and ``in``. ``type(Color)`` is refused as for any metaclass: a script never holds
it.

A ``Flag`` class's members are bits (``auto()`` gives the next power of two); ``|``, ``&``,
``^`` and ``~`` make composite members (``<Perm.R|W: 3>``, ``list()`` gives their bits),
kept per class up to :data:`_MAX_COMPOSITES` (past that each is made anew and still
compares equal by value). A ``Flag`` value outside the class's bits is a ``ValueError``;
an ``IntFlag`` keeps them (``<P.A|8: 9>``). Iteration and ``len`` of the class skip
zero and multi-bit members, as Python 3.11+ does.

``IntEnum`` and ``StrEnum`` members are real ``int``/``str`` instances (tool arguments,
JSON results, ``==`` and hashing with plain values work as in Python). C code and the
size guards trust such an object's length, digits and hash, so the body of an ``IntEnum``
or ``StrEnum`` (or of an enum class under one) may define no special method and no name
``int``/``str`` has: only members and new methods.
"""

from __future__ import annotations

import sys
from types import FunctionType
from typing import Any, Final, final

from codemode.sandbox.language.builtins import (
    STAND_INS,
    StrType,
    check_format_spec,
    format_,
    repr_,
)
from codemode.sandbox.language.compare import GUARDS, guarded_key
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import (
    CLASS_BUILDERS,
    FACADE_CLASSES,
    ScriptMeta,
    SelfGuarded,
)
from codemode.sandbox.language.meter import MAIN_MODULE
from codemode.sandbox.language.policy import ANNOTATED
from codemode.sandbox.language.sizes import charge_operations, ensure_size
from codemode.sandbox.language.state import counted

__all__ = ["FACADE", "EnumMeta"]

_MAX_MEMBERS: Final = 4096
_NAME_TEXT: Final = 256
"""Characters a member name takes at most in ``Enum("E", "A B C")``'s text, on average:
the text is split on the host, sized first."""


@final
class _Auto(SelfGuarded):
    """``auto()``: the member's value is chosen when the class is built. In a flag's
    body, ``RW = READ | WRITE`` combines autos (and ints): the combination is resolved
    with them."""

    __slots__ = ("_parts",)

    def __init__(self, parts: tuple[str, Any, Any] | None = None) -> None:
        self._parts = parts

    def __repr__(self) -> str:
        return "auto()"

    def _combine(self, op: str, other: Any, reflected: bool = False) -> Any:
        if not isinstance(other, _Auto) and type(other) is not int:
            return NotImplemented
        return _Auto((op, other, self) if reflected else (op, self, other))

    def __or__(self, other: Any) -> Any:
        return self._combine("|", other)

    def __and__(self, other: Any) -> Any:
        return self._combine("&", other)

    def __xor__(self, other: Any) -> Any:
        return self._combine("^", other)

    def __ror__(self, other: Any) -> Any:
        return self._combine("|", other, reflected=True)

    def __rand__(self, other: Any) -> Any:
        return self._combine("&", other, reflected=True)

    def __rxor__(self, other: Any) -> Any:
        return self._combine("^", other, reflected=True)

    def combined(self, resolved: dict[int, Any], depth: int = 0) -> Any:
        """The value of a combination, once the autos it names have theirs (None: not
        a combination). Each combination is worked out once (``b = a | a; c = b | b``
        … shares its parts) and charged one operation."""
        if self._parts is None:
            return None
        if depth > _MAX_COMBINED:
            raise ValueError("an auto() combination nests too deeply in the sandbox")
        done = resolved.get(id(self), _NO_VALUE)
        if done is not _NO_VALUE:
            return done
        charge_operations(1)
        op, left, right = self._parts
        a, b = (_operand(part, resolved, depth) for part in (left, right))
        value = a | b if op == "|" else a & b if op == "&" else a ^ b
        resolved[id(self)] = value
        return value


_MAX_COMBINED: Final = 64
_NO_VALUE: Final = object()


def _operand(part: Any, resolved: dict[int, Any], depth: int) -> Any:
    if not isinstance(part, _Auto):
        return part
    if part._parts is not None:
        return part.combined(resolved, depth + 1)
    if id(part) not in resolved:
        raise ValueError("auto() is combined before its member is defined")
    return resolved[id(part)]


def auto() -> _Auto:
    """The next value: CPython's for the values so far (:class:`_NextValue`), a
    ``StrEnum`` member's lower-cased name, a flag's next bit."""
    return _Auto()


_NUMBERS: Final = (int, float, bool)


@final
class _NextValue:
    """``Enum._generate_next_value_`` (start 1) over the values written or generated so far
    (before a mixin's ``str()``), kept as they come (a class has up to ``_MAX_MEMBERS``, so
    a scan of them all per ``auto()`` would be quadratic): from 3.13 the largest number
    + 1, else an error; before, the last + 1 when it is the largest, else the last number
    going back from the largest, + 1 (a value that is no number is one ``+ 1`` fails on)."""

    __slots__ = ("largest", "numbers", "texts", "values")

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.numbers = True
        self.texts = True
        self.largest: Any = None

    def add(self, value: Any) -> None:
        self.values.append(value)
        kind = type(value)
        self.numbers = self.numbers and kind in _NUMBERS
        self.texts = self.texts and kind is str
        if (self.numbers or self.texts) and (self.largest is None or value > self.largest):
            self.largest = value  # compared only within exact ints/floats/bools, or strs

    def next(self) -> Any:
        values = self.values
        if not values:
            return 1
        if sys.version_info >= (3, 13):
            if self.numbers:
                return self.largest + 1
            if self.texts:
                raise TypeError(f"unable to increment {self.largest!r}")
            raise TypeError("unable to sort non-numeric values")
        if self.numbers and values[-1] == self.largest:
            return values[-1] + 1
        charge_operations(len(values))
        ordered = sorted(values) if self.numbers else values
        return next((value + 1 for value in reversed(ordered) if type(value) in _NUMBERS), 1)


@final
class _Info:
    """One enum class's members (host side)."""

    __slots__ = ("bit_cost", "bits", "boundary", "by_name", "by_value", "composites", "mask",
                 "members", "unhashable")

    def __init__(self) -> None:
        self.members: list[Any] = []
        self.by_name: dict[str, Any] = {}
        self.by_value: dict[Any, Any] = {}
        self.unhashable: list[tuple[Any, Any]] = []
        self.mask = 0
        """A flag class's bits: its members' values or-ed."""
        self.composites: dict[int, Any] = {}
        """A flag class's composite members made so far, by value."""
        self.bits: tuple[Any, ...] | None = None
        """A flag class's single-bit members, lowest first (worked out on first use)."""
        self.bit_cost = 0
        """Operations a walk over ``bits`` is charged: one per member and per
        ``_BITS_PER_OPERATION`` bits of its value."""
        self.boundary: Any = None
        """A flag class's ``boundary=`` (its own or its base's): None for the default,
        ``STRICT`` for a ``Flag``, ``KEEP`` for an ``IntFlag``."""

    def find(self, value: Any) -> Any:
        """The member of ``value``: hashed and compared as a script's dict lookup and ``==``
        are (``t = (t, t)`` nested forty times is one C hash of 2**40 items)."""
        try:
            return self.by_value.get(guarded_key(value))
        except TypeError:
            charge_operations(len(self.unhashable))
            equal = GUARDS["_eq_"]
            return next((member for known, member in self.unhashable
                         if equal(known, value)), None)


_INFO_KEY: Final = "_sandbox_enum_"
"""Where an enum class keeps its :class:`_Info` (a name no script can bind or read)."""


@final
class _InfoTable:
    """Enum class → its :class:`_Info`, kept in the class's own namespace.

    A ``WeakKeyDictionary`` never let go: its values (the members, instances of the class)
    hold the class, so every enum class, its members and their values stayed in the host
    after the run that made it (26 MB a run, run after run, in-process). On the class,
    the members and the class are one cycle that the collector frees with the run."""

    __slots__ = ()

    def get(self, cls: Any) -> _Info | None:
        found = cls.__dict__.get(_INFO_KEY) if isinstance(cls, type) else None
        return found if type(found) is _Info else None

    def __getitem__(self, cls: Any) -> _Info:
        found = self.get(cls)
        if found is None:
            raise KeyError(cls)
        return found

    def __setitem__(self, cls: type, info: _Info) -> None:
        type.__setattr__(cls, _INFO_KEY, info)


_INFO: Final = _InfoTable()


class EnumMeta(ScriptMeta):
    """Metaclass of enum classes: lookups, iteration and read-only members."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        info = _INFO.get(cls)
        if info is not None and not info.members and (len(args) == 2 or kwargs):
            return _functional(cls, *args, **kwargs)
        if info is None or not info.members or kwargs or len(args) != 1:
            raise TypeError(f"{cls.__name__}() takes one value (a member's value) in the "
                            "sandbox")
        value = args[0]
        if isinstance(value, cls):
            return value
        found = info.find(value)
        if found is None and issubclass(cls, Flag) and type(value) is int:
            return _composite(cls, info, value)
        if found is None:
            raise ValueError(f"{repr_(value)} is not a valid {cls.__qualname__}")
        return found

    def __getitem__(cls, name: Any) -> Any:
        info = _INFO.get(cls)
        if info is None or type(name) is not str or name not in info.by_name:
            raise KeyError(name)
        return info.by_name[name]

    def __iter__(cls) -> Any:
        return counted(_listed(cls))

    def __reversed__(cls) -> Any:
        return counted(list(reversed(_listed(cls))))

    def __len__(cls) -> int:
        return len(_listed(cls))

    def __bool__(cls) -> bool:
        return True

    def __contains__(cls, member: Any) -> bool:
        if not isinstance(member, Enum):
            raise TypeError(f"unsupported operand type(s) for 'in': "
                            f"'{type(member).__name__}' and 'EnumType'")
        return isinstance(member, cls) and member in _INFO[type(member)].members

    def __repr__(cls) -> str:
        return f"<{'flag' if issubclass(cls, Flag) else 'enum'} {cls.__name__!r}>"

    def __setattr__(cls, name: str, value: Any) -> None:
        _check_change(cls, name)
        info = _INFO.get(cls)
        if info is not None and name in info.by_name:
            raise AttributeError(f"cannot reassign member {name!r}")
        super().__setattr__(name, value)

    def __delattr__(cls, name: str) -> None:
        _check_change(cls, name)
        info = _INFO.get(cls)
        if info is not None and name in info.by_name:
            raise AttributeError(f"cannot delete member {name!r}")
        super().__delattr__(name)


def _listed(cls: Any) -> list[Any]:
    """The members iteration and ``len`` see: a flag class's single bits only."""
    info = _INFO.get(cls)
    if info is None:
        return []
    if issubclass(cls, Flag):
        return [member for member in info.members if _single_bit(member.value)]
    return list(info.members)


def _check_change(cls: type, name: str) -> None:
    """An attribute set on (or deleted from) an enum class after its body: never on the
    facade's own bases (shared by every run), and on an ``IntEnum``/``StrEnum`` class
    only what its body could have defined (``S.encode = f`` would answer the guards'
    ``fmt.encode()`` for every member)."""
    if cls in FACADE_CLASSES:
        raise TypeError(f"class {cls.__name__!r} is shared by every script and cannot be "
                        "modified in the sandbox")
    data = _data_type(cls)
    if data is not None and _trusted_name(data, name):
        raise TypeError(f"{cls.__name__}.{name} cannot be set in the sandbox: it is an "
                        f"{_data_kind(data)}, whose members C code reads as "
                        f"{data.__name__}s")


def _trusted_name(data: type, name: str) -> bool:
    """A name an ``int``/``str`` member must keep as its type has it."""
    return (name.startswith("__") and name.endswith("__")) or hasattr(data, name)


def _data_kind(data: type) -> str:
    return "IntEnum" if data is int else "StrEnum"


def _member_only(self: Any, what: str) -> None:
    if not isinstance(self, Enum):
        raise TypeError(f"Enum.{what}() applies to enum members only")


def _shown_name(self: Any, what: str) -> str:
    """The member's name for its text, sized first: the functional form takes a name of
    any length (a class body one up to the script's), and a render sizes a member as a
    short repr, so ``str([m] * 200)`` of a member named by a million characters grew an
    in-process host by 204 MB past a 64 MiB run in one C call; sized here, each member's
    text polls the run's memory as its value's repr does."""
    name: str = self.name
    ensure_size(len(name) + len(type(self).__name__), what)
    return name


def _enum_repr(self: Any) -> str:
    _member_only(self, "__repr__")
    return f"<{type(self).__name__}.{_shown_name(self, 'repr()')}: {repr_(self.value)}>"


def _enum_str(self: Any) -> str:
    _member_only(self, "__str__")
    return f"{type(self).__name__}.{_shown_name(self, 'str()')}"


def _enum_format(self: Any, spec: str) -> str:
    """``format(member, spec)`` formats ``str(member)``, the class's own ``__str__``
    when it defines one (``f"{Color.RED}"``), as Python's ``Enum.__format__`` does."""
    _member_only(self, "__format__")
    text = str(self)
    if type(text) is not str:
        raise TypeError(f"__str__ returned non-string (type {type(text).__name__})")
    return format_(text, spec)


def _enum_hash(self: Any) -> int:
    _member_only(self, "__hash__")
    return hash(self.name)


def _shared_member(self: Any) -> None:
    """A member of the facade's own enum (``enum.STRICT``) is shared by every run."""
    if type(self) in FACADE_CLASSES:
        raise TypeError(f"{self!r} is shared by every script and cannot be modified in the "
                        "sandbox")


def _enum_setattr(self: Any, name: str, value: Any) -> None:
    _shared_member(self)
    if name in ("name", "value"):
        raise AttributeError(f"<enum 'Enum'> cannot set attribute {name!r}")
    data = _data_type(type(self))
    if data is not None and _trusted_name(data, name):
        raise AttributeError(f"{type(self).__name__} members cannot set attribute {name!r} "
                             f"in the sandbox (they are {data.__name__}s to C code)")
    object.__setattr__(self, name, value)


def _enum_delattr(self: Any, name: str) -> None:
    _shared_member(self)
    if name in ("name", "value"):
        raise AttributeError(f"<enum 'Enum'> cannot delete attribute {name!r}")
    object.__delattr__(self, name)


def _data_format(self: Any, spec: str) -> str:
    """``IntEnum``/``StrEnum``'s ``__format__``: ``int``'s or ``str``'s, with the spec's
    width sized first as ``format()`` does (a script reads this method off the class:
    ``IntEnum.__format__(1, '>9999999999')`` must not be one huge C allocation)."""
    _member_only(self, "__format__")
    data = _data_type(type(self))
    if data is None:
        raise TypeError("Enum.__format__() applies to enum members only")
    check_format_spec(spec)
    if data is int:
        return int.__format__(self, spec)
    return str.__format__(self, spec)


def _base(name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
    cls = type.__new__(EnumMeta, name, bases, {"__module__": "enum", "__qualname__": name,
                                                "__setattr__": _enum_setattr,
                                                "__delattr__": _enum_delattr, **namespace})
    _INFO[cls] = _Info()
    FACADE_CLASSES.add(cls)
    return cls


Enum: Final = _base("Enum", (object,), {"__repr__": _enum_repr, "__str__": _enum_str,
                                        "__format__": _enum_format, "__hash__": _enum_hash})
IntEnum: Final = _base("IntEnum", (int, Enum), {
    "__repr__": _enum_repr, "__str__": int.__repr__, "__format__": _data_format})
StrEnum: Final = _base("StrEnum", (str, Enum), {
    "__repr__": _enum_repr, "__str__": str.__str__, "__format__": _data_format})

_MIXED: Final = {data: _base("Enum", (data, Enum), {
    "__repr__": _enum_repr, "__str__": _enum_str, "__format__": _enum_format})
    for data in (int, str)}
"""The base ``class S(str, Enum)`` (``int``) is built on: members are real ``str``s, as a
``StrEnum``'s, shown (``str()``, f-strings) as an ``Enum``'s are, ``S.A``."""


def _mixed_bases(bases: tuple[Any, ...]) -> tuple[Any, ...]:
    """``(str, Enum)``, ``(int, Enum)`` (the builtins as the script names them: their
    stand-ins) as the enum bases standing for them; any other base as it is."""
    if not any(isinstance(base, EnumMeta) for base in bases):
        return bases
    found = {base: mixed for data, mixed in _MIXED.items()
             for base in (data, STAND_INS.get(data)) if base is not None}
    return tuple(found.get(base, base) if isinstance(base, type) else base for base in bases)


_MAX_COMPOSITES: Final = 4096
"""Composite members a flag class keeps (Python keeps every one)."""


def _single_bit(value: Any) -> bool:
    return type(value) is int and value > 0 and value & (value - 1) == 0


_BITS_PER_OPERATION: Final = 4096
"""Bits of an int one ``&`` handles per operation (a flag member may have 2**17)."""


def _width_cost(values: Any) -> int:
    return sum(1 + value.bit_length() // _BITS_PER_OPERATION for value in values)


def _bit_members(info: _Info, value: int) -> list[Any]:
    """The single-bit members whose bit ``value`` has, lowest first. Charged by the width
    of the members' values, not only their number: a walk over 4,000 members of 2**17
    bits is 4,000 ``&`` of 16 KB each, 20 ms that one operation a member charged as
    0.1 ms (a loop of ``F.A | i`` ran 40 times longer than its operations allow)."""
    bits = info.bits
    if bits is None:
        charge_operations(_width_cost(member.value for member in info.members))
        bits = info.bits = tuple(sorted(
            (member for member in info.members if _single_bit(member.value)),
            key=lambda member: member.value))
        info.bit_cost = _width_cost(member.value for member in bits)
    charge_operations(info.bit_cost)
    return [member for member in bits if value & member.value]


def _flag_only(self: Any, what: str) -> Any:
    if not isinstance(self, Flag):
        raise TypeError(f"Flag.{what}() applies to flag members only")
    return type(self)


def _boundary(cls: Any, info: _Info) -> Any:
    """The class's flag boundary: its own, or the default of its kind."""
    if info.boundary is not None:
        return info.boundary
    return KEEP if _data_type(cls) is int else STRICT


def _enum_bin(value: int, width: int) -> str:
    """``enum.bin``: the sign bit, a space, the bits padded with it to ``width``."""
    ceiling = 2 ** value.bit_length()
    text = bin(value + ceiling).replace("1", "0", 1) if value >= 0 else bin(
        ~value ^ (ceiling - 1) + ceiling)
    sign, digits = text[:3], text[3:]
    return f"{sign} {(sign[-1] * width + digits)[-width:] if len(digits) < width else digits}"


_SHOWN_BITS: Final = 256
"""Widest value whose bits a flag's ``ValueError`` shows (as CPython does)."""


def _invalid(cls: Any, info: _Info, value: int) -> ValueError:
    """CPython's error for a value outside a ``STRICT`` flag's bits."""
    width = max(value.bit_length(), info.mask.bit_length())
    if width > _SHOWN_BITS:
        return ValueError(f"{cls!r} invalid value {value}")
    return ValueError(f"{cls!r} invalid value {value}\n    given {_enum_bin(value, width)}"
                      f"\n  allowed {_enum_bin(info.mask, width)}")


def _composite(cls: Any, info: _Info, value: int) -> Any:
    """The member of ``value`` as CPython's ``Flag._missing_`` makes it, by the class's
    boundary: ``R|W``; outside its bits a ``ValueError`` (``STRICT``), the bits it has
    (``CONFORM``), the int itself (``EJECT``) or the bits kept (``KEEP``: ``A|C|8``); a
    nameless member for 0 or unknown bits alone."""
    found = info.composites.get(value)
    if found is not None:
        return found
    boundary = _boundary(cls, info)
    charge_operations(1 + value.bit_length() // _BITS_PER_OPERATION)
    all_bits = 2 ** info.mask.bit_length() - 1
    if not ~all_bits <= value <= all_bits or value & (all_bits ^ info.mask):
        if boundary is STRICT:
            raise _invalid(cls, info, value)
        if boundary is CONFORM:
            value &= info.mask
        elif boundary is EJECT:
            return value
        elif boundary is KEEP:
            if value < 0:
                value += max(all_bits + 1, 2 ** value.bit_length())
        else:
            raise ValueError(f"{cls!r} unknown flag boundary {repr_(boundary)}")
    if value < 0:
        value += all_bits + 1
    found = info.composites.get(value)
    if found is not None:
        return found
    data = _data_type(cls)
    known = _bit_members(info, value)
    names = [member.name for member in known]
    rest = value
    for member in known:
        rest &= ~member.value
    if rest and names:
        names.append(str(rest))
    member = int.__new__(cls, value) if data is int else object.__new__(cls)
    object.__setattr__(member, "name", "|".join(names) if names else None)
    object.__setattr__(member, "value", value)
    if len(info.composites) < _MAX_COMPOSITES:
        info.composites[value] = member
    return member


def _other_value(cls: type, other: Any) -> int | None:
    """``other``'s bits when ``cls`` may combine with it (an int for an ``IntFlag``)."""
    if isinstance(other, cls):
        bits: int = getattr(other, "value")  # noqa: B009 - a member's value (mypy: object)
        return bits
    if issubclass(cls, int) and type(other) is int:
        return other
    return None


def _flag_operator(name: str, apply: Any) -> Any:
    def operator(self: Any, other: Any) -> Any:
        cls = _flag_only(self, name)
        bits = _other_value(cls, other)
        if bits is None:
            return NotImplemented
        return cls(apply(self.value, bits))
    operator.__name__ = operator.__qualname__ = name
    return operator


def _flag_invert(self: Any) -> Any:
    """CPython's: the bits complemented (``KEEP``, ``EJECT``), or the class's other bits."""
    cls = _flag_only(self, "__invert__")
    info = _INFO[cls]
    if _boundary(cls, info) in (EJECT, KEEP):
        return cls(~self.value)
    return cls(info.mask & ~self.value)


def _flag_contains(self: Any, other: Any) -> bool:
    cls = _flag_only(self, "__contains__")
    bits = other.value if isinstance(other, cls) else None
    if bits is None:
        raise TypeError(f"unsupported operand type(s) for 'in': '{type(other).__name__}' "
                        f"and '{cls.__name__}'")
    return bool(bits & self.value == bits)


def _flag_iter(self: Any) -> Any:
    cls = _flag_only(self, "__iter__")
    return iter(_bit_members(_INFO[cls], self.value))


def _flag_len(self: Any) -> int:
    _flag_only(self, "__len__")
    return int(self.value.bit_count())


def _flag_bool(self: Any) -> bool:
    _flag_only(self, "__bool__")
    return bool(self.value)


def _flag_repr(self: Any) -> str:
    cls = _flag_only(self, "__repr__")
    if self.name is None:
        return f"<{cls.__name__}: {self.value}>"
    return f"<{cls.__name__}.{_shown_name(self, 'repr()')}: {self.value}>"


def _flag_str(self: Any) -> str:
    cls = _flag_only(self, "__str__")
    if self.name is None:
        return f"{cls.__name__}({self.value})"
    return f"{cls.__name__}.{_shown_name(self, 'str()')}"


def _flag_eq(self: Any, other: Any) -> Any:
    _flag_only(self, "__eq__")
    if type(other) is not type(self):
        return NotImplemented
    return self.value == other.value


def _flag_hash(self: Any) -> int:
    _flag_only(self, "__hash__")
    return hash(self.value)


_FLAG_OPERATORS: Final = {
    "__or__": _flag_operator("__or__", lambda a, b: a | b),
    "__and__": _flag_operator("__and__", lambda a, b: a & b),
    "__xor__": _flag_operator("__xor__", lambda a, b: a ^ b),
    "__ror__": _flag_operator("__ror__", lambda a, b: b | a),
    "__rand__": _flag_operator("__rand__", lambda a, b: b & a),
    "__rxor__": _flag_operator("__rxor__", lambda a, b: b ^ a),
    "__invert__": _flag_invert, "__contains__": _flag_contains, "__iter__": _flag_iter,
    "__len__": _flag_len, "__bool__": _flag_bool, "__repr__": _flag_repr,
}
Flag: Final = _base("Flag", (Enum,), {**_FLAG_OPERATORS, "__str__": _flag_str,
                                      "__eq__": _flag_eq, "__hash__": _flag_hash})
IntFlag: Final = _base("IntFlag", (int, Flag), {
    **_FLAG_OPERATORS, "__str__": int.__repr__, "__format__": _data_format,
    "__eq__": int.__eq__, "__hash__": int.__hash__})


def _data_type(cls: type) -> type | None:
    return int if issubclass(cls, int) else str if issubclass(cls, str) else None


_CLASS_BODY: Final = frozenset({"__module__", "__qualname__", "__doc__", "__classcell__",
                                "__static_attributes__", "__firstlineno__"})
_NOT_MEMBERS: Final = (FunctionType, property, classmethod, staticmethod)
_INHERITED_OK: Final = _CLASS_BODY | {"__dict__", "__weakref__"}
"""What type() itself puts into a class's namespace (besides the body's names)."""


def _build(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
           **kwargs: Any) -> Any:
    """``class name(bases): ...`` over an enum base: the class, then its members.
    ``boundary=`` (a flag's: ``class F(Flag, boundary=KEEP)``) is kept, or inherited."""
    boundary = kwargs.pop("boundary", None)
    if kwargs:
        raise TypeError(f"{name}.__init_subclass__() takes no keyword arguments")
    bases = _mixed_bases(bases)
    for base in bases:
        if not isinstance(base, EnumMeta):
            raise TypeError(f"class {name} cannot mix an enum with {base!r} in the sandbox "
                            "(use IntEnum or StrEnum for int or str members)")
        if len(base):
            raise TypeError(f"<enum {name!r}> cannot extend {base!r}")
    namespace.pop(ANNOTATED, None)
    data = next((kind for kind in map(_data_type, bases) if kind is not None), None)
    if data is not None:
        for key in namespace:
            if key not in _CLASS_BODY and _trusted_name(data, key):
                raise TypeError(f"class {name} cannot define {key} in the sandbox: it is an "
                                f"{_data_kind(data)}, whose members C code reads as "
                                f"{data.__name__}s")
        # What the script's own enum classes among the bases define counts too: a mixin
        # listed first (``class S(E, StrEnum)``) comes before ``str`` in the MRO.
        for base in bases:
            for klass in base.__mro__:
                if not isinstance(klass, EnumMeta) or klass in FACADE_CLASSES:
                    continue
                for key in klass.__dict__:
                    if key not in _INHERITED_OK and _trusted_name(data, key):
                        raise TypeError(f"class {name} cannot inherit {key} from "
                                        f"{klass.__name__} in the sandbox: it is an "
                                        f"{_data_kind(data)}, whose members C code reads "
                                        f"as {data.__name__}s")
    values = [(key, value) for key, value in namespace.items()
              if not key.startswith("_") and not isinstance(value, _NOT_MEMBERS)]
    if len(values) > _MAX_MEMBERS:
        raise ValueError(f"an enum has at most {_MAX_MEMBERS} members in the sandbox")
    for key, _ in values:
        del namespace[key]
    cls = ScriptMeta.__new__(EnumMeta, name, bases, namespace)
    info = _INFO[cls] = _Info()
    info.boundary = boundary if boundary is not None else next(
        (found.boundary for base in bases if (found := _INFO.get(base)) is not None
         and found.boundary is not None), None)
    flag = issubclass(cls, Flag)
    init = None if data is not None else getattr(cls, "__init__", None)
    written = _NextValue()
    str_enum = issubclass(cls, StrEnum)
    resolved: dict[int, Any] = {}
    for key, value in counted(values):
        if isinstance(value, _Auto):
            auto_value = value
            value = value.combined(resolved)
            if value is None:
                value = (key.lower() if str_enum
                         else 2 ** info.mask.bit_length() if flag
                         else written.next())
                resolved[id(auto_value)] = value
        written.add(value)
        if data is int:
            value = int(value)
        elif data is str and not str_enum:
            value = StrType(value)  # type: ignore[call-arg]  # CPython: ``str(value)``; charged
        if flag:
            if type(value) is not int or value < 0:
                raise TypeError(f"{name}.{key}: a flag's value is an int of 0 or more in the "
                                f"sandbox, not {repr_(value)}")
            info.mask |= value
        elif data is str and type(value) is not str:
            raise TypeError(f"{value!r} is not a string")
        alias = info.find(value)
        if alias is not None:
            type.__setattr__(cls, key, alias)
            info.by_name[key] = alias
            continue
        member = (data.__new__(cls, value) if data is not None  # type: ignore[call-overload]
                  else object.__new__(cls))  # type: ignore[arg-type]
        object.__setattr__(member, "name", key)
        object.__setattr__(member, "value", value)
        if init is not None and init is not object.__init__:
            init(member, *(value if isinstance(value, tuple) else (value,)))
        type.__setattr__(cls, key, member)
        info.members.append(member)
        info.bits = None
        info.by_name[key] = member
        try:
            info.by_value[guarded_key(value)] = member
        except TypeError:
            info.unhashable.append((value, member))
    return cls


def _functional(base: Any, value: Any = None, names: Any = None, **options: Any) -> Any:
    """``Enum("Color", "RED GREEN")``, ``Enum("Level", ["LOW", "HIGH"])``, ``IntEnum("P",
    [("LOW", 1), ("HIGH", 5)])``, ``Enum("E", {"A": "a"})``: the class the ``class``
    statement would build (names alone take ``auto()`` values; ``start`` the first;
    ``boundary`` a flag's, as the class keyword: ``Flag("F", "A B", boundary=KEEP)``)."""
    start = options.pop("start", None)
    boundary = options.pop("boundary", None)
    if options:
        raise TypeError(f"{base.__name__}() takes only `start=` and `boundary=` besides the "
                        f"names in the sandbox, not {', '.join(f'{k}=' for k in options)}")
    if start is not None and type(start) is not int:
        raise TypeError(f"{base.__name__}(): start= is an int")
    if type(value) is not str or not value.isidentifier() or value.startswith("_"):
        raise TypeError(f"{base.__name__}() takes a class name (an identifier not "
                        "starting with `_`) and the member names in the sandbox")
    if isinstance(names, str):
        if len(names) > _MAX_MEMBERS * _NAME_TEXT:
            raise ValueError(f"an enum has at most {_MAX_MEMBERS} members in the sandbox")
        names = names.replace(",", " ").split()
    pairs: list[tuple[Any, Any]] = []
    items = names.items() if isinstance(names, dict) else names
    if items is None:
        raise TypeError(f"{base.__name__}() needs the member names")
    for index, item in enumerate(counted(items)):
        if len(pairs) >= _MAX_MEMBERS:
            raise ValueError(f"an enum has at most {_MAX_MEMBERS} members in the sandbox")
        if isinstance(item, str):
            auto_value = auto() if start is None or issubclass(base, Flag) else start + index
            pairs.append((item, auto_value))
        elif isinstance(item, tuple | list) and len(item) == 2:
            pairs.append((item[0], item[1]))
        else:
            raise TypeError(f"{base.__name__}(): a member is a name or a (name, value) pair, "
                            f"not {repr_(item)}")
    namespace: dict[str, Any] = {"__module__": MAIN_MODULE, "__qualname__": value}
    for key, member in pairs:
        if type(key) is not str or not key.isidentifier() or key.startswith("_") or (
                key in namespace):
            raise ValueError(f"{base.__name__}(): {repr_(key)} cannot be a member name in "
                             "the sandbox")
        namespace[key] = member
    return _build(value, (base,), namespace, boundary=boundary)


CLASS_BUILDERS[EnumMeta] = _build


def unique(enumeration: Any) -> Any:
    """Refuse aliases (two names for one value)."""
    info = _INFO.get(enumeration) if isinstance(enumeration, EnumMeta) else None
    if info is None:
        raise TypeError("unique() decorates the script's own enum classes only")
    aliases = [(key, member.name) for key, member in info.by_name.items() if key != member.name]
    if aliases:
        shown = ", ".join(f"{alias} -> {canonical}" for alias, canonical in aliases)
        raise ValueError(f"duplicate values found in {enumeration!r}: {shown}")
    return enumeration


def _facade_str_enum(name: str, values: dict[str, str]) -> Any:
    """A ``StrEnum`` of the facade's own (shared by every run, so built outside any)."""
    cls = _base(name, (StrEnum,), {})
    info = _INFO[cls]
    for key, value in values.items():
        member: Any = str.__new__(cls, value)
        object.__setattr__(member, "name", key)
        object.__setattr__(member, "value", value)
        type.__setattr__(cls, key, member)
        info.members.append(member)
        info.by_name[key] = member
        info.by_value[value] = member
    return cls


FlagBoundary: Final = _facade_str_enum("FlagBoundary", {
    "STRICT": "strict", "CONFORM": "conform", "EJECT": "eject", "KEEP": "keep"})
STRICT: Final = FlagBoundary.STRICT
CONFORM: Final = FlagBoundary.CONFORM
EJECT: Final = FlagBoundary.EJECT
KEEP: Final = FlagBoundary.KEEP

FACADE: Final = Facade("enum", {"Enum": Enum, "IntEnum": IntEnum, "StrEnum": StrEnum,
                                "Flag": Flag, "IntFlag": IntFlag, "auto": auto,
                                "unique": unique, "FlagBoundary": FlagBoundary,
                                "STRICT": STRICT, "CONFORM": CONFORM, "EJECT": EJECT,
                                "KEEP": KEEP})
