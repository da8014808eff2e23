"""Operation budget, deadline and the sticky "limit tripped" state of one run.

Counting has to be nearly free (a 1e6-iteration loop may cost at most 1.5x
plain CPython), so no Python code runs per operation. The budget is a C-level
iterator, ``ticker = chain.from_iterable(meter)``, whose items are chunks
``repeat(True, k)`` handed out by :meth:`Meter.__next__`:

- a ``for`` loop iterates ``compress(items, ticker)``: ``compress`` pulls one
  budget item (C) with each element and yields the element, no call in between
  (a quarter of what ``map({}.get, ticker, items)`` cost);
- a ``while`` back-edge, a function entry or a lambda call runs ``next(ticker)``.

Python code runs once per chunk (at most ``CHUNK`` operations): it grants the next
chunk, checks the wall-clock deadline and an abort flag, every few
milliseconds the process's peak resident memory (in-process there is no
rlimit; size guards also poll it before big allocations), and trips the
limit when the budget is gone. That Python code is also where the script thread lets
go of the GIL (in-process, the host's event loop waits for it), so chunks are *paced*: one
that took longer than ``PACE`` makes the next ones smaller, until a chunk takes about
``PACE`` again; fast chunks double back to ``CHUNK``. A C call fed counted items that
each cost more than the last (inserting keys that share a hash: every insert compares
the key with all the earlier ones) thus keeps ticking every few milliseconds instead of
holding the GIL for a 1,024-item chunk (0.5-1.7 s at 20,000 such keys). Ordinary code
never sees a chunk that slow: 1,024 operations of script code take ~50 µs.

A tripped limit stays tripped: every later tick, tool call, print or import raises
:class:`Tripped` again, and the runner reports the first trip even if the script
swallowed the exception.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager, suppress
from itertools import chain, repeat
from operator import length_hint
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from codemode.errors import LimitExceeded

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

__all__ = [
    "CHUNK",
    "SCRIPT_FILENAME",
    "SCRIPT_STACK",
    "Meter",
    "ScriptStop",
    "Tripped",
    "script_location",
    "script_thread_stack",
]

CHUNK: Final = 1024
"""Operations granted per chunk; also how often the deadline is checked."""

PACE: Final = 0.002
"""Seconds a chunk should take at most (see the module docstring): past them the next
chunk is cut in proportion. Granting a chunk costs ~1 µs, so a paced script pays 0.05%."""

SLOW_START: Final = 128
"""Operations of the chunk :meth:`Meter.slow_start` grants next (128 keys sharing a hash
compare ~8,000 times among themselves: ~25 ms for the longest ints)."""

SCRIPT_FILENAME: Final = "<script>"
"""``co_filename`` of every code object compiled from a model's script."""

SCRIPT_MODULE: Final = "__script__"
"""``__name__`` in a script's globals (what warnings about script frames are filtered by)."""

MAIN_MODULE: Final = "__main__"
"""``__module__`` of the classes and functions a script defines, as CPython shows them for
a program (``<class '__main__.Row'>``); the globals keep :data:`SCRIPT_MODULE`, which the
host's own ``__main__`` never is."""


class ScriptStop(BaseException):
    """Base of what ends a script early on purpose (``final_answer(x)``, ``exit()``): a
    BaseException, so a script's ``except Exception`` lets it through. Host code that runs
    script code outside the script's own frames (closing what the run left open, rendering
    its error) catches it as it catches :class:`Tripped`: the run is over by then."""


class Tripped(BaseException):
    """Raised inside the script when a limit trips.

    A BaseException so ``except Exception`` in the script does not catch it;
    bare ``except:`` can, but the meter stays tripped and re-raises at the next
    tick, and the runner reports the limit regardless.
    """

    def __init__(self, error: LimitExceeded) -> None:
        super().__init__(str(error))
        self.error = error


def script_location(frame: FrameType | None) -> tuple[int | None, int | None]:
    """(line, column), both 1-based, of the innermost script frame at or above ``frame``."""
    while frame is not None and frame.f_code.co_filename != SCRIPT_FILENAME:
        frame = frame.f_back
    if frame is None:
        return None, None
    line: int | None = frame.f_lineno
    column: int | None = None
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        pos_line, _, pos_col, _ = positions[index]
        if pos_line is not None:
            line = pos_line
        if pos_col is not None:
            column = pos_col + 1
    return line, column


SCRIPT_STACK: Final = 1 << 31
"""C stack (virtual; pages are committed only when touched) for threads that run scripts.

CPython 3.11 recurses in C without a depth check when it hashes nested tuples, pulls from
a chain of iterators or frees nested deques/slices: one level costs 32-132 bytes of stack
and about as much heap, so with a stack of several times ``Limits.memory`` the memory or
operation limit trips long before the stack runs out (an 8 MiB stack overflows at ~100 000
levels, well inside the default limits: SIGSEGV)."""

_STACK_LOCK: Final = threading.Lock()


