"""``zip``, ``itertools.islice`` and ``itertools.chain`` over the script's async generators.

A plain generator that calls tools runs as an async generator (the dialects rewrite it,
and ``for`` over these readers as ``async for``). Handed one, the three read in
CPython's order, so a script makes the same calls as in CPython: ``zip`` takes one item
of each iterable left to right and stops at the first that ends (the generator's item
already taken when a later list ends: one call more, as in CPython), ``islice`` reads no
item past its stop, ``chain`` reads each iterable only once the one before ended.

The script holds an :class:`AsyncReader`: an async iterator and nothing else (no frame,
no ``send``); the host generator behind it is never handed out.
"""

from __future__ import annotations

import sys
from types import AsyncGeneratorType
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.guards import SelfGuarded
from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.sizes import WIDE, charge_operations
from codemode.sandbox.language.state import counted

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Iterator

__all__ = ["AsyncReader", "async_chain", "async_islice", "async_zip", "script_async_gen"]

_Part = tuple["AsyncIterator[Any] | None", "Iterator[Any] | None"]


def script_async_gen(obj: object) -> bool:
    """``obj`` is one of the script's own async generators."""
    return type(obj) is AsyncGeneratorType and (
        obj.ag_code.co_filename == SCRIPT_FILENAME)


@final
class AsyncReader(SelfGuarded):
    """What a script holds of these readers: ``async for`` reads it; nothing else."""

    __slots__ = ("_items",)

    def __init__(self, items: AsyncIterator[Any]) -> None:
        self._items = items

    def __aiter__(self) -> AsyncReader:
        return self

    def __anext__(self) -> Awaitable[Any]:
        return self._items.__anext__()

    def __repr__(self) -> str:
        return "<async iterator>"


def _part(obj: Any) -> _Part:
    if script_async_gen(obj):
        return obj, None
    return None, counted(iter(obj))


async def _take(part: _Part) -> Any:
    """The next item of ``part``; StopAsyncIteration at its end."""
    agen, items = part
    if agen is not None:
        return await agen.__anext__()
    try:
        return next(items)  # type: ignore[arg-type]
    except StopIteration:
        raise StopAsyncIteration from None


async def _zip(parts: list[_Part]) -> AsyncIterator[tuple[Any, ...]]:
    cost = len(parts) // WIDE
    while True:
        row = []
        for part in parts:
            try:
                row.append(await _take(part))
            except StopAsyncIteration:
                return
        charge_operations(cost)
        yield tuple(row)


def async_zip(*iterables: Any) -> AsyncReader:
    """``zip`` where an iterable is a script async generator."""
    return AsyncReader(_zip([_part(i) for i in iterables]))


def _index(value: Any, what: str) -> int | None:
    """An ``islice`` index, refused with CPython's message (``what`` starts it)."""
    if value is None:
        return None
    if type(value) not in (int, bool) or not 0 <= value <= sys.maxsize:
        raise ValueError(f"{what} for islice() must be None or an integer: "
                         "0 <= x <= sys.maxsize.")
    return int(value)


async def _islice(part: _Part, start: int, stop: int | None,
                  step: int) -> AsyncIterator[Any]:
    """CPython's ``islice_next``: skip to the next index, stop at ``stop`` unread."""
    count, wanted = 0, start
    while True:
        if stop is not None and count >= stop:
            return
        try:
            while count < wanted:
                await _take(part)
                count += 1
            if stop is not None and count >= stop:
                return
            item = await _take(part)
        except StopAsyncIteration:
            return
        count += 1
        wanted += step
        if stop is not None and wanted > stop:
            wanted = stop
        yield item


def async_islice(iterable: Any, *args: Any) -> AsyncReader:
    """``itertools.islice`` of a script async generator."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"islice expected at most 4 arguments, got {len(args) + 1}")
    if len(args) == 1:
        start, stop, step = 0, _index(args[0], "Stop argument"), 1
    else:
        start = _index(args[0], "Indices") or 0
        stop = _index(args[1], "Stop argument")
        step = 1 if len(args) < 3 or args[2] is None else _step(args[2])
    return AsyncReader(_islice(_part(iterable), start, stop, step))


def _step(value: Any) -> int:
    if type(value) not in (int, bool) or not 1 <= value <= sys.maxsize:
        raise ValueError("Step for islice() must be a positive integer or None.")
    return int(value)


async def _chain(iterables: tuple[Any, ...]) -> AsyncIterator[Any]:
    for obj in iterables:
        part = _part(obj)
        while True:
            try:
                item = await _take(part)
            except StopAsyncIteration:
                break
            yield item


def async_chain(*iterables: Any) -> AsyncReader:
    """``itertools.chain`` where an iterable is a script async generator."""
    return AsyncReader(_chain(iterables))


ASYNC_READERS: Final = frozenset({"zip", "islice", "chain"})
"""The readers the dialects may hand a generator that calls tools."""
