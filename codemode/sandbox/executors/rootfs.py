"""A worker's own root: a mount namespace that holds only what the worker may read.

Landlock decides which files a worker may *open*, but not which it may ``stat``:
``stat``/``statx``/``access``/``readlink`` of a host path answered with its size,
owner and times (seccomp cannot filter by path). So a worker, on its only thread and
before Landlock and seccomp, leaves the host's root: a mount namespace of its own,
every mount private, a small ``tmpfs`` holding a read-only (and nosuid, nodev) bind
mount of each path Landlock allows, each at its host path (imported modules'
``__file__`` still resolve), ``/proc`` holding only ``/proc/<pid>`` and ``/proc/self``,
then ``pivot_root`` into it and the host's tree detached. Every other host path is then
absent (``ENOENT``), not just unreadable. The directories leading to the binds copy the
host's mode (and, as root, owner) and hold nothing else.

Steps: :func:`build` (``unshare(CLONE_NEWNS)``, every mount the host's slave, the
``tmpfs`` on a staging directory no source lies beneath, ``/mnt`` first, covered in that
namespace only; the binds), then :func:`enter` (every mount private, ``pivot_root``,
detach). A root worker template builds it once for its forks (``pid`` 0: no ``/proc``
entry yet) and each fork adopts it (:func:`adopt`): its own copy of the namespace with
its ``/proc/<pid>`` on a ``tmpfs`` of its own (~0.4 ms CPU instead of ~4 ms for ~100
binds). The caller makes the namespace possible: root, or inside the user namespace the
worker already created (``confine._network``).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Staged", "abandon", "adopt", "build", "enter", "release"]

CLONE_NEWNS: Final = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_BIND, _MS_REC, _MS_PRIVATE, _MS_SLAVE = 4096, 16384, 1 << 18, 1 << 19
_MNT_DETACH: Final = 2
_AT_FDCWD: Final = -100
_AT_RECURSIVE: Final = 0x8000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 1, 2, 4
_NR_PIVOT_ROOT: Final = {"x86_64": 155, "aarch64": 41}
_NR_MOUNT_SETATTR: Final = 442

_STAGES: Final = ("/mnt", "/media", "/srv", "/opt", "/var/tmp", "/tmp", "/home")
"""Where the new root's ``tmpfs`` may be built: the first with no source beneath it
(covered only in the namespace that builds it; a template's forks start in it). Not
``/dev`` or ``/proc``: a process there still opens ``/dev/null`` and ``/proc/self``."""

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> None:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {errno.errorcode.get(code, code)} "
                            f"({os.strerror(code)})")


def _mount(source: str | None, target: str, kind: str | None, flags: int,
           data: str | None = None) -> None:
    _check(_libc.mount(None if source is None else source.encode(), target.encode(),
                       None if kind is None else kind.encode(), ctypes.c_ulong(flags),
                       None if data is None else data.encode()), f"mount({target})")


def _outermost(paths: Sequence[str]) -> list[str]:
    """``paths`` without those beneath another one of them (a recursive bind holds them)."""
    kept: list[str] = []
    for path in sorted({os.path.normpath(p) for p in paths if os.path.isabs(p)}):
        if not any(path.startswith(parent.rstrip("/") + "/") for parent in kept):
            kept.append(path)
    return kept


def _skeleton(stage: str, path: str, made: set[str], root: bool) -> None:
    """The directories leading to ``path`` under ``stage``, with the host's modes."""
    parent = os.path.dirname(path)
    if parent in made or parent == "/":
        return
    _skeleton(stage, parent, made, root)
    info = os.stat(parent)
    os.mkdir(stage + parent, 0o700)
    os.chmod(stage + parent, stat.S_IMODE(info.st_mode))
    if root:
        os.chown(stage + parent, info.st_uid, info.st_gid)
    made.add(parent)


def _read_only(stage: str) -> str:
    """The whole new tree read-only, nosuid, nodev (binds included); '' or why not."""
    attr = ctypes.create_string_buffer(struct.pack(
        "=QQQQ", _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV, 0, 0, 0), 32)
    result = _libc.syscall(ctypes.c_long(_NR_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD),
                           stage.encode(), ctypes.c_uint(_AT_RECURSIVE), attr,
                           ctypes.c_size_t(32))
    if result < 0:
        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EINVAL):
            return f", not remounted read-only (mount_setattr: {errno.errorcode[code]})"
        _check(result, "mount_setattr")
    return ""


def _populate(stage: str, sources: list[str]) -> int:
    """A mount point for each source at its host path under ``stage``, and its bind; how
    many were bound."""
    root = os.geteuid() == 0
    made: set[str] = set()
    bound = 0
    for path in sources:
        try:
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except FileNotFoundError:
            continue  # gone since it was imported: nothing to show
        _skeleton(stage, path, made, root)
        if is_dir:
            os.mkdir(stage + path, 0o755)
        else:
            os.close(os.open(stage + path, os.O_CREAT | os.O_EXCL | os.O_RDONLY
                             | os.O_CLOEXEC, 0o444))
        _mount(path, stage + path, None, _MS_BIND | _MS_REC)
        bound += 1
    return bound


