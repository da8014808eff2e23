"""``bisect`` for scripts: a search compares ``x`` with about log2(n) items, in C.

Each comparison reads at most ``x`` (or, with ``key=``, the key results, charged as they
come), so ``x`` is charged once per level before the C search runs. The sequence must be
one whose items C reads directly (list, tuple, named tuple, str, bytes, range, deque);
``insort`` inserts through the list's own method or the attribute guard.
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.compare import charge_each, compare_cost
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import ScriptMeta, guarded_getattr, guarded_write
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import current_run

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FACADE"]

_SEQUENCES: Final = frozenset({list, tuple, str, bytes, range, deque})
_VISITS_PER_OPERATION: Final = 16


def _sequence(a: Any) -> Any:
    kind = type(a)
    if kind in _SEQUENCES or (isinstance(a, tuple) and isinstance(kind, ScriptMeta)):
        return a
    raise TypeError(f"bisect: a must be a list, tuple, str, bytes, range or deque, not "
                    f"{kind.__name__!r}")


def _charged(a: Any, x: Any, lo: int, hi: Any, key: Any) -> tuple[int, Callable[..., Any] | None]:
    """Charge the search of ``x`` in ``a[lo:hi]``; the key function, charged per call."""
    end = len(_sequence(a)) if hi is None else hi
    levels = max(1, int(end) - int(lo)).bit_length() if isinstance(end, int) and isinstance(
        lo, int) else 1
    meter = current_run().meter
    budget = (meter.operations - meter.used + 1) * _VISITS_PER_OPERATION
    cost = compare_cost(x, budget)
    if cost > 1:
        charge_operations(max(1, cost * levels // _VISITS_PER_OPERATION))
    return levels, charge_each(key, 1)


def _search(func: Callable[..., int]) -> Callable[..., int]:
    def search(a: Any, x: Any, lo: int = 0, hi: Any = None, *, key: Any = None) -> int:
        _, key = _charged(a, x, lo, hi, key)
        if hi is None:
            return func(a, x, lo, key=key)
        return func(a, x, lo, hi, key=key)
    search.__doc__ = func.__doc__
    return search


bisect_left: Final = _search(bisect.bisect_left)
bisect_right: Final = _search(bisect.bisect_right)


def _insort(search: Callable[..., int]) -> Callable[..., None]:
    def insort(a: Any, x: Any, lo: int = 0, hi: Any = None, *, key: Any = None) -> None:
        guarded_write(_sequence(a))
        index = search(a, x if key is None else key(x), lo, hi, key=key)
        if type(a) is list:
            a.insert(index, x)
        else:
            guarded_getattr(a, "insert")(index, x)
    insort.__doc__ = f"Insert ``x`` into ``a``, kept sorted ({search.__name__})."
    return insort


FACADE: Final = Facade("bisect", {
    "bisect_left": bisect_left, "bisect_right": bisect_right, "bisect": _search(
        bisect.bisect_right),
    "insort_left": _insort(bisect_left), "insort_right": _insort(bisect_right),
    "insort": _insort(bisect_right),
})
