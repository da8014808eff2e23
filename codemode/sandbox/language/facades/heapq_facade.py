"""``heapq`` for scripts: every comparison of nested items is charged before C runs it.

``heappush`` and ``heapify`` run in C after a charge: a pushed item is compared with at
most one ancestor per level, each comparison reading at most the item; ``heapify``
makes about two comparisons per item (``compare.charge_sort``). ``heappop``,
``heappushpop`` and ``heapreplace`` sift through items the call cannot know in advance,
so they run here, in Python, with every comparison through the ``<`` guard and one
operation per level. ``nlargest``/``nsmallest`` take counted, charged items;
``merge`` charges each item (or key) as it arrives.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.compare import GUARDS, charge_each, charge_sort, compare_cost
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

__all__ = ["FACADE"]

_lt: Final[Callable[[Any, Any], Any]] = GUARDS["_lt_"]
_SHALLOW: Final = frozenset({int, float, bool, str, bytes, type(None)})
_VISITS_PER_OPERATION: Final = 16
"""As in :mod:`codemode.sandbox.language.compare`: C element visits per operation."""


def _heap(heap: Any) -> list[Any]:
    if type(heap) is not list:
        raise TypeError("heap argument must be a list")
    return heap


def _charge_levels(item: Any, levels: int) -> None:
    """``item`` compared once per level of a heap (each comparison reads at most it)."""
    meter = current_run().meter
    budget = (meter.operations - meter.used + 1) * _VISITS_PER_OPERATION
    cost = compare_cost(item, budget)
    if cost > 1:
        charge_operations(max(1, cost * levels // _VISITS_PER_OPERATION))


def heappush(heap: list[Any], item: Any, /) -> None:
    """Push ``item`` onto ``heap``."""
    _charge_levels(item, len(_heap(heap)).bit_length())
    heapq.heappush(heap, item)


def heapify(heap: list[Any], /) -> None:
    """Turn the list into a heap, in place (about two comparisons per item)."""
    charge_operations(len(_heap(heap)))
    charge_sort(heap, rounds=2)
    heapq.heapify(heap)


def _less(a: Any, b: Any) -> Any:
    """``a < b`` through the comparison guard; flat items, and tuples whose first items
    are flat and differ (``(priority, item)``, the usual heap entry), compare directly:
    CPython decides those by the first items alone."""
    if type(a) in _SHALLOW or type(b) in _SHALLOW:
        return a < b
    if type(a) is tuple and type(b) is tuple and a and b:
        x = a[0]
        y = b[0]
        if type(x) in _SHALLOW and type(y) in _SHALLOW and x is not y and x != y:
            return x < y
    return _lt(a, b)


def _siftdown(heap: list[Any], startpos: int, pos: int, tick: Iterator[Any]) -> None:
    newitem = heap[pos]
    while pos > startpos:
        next(tick)
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if _less(newitem, parent):
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def _siftup(heap: list[Any], pos: int) -> None:
    """heapq's own algorithm (smaller child up to a leaf, then the item down), with every
    comparison through the guard and one operation per level."""
    tick = current_run().meter.ticker
    endpos = len(heap)
    startpos = pos
    newitem = heap[pos]
    childpos = 2 * pos + 1
    while childpos < endpos:
        next(tick)
        rightpos = childpos + 1
        if rightpos < endpos and not _less(heap[childpos], heap[rightpos]):
            childpos = rightpos
        heap[pos] = heap[childpos]
        pos = childpos
        childpos = 2 * pos + 1
    heap[pos] = newitem
    _siftdown(heap, startpos, pos, tick)


def heappop(heap: list[Any], /) -> Any:
    """Pop the smallest item off ``heap``."""
    lastelt = _heap(heap).pop()
    if heap:
        returnitem = heap[0]
        heap[0] = lastelt
        _siftup(heap, 0)
        return returnitem
    return lastelt


def heapreplace(heap: list[Any], item: Any, /) -> Any:
    """Pop the smallest item, then push ``item``."""
    if not _heap(heap):
        raise IndexError("index out of range")
    returnitem = heap[0]
    heap[0] = item
    _siftup(heap, 0)
    return returnitem


def heappushpop(heap: list[Any], item: Any, /) -> Any:
    """Push ``item``, then pop the smallest item (faster than the two calls)."""
    if _heap(heap) and _less(heap[0], item):
        item, heap[0] = heap[0], item
        _siftup(heap, 0)
    return item


def _extreme(func: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    def wrapped(n: int, iterable: Iterable[Any], key: Any = None) -> list[Any]:
        items = list(counted(iterable))
        if key is None:
            charge_sort(items)
        return func(n, items, key=charge_each(key, len(items).bit_length()))
    wrapped.__name__ = func.__name__
    wrapped.__doc__ = func.__doc__
    return wrapped


def _charge_item(rounds: int) -> Callable[[Any], Any]:
    """Each item, charged as compared ``rounds`` times (nested items compare in C)."""
    charged = charge_each(_same, rounds)
    assert charged is not None
    return charged


def _same(value: Any) -> Any:
    return value


def merge(*iterables: Iterable[Any], key: Any = None, reverse: bool = False) -> Iterator[Any]:
    """Merge sorted inputs lazily; each item (or its key) is charged as it arrives."""
    rounds = max(1, len(iterables).bit_length())
    inputs: list[Iterator[Any]]
    if key is None:
        charged: Callable[[Any], Any] = _charge_item(rounds)
        inputs = [map(charged, counted(it)) for it in iterables]
    else:
        inputs = [counted(it) for it in iterables]
        key = charge_each(key, rounds)
    return counted(heapq.merge(*inputs, key=key, reverse=reverse))


FACADE: Final = Facade("heapq", {
    "heappush": heappush, "heappop": heappop, "heapify": heapify,
    "heappushpop": heappushpop, "heapreplace": heapreplace,
    "nlargest": _extreme(heapq.nlargest), "nsmallest": _extreme(heapq.nsmallest),
    "merge": merge,
})
