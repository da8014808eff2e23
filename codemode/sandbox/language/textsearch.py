"""Substring searches of a long text, a chunk at a time.

``find``/``rfind``/``index``/``rindex``/``count`` and ``sub in text`` of a needle of two or
more characters are one C call over the whole text (CPython's two-way search, ~5 ns a
character at worst: ``('a' * 120_000_000).find('aaaaaaab')`` held the GIL 0.7 s, and ``in``
was not charged at all). Here a text past :data:`SEARCH_CHUNK` characters is searched a
window at a time, an operation charged per ``SEARCH_UNIT`` characters, so the host loop runs
between windows and the deadline is checked. A one-character needle is a ``memchr`` at
memory speed and stays one call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.sizes import charge_operations

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["SEARCH_CHUNK", "bind_partition", "bind_search", "chunked_span", "count_in_chunks",
           "count_of", "find_in_chunks", "rsplit_in_chunks", "split_in_chunks"]

SEARCH_CHUNK: Final = 1 << 18
"""Characters of a text one C search call is given (~1 ms at worst)."""

SEARCH_UNIT: Final = 64
"""Characters searched per operation charged (a comparison's ``SEARCH_UNIT``)."""


def bind_search(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``find``/``rfind``/``index``/``rindex`` of a text (``find`` of bytes): a long one's
    a window at a time."""
    last = method.startswith("r")
    raises = method.endswith("index")

    def bind(text: Any) -> Callable[..., Any]:
        real: Callable[..., Any] = getattr(text, method)

        def search(*args: Any) -> Any:
            span = chunked_span(text, args[0], args[1:]) if args else None
            if span is None:
                return real(*args)
            found = find_in_chunks(text, args[0], *span, last=last)
            if found < 0 and raises:
                raise ValueError("substring not found")
            return found
        return search
    return bind


def chunked_span(text: Any, sub: Any, args: tuple[Any, ...]) -> tuple[int, int] | None:
    """The ``(start, end)`` a search of ``sub`` in ``text`` with the optional ``start, end``
    ``args`` reads, when it is worth chunking: a ``str`` or ``bytes`` text and a needle of
    its type (a ``StrEnum`` member as either: C reads its value, as here, and the enum
    cannot redefine a ``str`` method, so the windows' ``find``/``count``/``split`` are
    ``str``'s), of two or more characters; integer (a bool, an ``IntEnum`` member) or None
    bounds; a span past a chunk. None otherwise (another type goes to the C method, which
    decides)."""
    kind = str if isinstance(text, str) else bytes if isinstance(text, bytes) else None
    if kind is None or not isinstance(sub, kind):
        return None
    if len(sub) < 2 or len(args) > 2 or len(text) <= SEARCH_CHUNK:
        return None
    if not all(a is None or isinstance(a, int) for a in args):
        return None
    bounds = (*args, None, None)
    start, end, _ = slice(bounds[0], bounds[1]).indices(len(text))
    if end - start <= SEARCH_CHUNK:
        return None
    return start, end


def find_in_chunks(text: Any, sub: Any, start: int, end: int, *, last: bool = False) -> int:
    """``text.find(sub, start, end)`` (``last``: ``rfind``) a window at a time. Windows
    overlap by ``len(sub) - 1`` characters, so a match across a boundary is found whole;
    the first window (the last, for ``rfind``) that holds a match holds the answer."""
    reach = len(sub) - 1
    step = _step(sub)
    if not last:
        pos = start
        while pos < end:
            charge_operations(step // SEARCH_UNIT)
            found: int = text.find(sub, pos, min(pos + step + reach, end))
            if found >= 0:
                return found
            pos += step
        return -1
    stop = end
    while stop > start:
        charge_operations(step // SEARCH_UNIT)
        found = text.rfind(sub, max(stop - step - reach, start), stop)
        if found >= 0:
            return found
        stop -= step
    return -1


def _step(sub: Any) -> int:
    """Characters a window moves on: a chunk, or twice a long needle (each search reads its
    needle first: windows of a chunk would read a long one once a chunk)."""
    return max(SEARCH_CHUNK, 2 * len(sub))


def count_in_chunks(text: Any, sub: Any, start: int, end: int) -> int:
    """``text.count(sub, start, end)`` a window at a time. Counting goes left to right over
    non-overlapping matches (``split`` finds the same ones), so the matches the call counts
    inside a window that starts where its previous match ended are the window's own; the
    window's ``split`` tells where its last match ended. The next window starts there, or
    ``len(sub) - 1`` characters before the window's end if that is later (a match starting
    before that would have been inside the window): a match across a boundary is counted
    whole in the next window."""
    total = 0
    pos = start
    step = _step(sub)
    while True:
        charge_operations(step // SEARCH_UNIT)
        stop = pos + step
        if stop >= end:
            counted: int = text.count(sub, pos, end)
            return total + counted
        pieces = text[pos:stop].split(sub)
        total += len(pieces) - 1
        pos = max(stop - len(pieces[-1]), stop - len(sub) + 1)


def count_of(text: Any, sub: Any) -> int:
    """``text.count(sub)``, a window at a time when :func:`chunked_span` says so (for the
    guards that size a result before making it: ``replace``, ``split``)."""
    window = chunked_span(text, sub, ())
    if window is None:
        counted: int = text.count(sub)
        return counted
    return count_in_chunks(text, sub, *window)


def split_in_chunks(text: Any, sep: Any, maxsplit: int) -> list[Any]:
    """``text.split(sep, maxsplit)`` of a long text a window at a time (the windows as in
    :func:`count_in_chunks`: each starts where the previous one's last match ended or
    ``len(sep) - 1`` before its end). A window's first piece continues the piece the
    earlier windows left open."""
    parts: list[Any] = []
    left = maxsplit
    pos = opened = 0
    step = _step(sep)
    while True:
        charge_operations(step // SEARCH_UNIT)
        stop = pos + step
        if stop >= len(text) or not left:
            pieces = text[pos:].split(sep, left) if left else [text[pos:]]
            pieces[0] = text[opened:pos] + pieces[0]
            return parts + pieces
        pieces = text[pos:stop].split(sep, left)
        matched = len(pieces) - 1
        done = stop - len(pieces[-1])
        if matched:
            pieces[0] = text[opened:pos] + pieces[0]
            parts += pieces[:-1]
            opened = done
            if left > 0:
                left -= matched
        pos = max(done, stop - len(sep) + 1)


def bind_partition(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``partition``/``rpartition`` of a text: a long one's separator found a window at a
    time."""
    last = method == "rpartition"

    def bind(text: Any) -> Callable[..., Any]:
        real: Callable[..., Any] = getattr(text, method)

        def partition(sep: Any) -> Any:
            window = chunked_span(text, sep, ())
            if window is None:
                return real(sep)
            found = find_in_chunks(text, sep, *window, last=last)
            if found < 0:
                empty = text[:0]
                return (empty, empty, text) if last else (text, empty, empty)
            return text[:found], sep, text[found + len(sep):]
        return partition
    return bind


def rsplit_in_chunks(text: Any, sep: Any, maxsplit: int) -> list[Any]:
    """``text.rsplit(sep, maxsplit)`` of a long text a window at a time, from the end:
    :func:`split_in_chunks` mirrored (``rsplit`` takes its matches right to left, so
    ``'aaa'.rsplit('aa')`` is ``['a', '']`` where ``split`` gives ``['', 'a']``)."""
    found: list[list[Any]] = []
    left = maxsplit
    stop = closed = len(text)
    step = _step(sep)
    while True:
        charge_operations(step // SEARCH_UNIT)
        start = stop - step
        if start <= 0 or not left:
            pieces = text[:stop].rsplit(sep, left) if left else [text[:stop]]
            pieces[-1] = pieces[-1] + text[stop:closed]
            return [*pieces, *(piece for window in reversed(found) for piece in window)]
        pieces = text[start:stop].rsplit(sep, left)
        matched = len(pieces) - 1
        done = start + len(pieces[0])
        if matched:
            pieces[-1] = pieces[-1] + text[stop:closed]
            found.append(pieces[1:])
            closed = done
            if left > 0:
                left -= matched
        stop = min(done, start + len(sep) - 1)
