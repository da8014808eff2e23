"""``collections.ChainMap`` for scripts: the stdlib class, its loops charged, its writes guarded.

``ChainMap`` is Python code running in the host without ticks: a lookup tries each map in
turn, ``len()`` and iteration build the union of every map, ``==`` a dict of all items.
This subclass charges those loops to the operation budget (a thousand references to one
big dict would otherwise make one ``len()`` a billion steps), draws the union a counted
key at a time (the meter's pacing lets go of the GIL between keys that share a hash,
where one C insert of them all held it for seconds), and hands every
change of ``maps[0]`` (``cm[k] = v``, ``pop``, ``update`` …) to the same guards a
script's own ``maps[0][k] = v`` goes through. Its repr is sized by
``sizes.RENDER_CHILDREN`` (a ChainMap in its own ``maps`` renders as ``...``).
"""

from __future__ import annotations

import collections
from itertools import repeat
from typing import Any, final

from codemode.sandbox.language.compare import charge_collisions, keyed, pace_inserts
from codemode.sandbox.language.guards import (
    ATTRIBUTES,
    WRITABLE_TYPES,
    guarded_getattr,
    guarded_write,
)
from codemode.sandbox.language.sizes import RENDER_CHILDREN, charge_operations
from codemode.sandbox.language.state import counted, current_run

__all__ = ["ChainMap"]


def _size(mapping: Any) -> int:
    return len(mapping) if hasattr(type(mapping), "__len__") else 0


@final
class ChainMap(collections.ChainMap[Any, Any]):
    """``collections.ChainMap(*maps)``: lookups search the maps in order; writes go to
    the first."""

    def _search(self) -> None:
        charge_operations(len(self.maps))

    def _keys(self) -> dict[Any, None]:
        """Every map's keys in CPython's order, drawn a counted item at a time: one C call
        inserting them all (``set().union(*maps)``) held the GIL 3-4.5 s over 20,000 keys
        sharing a hash, where the paced meter lets go every few milliseconds."""
        charge_operations(len(self.maps))
        keys: dict[Any, None] = {}
        for mapping in reversed(self.maps):
            pace_inserts(keys, mapping)
            keys.update(zip(counted(mapping), repeat(None)))
        return keys

    def _items(self) -> Any:
        """``maps[0]`` as a script's ``maps[0][k] = v`` writes it (its own containers and
        objects; an ``OrderedDict``'s keys checked)."""
        return guarded_write(self.maps[0])

    def _method(self, name: str) -> Any:
        """``maps[0].<name>`` as a script calls it, once ``maps[0]`` is one it may change."""
        first = self.maps[0]
        guarded_write(first)
        return guarded_getattr(first, name)

    def __getitem__(self, key: Any) -> Any:
        self._search()
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._search()
        return super().__contains__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._search()
        return super().get(key, default)

    def __len__(self) -> int:
        return len(self._keys())

    def __iter__(self) -> Any:
        """Each key charged as it is taken: the stdlib's loops over a chain (``==``, the
        views' ``<=``, ``items()``) look every one up without ticking."""
        return counted(self._keys())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, collections.abc.Mapping):
            return NotImplemented
        mine = dict(self.items())
        current_run().meter.slow_start()
        theirs = dict(counted(other.items()))
        charge_collisions(mine, theirs)  # ``==`` looks every key up in one C call
        return mine == theirs

    def __bool__(self) -> bool:
        self._search()
        return super().__bool__()

    def __setitem__(self, key: Any, value: Any) -> None:
        self._items()[key] = value

    def __delitem__(self, key: Any) -> None:
        try:
            del self._items()[key]
        except KeyError:
            raise KeyError(f"Key not found in the first mapping: {key!r}") from None

    def pop(self, key: Any, *default: Any) -> Any:
        method = self._method("pop")
        try:
            return method(key, *default)
        except KeyError:
            raise KeyError(f"Key not found in the first mapping: {key!r}") from None

    def popitem(self) -> Any:
        try:
            return self._method("popitem")()
        except KeyError:
            raise KeyError("No keys found in the first mapping.") from None

    def clear(self) -> None:
        self._method("clear")()

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """As ``maps[0].update`` (the stdlib wrote one key at a time without ticking: 5 s
        past the deadline over 20,000 keys sharing a hash)."""
        self._method("update")(other, **kwargs)

    def copy(self) -> ChainMap:
        charge_operations(len(self.maps) + _size(self.maps[0]))
        return super().copy()

    __copy__ = copy

    def new_child(self, m: Any = None, **kwargs: Any) -> ChainMap:
        if m is not None and kwargs:
            guarded_getattr(m, "update")(kwargs)
            kwargs = {}
        charge_operations(len(self.maps))
        return super().new_child(m, **kwargs)

    @property
    def parents(self) -> ChainMap:
        charge_operations(len(self.maps))
        return super().parents

    @classmethod
    def fromkeys(cls, iterable: Any, value: Any = None) -> ChainMap:
        return cls(dict.fromkeys(counted(keyed(iterable)), value))

    def __or__(self, other: Any) -> Any:
        if not isinstance(other, collections.abc.Mapping):
            return NotImplemented
        made = self.copy()
        made.update(other)
        return made

    def __ror__(self, other: Any) -> Any:
        if not isinstance(other, collections.abc.Mapping):
            return NotImplemented
        current_run().meter.slow_start()
        made = dict(counted(other.items()))
        merge = guarded_getattr(made, "update")
        for child in reversed(self.maps):
            merge(child)
        return ChainMap(made)

    def __ior__(self, other: Any) -> ChainMap:
        self.update(other)
        return self


ChainMap.__module__ = "collections"
ChainMap.__qualname__ = "ChainMap"

ATTRIBUTES[ChainMap] = frozenset({
    "maps", "new_child", "parents", "keys", "values", "items", "get", "pop", "popitem",
    "setdefault", "update", "clear", "copy", "fromkeys"})
WRITABLE_TYPES.add(ChainMap)  # ``cm[k] = v``, ``del cm[k]``: through the methods above
RENDER_CHILDREN[ChainMap] = lambda chain: chain.maps
