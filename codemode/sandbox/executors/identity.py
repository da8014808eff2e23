"""Spare uids for confined workers, leased so that no two live workers share one.

A root host runs each worker under a uid of its own (``confine.UID_BASE`` + n). Two
host processes on one machine (two servers, two test runs) must not hand out the same
uid while both workers live, or each could reach the other's files and, through
``RLIMIT_NPROC``, its thread budget. A lease is an exclusive ``flock`` on a per-uid
file in a root-only directory: the kernel drops it when the holding host exits, so a
crashed host leaks no uid, and nothing needs cleaning up. A host reuses the uids it
released (its workers cannot fork, so nothing of a reaped worker still runs as that
uid), so the directory holds about as many files as workers ever ran at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
import threading
from typing import Final, final

from codemode.errors import SandboxError
from codemode.sandbox.executors.confine import UID_BASE, UID_SPAN

__all__ = ["LEASE_DIR", "UidLease", "UidLeases"]

LEASE_DIR: Final = "/run/codemode/uids"
"""Where a root host's uid leases live (``/run`` is a per-boot tmpfs)."""


@final
class UidLease:
    """One uid held for one worker until :meth:`release` (idempotent)."""

    def __init__(self, uid: int, fd: int | None, owner: UidLeases) -> None:
        self.uid = uid
        self._fd = fd
        self._owner = owner

    def release(self) -> None:
        """Give the uid back: call only once no process of the worker is left."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        self._owner.give_back(self.uid, fd)


@final
class UidLeases:
    """Hands out uids from ``UID_BASE .. UID_BASE + UID_SPAN - 1``, claimed machine-wide.

    Without a lease directory (a host that is not root gives each worker its own user
    namespace instead, and the uid is unused) leases are unclaimed numbers.
    """

    def __init__(self, directory: str | None = LEASE_DIR) -> None:
        self._directory = directory
        self._next = secrets.randbelow(UID_SPAN)
        self._free: list[tuple[int, int]] = []
        self._ready = False
        self._lock = threading.Lock()

    def claim(self) -> UidLease:
        """A uid no live lease of any host on this machine holds."""
        with self._lock:
            return self._claim()

    def _claim(self) -> UidLease:
        if self._directory is None:
            return UidLease(self._step(), None, self)
        self._prepare(self._directory)
        if self._free:
            uid, fd = self._free.pop()
            return UidLease(uid, fd, self)
        for _ in range(4096):
            uid = self._step()
            fd = os.open(os.path.join(self._directory, str(uid)),
                         os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return UidLease(uid, fd, self)
        raise SandboxError("no spare uid for a sandbox worker: 4,096 in a row are leased "
                           f"by other hosts (see {self._directory})")

    def give_back(self, uid: int, fd: int) -> None:
        """Keep a released uid (still locked) for this host's next worker."""
        with self._lock:
            self._free.append((uid, fd))

    def close(self) -> None:
        """Drop every lease this host keeps for reuse."""
        with self._lock:
            free, self._free = self._free, []
        while free:
            with contextlib.suppress(OSError):
                os.close(free.pop()[1])

    def _step(self) -> int:
        uid = UID_BASE + self._next
        self._next = (self._next + 1) % UID_SPAN
        return uid

    def _prepare(self, directory: str) -> None:
        """Create the directory root-only, and refuse one anybody else could write."""
        if self._ready:
            return
        with contextlib.suppress(FileExistsError):
            os.makedirs(directory, mode=0o700)
        info = os.lstat(directory)
        if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()
                or info.st_mode & 0o022):
            raise SandboxError(f"{directory} must be a directory owned by uid "
                               f"{os.geteuid()} and writable by nobody else")
        self._ready = True
