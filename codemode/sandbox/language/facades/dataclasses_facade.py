"""``dataclasses`` for scripts: ``@dataclass`` over the fields the script planner marks.

The policy drops annotations unevaluated, so ``name: str`` leaves no trace in a class
body. For a class decorated with ``dataclass``, the planner
(:mod:`codemode.mode.dialects`, in strict mode too) rewrites each annotated line of the
body, on its own line, to what CPython treats the same: ``name: str = dataclasses.field()``,
and ``n: int = 0`` to ``n: int = dataclasses.field(default=0)``; a ``ClassVar`` stays a
class attribute and ``def __post_init__`` becomes ``def dataclass_post_init`` (a script
may not define other special methods). :func:`dataclass` then reads the fields from the
class namespace in order.

The methods it adds are host functions: they read and set only the fields, compare and
hash through the sandbox's charged guards, render with the sandbox's ``repr``, call a
``default_factory`` as the script's own code would, and (through
:func:`~codemode.sandbox.language.guards.class_method`) apply only to the class's own
instances and refuse to run outside the run that made the class: ``P.__init__`` read off
the class must not write the fields of any other object. Only script classes can be
decorated.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.builtins import repr_
from codemode.sandbox.language.compare import GUARDS, guarded_hash
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.copy_facade import MAX_DEPTH, deepcopy
from codemode.sandbox.language.facades.enum_facade import EnumMeta
from codemode.sandbox.language.guards import (
    CLASS_ANNOTATIONS,
    FACADE_CLASSES,
    NAMED_TUPLES,
    ScriptMeta,
    SelfGuarded,
    class_method,
    refuse,
)
from codemode.sandbox.language.policy import KW_ONLY_MARK, POST_INIT, private_name_ok
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.slots import SLOTS_KEY, slotted_setattr
from codemode.sandbox.language.state import is_async_script_function

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FACADE", "POST_INIT"]

"""What the planner renames ``__post_init__`` to in a dataclass body."""


@final
class _Sentinel(SelfGuarded):
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


MISSING: Final = _Sentinel("MISSING")
KW_ONLY: Final = _Sentinel("KW_ONLY")


class FrozenInstanceError(AttributeError):
    """Raised on assigning to a field of a frozen dataclass (as in CPython)."""


_FIELD_NAMES: Final = frozenset({"name", "default", "default_factory", "init", "repr",
                                 "hash", "compare", "kw_only", "metadata"})


@final
class Field(SelfGuarded):
    """One field: what ``dataclasses.field()`` returns and ``fields()`` lists."""

    __slots__ = ("compare", "default", "default_factory", "hash", "init", "kw_only",
                 "metadata", "name", "repr")

    def __init__(self, *, default: Any, default_factory: Any, init: bool, repr: bool,
                 hash: Any, compare: bool, metadata: Any, kw_only: Any) -> None:
        self.name: str | None = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.metadata = {} if metadata is None else metadata
        self.kw_only = kw_only

    def sandbox_getattr(self, name: str) -> Any:
        if name in _FIELD_NAMES:
            return getattr(self, name)
        raise refuse(self, name)

    def __repr__(self) -> str:
        return f"Field(name={self.name!r},init={self.init!r},repr={self.repr!r})"


def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
          repr: bool = True, hash: Any = None, compare: bool = True, metadata: Any = None,
          kw_only: Any = MISSING) -> Field:
    """A field's options (``name: T = field(...)``)."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    if default_factory is not MISSING and not callable(default_factory):
        raise TypeError("default_factory must be callable")
    return Field(default=default, default_factory=default_factory, init=init, repr=repr,
                 hash=hash, compare=compare, metadata=metadata, kw_only=kw_only)


_FIELDS_KEY: Final = "_sandbox_fields_"
"""Where a dataclass keeps its fields (a name no script can bind or read)."""


_FROZEN_KEY: Final = "_sandbox_frozen_"
"""Whether a dataclass is frozen (its subclasses must agree, as in CPython)."""


def _own_field_table(cls: Any) -> tuple[Field, ...] | None:
    """The fields ``dataclass()`` gave ``cls`` itself (not a base), or None.

    Kept in the class's own namespace, not in a ``WeakKeyDictionary``: a field's
    ``default_factory`` (a closure over the class) held the class from the table's value,
    so the entry, the class and everything on it stayed in the host after the run."""
    found = cls.__dict__.get(_FIELDS_KEY) if isinstance(cls, type) else None
    return found if type(found) is tuple else None


