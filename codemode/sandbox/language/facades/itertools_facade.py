"""``itertools`` for scripts: every iterator it returns is charged to the operation budget.

Infinite or combinatorial iterators (``count``, ``product`` …) would otherwise
let C code loop without ticks, e.g. ``5 in itertools.count(10)``.
"""

from __future__ import annotations

import collections
import itertools
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.async_readers import async_chain, async_islice, script_async_gen
from codemode.sandbox.language.compare import charge_each
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded
from codemode.sandbox.language.sizes import (
    RENDER_SIZERS,
    charged_by_width,
    ensure_size,
    guarded_add,
)
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

__all__ = ["FACADE", "TEE_ITEM_BYTES"]


def _wrap(make: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def wrapped(*args: Any, **kwargs: Any) -> Iterator[Any]:
        return counted(_once(make(*args, **kwargs)))
    wrapped.__name__ = make.__name__
    wrapped.__doc__ = make.__doc__
    return wrapped


def _counted(make: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """``repeat``: no source to re-enter it through."""
    def wrapped(*args: Any, **kwargs: Any) -> Iterator[Any]:
        return counted(make(*args, **kwargs))
    wrapped.__name__ = make.__name__
    wrapped.__doc__ = make.__doc__
    return wrapped


def _once(items: Iterator[Any]) -> Iterator[Any]:
    """``items`` behind a generator, which refuses to be re-entered ("generator already
    executing"). A source that calls ``next()`` on the C iterator pulling from it (a
    script generator feeding ``islice`` or ``cycle``) made the C code free what it was
    still using: CPython 3.11-3.13 crash (a segfault of an in-process host)."""
    yield from items


def zip_longest(*iterables: Iterable[Any], fillvalue: Any = None) -> Iterator[Any]:
    """``zip_longest``: each item a tuple as wide as the iterables are many (charged so)."""
    made = itertools.zip_longest(*iterables, fillvalue=fillvalue)
    return charged_by_width(_once(made), len(iterables))


def accumulate(iterable: Iterable[Any], func: Any = None, *, initial: Any = None) -> Any:
    """Running totals; the default ``+`` is size-guarded (string/list growth)."""
    return counted(itertools.accumulate(counted(iterable), func or guarded_add,
                                        initial=initial))


def groupby(iterable: Iterable[Any], key: Any = None) -> Iterator[Any]:
    """Consecutive groups, as ``itertools.groupby``; the keys are charged like ``==``.

    Not the C one: it compares keys it does not hold, so a key's ``__eq__`` that pulls
    the groupby (or a group) frees the key being compared (CPython 3.12.1 and 3.13.0
    crash: a segfault of an in-process host). Here every key is a local of a generator,
    and a generator refuses to be re-entered."""
    keyed = charge_each(key or _same, 1) or _same  # None only for a None key
    return counted(_groups(iter(counted(iterable)), keyed))


def _groups(items: Iterator[Any], key: Callable[[Any], Any]) -> Iterator[Any]:
    current: list[Any] = []  # [value, key] of the item read last; empty once exhausted

    def group(target: Any) -> Iterator[Any]:
        yield current[0]
        for value in items:
            current[:] = value, key(value)
            if not _same_key(target, current[1]):
                return
            yield value
        current.clear()

    for value in items:
        current[:] = value, key(value)
        break
    while current:
        target = current[1]
        members = group(target)
        yield target, counted(members)
        if current and _same_key(target, current[1]):
            for _ in members:
                pass


def _same_key(target: Any, key: Any) -> bool:
    """``target == key`` as C compares them (``is`` first: a NaN key is its own group)."""
    return target is key or bool(target == key)


def _same(value: Any) -> Any:
    return value


def product(*iterables: Iterable[Any], repeat: int = 1) -> Iterator[Any]:
    """Cartesian product (the repeated pools are bounded)."""
    pools = [tuple(counted(p)) for p in iterables]
    if repeat < 0 or sum(len(p) for p in pools) * repeat > current_run().limits.operations:
        current_run().too_big(f"itertools.product(repeat={repeat})", repeat)
    return charged_by_width(itertools.product(*pools, repeat=repeat), len(pools) * repeat)


def _tuples_of(make: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """``permutations``/``combinations``/``combinations_with_replacement``: each item is an
    r-tuple built in C (r is unbounded for ``combinations_with_replacement``): size it first,
    and charge each by its width."""
    def wrapped(iterable: Iterable[Any], r: Any = None) -> Iterator[Any]:
        pool = tuple(counted(iterable))
        width = len(pool) if r is None else r
        if isinstance(width, int):
            width = int(width)
            ensure_size(width * 8, f"itertools.{make.__name__}(r={width})")
        made = make(pool) if r is None else make(pool, r)
        return charged_by_width(made, width if isinstance(width, int) else 0)
    wrapped.__name__ = make.__name__
    wrapped.__doc__ = make.__doc__
    return wrapped


def _chain(*iterables: Iterable[Any]) -> Any:
    if any(script_async_gen(i) for i in iterables):
        return async_chain(*iterables)
    return counted(itertools.chain(*iterables))


def _from_iterable(iterables: Iterable[Iterable[Any]]) -> Iterator[Any]:
    return counted(itertools.chain.from_iterable(counted(iterables)))


TEE_ITEM_BYTES: Final = 64
"""Host memory one item held for a lagging ``tee`` iterator is charged (the slot and,
usually, the item it keeps alive)."""

_MAX_TEE: Final = 256


class _TeeSource:
    """What the iterators of one ``tee`` share: the source and each one's backlog."""

    __slots__ = ("backlogs", "buffered", "source")

    def __init__(self, source: Iterator[Any], n: int) -> None:
        self.source = source
        self.backlogs: list[collections.deque[Any]] = [collections.deque() for _ in range(n)]
        self.buffered = 0

    def pull(self, index: int) -> Any:
        backlog = self.backlogs[index]
        if backlog:
            self.buffered -= 1
            return backlog.popleft()
        item = next(self.source)  # StopIteration ends this iterator
        others = len(self.backlogs) - 1
        if others:
            self.buffered += others
            if self.buffered & 1023 < others:  # every ~1024 items held: size the backlog
                ensure_size(self.buffered * TEE_ITEM_BYTES, "itertools.tee() backlog")
            for position, other in enumerate(self.backlogs):
                if position != index:
                    other.append(item)
        return item


class _Tee(SelfGuarded):
    """One iterator of ``itertools.tee``: the items not read yet are held for it (sized:
    a lagging iterator's backlog trips the memory limit, not the host)."""

    __slots__ = ("_index", "_shared")

    def __init__(self, shared: _TeeSource, index: int) -> None:
        self._shared = shared
        self._index = index

    def __iter__(self) -> _Tee:
        return self

    def __next__(self) -> Any:
        return self._shared.pull(self._index)

    def __repr__(self) -> str:
        return "<itertools.tee iterator>"


def tee(iterable: Iterable[Any], n: int = 2, /) -> tuple[_Tee, ...]:
    """``n`` independent iterators over one iterable (each item read once, charged once)."""
    if type(n) is not int:
        raise TypeError(f"'{type(n).__name__}' object cannot be interpreted as an integer")
    if n < 0:
        raise ValueError("n must be >= 0")
    if n > _MAX_TEE:
        raise ValueError(f"itertools.tee() makes at most {_MAX_TEE} iterators in the sandbox")
    shared = _TeeSource(counted(iterable), n)
    return tuple(_Tee(shared, index) for index in range(n))


def batched(iterable: Iterable[Any], n: int) -> Iterator[tuple[Any, ...]]:
    """Tuples of ``n`` items (the last may be shorter), as Python 3.12's ``batched``."""
    if type(n) is not int:
        raise TypeError(f"'{type(n).__name__}' object cannot be interpreted as an integer")
    if n < 1:
        raise ValueError("n must be at least one")
    ensure_size(n * 8, f"itertools.batched(n={n})")
    return counted(_batches(iter(counted(iterable)), n))


def _batches(items: Iterator[Any], n: int) -> Iterator[tuple[Any, ...]]:
    while batch := tuple(itertools.islice(items, n)):
        yield batch


def pairwise(iterable: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """Overlapping pairs, as ``itertools.pairwise``. Not the C one: a source that calls
    ``next()`` on the pairwise iterator itself frees the pair C is still building
    (CPython 3.12.1 and 3.13.0 crash: a segfault of an in-process host)."""
    return counted(_pairs(iter(counted(iterable))))


def _pairs(items: Iterator[Any]) -> Iterator[tuple[Any, Any]]:
    for last in items:
        for item in items:
            yield last, item
            last = item
        return


chain: Final = Facade("itertools.chain", {"from_iterable": _from_iterable}, call=_chain)

@final
class _Count(SelfGuarded):
    """``itertools.count(start=0, step=1)``: counted, with CPython's repr (``count(5)``,
    ``count(0, 2)``) where a counted C iterator would show ``<itertools.compress object>``."""

    __slots__ = ("_drawn", "_items", "_real", "_start", "_step")

    def __init__(self, start: Any = 0, step: Any = 1) -> None:
        self._real = itertools.count(start, step)  # CPython's checks of the arguments
        self._items = counted(self._real)
        self._start, self._step, self._drawn = start, step, 0

    def __iter__(self) -> _Count:
        return self

    def __next__(self) -> Any:
        value = next(self._items)
        self._drawn += 1
        return value

    def __repr__(self) -> str:
        return repr(self._real)

    def render_size(self) -> int:
        """Bytes of the repr: the numbers it shows, the current one at most this long."""
        return 32 + _number_size(self._start) + 2 * _number_size(self._step) + (
            self._drawn.bit_length() // 3)


def _number_size(value: Any) -> int:
    if type(value) is int or type(value) is bool:
        return int(value.bit_length()) // 3 + 2
    sizer = RENDER_SIZERS.get(type(value))
    return 32 if sizer is None else sizer(value)


RENDER_SIZERS.setdefault(_Count, _Count.render_size)

_WRAPPED: Final = {
    name: _wrap(getattr(itertools, name)) for name in (
        "cycle", "compress", "dropwhile", "filterfalse", "islice", "starmap", "takewhile",
    )
}
_PLAIN_ISLICE: Final = _WRAPPED["islice"]


def islice(iterable: Any, *args: Any) -> Any:
    """``islice``; of a script async generator (one that calls tools), an async iterator
    that reads as far as CPython's does."""
    if script_async_gen(iterable):
        return async_islice(iterable, *args)
    return _PLAIN_ISLICE(iterable, *args)


_WRAPPED.update({"islice": islice, "count": _Count, "repeat": _counted(itertools.repeat)})
_WRAPPED.update({name: _tuples_of(getattr(itertools, name)) for name in (
    "permutations", "combinations", "combinations_with_replacement")})
FACADE: Final = Facade("itertools", {**_WRAPPED, "product": product, "chain": chain,
                                     "zip_longest": zip_longest,
                                     "accumulate": accumulate, "groupby": groupby,
                                     "tee": tee, "batched": batched, "pairwise": pairwise})
