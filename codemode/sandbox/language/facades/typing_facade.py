"""``typing`` for scripts: the names models import for annotations, as inert placeholders,
and the class forms models write: ``NamedTuple``, ``TypedDict``, ``Protocol``, ``Generic``.

The policy drops every annotation unevaluated, so ``from typing import List`` only has
to succeed and ``List[dict]`` (a type alias, a ``cast``) only has to evaluate. Each name
is a :class:`Placeholder`: subscriptable, combinable with ``|``, shown as
``typing.Name``, and nothing else (no attributes, no ``__dict__``, no real typing
object). ``List``, ``Dict``, ``Set``, ``FrozenSet``, ``Tuple`` and ``Type`` also answer
``isinstance`` like the builtin they stand for, as in Python.

As a base, ``Protocol`` and ``Generic[T]`` leave a plain script class, but ``isinstance``
against a protocol answers as CPython's: a ``TypeError`` unless it is
``@runtime_checkable``, then whether the object has the protocol's members (read as the
script reads attributes, so a host object's private ones stay unseen); ``class
P(NamedTuple)`` is a ``collections.namedtuple`` class of the fields annotated in its body
(the policy records their names: annotations are never evaluated), and ``class
M(TypedDict)`` a callable that makes plain dicts, as in Python. Each is built by
:data:`~codemode.sandbox.language.guards.CLASS_BUILDERS`, through ``ScriptMeta``.
"""

from __future__ import annotations

import sys
import weakref
from functools import partial
from typing import Any, Final, final

from codemode.sandbox.language.builtins import DictType, repr_
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.collections_facade import namedtuple
from codemode.sandbox.language.guards import (
    CLASS_ANNOTATIONS,
    CLASS_BUILDERS,
    GENERIC_CLASSES,
    INSTANCE_CHECKS,
    ScriptMeta,
    SelfGuarded,
    build_class,
    guarded_hasattr,
)
from codemode.sandbox.language.policy import ANNOTATED, SCRIPT_METHODS
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import counted

__all__ = ["FACADE", "GENERIC_BASE", "NamedTuple", "Placeholder", "TypedDict", "type_alias"]

_MAX_NAME: Final = 100


@final
class Placeholder(SelfGuarded):
    """A typing name: ``X[...]`` and ``X | Y`` give placeholders; ``isinstance`` works
    only for an unsubscripted alias of a builtin type (``origin``)."""

    __slots__ = ("_module", "_name", "_origin")

    def __init__(self, name: str, origin: type | None = None, module: str = "typing.") -> None:
        self._name = name
        self._origin = origin
        self._module = module

    def __repr__(self) -> str:
        return self._name if self._name.startswith("~") else f"{self._module}{self._name}"

    def __getitem__(self, params: Any) -> Placeholder:
        # The parameters are not rendered: their text could be as big as the script likes.
        return Placeholder(f"{self._name.lstrip('~')}[...]", module=self._module)

    def __or__(self, other: Any) -> Placeholder:
        return Placeholder("Union[...]")

    __ror__ = __or__

    def base_name(self) -> str:
        """The typing name this placeholder stands for (``Generic`` of ``Generic[T]``)."""
        return self._name.split("[", 1)[0]

    def subscripted(self) -> bool:
        """Whether it was given parameters (``Generic[T]``, ``Protocol[T]``)."""
        return self._name.endswith("[...]")

    def __instancecheck__(self, obj: Any) -> bool:
        if self._origin is None:
            raise TypeError(f"{self!r} cannot be used with isinstance() in the sandbox: "
                            "check against a builtin type such as list or dict")
        return isinstance(obj, self._origin)


_ALIASES: Final[dict[str, type]] = {
    "List": list, "Dict": dict, "Set": set, "FrozenSet": frozenset, "Tuple": tuple,
    "Type": type, "Text": str,
}
"""Aliases of builtin types: ``isinstance(x, List)`` is ``isinstance(x, list)``."""

