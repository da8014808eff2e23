"""``operator`` for scripts: each function is the guarded form of its operator.

``operator.add(a, b)`` must cost what ``a + b`` costs in a script: the size guards
(``+``, ``*``, ``%``, ``**``, ``<<``), the comparison guards (``==``, ``<``, ``in``:
nested containers are charged) and the set-operator guards (``-``, ``&``, ``|``,
``^``). ``attrgetter`` and ``methodcaller`` read through the attribute guard (the
real ones are unguarded ``getattr`` calls); ``itemgetter``/``getitem`` charge their
keys like ``x[k]``. No writing function (``setitem``, ``delitem``, the in-place forms)
is offered.
"""

from __future__ import annotations

import operator
from typing import Any, Final, final

from codemode.sandbox.language.compare import GUARDS, guarded_contains, guarded_key
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, guarded_getattr
from codemode.sandbox.language.sizes import (
    guarded_add,
    guarded_lshift,
    guarded_mod,
    guarded_mul,
    guarded_pow,
    guarded_slice,
)

__all__ = ["FACADE"]

_MAX_ITEMS: Final = 256
"""Most items or attribute names one getter takes."""

_sub: Final = GUARDS["_sub_"]
_and: Final = GUARDS["_and_"]
_or: Final = GUARDS["_or_"]
_xor: Final = GUARDS["_xor_"]
_eq: Final = GUARDS["_eq_"]
_ne: Final = GUARDS["_ne_"]
_lt: Final = GUARDS["_lt_"]
_le: Final = GUARDS["_le_"]
_gt: Final = GUARDS["_gt_"]
_ge: Final = GUARDS["_ge_"]


def add(a: Any, b: Any, /) -> Any:
    """``a + b``."""
    return guarded_add(a, b)


def concat(a: Any, b: Any, /) -> Any:
    """``a + b`` of two sequences (numbers are refused, as CPython's ``concat`` does)."""
    if not hasattr(type(a), "__getitem__"):
        raise TypeError(f"{type(a).__name__!r} object can't be concatenated")
    return guarded_add(a, b)


def sub(a: Any, b: Any, /) -> Any:
    """``a - b``."""
    return _sub(a, b)


def mul(a: Any, b: Any, /) -> Any:
    """``a * b``."""
    return guarded_mul(a, b)


def mod(a: Any, b: Any, /) -> Any:
    """``a % b``."""
    return guarded_mod(a, b)


def pow_(a: Any, b: Any, /) -> Any:
    """``a ** b``."""
    return guarded_pow(a, b)


def lshift(a: Any, b: Any, /) -> Any:
    """``a << b``."""
    return guarded_lshift(a, b)


def and_(a: Any, b: Any, /) -> Any:
    """``a & b``."""
    return _and(a, b)


def or_(a: Any, b: Any, /) -> Any:
    """``a | b``."""
    return _or(a, b)


def xor(a: Any, b: Any, /) -> Any:
    """``a ^ b``."""
    return _xor(a, b)


def eq(a: Any, b: Any, /) -> Any:
    """``a == b``."""
    return _eq(a, b)


def ne(a: Any, b: Any, /) -> Any:
    """``a != b``."""
    return _ne(a, b)


def lt(a: Any, b: Any, /) -> Any:
    """``a < b``."""
    return _lt(a, b)


def le(a: Any, b: Any, /) -> Any:
    """``a <= b``."""
    return _le(a, b)


def gt(a: Any, b: Any, /) -> Any:
    """``a > b``."""
    return _gt(a, b)


def ge(a: Any, b: Any, /) -> Any:
    """``a >= b``."""
    return _ge(a, b)


def contains(a: Any, b: Any, /) -> bool:
    """``b in a``."""
    return guarded_contains(b, a)


def _item(obj: Any, key: Any) -> Any:
    """``obj[key]`` as a script's subscription runs it."""
    if type(key) is slice:
        return guarded_slice(obj, key)
    return operator.getitem(obj, guarded_key(key))


def getitem(a: Any, b: Any, /) -> Any:
    """``a[b]``."""
    return _item(a, b)


def _names(values: tuple[Any, ...], what: str) -> None:
    if not values:
        raise TypeError(f"{what} expected 1 argument, got 0")
    if len(values) > _MAX_ITEMS:
        raise ValueError(f"{what} takes at most {_MAX_ITEMS} arguments in the sandbox")


@final
class _ItemGetter(SelfGuarded):
    """``itemgetter(*items)``: ``obj[item]`` (a tuple of them for several items)."""

    __slots__ = ("_items",)

    def __init__(self, *items: Any) -> None:
        _names(items, "itemgetter")
        self._items = items

    def __call__(self, obj: Any, /) -> Any:
        items = self._items
        if len(items) == 1:
            return _item(obj, items[0])
        return tuple([_item(obj, item) for item in items])

    def __repr__(self) -> str:
        return "operator.itemgetter(...)"


@final
class _AttrGetter(SelfGuarded):
    """``attrgetter(*names)``: each (dotted) name read through the attribute guard."""

    __slots__ = ("_paths",)

    def __init__(self, *names: Any) -> None:
        _names(names, "attrgetter")
        if not all(type(name) is str for name in names):
            raise TypeError("attribute name must be a string")
        self._paths = tuple(tuple(name.split(".")) for name in names)

    def __call__(self, obj: Any, /) -> Any:
        paths = self._paths
        if len(paths) == 1:
            return _resolve(obj, paths[0])
        return tuple([_resolve(obj, path) for path in paths])

    def __repr__(self) -> str:
        return "operator.attrgetter(...)"


def _resolve(obj: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        obj = guarded_getattr(obj, name)
    return obj


@final
class _MethodCaller(SelfGuarded):
    """``methodcaller(name, *args, **kwargs)``: the method read through the attribute
    guard, then called."""

    __slots__ = ("_args", "_kwargs", "_name")

    def __init__(self, name: Any, /, *args: Any, **kwargs: Any) -> None:
        if type(name) is not str:
            raise TypeError("method name must be a string")
        self._name = name
        self._args = args
        self._kwargs = kwargs

    def __call__(self, obj: Any, /) -> Any:
        return guarded_getattr(obj, self._name)(*self._args, **self._kwargs)

    def __repr__(self) -> str:
        return "operator.methodcaller(...)"


def _plain(name: str) -> Any:
    """An operator whose script form is not guarded either (``-a``, ``a // b`` …)."""
    real = getattr(operator, name)

    def plain(*args: Any) -> Any:
        return real(*args)
    plain.__doc__ = real.__doc__
    return plain


for _cls, _name in ((_ItemGetter, "itemgetter"), (_AttrGetter, "attrgetter"),
                    (_MethodCaller, "methodcaller")):
    _cls.__name__ = _name  # errors name the function the script called
    _cls.__qualname__ = f"operator.{_name}"

_PLAIN: Final = ("truediv", "floordiv", "rshift", "neg", "pos", "abs", "invert", "inv",
                 "index", "not_", "truth", "is_", "is_not")

FACADE: Final = Facade("operator", {
    **{name: _plain(name) for name in _PLAIN},
    "add": add, "concat": concat, "sub": sub, "mul": mul, "mod": mod, "pow": pow_, "lshift": lshift,
    "and_": and_, "or_": or_, "xor": xor,
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
    "contains": contains, "getitem": getitem,
    "itemgetter": _ItemGetter, "attrgetter": _AttrGetter, "methodcaller": _MethodCaller,
})
