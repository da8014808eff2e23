"""``itertools`` for scripts: every iterator it returns is charged to the operation budget.

Infinite or combinatorial iterators (``count``, ``product`` …) would otherwise
let C code loop without ticks, e.g. ``5 in itertools.count(10)``.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.compare import charge_each
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import ensure_size, guarded_add
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

__all__ = ["FACADE"]


def _wrap(make: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def wrapped(*args: Any, **kwargs: Any) -> Iterator[Any]:
        return counted(make(*args, **kwargs))
    wrapped.__name__ = make.__name__
    wrapped.__doc__ = make.__doc__
    return wrapped


def accumulate(iterable: Iterable[Any], func: Any = None, *, initial: Any = None) -> Any:
    """Running totals; the default ``+`` is size-guarded (string/list growth)."""
    return counted(itertools.accumulate(counted(iterable), func or guarded_add,
                                        initial=initial))


def groupby(iterable: Iterable[Any], key: Any = None) -> Iterator[Any]:
    """Consecutive groups; the keys (compared in C) are charged like ``==``."""
    return counted(itertools.groupby(counted(iterable), charge_each(key or _same, 1)))


def _same(value: Any) -> Any:
    return value


def product(*iterables: Iterable[Any], repeat: int = 1) -> Iterator[Any]:
    """Cartesian product (the repeated pools are bounded)."""
    pools = [tuple(counted(p)) for p in iterables]
    if repeat < 0 or sum(len(p) for p in pools) * repeat > current_run().limits.operations:
        current_run().too_big(f"itertools.product(repeat={repeat})", repeat)
    return counted(itertools.product(*pools, repeat=repeat))


def _tuples_of(make: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """``permutations``/``combinations``/``combinations_with_replacement``: each item is an
    r-tuple built in C (r is unbounded for ``combinations_with_replacement``): size it first."""
    def wrapped(iterable: Iterable[Any], r: Any = None) -> Iterator[Any]:
        pool = tuple(counted(iterable))
        width = len(pool) if r is None else r
        if isinstance(width, int):
            ensure_size(int(width) * 8, f"itertools.{make.__name__}(r={width})")
        return counted(make(pool) if r is None else make(pool, r))
    wrapped.__name__ = make.__name__
    wrapped.__doc__ = make.__doc__
    return wrapped


def _chain(*iterables: Iterable[Any]) -> Iterator[Any]:
    return counted(itertools.chain(*iterables))


def _from_iterable(iterables: Iterable[Iterable[Any]]) -> Iterator[Any]:
    return counted(itertools.chain.from_iterable(counted(iterables)))


chain: Final = Facade("itertools.chain", {"from_iterable": _from_iterable}, call=_chain)

_WRAPPED: Final = {
    name: _wrap(getattr(itertools, name)) for name in (
        "count", "cycle", "repeat", "compress", "dropwhile", "filterfalse", "islice",
        "pairwise", "starmap", "takewhile", "zip_longest",
    )
}
_WRAPPED.update({name: _tuples_of(getattr(itertools, name)) for name in (
    "permutations", "combinations", "combinations_with_replacement")})
FACADE: Final = Facade("itertools", {**_WRAPPED, "product": product, "chain": chain,
                                     "accumulate": accumulate, "groupby": groupby})