_NAMES: Final = (
    "Protocol", "Generic", "Self", "Never", "TypeAlias", "Required", "NotRequired",
    "DefaultDict", "Deque", "Counter", "OrderedDict", "Hashable", "Sized", "Collection",
    "Container", "Reversible", "AbstractSet", "MutableSet", "MutableSequence",
    "Any", "Optional", "Union", "Callable", "Iterable", "Iterator", "Sequence", "Mapping",
    "MutableMapping", "Literal", "Awaitable", "Coroutine", "AsyncIterator", "AsyncIterable",
    "Generator", "AsyncGenerator", "ClassVar", "Final", "Annotated", "NoReturn",
    "TypeGuard", "TypeIs", "Concatenate", "Unpack", "LiteralString",
    "SupportsInt", "SupportsFloat", "SupportsIndex", "SupportsAbs", "SupportsRound",
)
"""The other placeholders (special forms and abstract collections)."""


def cast(typ: Any, val: Any) -> Any:
    """``val`` itself: a cast only informs a type checker."""
    return val


def assert_type(val: Any, typ: Any, /) -> Any:
    """``val`` itself: ``assert_type`` only informs a type checker."""
    return val


_NEVER_SHOWN: Final = 100
"""CPython's ``_ASSERT_NEVER_REPR_MAX_LENGTH``: how much of the value the error shows."""


def assert_never(arg: Any, /) -> Any:
    """CPython's ``AssertionError`` for a case a type checker proved unreachable, naming
    the value (its repr as the script's ``repr`` makes it, cut as CPython cuts it)."""
    value = repr_(arg)
    if len(value) > _NEVER_SHOWN:
        value = value[:_NEVER_SHOWN] + "..."
    raise AssertionError(f"Expected code to be unreachable, but got: {value}")


@final
class NewType(SelfGuarded):
    """``UserId = NewType("UserId", int)``: calling it hands its argument back, as in
    CPython (the type is for a type checker only)."""

    __slots__ = ("_name",)

    def __init__(self, name: str, tp: Any, /) -> None:
        if not isinstance(name, str):
            raise TypeError("NewType name must be a string")
        self._name = name[:_MAX_NAME]

    def __call__(self, value: Any, /) -> Any:
        return value

    def __repr__(self) -> str:
        return f"__main__.{self._name}"

    def __or__(self, other: Any) -> Placeholder:
        return Placeholder("Union[...]")

    __ror__ = __or__


def _as_is(obj: Any) -> Any:
    """A decorator that informs a type checker only: ``@overload`` (the last ``def`` of the
    name is the one that runs, as in Python), ``@final``."""
    return obj


def TypeVar(name: str, *constraints: Any, **options: Any) -> Placeholder:
    """A placeholder named ``~name`` (constraints and ``bound=`` are not checked); also
    ``ParamSpec("P")``, whose ``P.args`` appears in annotations only, which are never
    evaluated."""
    return Placeholder(f"~{_type_param_name(name)}")


def TypeVarTuple(name: str, **options: Any) -> Placeholder:
    """``Ts = TypeVarTuple("Ts")``, shown as ``Ts`` as in CPython (``*Ts`` and
    ``Unpack[Ts]`` appear in annotations only)."""
    return Placeholder(_type_param_name(name), module="")


def _type_param_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError("TypeVar name must be a string")
    if len(name) > _MAX_NAME:
        raise ValueError(f"TypeVar names are at most {_MAX_NAME} characters in the sandbox")
    return name


def type_alias(name: str, generic: bool) -> Placeholder:
    """What ``type Price = float`` (3.12) binds: shown as ``Price``, as CPython shows its
    ``TypeAliasType``; subscriptable (``Pair[int]``) as a placeholder is, with parameters
    or not (CPython refuses ``Price[int]`` when it was declared without)."""
    if len(name) > _MAX_NAME:  # an identifier the script wrote: no cap of its own
        raise ValueError(f"type alias names are at most {_MAX_NAME} characters in the "
                         "sandbox")
    return Placeholder(name, module="")


GENERIC_BASE: Final = Placeholder("Generic[...]")
"""The base CPython adds to ``class Box[T]:`` (3.12): ``Box[int]`` is ``Box``."""


_BASE_ONLY: Final = frozenset({"Protocol", "Generic"})
"""Placeholders a class may name as a base (the class is a plain script class)."""