@final
@dataclass(frozen=True, slots=True)
class Staged:
    """A root built under ``stage`` in a mount namespace of its own, not entered yet."""

    stage: str
    """The directory its ``tmpfs`` covers (in that namespace only)."""
    binds: int
    """How many read-only bind mounts of host paths it holds."""
    pid: int
    """The process whose ``/proc/<pid>`` it holds (0: none yet, a template's)."""


def build(paths: Sequence[str], pid: int) -> Staged:
    """A new mount namespace for the calling process, and in it, under a staging
    directory, a root holding only ``paths`` (each bound at its host path) and, unless
    ``pid`` is 0, ``/proc/<pid>``. :func:`enter` moves into it; a worker template's
    (``pid`` 0) is taken over by each fork with :func:`adopt`.

    Raises ``OSError`` (the message names the step) where the kernel refuses; a failure
    after ``unshare`` leaves the process in its own namespace on the host's tree.
    """
    sources = _outermost([*paths, "/proc"])
    stage = next((d for d in _STAGES if os.path.isdir(d) and not os.path.islink(d)
                  and not any((p + "/").startswith(d + "/") for p in sources)), None)
    if stage is None:
        raise OSError(errno.ENOENT, f"no directory to build a root on ({', '.join(_STAGES)})")
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    # Until :func:`enter`, a slave of the host's: a template's namespace (and an idle
    # spare's copy) lives as long as its host, and the host's unmounts must reach it (no
    # filesystem of the host's stays pinned by it); nothing flows back.
    _mount(None, "/", None, _MS_REC | _MS_SLAVE)
    _mount("tmpfs", stage, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
           "mode=0755,size=256k,nr_inodes=4096")
    staged = Staged(stage=stage, binds=0, pid=0)
    try:
        os.mkdir(f"{stage}/proc", 0o555)
        staged = Staged(stage=stage, binds=_populate(stage, [p for p in sources
                                                             if p != "/proc"]), pid=0)
        if pid:
            staged = _add_proc(staged, pid)
    except BaseException:
        abandon(staged)
        raise
    return staged


def _add_proc(staged: Staged, pid: int) -> Staged:
    """``/proc/<pid>`` (and ``/proc/self``) on a ``tmpfs`` of its own at ``/proc``: the
    root's own ``tmpfs`` may be a template's, shared with every fork."""
    proc = f"{staged.stage}/proc"
    _mount("tmpfs", proc, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
           "mode=0555,size=4k,nr_inodes=8")
    os.mkdir(f"{proc}/{pid}", 0o555)
    os.symlink(str(pid), f"{proc}/self")
    _mount(f"/proc/{pid}", f"{proc}/{pid}", None, _MS_BIND | _MS_REC)
    return Staged(stage=staged.stage, binds=staged.binds, pid=pid)


def adopt(staged: Staged, pid: int) -> Staged:
    """In a process forked from the one that built ``staged`` (a template's, ``pid`` 0):
    a mount namespace of its own (a copy: the template's is left as it was) with its
    ``/proc/<pid>`` added; ~0.5 ms instead of ~4 ms for :func:`build`."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    try:
        return _add_proc(staged, pid)
    except BaseException:
        abandon(staged)
        raise


def enter(staged: Staged) -> str:
    """``pivot_root`` into ``staged`` (read-only first) and detach the host's tree; what
    was done. On failure the process stays on the host's tree (``staged`` abandoned)."""
    number = _NR_PIVOT_ROOT.get(os.uname().machine)
    cwd = os.open(".", os.O_PATH | os.O_CLOEXEC)
    try:
        if not staged.pid:
            raise OSError(errno.EINVAL, "a template's root, not adopted")
        if number is None:
            raise OSError(errno.ENOSYS, f"no pivot_root number for {os.uname().machine}")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # its binds: no host event either
        read_only = _read_only(staged.stage)
        os.chdir(staged.stage)
        _check(_libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    except BaseException:
        os.fchdir(cwd)
        abandon(staged)
        raise
    finally:
        os.close(cwd)
    _check(_libc.umount2(b".", _MNT_DETACH), "umount2(the host's root)")
    os.chdir("/")
    return (f"own mount namespace: a tmpfs root with {staged.binds} read-only binds "
            f"(the Landlock paths) and /proc/{staged.pid}{read_only}; every other host "
            "path is absent")


def release(staged: Staged) -> None:
    """In a fork that will not :func:`adopt` its template's root: a mount namespace of
    its own without it (the template's is left as it was)."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    abandon(staged)


def abandon(staged: Staged) -> None:
    """Drop a root that will not be entered, in this process's own mount namespace (a
    fork that did not :func:`adopt` its template's leaves it alone: that namespace is
    still the template's)."""
    _libc.umount2(staged.stage.encode(), _MNT_DETACH)
