"""``__slots__`` for script classes: which attributes an instance takes.

A script class keeps a ``__dict__`` (real slots would put member descriptors a script
could hand around in the class): a slotted class (a plain class's ``__slots__``, a
``dataclass(slots=True)``) records its slot names under :data:`SLOTS_KEY` instead and
gets :func:`slotted_setattr`, which refuses any other name as CPython does. As in
CPython, an instance takes any name once a class of its MRO has no slots (that class
gave it a ``__dict__``).
"""

from __future__ import annotations

import sys
from typing import Any, Final

from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import counted

__all__ = ["SLOTS_KEY", "has_dict", "is_slot", "slot_names", "slots_of", "slotted_setattr"]

SLOTS_KEY: Final = "_sandbox_slots_"
"""A slotted class's own slot names (a frozenset), in its ``__dict__`` (a name no script
can bind or read)."""

_NO_DICT: Final = (" and no __dict__ for setting new attributes" if sys.version_info >= (3, 13)
                   else "")
"""What CPython 3.13 adds to its error for a new attribute of a slotted instance."""

_MISSING: Final = object()
_DEEP: Final = 16
_SLOT_UNIT: Final = 64
"""Slot names :func:`slots_of` copies per operation charged."""


def slot_names(name: str, value: Any, namespace: dict[str, Any]) -> frozenset[str]:
    """The names of a class body's ``__slots__`` (a string or an iterable of strings),
    checked as CPython's ``type()`` checks them."""
    items = (value,) if isinstance(value, str) else tuple(counted(value))
    charge_operations(len(items))
    names: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"__slots__ items must be strings, not '{type(item).__name__}'")
        if not item.isidentifier():
            raise TypeError("__slots__ must be identifiers")
        if item in namespace:
            raise ValueError(f"{item!r} in __slots__ conflicts with class variable")
        names.append(item)
    del name
    return frozenset(names)


def has_dict(kind: type) -> bool:
    """Whether CPython would give ``kind``'s instances a ``__dict__``: unless every class of
    its MRO but ``object`` is slotted (``vars()`` of such an instance is a TypeError)."""
    if len(kind.__mro__) > _DEEP:
        charge_operations(len(kind.__mro__) // _DEEP)
    return any(SLOTS_KEY not in cls.__dict__ for cls in kind.__mro__[:-1])


def slots_of(kind: type) -> frozenset[str]:
    """Every slot name of ``kind``'s MRO: in CPython their values live in the slots, so
    ``vars()`` of an instance that also has a ``__dict__`` does not list them. Charged by
    the names it copies (one ``vars()`` of a class of 40,000 slots copied them all for one
    operation)."""
    if len(kind.__mro__) > _DEEP:
        charge_operations(len(kind.__mro__) // _DEEP)
    owns = [cls.__dict__.get(SLOTS_KEY, ()) for cls in kind.__mro__]
    charge_operations(sum(map(len, owns)) // _SLOT_UNIT)
    return frozenset().union(*owns)


def is_slot(kind: type, name: str) -> bool:
    """Whether ``name`` is a slot of ``kind``'s MRO: one lookup per class, not a union of
    every slot name (``hasattr(P, "x")`` of a class of 40,000 slots copied them all, ~1 ms
    for one operation: 25,000 calls ran 30 s inside 200,000 operations)."""
    if len(kind.__mro__) > _DEEP:
        charge_operations(len(kind.__mro__) // _DEEP)
    return any(name in cls.__dict__.get(SLOTS_KEY, ()) for cls in kind.__mro__)


def slotted_setattr(self: Any, name: str, value: Any) -> None:
    """A slotted class's ``__setattr__``: a slot of its MRO, or a data descriptor of the
    class (a property's setter), as usual; any other name is CPython's AttributeError (a
    class attribute's: read-only), unless a class without slots gave a ``__dict__``."""
    kind = type(self)
    if len(kind.__mro__) > _DEEP:
        charge_operations(len(kind.__mro__) // _DEEP)  # the walk below, in C work per class
    slot = False  # looked up class by class: a union of the names copied them all per set
    for cls in kind.__mro__[:-1]:
        own = cls.__dict__.get(SLOTS_KEY)
        if own is None:
            object.__setattr__(self, name, value)
            return
        slot = slot or name in own
    if slot:
        object.__setattr__(self, name, value)
        return
    found = next((c.__dict__[name] for c in kind.__mro__ if name in c.__dict__), _MISSING)
    if found is not _MISSING and hasattr(type(found), "__set__"):
        object.__setattr__(self, name, value)
    elif found is not _MISSING:
        raise AttributeError(f"'{kind.__name__}' object attribute '{name}' is read-only")
    else:
        raise AttributeError(f"'{kind.__name__}' object has no attribute '{name}'" + _NO_DICT)