def _plain_class(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
                 **kwargs: Any) -> Any:
    """``class C(Protocol)``, ``class Box(Generic[T])``: the typing bases are dropped, and
    the class is built over the others as if they were its only bases (``class
    C(Protocol, StrEnum)`` is an enum class, under the enum builder's rules)."""
    kept = []
    for base in bases:
        if isinstance(base, Placeholder):
            if base.base_name() not in _BASE_ONLY:
                raise TypeError(f"class {name} cannot subclass {base!r} in the sandbox")
            continue
        kept.append(base)
    protocol = any(isinstance(b, Placeholder) and b.base_name() == "Protocol" for b in bases)
    if protocol:
        _check_protocol_bases(kept, bases)
    cls = build_class(name, tuple(kept) or (object,), namespace, **kwargs)
    if isinstance(cls, ScriptMeta) and any(
            isinstance(b, Placeholder) and b.subscripted() for b in bases):
        GENERIC_CLASSES.add(cls)  # ``class Box(Generic[T])``: ``Box[int]`` is ``Box``
    if protocol:
        _PROTOCOLS[cls] = _members(cls)
        INSTANCE_CHECKS[cls] = _refuse_check
        if any(base in _RUNTIME for base in cls.__mro__[1:]):
            runtime_checkable(cls)  # as CPython, which inherits the mark
    return cls


_CONFLICT: Final = ("metaclass conflict: the metaclass of a derived class must be a "
                    "(non-strict) subclass of the metaclasses of all its bases")


def _check_protocol_bases(bases: list[Any], written: tuple[Any, ...]) -> None:
    """CPython's TypeError for a protocol's bases: a metaclass conflict for a base with a
    metaclass of its own (an enum, a ``TypedDict``), its refusal of a base that is not a
    protocol (``class P(Protocol, Exception)``) and an inconsistent MRO (``class
    P(Protocol, P0)``), the last two in the order of the running CPython (3.11 makes the
    class before it checks the bases). ``written``: the bases as the class statement
    names them, ``Protocol`` among them."""
    others = [base for base in bases if not (base is object or base in _PROTOCOLS)]
    for base in others:
        if isinstance(base, TypedDictType) or (
                type(base) in CLASS_BUILDERS and isinstance(base, type)
                and issubclass(type(base), type)):
            raise TypeError(_CONFLICT)
    refusal = others and TypeError(
        f"Protocols can only inherit from other protocols, got {others[0]!r}")
    if refusal and sys.version_info >= (3, 12):
        raise refusal
    _check_mro(written)
    if refusal:
        raise refusal


_MRO_BREAK: Final = "\n" if sys.version_info < (3, 13) else " "
"""What CPython's MRO error has between its words "resolution" and "order"."""
_PROTOCOL_BASE: Final = "Protocol"
_GENERIC_BASE: Final = "Generic"


def _typing_mro(base: Any) -> list[Any]:
    """``base``'s MRO as CPython has it: with ``Protocol`` and ``Generic`` (which the
    sandbox drops from a script class's bases) before ``object`` when a class of it is a
    protocol or generic."""
    if isinstance(base, Placeholder):  # Protocol or Generic: the others are refused
        return ([_PROTOCOL_BASE, _GENERIC_BASE, object] if base.base_name() == _PROTOCOL_BASE
                else [_GENERIC_BASE, object])
    mro = list(base.__mro__)
    if any(cls in _PROTOCOLS for cls in mro):
        mro[-1:-1] = [_PROTOCOL_BASE, _GENERIC_BASE]
    elif any(cls in GENERIC_CLASSES for cls in mro):
        mro[-1:-1] = [_GENERIC_BASE]
    return mro