def _inherited(cls: type) -> dict[str, Field]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for item in _own_field_table(base) or ():
            found[item.name or ""] = item
    return found


def _check_frozen_bases(cls: type, frozen: bool) -> None:
    """CPython's rule: a dataclass and its dataclass bases are all frozen or none is (a
    mutable subclass would let a frozen base's fields be assigned)."""
    bases = [base.__dict__[_FROZEN_KEY] for base in cls.__mro__[1:]
             if _own_field_table(base) is not None and type(base.__dict__.get(_FROZEN_KEY)) is bool]
    if not bases:
        return
    if any(bases) and not frozen:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
    if not any(bases) and frozen:
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")


def _declared(cls: type) -> list[tuple[str, Any]]:
    """The class's fields as written, in order: each annotated name with its value (a
    ``field()``, a default, or ``MISSING``), then any ``field()`` bound without an
    annotation. The planner already turned an annotated line into ``field()``; a run
    without it (``executor.run``) still has the annotated names the policy recorded."""
    own = cls.__dict__
    annotated = CLASS_ANNOTATIONS.get(cls, ())
    declared = [(name, KW_ONLY) if name == KW_ONLY_MARK else (name, own.get(name, MISSING))
                for name in annotated]
    seen = set(annotated)
    return declared + [(key, value) for key, value in own.items() if key not in seen
                       and (value is KW_ONLY or isinstance(value, Field))]


def _own_fields(cls: type, kw_only: bool) -> list[Field]:
    own: list[Field] = []
    after_marker = False
    for key, value in _declared(cls):
        if value is KW_ONLY:
            after_marker = True
            if key in cls.__dict__:
                type.__delattr__(cls, key)
            continue
        if not isinstance(value, Field):
            value = field() if value is MISSING else field(default=value)
        if not (key.isidentifier() and (not key.startswith("_") or private_name_ok(key))):
            raise TypeError(f"{key!r} cannot be a dataclass field in the sandbox")
        value.name = key
        if value.kw_only is MISSING:
            value.kw_only = kw_only or after_marker
        if value.default is MISSING:
            if key in cls.__dict__:
                type.__delattr__(cls, key)
        else:
            if type(value.default).__hash__ is None:
                raise ValueError(f"mutable default {type(value.default)!r} for field {key} "
                                 "is not allowed: use default_factory")
            type.__setattr__(cls, key, value.default)
        own.append(value)
    return own


def _values(obj: Any, fields: tuple[Field, ...]) -> tuple[Any, ...]:
    return tuple(getattr(obj, f.name or "") for f in fields)


