"""A 10 ms ticker on the host loop that tells a stalled loop from an unscheduled process.

Tests demand one tick of the host's loop per 200 ms while a script computes. Against wall
time that failed on a loaded 2-core CI box (0 ticks in 0.22 s, load 6-8): the threads
waited on the CPU run queue, not on the script. Subtracting only the run-queue wait hides a
real stall under load: the host's own wakeups (it asks for the GIL every 5 ms) wait there
too (measured, load 6: a 0.6 s GIL-holding ``sum`` took 4-7 s of wall time, in which the
threads waited 5-10 s summed). What a stall is made of does not change with the load: CPU
time this process spends while its loop cannot tick. So each gap between two ticks counts
as the larger of the process's CPU time in it and its wall time less the run-queue wait of
the process's threads (``/proc/self/task/*/schedstat``; a stall that blocks without
computing). Unloaded, that is the wall time, as before. The CPU time counts up to the
gap's wall time: one thread holding the GIL cannot spend more, and threads computing
beside it without the GIL do not stop the loop.
"""

from __future__ import annotations

import os
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, final

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["PER_TICK", "Ticks", "host_ticks", "run_queue_waits"]

PER_TICK: Final = 0.2
"""Seconds of stall a loop may spend per tick: an unstarved 10 ms ticker ticks every
10-15 ms, and GIL sharing with an in-process script thread can cut that to a fifth."""


def run_queue_waits() -> dict[int, int]:
    """Nanoseconds each thread of this process has waited, runnable, for a CPU (none where
    the kernel keeps no schedstat)."""
    waits: dict[int, int] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return waits
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
                waits[int(tid)] = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return waits


@dataclass(frozen=True, kw_only=True, slots=True)
class _Mark:
    wall: float
    cpu: float
    waits: dict[int, int]

    @classmethod
    def now(cls) -> _Mark:
        return cls(wall=time.perf_counter(), cpu=time.process_time(), waits=run_queue_waits())

    def since(self, before: _Mark) -> float:
        """The stall this gap can stand for (see the module docstring). A thread that ended
        in the gap takes its wait with it (a sum over the threads fell by seconds, and the
        gap came out longer than it was): only the threads still here count, which only
        makes the check stricter."""
        wall = self.wall - before.wall
        waited = sum(max(0, w - before.waits.get(tid, 0)) for tid, w in self.waits.items())
        return max(min(self.cpu - before.cpu, wall), wall - waited / 1e9)


@final
@dataclass(kw_only=True, slots=True)
class Ticks:
    """What the ticker saw while its ``async with`` block ran."""

    count: int = 0
    """Ticks of the 10 ms ticker inside the block."""
    elapsed: float = 0.0
    """Wall seconds the block took."""
    stall: float = 0.0
    """Seconds the loop could have ticked in: per gap, CPU time or unqueued wall time."""
    worst: float = 0.0
    """The largest one gap's stall."""
    _last: _Mark | None = field(default=None, repr=False)

    def _mark(self, *, tick: bool) -> None:
        mark = _Mark.now()
        if self._last is not None:
            gap = mark.since(self._last)
            self.stall += gap
            self.worst = max(self.worst, gap)
            self.elapsed += mark.wall - self._last.wall
        self._last = mark
        self.count += tick

    @property
    def starved(self) -> bool:
        """Fewer ticks than one per :data:`PER_TICK` of stall."""
        return self.count < int(self.stall / PER_TICK)


@asynccontextmanager
async def host_ticks() -> AsyncIterator[Ticks]:
    """Tick every 10 ms on this loop while the block runs; the yielded :class:`Ticks` is
    complete once the block is left."""
    ticks = Ticks()

    async def ticker() -> None:
        while True:
            await anyio.sleep(0.01)
            ticks._mark(tick=True)

    async with anyio.create_task_group() as tg:
        ticks._mark(tick=False)
        tg.start_soon(ticker)
        try:
            yield ticks
        finally:
            tg.cancel_scope.cancel()
            ticks._mark(tick=False)
