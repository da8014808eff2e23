"""The host's own reading of a worker's resident memory, during a run.

Inside a worker a run's memory is bounded twice: the script meter trips when the
process grows by more than ``Limits.memory`` (resident, at chunk boundaries), and
``RLIMIT_AS`` caps its address space at its idle size plus ``Limits.memory``. With the
language layer broken only ``RLIMIT_AS`` holds, and most of a worker's address space is
reservation: the script thread's 2 GiB C stack (``meter.SCRIPT_STACK``) counts in it
untouched, so a payload that writes into that reservation held 1.07 GB resident under
``Limits(memory=256 MiB)``, a pool of such workers as many times that of the host's RAM.
So the host reads ``/proc/<pid>/statm`` itself (world-readable: no ptrace access to the
worker is needed) every ``WATCH_SECONDS`` of a run, and kills a worker that grew past
:func:`budget`: a reading that never asks the worker anything.
"""

from __future__ import annotations

import contextlib
import os
from typing import Final, final

__all__ = ["SLACK", "WATCH_SECONDS", "Resident", "budget"]

WATCH_SECONDS: Final = 0.05
"""Seconds between the host's readings during a run (a read costs ~4 µs): a run shorter
than this is never read, and one can fault in a few hundred MB at most in that time."""

SLACK: Final = 64 * 1024 * 1024
"""Bytes of resident growth past twice the run's memory limit before the host kills."""

_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def budget(base: int, memory: int) -> int:
    """Resident bytes past which a run's worker is killed: its size when the run started
    plus twice the run's memory limit plus ``SLACK``. The meter stops an honest script at
    one limit's growth; the rest covers what grows between its checks and the runtime's
    own work (encoding the result), so only a worker the meter no longer guards gets
    there."""
    return base + 2 * memory + SLACK


@final
class Resident:
    """``/proc/<pid>/statm`` of one worker, kept open (a read is then one ``pread``)."""

    def __init__(self, pid: int) -> None:
        try:
            self._fd = os.open(f"/proc/{pid}/statm", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # no procfs: nothing is read, nothing killed for it
            self._fd = -1

    def read(self) -> int | None:
        """The worker's resident bytes now, or None where unknown (gone, no procfs)."""
        if self._fd < 0:
            return None
        try:
            return int(os.pread(self._fd, 64, 0).split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return None

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
