"""``copy`` for scripts: ``copy`` and ``deepcopy`` of data, never the pickling protocol.

The stdlib copies anything through ``__reduce_ex__``/``copyreg``, which reaches the
internals of host objects (a facade, the ``tools`` proxy, a generator …). Here only
data is copied: ``dict``, ``list``, ``tuple``, ``set``, ``frozenset``, the
``collections`` types (``Counter``, ``defaultdict``, ``OrderedDict``, ``deque``, named
tuples), the script's own class instances (their ``__dict__``, without calling
``__init__``, as ``copy`` does) and immutable values (text, numbers, ``None``, the
``datetime`` values), which are shared as they are. Anything else is a TypeError.

``deepcopy`` charges one operation per node it visits, keeps shared references shared
(and cycles cyclic) through its memo, charges the keys it hashes like dict keys, and
refuses data nested deeper than :data:`MAX_DEPTH` (RecursionError: the run's recursion
limit). ``copy`` charges one operation per item it copies.
"""

from __future__ import annotations

import datetime
from collections import Counter, OrderedDict, defaultdict, deque
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.compare import charge_collisions, guarded_key
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.chainmap import ChainMap
from codemode.sandbox.language.guards import ScriptMeta
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import current_run

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["FACADE", "MAX_DEPTH"]

MAX_DEPTH: Final = 400
"""Deepest nesting ``deepcopy`` copies (as deep as the renderer and the comparisons go)."""

_ATOMS: Final = frozenset({
    str, bytes, int, float, complex, bool, type(None), datetime.date, datetime.time,
    datetime.datetime, datetime.timedelta, datetime.timezone})
"""Immutable values: a copy is the value itself."""

_get_dict: Final = object.__getattribute__


def _refuse(obj: Any, what: str) -> TypeError:
    return TypeError(f"{what}() copies only data in the sandbox (dict, list, tuple, set, "
                     "frozenset, the collections types, text, numbers, None and the "
                     f"script's own class instances), not {type(obj).__name__!r} objects")


def _script_instance(obj: Any) -> bool:
    """An instance of a script class whose only builtin base is ``object``."""
    cls = type(obj)
    return isinstance(cls, ScriptMeta) and all(
        isinstance(base, ScriptMeta) or base is object for base in cls.__mro__)


def _named_tuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and isinstance(type(obj), ScriptMeta)


def _state(obj: Any) -> dict[str, Any] | None:
    try:
        return _get_dict(obj, "__dict__")  # type: ignore[no-any-return]
    except AttributeError:
        return None


def copy(x: Any, /) -> Any:
    """A shallow copy of ``x``."""
    kind = type(x)
    if kind in _ATOMS or kind is tuple or kind is frozenset:
        return x
    if kind is list or kind is dict or kind is set:
        charge_operations(len(x))
        charge_collisions(x)  # a copy may re-insert every key (``dict.copy``)
        return x.copy()
    if kind is Counter or kind is OrderedDict or kind is defaultdict:
        charge_operations(len(x))
        charge_collisions(x)
        return x.copy()
    if kind is deque:
        charge_operations(len(x))
        return deque(x, x.maxlen)
    if kind is ChainMap:
        return x.copy()  # the first map copied, the others shared (charged by ChainMap)
    if _named_tuple(x):
        charge_operations(len(x))
        new = tuple.__new__(kind, x)
    elif _script_instance(x):
        new = object.__new__(kind)
    else:
        raise _refuse(x, "copy.copy")
    state = _state(x)
    if state:
        charge_operations(len(state))
        _get_dict(new, "__dict__").update(state)
    return new


class _Deep:
    """One ``deepcopy`` call: the memo (by id, the originals held so no id is reused)
    and the operation ticker."""

    __slots__ = ("keep", "memo", "tick")

    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}
        self.keep: list[Any] = []
        self.tick: Iterator[Any] = current_run().meter.ticker

    def copy(self, x: Any, depth: int) -> Any:
        next(self.tick)
        kind = type(x)
        if kind in _ATOMS:
            return x
        found = self.memo.get(id(x), self)
        if found is not self:
            return found
        if depth > MAX_DEPTH:
            raise RecursionError("maximum recursion depth exceeded while copying an object "
                                 f"(copy.deepcopy() copies data nested at most {MAX_DEPTH} "
                                 "levels deep)")
        depth += 1
        if kind is list:
            new_list: list[Any] = self.remember(x, [])
            new_list.extend([self.copy(item, depth) for item in x])
            return new_list
        if kind is dict or kind is Counter or kind is OrderedDict or kind is defaultdict:
            new = self.remember(x, kind(x.default_factory) if kind is defaultdict else kind())
            for key, value in list(x.items()):
                new[guarded_key(self.copy(key, depth))] = self.copy(value, depth)
            return new
        if kind is ChainMap:
            chain = self.remember(x, ChainMap())
            chain.maps[:] = [self.copy(mapping, depth) for mapping in x.maps]
            return chain
        if kind is tuple or _named_tuple(x):
            items = [self.copy(item, depth) for item in x]
            found = self.memo.get(id(x), self)  # a cycle through a list made it already
            if found is not self:
                return found
            if kind is tuple:
                if all(new is old for new, old in zip(items, x, strict=True)):
                    return self.remember(x, x)
                return self.remember(x, tuple(items))
            named = self.remember(x, tuple.__new__(kind, items))
            self.copy_state(x, named, depth)
            return named
        if kind is set or kind is frozenset:
            charge_collisions(x)  # the copies are inserted in one C call
        if kind is set:
            new_set: set[Any] = self.remember(x, set())
            new_set.update([guarded_key(self.copy(item, depth)) for item in x])
            return new_set
        if kind is frozenset:
            items = [guarded_key(self.copy(item, depth)) for item in x]
            return self.remember(x, frozenset(items))
        if kind is deque:
            new_deque: deque[Any] = self.remember(x, deque(maxlen=x.maxlen))
            new_deque.extend([self.copy(item, depth) for item in x])
            return new_deque
        if _script_instance(x):
            instance = self.remember(x, object.__new__(kind))
            self.copy_state(x, instance, depth)
            return instance
        raise _refuse(x, "copy.deepcopy")

    def remember(self, old: Any, new: Any) -> Any:
        self.memo[id(old)] = new
        self.keep.append(old)
        return new

    def copy_state(self, old: Any, new: Any, depth: int) -> None:
        state = _state(old)
        if state:
            target = _get_dict(new, "__dict__")
            for name, value in list(state.items()):
                target[name] = self.copy(value, depth)


def deepcopy(x: Any, memo: Any = None, /) -> Any:
    """A deep copy of ``x``: shared parts stay shared, cycles stay cycles."""
    if memo is not None:
        raise TypeError("copy.deepcopy(): the memo argument is not available in the sandbox")
    return _Deep().copy(x, 0)


FACADE: Final = Facade("copy", {"copy": copy, "deepcopy": deepcopy})
