"""``enum`` for scripts: ``Enum``, ``IntEnum``, ``StrEnum``, ``auto`` and ``unique``, built here.

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

``IntEnum`` and ``StrEnum`` members are real ``int``/``str`` instances (tool arguments,
JSON results, ``==`` and hashing with plain values work as in Python). C code and the
size guards trust such an object's length, digits and hash, so the body of an ``IntEnum``
or ``StrEnum`` (or of an enum class under one) may define no special method and no name
``int``/``str`` has: only members and new methods.
"""

from __future__ import annotations

from types import FunctionType
from typing import Any, Final, final

from codemode.sandbox.language.builtins import check_format_spec, format_, repr_
from codemode.sandbox.language.compare import GUARDS, guarded_key
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import (
    CLASS_BUILDERS,
    FACADE_CLASSES,
    ScriptMeta,
    SelfGuarded,
)
from codemode.sandbox.language.policy import ANNOTATED
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import counted

__all__ = ["FACADE", "EnumMeta"]

_MAX_MEMBERS: Final = 4096


@final
class _Auto(SelfGuarded):
    """``auto()``: the member's value is chosen when the class is built."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "auto()"


def auto() -> _Auto:
    """The next value: the last int value + 1 (from 1), a ``StrEnum`` member's lower-cased
    name."""
    return _Auto()


@final
class _Info:
    """One enum class's members (host side)."""

    __slots__ = ("by_name", "by_value", "members", "unhashable")

    def __init__(self) -> None:
        self.members: list[Any] = []
        self.by_name: dict[str, Any] = {}
        self.by_value: dict[Any, Any] = {}
        self.unhashable: list[tuple[Any, Any]] = []

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
        if info is None or not info.members or kwargs or len(args) != 1:
            raise TypeError(f"{cls.__name__}() takes one value (a member's value) in the "
                            "sandbox")
        value = args[0]
        if isinstance(value, cls):
            return value
        found = info.find(value)
        if found is None:
            raise ValueError(f"{repr_(value)} is not a valid {cls.__qualname__}")
        return found

    def __getitem__(cls, name: Any) -> Any:
        info = _INFO.get(cls)
        if info is None or type(name) is not str or name not in info.by_name:
            raise KeyError(name)
        return info.by_name[name]

    def __iter__(cls) -> Any:
        info = _INFO.get(cls)
        return counted(list(info.members) if info is not None else [])

    def __reversed__(cls) -> Any:
        info = _INFO.get(cls)
        return counted(list(reversed(info.members)) if info is not None else [])

    def __len__(cls) -> int:
        info = _INFO.get(cls)
        return 0 if info is None else len(info.members)

    def __bool__(cls) -> bool:
        return True

    def __contains__(cls, member: Any) -> bool:
        if not isinstance(member, Enum):
            raise TypeError(f"unsupported operand type(s) for 'in': "
                            f"'{type(member).__name__}' and 'EnumType'")
        return isinstance(member, cls) and member in _INFO[type(member)].members

    def __repr__(cls) -> str:
        return f"<enum {cls.__name__!r}>"

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


def _enum_repr(self: Any) -> str:
    _member_only(self, "__repr__")
    return f"<{type(self).__name__}.{self.name}: {repr_(self.value)}>"


def _enum_str(self: Any) -> str:
    _member_only(self, "__str__")
    return f"{type(self).__name__}.{self.name}"


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


def _enum_setattr(self: Any, name: str, value: Any) -> None:
    if name in ("name", "value"):
        raise AttributeError(f"<enum 'Enum'> cannot set attribute {name!r}")
    data = _data_type(type(self))
    if data is not None and _trusted_name(data, name):
        raise AttributeError(f"{type(self).__name__} members cannot set attribute {name!r} "
                             f"in the sandbox (they are {data.__name__}s to C code)")
    object.__setattr__(self, name, value)


def _enum_delattr(self: Any, name: str) -> None:
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


def _data_type(cls: type) -> type | None:
    return int if issubclass(cls, int) else str if issubclass(cls, str) else None


_CLASS_BODY: Final = frozenset({"__module__", "__qualname__", "__doc__", "__classcell__",
                                "__static_attributes__", "__firstlineno__"})
_NOT_MEMBERS: Final = (FunctionType, property, classmethod, staticmethod)
_INHERITED_OK: Final = _CLASS_BODY | {"__dict__", "__weakref__"}
"""What type() itself puts into a class's namespace (besides the body's names)."""


def _build(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
           **kwargs: Any) -> Any:
    """``class name(bases): ...`` over an enum base: the class, then its members."""
    if kwargs:
        raise TypeError("class keyword arguments are not supported in the sandbox")
    for base in bases:
        if not isinstance(base, EnumMeta):
            raise TypeError(f"class {name} cannot mix an enum with {base!r} in the sandbox "
                            "(use IntEnum or StrEnum for int or str members)")
        if len(base):
            raise TypeError(f"{name!r} cannot extend {base!r}")
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
    init = None if data is not None else getattr(cls, "__init__", None)
    last: Any = 0
    for key, value in counted(values):
        if isinstance(value, _Auto):
            value = key.lower() if data is str else last + 1 if isinstance(last, int) else 1
        if data is int:
            value = int(value)
        elif data is str and type(value) is not str:
            raise TypeError(f"{value!r} is not a string")
        last = value
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
        info.by_name[key] = member
        try:
            info.by_value[guarded_key(value)] = member
        except TypeError:
            info.unhashable.append((value, member))
    return cls


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


FACADE: Final = Facade("enum", {"Enum": Enum, "IntEnum": IntEnum, "StrEnum": StrEnum,
                                "auto": auto, "unique": unique})