def _check_mro(written: tuple[Any, ...]) -> None:
    """CPython's TypeError when no C3 linearization of ``written`` exists (``class
    P(Protocol, Impl)``, ``Impl`` a class over a protocol): the heads left, named.
    ``Generic[T]`` beside ``Protocol`` is no base (its ``__mro_entries__`` drops it)."""
    written = tuple(b for b in written
                    if not (isinstance(b, Placeholder) and b.base_name() == _GENERIC_BASE))
    if len({id(b) for b in written}) < len(written) or not all(
            isinstance(b, Placeholder | type) for b in written):
        return  # CPython's "duplicate base class" (or its error for a base that is no
        # class) comes first: the class builder's
    sequences = [*(_typing_mro(base) for base in written),
                 [_PROTOCOL_BASE if isinstance(b, Placeholder) else b for b in written]]
    # each step looks at every sequence's head: C3's own cost, charged first
    charge_operations(sum(map(len, sequences)) * len(sequences))
    at = [0] * len(sequences)
    in_tails: dict[int, int] = {}
    for sequence in sequences:
        for item in sequence[1:]:
            in_tails[id(item)] = in_tails.get(id(item), 0) + 1
    while True:
        heads = [sequence[i] for sequence, i in zip(sequences, at, strict=True)
                 if i < len(sequence)]
        if not heads:
            return
        head = next((h for h in heads if not in_tails.get(id(h))), None)
        if head is None:
            names = dict.fromkeys(h if isinstance(h, str) else h.__name__ for h in heads)
            raise TypeError(f"Cannot create a consistent method resolution{_MRO_BREAK}order "
                            f"(MRO) for bases {', '.join(names)}")
        for n, sequence in enumerate(sequences):
            if at[n] < len(sequence) and sequence[at[n]] is head:
                at[n] += 1
                if at[n] < len(sequence):
                    in_tails[id(sequence[at[n]])] -= 1


def _no_protocol_base(bases: tuple[Any, ...]) -> None:
    """``class M(TypedDict, Protocol)``, ``class P(NamedTuple, Protocol)``: CPython's
    metaclass conflict (their metaclasses and the protocols' are unrelated)."""
    if any(isinstance(b, Placeholder) and b.base_name() == "Protocol" for b in bases):
        raise TypeError(_CONFLICT)


_PROTOCOLS: Final[weakref.WeakKeyDictionary[type, frozenset[str]]] = (
    weakref.WeakKeyDictionary())
"""A ``class P(Protocol)`` → its members (its own and its protocol bases')."""

_RUNTIME: Final[weakref.WeakSet[type]] = weakref.WeakSet()
"""The ``@runtime_checkable`` protocols."""

_NOT_MEMBERS: Final = frozenset({"__init__", "__module__", "__qualname__", "__doc__",
                                 "__dict__", "__weakref__", "__slots__", "__annotations__",
                                 "__match_args__", "__firstlineno__", "__static_attributes__"})


def _members(cls: type) -> frozenset[str]:
    """What an instance of the protocol ``cls`` has, as CPython lists them: the names its
    body defines or annotates, and its protocol bases' members."""
    own = {key for key in vars(cls) if key not in _NOT_MEMBERS}
    own.update(CLASS_ANNOTATIONS.get(cls, ()))
    for base in cls.__mro__[1:]:
        own.update(_PROTOCOLS.get(base, ()))
    return frozenset(own)


def _refuse_check(obj: Any) -> bool:
    raise TypeError("Instance and class checks can only be used with @runtime_checkable "
                    "protocols")


def _has_members(members: frozenset[str], obj: Any) -> bool:
    """``isinstance(obj, P)`` of a ``@runtime_checkable`` protocol: ``obj`` has each member,
    read as the script reads attributes (a special method: on its class), a member an
    operation (a protocol of 11,000 members was read for one: 35 ms an isinstance)."""
    for member in counted(members):
        if member.startswith("__") and member.endswith("__"):
            if member not in SCRIPT_METHODS or not hasattr(type(obj), member):
                return False
        elif not guarded_hasattr(obj, member):
            return False
    return True


def runtime_checkable(cls: Any) -> Any:
    """``@runtime_checkable``: ``isinstance`` against the protocol checks the members."""
    members = _PROTOCOLS.get(cls) if isinstance(cls, type) else None
    if members is None:
        raise TypeError(f"@runtime_checkable can be only applied to protocol classes, got {cls!r}")
    INSTANCE_CHECKS[cls] = partial(_has_members, members)
    _RUNTIME.add(cls)
    return cls