@contextmanager
def script_thread_stack(size: int = SCRIPT_STACK) -> Iterator[None]:
    """Threads started inside this block get a ``size``-byte C stack (see ``SCRIPT_STACK``).

    ``threading.stack_size`` is process-wide, so it is set only around the start, under a
    lock, and restored.
    """
    with _STACK_LOCK:
        previous = threading.stack_size(size)
        try:
            yield
        finally:
            threading.stack_size(previous)


try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

MEMORY_CHECK_INTERVAL: Final = 0.005
"""Seconds between resident-memory checks at chunk boundaries."""


_clear_refs: tuple[int, int] | None = None
"""``(pid, descriptor)`` of this process's ``/proc/self/clear_refs``, kept open: opening it
for every run cost more than the write (a worker opens it while it warms up, before
Landlock would refuse the open). A child made by ``fork`` opens its own."""
_clear_refs_lock = threading.Lock()


def _reopen_clear_refs() -> None:
    """In a forked child: drop the parent's descriptor and open the child's own (a
    worker forked from its template does so before it confines itself; confined, it
    could not open it)."""
    global _clear_refs
    kept, _clear_refs = _clear_refs, None
    if kept is not None:
        with suppress(OSError):
            os.close(kept[1])
        reset_peak_memory()


def reset_peak_memory() -> None:
    """Lower the kernel's resident high-water mark to the current size (Linux ``clear_refs``).

    The peak never goes down by itself: after one run (or the host) peaked high and freed
    the memory, a later run could grow by that whole gap before its own check saw a change.
    """
    global _clear_refs
    kept, pid = _clear_refs, os.getpid()
    if kept is None or kept[0] != pid:
        with _clear_refs_lock:
            kept = _clear_refs
            if kept is None or kept[0] != pid:
                try:
                    kept = _clear_refs = (pid, os.open("/proc/self/clear_refs",
                                                       os.O_WRONLY | os.O_CLOEXEC))
                except OSError:
                    return
    with suppress(OSError):
        os.write(kept[1], b"5")


def resident_bytes() -> int | None:
    """This process's peak resident set size (bytes), or None where unknown.

    The peak, from ``getrusage``, because reading ``/proc`` is file I/O: it
    releases the GIL every few milliseconds, and a CPU-bound script thread
    that keeps re-taking it then starves the host's event loop thread.
    """
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak * 1024 if sys.platform != "darwin" else peak


class _EndedTicker:
    """The ticker after the run ended: script code still running (a finalizer) is closed."""

    __slots__ = ()

    def __iter__(self) -> _EndedTicker:
        return self

    def __next__(self) -> NoReturn:
        raise GeneratorExit


class _TrippedTicker:
    """Replaces the ticker once a limit tripped: every ``next()`` re-raises."""

    __slots__ = ("_meter",)

    def __init__(self, meter: Meter) -> None:
        self._meter = meter

    def __iter__(self) -> _TrippedTicker:
        return self

    def __next__(self) -> NoReturn:
        self._meter.raise_tripped()