def _plural(names: list[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _make_init(cls: type, fields: tuple[Field, ...]) -> Callable[..., None]:
    qualname = f"{cls.__qualname__}.__init__"
    positional = [f for f in fields if f.init and not f.kw_only]
    accepted = {f.name for f in fields if f.init}

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(positional):
            raise TypeError(f"{qualname}() takes {len(positional) + 1} positional "
                            f"argument{'s' if positional else ''} but {len(args) + 1} "
                            f"were given")
        given = {f.name: value for f, value in zip(positional, args, strict=False)}
        for key, value in kwargs.items():
            if key not in accepted:
                raise TypeError(f"{qualname}() got an unexpected keyword argument {key!r}")
            if key in given:
                raise TypeError(f"{qualname}() got multiple values for argument {key!r}")
            given[key] = value
        missing = [f for f in fields if f.init and f.name not in given
                   and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            kind = "keyword-only" if all(f.kw_only for f in missing) else "positional"
            names = [f.name or "" for f in missing]
            raise TypeError(f"{qualname}() missing {len(names)} required {kind} "
                            f"argument{'s' if len(names) > 1 else ''}: {_plural(names)}")
        for f in fields:
            name = f.name or ""
            if f.init and name in given:
                value = given[name]
            elif f.default is not MISSING:
                value = f.default
            elif f.default_factory is not MISSING:
                value = f.default_factory()
            else:
                continue
            object.__setattr__(self, name, value)
        post = getattr(type(self), POST_INIT, None)
        if post is not None and not is_async_script_function(post):
            post(self)  # an async one (it calls tools) is awaited by AsyncInitMeta
    return __init__


def _make_repr(fields: tuple[Field, ...]) -> Callable[[Any], str]:
    shown = [f for f in fields if f.repr]

    def __repr__(self: Any) -> str:
        parts = [f"{f.name}={repr_(getattr(self, f.name or ''))}" for f in shown]
        return f"{type(self).__qualname__}({', '.join(parts)})"
    return __repr__


def _make_compare(fields: tuple[Field, ...],
                  guard: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    compared = tuple(f for f in fields if f.compare)

    def method(self: Any, other: Any) -> Any:
        if type(other) is not type(self):
            return NotImplemented
        return guard(_values(self, compared), _values(other, compared))
    return method


def _make_hash(fields: tuple[Field, ...]) -> Callable[[Any], int]:
    hashed = tuple(f for f in fields if (f.compare if f.hash is None else f.hash))

    def __hash__(self: Any) -> int:
        return guarded_hash(_values(self, hashed))
    return __hash__


def _make_frozen(cls: type, names: frozenset[str], slots: bool) -> tuple[Any, Any]:
    """``frozen=True``'s ``__setattr__``/``__delattr__``; with ``slots=True`` CPython's
    methods call ``super(cls, self)`` with the class ``slots`` replaced, so a name that is
    no field raises that call's TypeError (a subclass's instance too)."""
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if name in names or (type(self) is cls and not slots):
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        if slots:
            raise TypeError(_not_a_subtype(self, cls))
        object.__setattr__(self, name, value)

    def __delattr__(self: Any, name: str) -> None:
        if name in names or (type(self) is cls and not slots):
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        if slots:
            raise TypeError(_not_a_subtype(self, cls))
        object.__delattr__(self, name)
    return __setattr__, __delattr__


def _not_a_subtype(obj: Any, cls: type) -> str:
    """CPython's message for ``super(cls, obj)`` with ``obj`` no instance of ``cls``."""
    if sys.version_info >= (3, 13):
        return (f"super(type, obj): obj (instance of {type(obj).__name__}) is not an "
                f"instance or subtype of type ({cls.__name__}).")
    return "super(type, obj): obj must be an instance or subtype of type"


_FOLLOWS: Final = " {!r}" if sys.version_info >= (3, 13) else ""
"""CPython 3.13 names the default argument in the message too."""

_ORDER: Final = (("__lt__", "_lt_"), ("__le__", "_le_"), ("__gt__", "_gt_"), ("__ge__", "_ge_"))


def _process(cls: Any, *, init: bool = True, repr: bool = True, eq: bool = True,
             order: bool = False, unsafe_hash: bool = False, frozen: bool = False,
             match_args: bool = True, kw_only: bool = False, slots: bool = False,
             weakref_slot: bool = False) -> Any:
    del weakref_slot  # the instances can be weakly referenced either way
    if not isinstance(cls, ScriptMeta) or cls in FACADE_CLASSES:
        raise TypeError("dataclass() decorates the script's own classes only")
    if isinstance(cls, EnumMeta):
        # The methods it adds would replace the enum's own: a frozen enum's __setattr__
        # let the members of its subclasses take any name, which the enum's __hash__ and
        # __str__ then hashed and rendered in C (a shared tuple: seconds of GIL).
        raise TypeError("dataclass() cannot decorate an enum class in the sandbox")
    if order and not eq:
        raise ValueError("eq must be true if order is true")
    _check_frozen_bases(cls, frozen)
    fields_by_name = _inherited(cls)
    for item in _own_fields(cls, kw_only):
        fields_by_name[item.name or ""] = item
    fields = tuple(fields_by_name.values())
    charge_operations(len(fields))
    last_default: Field | None = None
    for f in fields:
        if not f.init or f.kw_only:
            continue
        if f.default is not MISSING or f.default_factory is not MISSING:
            last_default = f
        elif last_default is not None:
            raise TypeError(f"non-default argument {f.name!r} follows default argument"
                            + _FOLLOWS.format(last_default.name))
    type.__setattr__(cls, _FIELDS_KEY, fields)
    type.__setattr__(cls, _FROZEN_KEY, frozen)
    own = cls.__dict__

    def install(name: str, method: Callable[..., Any]) -> None:
        type.__setattr__(cls, name, class_method(cls, method, name))
    if init and "__init__" not in own:
        install("__init__", _make_init(cls, fields))
    if match_args and "__match_args__" not in own:  # ``case Quote(s, c):``
        type.__setattr__(cls, "__match_args__",
                         tuple(f.name for f in fields if f.init and not f.kw_only))
    if repr and "__repr__" not in own:
        install("__repr__", _make_repr(fields))
    if eq and "__eq__" not in own:
        install("__eq__", _make_compare(fields, GUARDS["_eq_"]))
    if order:
        for name, guard in _ORDER:
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}. "
                                "Consider using functools.total_ordering")
            install(name, _make_compare(fields, GUARDS[guard]))
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if unsafe_hash:
        if explicit_hash:
            raise TypeError(f"Cannot overwrite attribute __hash__ in class {cls.__name__}")
        install("__hash__", _make_hash(fields))
    elif eq and frozen and not explicit_hash:
        install("__hash__", _make_hash(fields))
    elif eq and not explicit_hash:
        type.__setattr__(cls, "__hash__", None)
    if frozen:
        setter, deleter = _make_frozen(cls, frozenset(f.name or "" for f in fields), slots)
        install("__setattr__", setter)
        install("__delattr__", deleter)
    elif slots:
        type.__setattr__(cls, SLOTS_KEY, frozenset(f.name or "" for f in fields))
        install("__setattr__", slotted_setattr)
    return cls


def dataclass(cls: Any = None, /, **options: Any) -> Any:
    """``@dataclass`` or ``@dataclass(frozen=True, order=True, ...)`` on a script class."""
    if cls is None:
        return lambda klass: _process(klass, **options)
    return _process(cls, **options)


def _fields_of(obj: Any) -> tuple[Field, ...] | None:
    cls = obj if isinstance(obj, type) else type(obj)
    return _own_field_table(cls) if isinstance(cls, ScriptMeta) else None


def fields(class_or_instance: Any, /) -> tuple[Field, ...]:
    """The fields of a dataclass or of one of its instances."""
    found = _fields_of(class_or_instance)
    if found is None:
        raise TypeError("must be called with a dataclass type or instance")
    return found


def is_dataclass(obj: Any, /) -> bool:
    """Whether ``obj`` is a dataclass or an instance of one."""
    return _fields_of(obj) is not None


def _instance_fields(obj: Any, what: str) -> tuple[Field, ...]:
    found = None if isinstance(obj, type) else _fields_of(obj)
    if found is None:
        raise TypeError(f"{what}() should be called on dataclass instances")
    return found


def _convert(value: Any, as_dict: bool, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise RecursionError("maximum recursion depth exceeded in dataclasses conversion")
    charge_operations(1)
    found = None if isinstance(value, type) else _fields_of(value)
    if found is not None:
        items = [(f.name or "", _convert(getattr(value, f.name or ""), as_dict, depth + 1))
                 for f in found]
        return dict(items) if as_dict else tuple(item for _, item in items)
    kind = type(value)
    if isinstance(value, tuple) and any(base in NAMED_TUPLES for base in kind.__mro__):
        return kind(*[_convert(item, as_dict, depth + 1) for item in value])
    if kind is list or kind is tuple:
        return kind(_convert(item, as_dict, depth + 1) for item in value)
    if kind is dict:
        return {_convert(k, as_dict, depth + 1): _convert(v, as_dict, depth + 1)
                for k, v in value.items()}
    return deepcopy(value)


def asdict(obj: Any, /) -> dict[str, Any]:
    """A dataclass instance as a dict (nested dataclasses, lists, tuples and dicts too)."""
    _instance_fields(obj, "asdict")
    result: dict[str, Any] = _convert(obj, True, 0)
    return result


def astuple(obj: Any, /) -> tuple[Any, ...]:
    """A dataclass instance as a tuple of its field values (converted as ``asdict``)."""
    _instance_fields(obj, "astuple")
    result: tuple[Any, ...] = _convert(obj, False, 0)
    return result


def replace(obj: Any, /, **changes: Any) -> Any:
    """A new instance of ``obj``'s class with ``changes`` applied to its fields."""
    for f in _instance_fields(obj, "replace"):
        name = f.name or ""
        if not f.init:
            if name in changes:
                raise ValueError(f"field {name} is declared with init=False, it cannot be "
                                 "specified with replace()")
            continue
        if name not in changes:
            changes[name] = getattr(obj, name)
    return type(obj)(**changes)


FACADE: Final = Facade("dataclasses", {
    "dataclass": dataclass, "field": field, "fields": fields, "asdict": asdict,
    "astuple": astuple, "replace": replace, "is_dataclass": is_dataclass,
    "MISSING": MISSING, "KW_ONLY": KW_ONLY, "FrozenInstanceError": FrozenInstanceError,
})
