"""Augmented assignment (``x op= y``, ``obj[k] op= y``, ``obj.a op= y``) through the guards.

In-place operators keep their semantics (``list += …`` extends the same list) but are
sized first like their binary forms (``sizes``), and the set/dict operators hash what
they visit (``compare``). Kept apart from both because it needs both.
"""

from __future__ import annotations

import operator
from collections import Counter, deque
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.compare import prepare_inplace
from codemode.sandbox.language.guards import ScriptMeta, slice_items
from codemode.sandbox.language.sizes import (
    CONCAT_TYPES,
    charge_counters,
    charge_operations,
    ensure_size,
    guarded_add,
    guarded_lshift,
    guarded_mod,
    guarded_mul,
    guarded_pow,
    item_size,
    items_size,
    repeat_ok,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["augmented_attr", "augmented_item", "guarded_inplace"]


def augmented_item(obj: Any, key: Any, op: str, value: Any) -> None:
    """``obj[key] op= value`` (``obj`` already passed ``_write_``) through the size guards
    (a list slice's new items drawn first: ``guards.slice_items``)."""
    obj[key] = slice_items(obj, key, guarded_inplace(op, obj[key], value))


def augmented_attr(obj: Any, name: str, op: str, value: Any) -> None:
    """``obj.name op= value`` (``obj`` already passed ``_write_``) through the size guards."""
    setattr(obj, name, guarded_inplace(op, getattr(obj, name), value))


def guarded_inplace(op: str, x: Any, y: Any) -> Any:
    """``x op= y`` for the guarded operators, keeping in-place semantics (``list += …``).

    A script object answers with its own ``__iadd__`` … (or ``__add__``): script code,
    metered like any other; a builtin operand's reflected method only takes ints."""
    if isinstance(type(x), ScriptMeta):
        return _INPLACE[op](x, y)
    if op == "+=":
        if isinstance(x, list | bytearray | deque):
            if isinstance(y, CONCAT_TYPES):
                added = items_size(y) if isinstance(x, list | deque) else len(y) * item_size(x)
                ensure_size(len(x) * item_size(x) + added, "extending a sequence")
            elif type(y) is not map:  # ``x += range(10**8)``
                ensure_size((len(x) + operator.length_hint(y)) * 8, "extending a sequence")
            x += y
            return x
        if type(x) is Counter:  # ``Counter.__iadd__`` updates the same Counter
            charge_counters(x, y)
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
    if op in _SET_OPERATORS:
        if type(x) is Counter or type(y) is Counter:
            charge_counters(x, y)
        elif isinstance(x, set | dict) and isinstance(y, set | frozenset | dict):
            charge_operations(len(y))  # ``s |= t`` visits every item of ``t``

        return _SET_OPERATORS[op](x, prepare_inplace(op, x, y))
    raise SyntaxError(f"unsupported augmented assignment {op}")


_SET_OPERATORS: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "-=": operator.isub, "|=": operator.ior, "&=": operator.iand, "^=": operator.ixor}


_INPLACE: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow,
    "<<=": operator.ilshift, ">>=": operator.irshift, "&=": operator.iand,
    "|=": operator.ior, "^=": operator.ixor, "@=": operator.imatmul}