@final
class Meter:
    """The operation budget of one run plus its sticky tripped state."""

    def __init__(self, *, operations: int, timeout: float, memory: int | None = None) -> None:
        self.operations = operations
        self.memory = memory
        if memory is not None:
            reset_peak_memory()
        self._memory_base = resident_bytes() if memory is not None else None
        self._memory_checked = time.monotonic()
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self._ends = self.deadline
        """The deadline the run started with (:meth:`hold` moves ``deadline`` from it)."""
        self.granted = 0
        self._chunk: Any = None
        self._size = CHUNK
        """Operations the next chunk grants (paced, see ``PACE``)."""
        self._granted_at = time.monotonic()
        self.tripped: LimitExceeded | None = None
        self.location: tuple[int | None, int | None] = (None, None)
        self.abort_reason: str | None = None
        self.stopping: ScriptStop | None = None
        """An ``exit()``/``final_answer()`` one of the script's tasks raised: tool calls,
        ``print`` and facades raise it again in the script's other code."""
        self._pending: LimitExceeded | None = None
        self.ended = False
        self._lock = threading.Lock()
        self.ticker: Any = chain.from_iterable(self)
        self.namespace: dict[str, Any] | None = None
        """Script globals; ``_T_`` there is swapped for a re-raising ticker on trip."""

    # The chunk source for ``chain.from_iterable``.
    def __iter__(self) -> Meter:
        return self

    def __next__(self) -> Any:
        if self.ended:
            # An iterator counted before the run ended, drained by a finalizer afterwards.
            raise GeneratorExit
        if self.tripped is not None:
            self.raise_tripped()
        if self._pending is not None:
            self.trip(self._pending)
        if self.abort_reason is not None:
            self.trip(LimitExceeded("timeout", self.timeout, self.abort_reason))
        now = time.monotonic()
        if now > self.deadline:
            self.trip(LimitExceeded("timeout", self.timeout, "the run took too long"))
        if self._memory_base is not None and now - self._memory_checked > MEMORY_CHECK_INTERVAL:
            self._check_memory(now)
        remaining = self.operations - self.granted
        if remaining <= 0:
            self.trip(LimitExceeded("operations", self.operations,
                                    "too many loop iterations or function calls"))
        took = now - self._granted_at
        self._granted_at = now
        size = self._size
        if took > PACE:
            size = max(1, int(size * PACE / took))
        elif size < CHUNK:
            size = min(CHUNK, 2 * size)
        self._size = size
        k = size if remaining > size else remaining
        self.granted += k
        self._chunk = repeat(True, k)
        return self._chunk

    def slow_start(self) -> None:
        """Make the next chunk small (``SLOW_START``; pacing grows it back while chunks are
        fast), refunding what the current one has left.

        For a C call about to insert counted items into a big table: each insert may
        compare the key with every key of the table sharing its hash (24,000 of them: a
        1,024-item chunk held the GIL 0.5 s), and pacing only learns that from a chunk
        that took long."""
        chunk = self._chunk
        if chunk is not None:
            left = length_hint(chunk)
            if left > SLOW_START:
                deque(chunk, maxlen=0)
                self.granted -= left
        self._size = SLOW_START // 2
        self._granted_at = time.monotonic()

    def poll_memory(self, *, force: bool = False) -> None:
        """Check aggregate growth now if due (size guards call this on big allocations)."""
        now = time.monotonic()
        if self._memory_base is not None and (
                force or now - self._memory_checked > MEMORY_CHECK_INTERVAL):
            self._check_memory(now)

    def _check_memory(self, now: float) -> None:
        """Aggregate growth check (in-process has no rlimit; each object is size-guarded)."""
        self._memory_checked = now
        current = resident_bytes()
        assert self.memory is not None and self._memory_base is not None
        if current is not None and current - self._memory_base > self.memory:
            self.trip(LimitExceeded("memory", self.memory,
                                    f"the run grew the process by {current - self._memory_base}"
                                    " bytes"))

    @property
    def used(self) -> int:
        """Operations consumed so far."""
        left = 0 if self._chunk is None else length_hint(self._chunk)
        return min(self.granted - left, self.operations)

    def check(self) -> None:
        """Raise if a limit tripped, the run's time is up or it was asked to stop, or the
        run ended (used by tool calls, print, facades).

        The deadline and the stop requests are checked here too, not only at ticks: a
        script that caught the cancellation of its timeout (bare ``except:``) and called a
        tool at once, before its next tick, had the call dispatched after the deadline."""
        if self.ended:
            raise GeneratorExit
        if self.tripped is not None:
            self.raise_tripped()
        if self.stopping is not None:
            raise self.stopping.with_traceback(None)
        if self._pending is not None:
            self.trip(self._pending)
        if self.abort_reason is not None:
            self.trip(LimitExceeded("timeout", self.timeout, self.abort_reason))
        if time.monotonic() > self.deadline:
            self.trip(LimitExceeded("timeout", self.timeout, "the run took too long"))

    def end(self) -> None:
        """The run is over: any script code still running stops at its next tick."""
        self.ended = True
        self.ticker = _EndedTicker()
        if self.namespace is not None:
            self.namespace["_T_"] = self.ticker

    def hold(self, paused: float | None) -> None:
        """Stop the deadline's clock (``None``) or restart it ``paused`` seconds (the total
        held so far) later than it began; thread-safe (one float, written whole)."""
        self.deadline = math.inf if paused is None else self._ends + paused

    def watch(self) -> None:
        """Check the deadline and memory from another thread (thread-safe, never raises).

        The script thread checks them only every ``CHUNK`` ticks, and one tick may run a C
        call that copies megabytes (``[c() for _ in range(1000)]`` with ``c = big.copy``):
        the host calls this every few milliseconds so such a loop stops at its next tick.
        """
        if self.ended or self.tripped is not None or self._pending is not None:
            return
        now = time.monotonic()
        pending: LimitExceeded | None = None
        if now > self.deadline:
            pending = LimitExceeded("timeout", self.timeout, "the run took too long")
        elif self._memory_base is not None:
            current = resident_bytes()
            assert self.memory is not None
            if current is not None and current - self._memory_base > self.memory:
                pending = LimitExceeded("memory", self.memory,
                                        f"the run grew the process by "
                                        f"{current - self._memory_base} bytes")
        if pending is not None:
            self._pending = pending
            chunk = self._chunk
            if chunk is not None:
                deque(chunk, maxlen=0)

    def abort(self, reason: str) -> None:
        """Ask the script to stop at its next tick (thread-safe).

        Exhausting the current chunk makes the very next tick come back here,
        instead of up to ``CHUNK`` operations later.
        """
        self.abort_reason = reason
        chunk = self._chunk
        if chunk is not None:
            deque(chunk, maxlen=0)

    def trip(self, error: LimitExceeded) -> NoReturn:
        """Trip ``error`` (the first trip wins) and raise it into the script."""
        if self.ended:
            raise GeneratorExit
        with self._lock:
            if self.tripped is None:
                self.tripped = error
                self.location = script_location(sys._getframe(1))
                self.ticker = _TrippedTicker(self)
                if self.namespace is not None:
                    self.namespace["_T_"] = self.ticker
        self.raise_tripped()

    def raise_tripped(self) -> NoReturn:
        """Raise the sticky trip again."""
        assert self.tripped is not None
        raise Tripped(self.tripped)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reopen_clear_refs)
