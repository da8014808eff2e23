"""``abc`` for scripts: ``ABC`` as a base and ``@abstractmethod``, as models write a
class hierarchy.

``class Fetcher(ABC)`` is a plain script class (the ``ABC`` base is dropped, as
``typing.Protocol`` is) that cannot be instantiated while a method marked
``@abstractmethod`` (directly, or under ``@property``, ``@classmethod`` or
``@staticmethod``) has no override: ``Fetcher()`` raises CPython's ``TypeError``, a
subclass that overrides every such method is made as any class is; ``metaclass=ABCMeta``
stands for the ``ABC`` base. No ``register``: the checks are the class's own methods,
found in its namespace.
"""

from __future__ import annotations

import sys
import weakref
from types import FunctionType
from typing import Any, Final, final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import (
    CLASS_BUILDERS,
    METACLASS_BASES,
    AsyncInitMeta,
    ScriptMeta,
    SelfGuarded,
    build_class,
)
from codemode.sandbox.language.state import counted, is_script_function

__all__ = ["FACADE"]

_ABSTRACT: Final[weakref.WeakSet[FunctionType]] = weakref.WeakSet()
"""The script functions marked ``@abstractmethod`` (each run's own: weakly held)."""


@final
class AbstractBase(SelfGuarded):
    """``abc.ABC`` as a script holds it: a base only (no attribute for scripts)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<class 'abc.ABC'>"


ABC: Final = AbstractBase()


@final
class AbstractMeta(SelfGuarded):
    """``abc.ABCMeta`` as a script holds it: ``metaclass=ABCMeta`` only (the class gets the
    ``ABC`` base), no attribute for scripts."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<class 'abc.ABCMeta'>"


ABCMeta: Final = AbstractMeta()


def abstractmethod(func: Any) -> Any:
    """Mark a script function (or the one under a property, classmethod or staticmethod)
    abstract; returns it unchanged."""
    inner: Any = func.fget if isinstance(func, property) else (
        func.__func__ if isinstance(func, classmethod | staticmethod) else func)
    if not is_script_function(inner):  # a host function is every run's: never marked
        raise TypeError("abstractmethod() takes a function of the script's (a def) in the "
                        "sandbox")
    _ABSTRACT.add(inner)
    return func


def _is_abstract(value: Any) -> bool:
    inner = value.fget if isinstance(value, property) else (
        value.__func__ if isinstance(value, classmethod | staticmethod) else value)
    return type(inner) is FunctionType and inner in _ABSTRACT


def _missing(cls: type) -> list[str]:
    """The abstract methods ``cls`` has not overridden, sorted as CPython lists them: each
    name as the MRO resolves it (its first owner's value), in one walk charged an
    operation an attribute (each instance walks its class's attributes)."""
    resolved: dict[str, Any] = {}
    for klass in cls.__mro__:
        for name, value in counted(vars(klass).items()):
            resolved.setdefault(name, value)
    return sorted(name for name, value in resolved.items() if _is_abstract(value))


def _refusal(cls: type, missing: list[str]) -> str:
    plural = "s" if len(missing) > 1 else ""
    if sys.version_info >= (3, 12):
        listed = ", ".join(f"'{name}'" for name in missing)
        return (f"Can't instantiate abstract class {cls.__name__} without an implementation "
                f"for abstract method{plural} {listed}")
    return (f"Can't instantiate abstract class {cls.__name__} with abstract method{plural} "
            f"{', '.join(missing)}")


def _new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """``__new__`` of a class built over ``ABC`` (and of its subclasses)."""
    missing = _missing(cls)
    if missing:
        raise TypeError(_refusal(cls, missing))
    if issubclass(cls, BaseException):
        return BaseException.__new__(cls, *args)
    return object.__new__(cls)


def _abc_class(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
               **kwargs: Any) -> Any:
    """``class C(ABC)``: the base dropped, instantiation checked (:func:`_new`)."""
    kept = tuple(base for base in bases if not isinstance(base, AbstractBase))
    cls = build_class(name, kept or (object,), namespace, **kwargs)
    if type(cls) not in (ScriptMeta, AsyncInitMeta) or issubclass(cls, tuple):
        # an enum or a named tuple makes its instances with its own __new__
        raise TypeError(f"class {name} cannot be both an ABC and an enum or a named tuple "
                        "in the sandbox: drop the ABC base")
    type.__setattr__(cls, "__new__", staticmethod(_new))
    return cls


CLASS_BUILDERS[AbstractBase] = _abc_class
METACLASS_BASES[ABCMeta] = ABC

FACADE: Final = Facade("abc", {"ABC": ABC, "ABCMeta": ABCMeta,
                               "abstractmethod": abstractmethod})