def _fields(name: str, namespace: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """The annotated names of a class body (in order) and their defaults (popped)."""
    names = list(namespace.pop(ANNOTATED, ()))
    defaults: list[Any] = []
    for field in names:
        if field in namespace:
            defaults.append(namespace.pop(field))
        elif defaults:
            at = names.index(field)
            raise TypeError(f"Non-default namedtuple field {field} cannot follow default "
                            f"field{'s' if len(defaults) > 1 else ''} "
                            f"{', '.join(names[at - len(defaults):at])}")
    return names, defaults


class _FormMeta(type):
    """Metaclass of ``NamedTuple`` and ``TypedDict``: calling them is the functional form."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.functional(*args, **kwargs)  # type: ignore[attr-defined]

    def __repr__(cls) -> str:
        return f"<class 'typing.{cls.__name__}'>"


class NamedTuple(metaclass=_FormMeta):
    """``class P(NamedTuple): x: int; y: int = 0`` or ``NamedTuple("P", [("x", int)])``."""

    @staticmethod
    def functional(typename: str, fields: Any = None, /, **kwargs: Any) -> type:
        if fields is None:
            fields = list(kwargs.items())
        elif kwargs:
            raise TypeError("Either list of fields or keywords can be provided to "
                            "NamedTuple, not both")
        items = list(fields.items()) if isinstance(fields, dict) else list(fields)
        names = []
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError("NamedTuple('Name', [(f0, t0), (f1, t1), ...]); each t must "
                                "be a type")
            names.append(item[0])
        return namedtuple(typename, names)


def _named_tuple_class(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
                       **kwargs: Any) -> Any:
    _no_protocol_base(bases)
    if kwargs:
        raise TypeError("NamedTupleMeta.__new__() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    if any(base is not NamedTuple for base in bases):
        raise TypeError("can only inherit from a NamedTuple type and Generic")
    names, defaults = _fields(name, namespace)
    base = namedtuple(name, names, defaults=defaults)
    return ScriptMeta(name, (base,), namespace)


@final
class TypedDictType(SelfGuarded):
    """A ``TypedDict`` class as a script holds it: calling it makes a plain dict."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        made: dict[Any, Any] = DictType(*args, **kwargs)  # type: ignore[assignment]
        return made

    def __repr__(self) -> str:
        return f"<class {self._name!r}>"

    def __instancecheck__(self, obj: Any) -> bool:
        raise TypeError("TypedDict does not support instance and class checks")

    def __subclasscheck__(self, cls: Any) -> bool:
        raise TypeError("TypedDict does not support instance and class checks")


class TypedDict(metaclass=_FormMeta):
    """``class Movie(TypedDict): title: str`` or ``TypedDict("Movie", {"title": str})``."""

    @staticmethod
    def functional(typename: str, fields: Any = None, /, *, total: bool = True,
                   **kwargs: Any) -> TypedDictType:
        if not isinstance(typename, str):
            raise TypeError("TypedDict() name must be a string")
        return TypedDictType(typename[:_MAX_NAME])


def _typed_dict_class(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
                      *, total: bool = True, **kwargs: Any) -> Any:
    _no_protocol_base(bases)
    if kwargs:
        raise TypeError(f"TypedDict takes only the keyword total, not "
                        f"{', '.join(sorted(kwargs))}")
    for base in bases:
        if not (base is TypedDict or isinstance(base, TypedDictType)):
            raise TypeError("cannot inherit from both a TypedDict type and a non-TypedDict "
                            "base class")
    for key in namespace:
        if not (key.startswith("__") or key == ANNOTATED):
            raise TypeError(f"TypedDict classes can contain only annotations ({key!r} is "
                            "not one)")
    return TypedDictType(name)


CLASS_BUILDERS[Placeholder] = _plain_class
CLASS_BUILDERS[TypedDictType] = _typed_dict_class


def _form_class(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
                **kwargs: Any) -> Any:
    if TypedDict in bases:
        return _typed_dict_class(name, bases, namespace, **kwargs)
    return _named_tuple_class(name, bases, namespace, **kwargs)


CLASS_BUILDERS[_FormMeta] = _form_class


FACADE: Final = Facade("typing", {
    "NamedTuple": NamedTuple, "TypedDict": TypedDict,
    **{name: Placeholder(name, origin) for name, origin in _ALIASES.items()},
    **{name: Placeholder(name) for name in _NAMES},
    "TYPE_CHECKING": False,
    "AnyStr": Placeholder("~AnyStr"),
    **dict.fromkeys(("TypeVar", "ParamSpec"), TypeVar),
    "TypeVarTuple": TypeVarTuple,
    "cast": cast,
    "NewType": NewType,
    "assert_never": assert_never,
    "assert_type": assert_type,
    **dict.fromkeys(("overload", "final", "no_type_check", "override"), _as_is),
    "runtime_checkable": runtime_checkable,
})
