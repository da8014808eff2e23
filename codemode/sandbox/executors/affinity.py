"""One CPU for the host's loop thread and its in-process script threads while runs are on.

The in-process executor's script thread and the host's loop thread take turns: each tool
call hands the GIL and the work from one to the other and back, and they never run Python
at once. On a multi-core machine the kernel still spreads the two threads over two CPUs,
and every hand-over is then a wake-up of a sleeping thread on another CPU: an
inter-processor interrupt, which on a virtual machine is a trip through the hypervisor.
Measured on a 2-vCPU VM (``benchmarks/hop_floor.py``): a bare hand-over and back costs
81-92 µs across CPUs and 10-11 µs on one; pinning only the script thread does not help
(the kernel moves the loop thread away). So while a run is on, both are held to the CPU
the loop thread was on when the first run started, and the loop thread's own affinity is
given back when the last one ends: on an asyncio host at the loop's next turn, so that a
run started before it (runs one after another in one task, with no wait between them)
finds both threads held already and makes no ``sched_setaffinity`` call (each such call
took 7-9 µs, and under load it is where the kernel preempts the thread: in a profile of
back-to-back runs on a loaded machine, half the loop thread's time with the GIL held).

What this costs: work a script thread does with the GIL released (few things a script
can reach do) no longer overlaps the loop thread, and while runs are on, the loop thread
cannot move to an idle CPU. Other threads of the host are never touched. Where the
platform cannot tell a thread's CPU or set its affinity, or a call fails, nothing is
pinned and nothing else changes. The mask given back is the one the loop thread had when
the first run started: a change the host made to it while runs were on is undone.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

__all__ = ["CpuShare", "current_cpu", "join_cpu", "thread_cpus"]


def _libc_getcpu() -> Callable[[], int] | None:
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_int
    function.argtypes = []
    return function


_GETCPU: Final = _libc_getcpu()


def current_cpu() -> int | None:
    """The CPU the calling thread runs on now, or None where that cannot be told."""
    if _GETCPU is None:
        return None
    cpu = _GETCPU()
    return cpu if cpu >= 0 else None


@final
class CpuShare:
    """The loop thread's hold on one CPU, shared by the runs it has on (one per thread
    that hosts runs; :meth:`enter`/:meth:`leave` on that thread only)."""

    __slots__ = ("_pending", "_runs", "_saved", "cpu")

    _by_thread: Final[dict[int, CpuShare]] = {}
    _lock: Final = threading.Lock()

    def __init__(self) -> None:
        self._runs = 0
        self._saved: set[int] | None = None
        self.cpu: int | None = None
        """The CPU the loop thread is held to while runs are on (None: not pinned)."""
        self._pending: asyncio.Handle | None = None
        """The give-back the last run to end scheduled, until the loop's next turn."""

    @classmethod
    def of_this_thread(cls) -> CpuShare:
        key = threading.get_ident()
        with cls._lock:
            share = cls._by_thread.get(key)
            if share is None:
                share = cls._by_thread[key] = cls()
            return share

    def own_cpus(self) -> set[int] | None:
        """The loop thread's own affinity (what it is given back), None where unknown."""
        return set(self._saved) if self._saved is not None else thread_cpus()

    def enter(self) -> int | None:
        """A run starts on this (the loop) thread: the CPU its script thread should join."""
        self._runs += 1
        if self._runs == 1 and self._pending is not None:
            self._pending.cancel()  # the last run's hold was not given back yet: kept
            self._pending = None
        elif self._runs == 1:
            cpu = current_cpu()
            if cpu is not None:
                try:
                    saved = os.sched_getaffinity(0)
                    if cpu in saved and len(saved) > 1:
                        os.sched_setaffinity(0, {cpu})
                        self._saved, self.cpu = saved, cpu
                except OSError:
                    self._saved = self.cpu = None
        return self.cpu

    def leave(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """A run ended: the last one gives the loop thread its own affinity back, at the
        next turn of ``loop`` (this thread's running loop) when given, unless a run
        started before that; at once when the loop takes no callback (closed: a run
        unwound after its loop stopped for good)."""
        self._runs -= 1
        if self._runs == 0 and self._saved is not None:
            if loop is None:
                self._give_back()
                return
            try:
                self._pending = loop.call_soon(self._give_back)
            except RuntimeError:
                self._give_back()

    def _give_back(self) -> None:
        self._pending = None
        if self._runs or self._saved is None:
            return
        saved, self._saved, self.cpu = self._saved, None, None
        try:
            os.sched_setaffinity(0, saved)
        except OSError:
            return


def join_cpu(cpu: int | None, free: set[int] | None) -> None:
    """On a script thread: run on ``cpu`` (its loop thread's), or on ``free`` (the CPUs it
    had when it started) when ``cpu`` is None."""
    target = free if cpu is None else {cpu}
    if not target:
        return
    try:
        os.sched_setaffinity(0, target)
    except OSError:
        return


def thread_cpus() -> set[int] | None:
    """The calling thread's affinity, or None where it cannot be read."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    try:
        return os.sched_getaffinity(0)
    except OSError:
        return None
