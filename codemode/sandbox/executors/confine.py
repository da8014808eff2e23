"""The kernel layer: how a sandbox worker confines itself before its first script.

A worker (``worker.py``) calls :func:`apply` on its main thread, after it imported and
warmed up everything it will ever need and before any other thread exists or any
script is read. From then on every line that runs in the process, including code that
escaped the language layer, runs inside these layers:

``no_new_privs``  ``PR_SET_NO_NEW_PRIVS``: nothing it could exec would gain privileges
                  (and seccomp and Landlock need it).
``not_dumpable``  ``PR_SET_DUMPABLE 0``: no process of its uid can ptrace it or open its
                  ``/proc/<pid>/{mem,environ,fd}``.
``network``       a fresh network namespace with no interface (``unshare(CLONE_NEWNET)``;
                  not root: ``CLONE_NEWUSER|CLONE_NEWNET``); Landlock (ABI 4) also refuses
                  TCP bind/connect and seccomp refuses ``socket()``. With it a fresh IPC
                  namespace (``CLONE_NEWIPC``): where seccomp is missing, a worker's System
                  V shared memory, queues and semaphores and POSIX message queues are its
                  own and die with it, instead of outliving it in the host's namespace.
``filesystem``    Landlock: read-only access beneath exactly the files and packages the
                  worker imported (stdlib modules, their extension modules, the
                  site-packages it loaded, the ``codemode`` package) and its own
                  ``/proc/<pid>``; no write, create, remove or truncate anywhere; with
                  ABI 6 no signal or abstract-socket connection outside its domain.
``mounts``        its own root (``rootfs.py``): a mount namespace of its own (not root: in
                  the user namespace of ``network``), a ``tmpfs`` with read-only binds of
                  exactly the ``filesystem`` paths at their host paths and ``/proc`` with
                  only its ``/proc/<pid>``, ``pivot_root``, the host's tree detached: any
                  other host path is absent (``stat`` says ``ENOENT``, not its size and
                  times; Landlock does not govern ``stat``). A root template stages it
                  once (:func:`remember_read_paths`); a spare adopts it (:func:`prepare`).
``syscalls``      a default-deny seccomp filter (x86-64): no ptrace,
                  ``process_vm_readv/writev``, exec, fork (``clone`` only with
                  ``CLONE_THREAD`` and no namespace flag; ``clone3`` says ENOSYS so glibc
                  falls back), signals only to itself, no mount, umount, pivot_root,
                  chroot, unshare, setns, new mount API, bpf,
                  perf events, keyrings, io_uring, ``socket()`` (``socketpair(AF_UNIX)``
                  stays: asyncio's self-pipe), ``prlimit64`` only on itself, ``open``
                  and ``openat`` for reading only (Landlock's read-only rule holds
                  without Landlock), ``openat2`` ENOSYS, no ``MAP_HUGETLB`` (the
                  machine's reserved huge pages).
``rlimits``       ``RLIMIT_FSIZE`` 0, ``RLIMIT_CORE`` 0, ``RLIMIT_NPROC`` (threads of its
                  uid), ``RLIMIT_MEMLOCK``/``RTPRIO``/``NICE`` 0, ``RLIMIT_SIGPENDING``
                  64, ``oom_score_adj``
                  1000 (the OOM killer takes a worker before the host), and per run
                  ``RLIMIT_AS``/``RLIMIT_CPU`` as *hard* limits, which only ever go down
                  (``worker._Proc.limit_run``): nothing without ``CAP_SYS_RESOURCE`` can
                  raise a hard limit, not even the host.
``identity``      as root: ``setgroups([])`` + ``setresgid``/``setresuid`` to a spare uid
                  of its own (``UID_BASE`` + n); otherwise its own user namespace.

The host passes a *plan* (``mode``, ``uid``, ``recycle``, ``unavailable``) and reads
back a *report* (layer name -> ``[active, detail]``) in the worker's ``ready`` frame:
the host never assumes a layer it was not told about. ``unavailable`` is the test seam
that makes a layer's probe fail (``CODEMODE_CONFINE_UNAVAILABLE`` on the host).

Direct syscalls through ``ctypes`` (``ctypes.CDLL(None)``: libc is already mapped), no
third-party binding: ``pyseccomp`` imports in ~18 ms (``ctypes.util.find_library`` runs
``ldconfig``) and ``landlock`` in ~50 ms, against a spawn budget of 50 ms; all of this
module costs ~2 ms (``ctypes``) plus the syscalls.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import stat
import struct
import sys
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from codemode.sandbox.executors import rootfs

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "LAYERS",
    "OOM_SCORE_ADJ",
    "SIGPENDING",
    "UID_BASE",
    "UID_SPAN",
    "Confinement",
    "ConfinementMode",
    "Layer",
    "apply",
]

ConfinementMode = Literal["auto", "strict", "off"]

LAYERS: Final = ("no_new_privs", "not_dumpable", "network", "filesystem", "mounts",
                 "syscalls", "rlimits", "identity")
"""The kernel layers, in the order they are reported."""

UID_BASE: Final = 2_000_000
"""First uid (and gid) of the range root hosts give their workers, one per worker."""
UID_SPAN: Final = 1_000_000
"""Size of that range (uids ``UID_BASE`` .. ``UID_BASE + UID_SPAN - 1``)."""

NPROC: Final = 32
"""RLIMIT_NPROC of a worker (its uid is its own, so this caps its threads)."""

SIGPENDING: Final = 64
"""RLIMIT_SIGPENDING of a worker: real-time signals it may queue (to itself: seccomp), each
a kernel allocation that a non-root host's user pays too (its user namespace charges its
parent's count), so a worker could otherwise use up the host user's own budget."""


@dataclass(frozen=True)
class Layer:
    """One kernel layer of a worker: active or not, and what was applied or why not."""

    active: bool
    detail: str

    def __str__(self) -> str:
        return f"{'active' if self.active else 'MISSING'}: {self.detail}"


@dataclass(frozen=True)
class Confinement:
    """What a worker reported it applied, one field per kernel layer (see ``confine.py``)."""

    mode: str
    no_new_privs: Layer
    not_dumpable: Layer
    network: Layer
    filesystem: Layer
    mounts: Layer
    syscalls: Layer
    rlimits: Layer
    identity: Layer

    @property
    def layers(self) -> dict[str, Layer]:
        """Layer name -> its state, in ``LAYERS`` order."""
        return {name: getattr(self, name) for name in LAYERS}

    @property
    def missing(self) -> tuple[str, ...]:
        """Names of the layers that are not active."""
        return tuple(name for name, layer in self.layers.items() if not layer.active)

    @property
    def complete(self) -> bool:
        """True when every layer is active."""
        return not self.missing

    def describe_missing(self) -> str:
        """``"network (reason), filesystem (reason)"`` for the missing layers."""
        return ", ".join(f"{name} ({self.layers[name].detail})" for name in self.missing)

    @classmethod
    def from_report(cls, mode: str, report: Any) -> Confinement:
        """Parse a worker's report; a layer it did not report (or garbled) is missing."""
        layers: dict[str, Layer] = {}
        for name in LAYERS:
            entry = report.get(name) if isinstance(report, dict) else None
            if (isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is bool
                    and isinstance(entry[1], str)):
                layers[name] = Layer(entry[0], entry[1][:500])
            else:
                layers[name] = Layer(False, "not reported by the worker")
        return cls(mode=mode, **layers)

    @classmethod
    def off(cls) -> Confinement:
        """The report of a pool started with ``confinement="off"``."""
        return cls(mode="off", **{name: Layer(False, "confinement is off") for name in LAYERS})

    def to_json(self) -> dict[str, Any]:
        """Plain data (for ``codemode doctor --json``)."""
        out: dict[str, Any] = {"mode": self.mode}
        for f in fields(self):
            if f.name != "mode":
                layer = getattr(self, f.name)
                out[f.name] = {"active": layer.active, "detail": layer.detail}
        return out


# --- syscalls through libc ------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_prctl = _libc.prctl
_prctl.restype = ctypes.c_int
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                   ctypes.c_ulong]

_MACHINE: Final = os.uname().machine
_X86_64: Final = _MACHINE == "x86_64"
_NR_LANDLOCK_CREATE_RULESET: Final = 444
_NR_LANDLOCK_ADD_RULE: Final = 445
_NR_LANDLOCK_RESTRICT_SELF: Final = 446
_NR_SECCOMP: Final = 317 if _X86_64 else 277

PR_SET_DUMPABLE: Final = 4
PR_SET_NO_NEW_PRIVS: Final = 38
CLONE_NEWUSER: Final = 0x10000000
CLONE_NEWNET: Final = 0x40000000
CLONE_NEWIPC: Final = 0x08000000


class _Refused(Exception):
    """A layer could not be applied (the message says why)."""


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise _Refused(f"{what}: {errno.errorcode.get(code, code)} ({os.strerror(code)})")
    return result


def _sys(number: int, *args: Any) -> int:
    return int(_syscall(ctypes.c_long(number), *args))


# --- Landlock ------------------------------------------------------------------------

_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1, 2, 4, 8
_FS_ABI1: Final = (1 << 13) - 1
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1, 2


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where Landlock is unavailable."""
    result = _sys(_NR_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(result, 0)


_known_paths: tuple[frozenset[str], list[str]] | None = None
"""``(the names in sys.modules, paths)`` from :func:`remember_read_paths`."""


_template_root: tuple[frozenset[str], rootfs.Staged | OSError] | None = None
"""``(the names in sys.modules, the root or why not)`` a template staged for its forks."""


def remember_read_paths() -> None:
    """Compute :func:`_read_paths` now, for the forks of this process (a worker template):
    each would walk the same modules again, on its way to running. A fork whose modules
    differ since walks its own. As root also stage the workers' root (``rootfs.build``,
    in the template's own mount namespace, covering only a staging directory), which
    each fork adopts for ~0.5 ms instead of building its own for ~4 ms."""
    global _known_paths, _template_root
    _known_paths = (frozenset(sys.modules), _read_paths())
    if os.geteuid() == 0:
        try:
            _template_root = (_known_paths[0], rootfs.build(_known_paths[1], 0))
        except OSError as exc:
            _template_root = (_known_paths[0], exc)


def _own_root() -> rootfs.Staged:
    """This process's root, staged: its template's adopted where it still fits (the
    same modules), else built."""
    global _template_root
    inherited, _template_root = _template_root, None
    if inherited is not None and isinstance(inherited[1], rootfs.Staged):
        if inherited[0] == frozenset(sys.modules):
            return rootfs.adopt(inherited[1], os.getpid())
        rootfs.release(inherited[1])
    return rootfs.build(_read_paths(), os.getpid())


def _read_paths() -> list[str]:
    """What the worker imported: one entry per stdlib module file or top-level package,
    extension module, and top-level package or module of every other ``sys.path`` entry."""
    known = _known_paths
    if known is not None and known[0] == frozenset(sys.modules):
        return list(known[1])
    stdlib = os.path.dirname(os.__file__)
    entries = sorted({p for p in sys.path if p and p != stdlib}, key=len, reverse=True)
    entries.append(stdlib)
    paths: set[str] = set()
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if not isinstance(where, str) or not where:
            continue
        root = next((e for e in entries if where.startswith(e + os.sep)), None)
        if root is None:
            paths.add(where)
            continue
        first = where[len(root) + 1:].split(os.sep, 1)[0]
        if first != name.partition(".")[0] and os.sep in where[len(root) + 1:]:
            paths.add(where)  # lib-dynload/_foo.so: that file, not the directory
        else:
            paths.add(os.path.join(root, first))
    return sorted(paths)


def _landlock_ruleset(extra_dirs: tuple[str, ...]) -> tuple[int, str]:
    """Build the ruleset (opening each path while the worker can still read it)."""
    abi = landlock_abi()
    if abi < 1:
        raise _Refused("Landlock is not available in this kernel")
    handled_fs = _FS_ABI1
    if abi >= 2:
        handled_fs |= _FS_REFER
    if abi >= 3:
        handled_fs |= _FS_TRUNCATE
    if abi >= 5:
        handled_fs |= _FS_IOCTL_DEV
    handled_net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buffer = ctypes.create_string_buffer(attr, 24)
    ruleset = _check(_sys(_NR_LANDLOCK_CREATE_RULESET, buffer, ctypes.c_size_t(size),
                          ctypes.c_uint32(0)), "landlock_create_ruleset")
    rules = 0
    try:
        for path in [*_read_paths(), *extra_dirs]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
                access = _FS_READ_FILE | _FS_READ_DIR if is_dir else _FS_READ_FILE
                rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
                _check(_sys(_NR_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1),
                            rule, ctypes.c_uint32(0)), f"landlock_add_rule({path})")
                rules += 1
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    scope = ", no signals or abstract sockets outside" if scoped else ""
    net = ", no TCP bind/connect" if handled_net else ""
    return ruleset, (f"Landlock ABI {abi}: read-only beneath {rules} imported paths, "
                     f"no write{net}{scope}")


_prepared: tuple[int, frozenset[str], tuple[int, str] | Exception] | None = None
"""``(pid, the names in sys.modules, the ruleset or why it failed)`` from :func:`prepare`."""


def prepare() -> None:
    """Build the Landlock ruleset now, before the plan: a spare does it while it waits for
    one, so a pool that takes it waits ~2 ms less (walking the imported paths, opening and
    adding each). As root also the worker's own root (:func:`_own_root`: its template's
    adopted, ~0.4 ms, or built, ~4 ms), which only ``pivot_root`` is left to enter.
    :func:`apply` takes both, or drops them where its plan does not confine files or
    mounts."""
    global _prepared, _staged
    _discard_prepared()
    try:
        built: tuple[int, str] | Exception = _landlock_ruleset((f"/proc/{os.getpid()}",))
    except (_Refused, OSError) as exc:
        built = exc
    _prepared = (os.getpid(), frozenset(sys.modules), built)
    if os.geteuid() == 0:  # not root: the user namespace that allows mounts comes later
        try:
            staged: rootfs.Staged | OSError = _own_root()
        except OSError as exc:
            staged = exc
        _staged = (os.getpid(), frozenset(sys.modules), staged)


_staged: tuple[int, frozenset[str], rootfs.Staged | OSError] | None = None
"""``(pid, the names in sys.modules, the staged root or why not)`` from :func:`prepare`."""


def _take_staged(extra_dirs: tuple[str, ...]) -> rootfs.Staged | OSError | None:
    """The root :func:`prepare` staged, if it still fits this process (as
    :func:`_take_prepared`); None otherwise (it is abandoned)."""
    global _staged
    staged, _staged = _staged, None
    return _still_fitting(staged, extra_dirs, _abandon)


def _take_prepared(extra_dirs: tuple[str, ...]) -> tuple[int, str] | Exception | None:
    """The ruleset :func:`prepare` built, if it still fits this process (the same pid,
    modules and directories); None otherwise (it is closed)."""
    global _prepared
    prepared, _prepared = _prepared, None
    return _still_fitting(prepared, extra_dirs, _close)


_Built = TypeVar("_Built")


def _still_fitting(entry: tuple[int, frozenset[str], _Built] | None, extra_dirs: tuple[str, ...],
                   drop: Callable[[_Built], None]) -> _Built | None:
    """What :func:`prepare` left in ``entry`` if this process is still the one it was
    made for (the same pid and modules, no extra directories); else ``drop`` it."""
    if entry is None:
        return None
    pid, modules, built = entry
    if pid == os.getpid() and not extra_dirs and modules == frozenset(sys.modules):
        return built
    drop(built)
    return None


def _close(built: tuple[int, str] | Exception | None) -> None:
    if isinstance(built, tuple):
        os.close(built[0])


def _abandon(staged: rootfs.Staged | OSError | None) -> None:
    if isinstance(staged, rootfs.Staged):
        rootfs.abandon(staged)


def _discard_prepared() -> None:
    _close(_take_prepared(()))
    _abandon(_take_staged(()))


def _landlock_enforce(ruleset: int, description: str) -> str:
    try:
        _check(_sys(_NR_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return description


# --- seccomp -------------------------------------------------------------------------

_AUDIT_ARCH_X86_64: Final = 0xC000003E
_RET_ALLOW: Final = 0x7FFF0000
_RET_KILL_PROCESS: Final = 0x80000000
_RET_ERRNO: Final = 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06

_ALLOWED: Final = {
    # hot first: pipes, the loop's polling, memory
    "read": 0, "write": 1, "futex": 202, "getpid": 39, "sched_yield": 24, "epoll_wait": 232,
    "epoll_pwait": 281, "epoll_pwait2": 441, "epoll_ctl": 233, "epoll_create1": 291,
    "epoll_create": 213, "pselect6": 270, "select": 23, "poll": 7, "ppoll": 271,
    "pread64": 17, "readv": 19, "writev": 20, "lseek": 8,
    "getrusage": 98, "clock_gettime": 228, "clock_getres": 229, "gettimeofday": 96,
    "clock_nanosleep": 230, "nanosleep": 35, "munmap": 11, "mremap": 25,
    "mprotect": 10, "madvise": 28, "brk": 12, "rt_sigprocmask": 14, "rt_sigaction": 13,
    "rt_sigreturn": 15, "sigaltstack": 131, "rt_sigpending": 127, "rt_sigtimedwait": 128,
    "restart_syscall": 219, "gettid": 186, "set_robust_list": 273, "get_robust_list": 274,
    "rseq": 334, "set_tid_address": 218, "exit": 60, "exit_group": 231,
    # files (Landlock decides which paths; open/openat below: for reading only)
    "close": 3, "close_range": 436, "fstat": 5,
    "stat": 4, "lstat": 6, "newfstatat": 262, "statx": 332, "getdents64": 217,
    "readlink": 89, "readlinkat": 267, "access": 21, "faccessat": 269, "faccessat2": 439,
    "dup": 32, "dup2": 33, "dup3": 292, "pipe": 22, "pipe2": 293,
    "getcwd": 79, "fadvise64": 221,
    # sockets that already exist (asyncio's socketpair self-pipe)
    "sendto": 44, "recvfrom": 45, "sendmsg": 46, "recvmsg": 47, "shutdown": 48,
    "getsockname": 51, "getpeername": 52, "setsockopt": 54, "getsockopt": 55,
    # identity and facts about itself
    "getuid": 102, "geteuid": 107, "getgid": 104, "getegid": 108, "getresuid": 118,
    "getresgid": 120, "getgroups": 115, "getppid": 110, "getpgrp": 111, "getpgid": 121,
    "getsid": 124, "getrlimit": 97, "uname": 63, "sysinfo": 99, "times": 100,
    "getrandom": 318, "getcpu": 309, "sched_getaffinity": 204, "membarrier": 324,
}
_MMAP: Final = 9
_MAP_HUGETLB: Final = 0x40000
"""Huge pages come from the machine's reserved pool (``vm.nr_hugepages``), which a worker
could drain up to its address-space cap (a strict worker took all 4 of 4 reserved pages
with one 8 MiB mmap and held them as long as it lived)."""
_OPEN: Final = 2
_OPENAT: Final = 257
_OPENAT2: Final = 437
_OPEN_WRITING: Final = 0o1 | 0o2 | 0o100 | 0o1000
"""O_WRONLY, O_RDWR, O_CREAT, O_TRUNC (O_TMPFILE needs a write mode): refused by seccomp
too, so a worker creates no file even where Landlock is missing (empty files, with
``RLIMIT_FSIZE`` 0, but as many as it likes, in every world-writable directory, and
outliving it)."""
_CLONE: Final = 56
_CLONE3: Final = 435
_KILL: Final = 62
_TGKILL: Final = 234
_SOCKETPAIR: Final = 53
_PRLIMIT64: Final = 302
_PRCTL: Final = 157
_IOCTL: Final = 16
_FCNTL: Final = 72
_FCNTL_ALLOWED: Final = (0, 1, 2, 3, 4, 1030, 1032)
"""F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC, F_GETPIPE_SZ (not
F_SETOWN/F_SETSIG: I/O signals to another process)."""
_CLONE_THREAD: Final = 0x00010000
_CLONE_NAMESPACES: Final = 0x7E020080
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (and CLONE_NEWTIME)."""
_PRCTL_ALLOWED: Final = (3, 15, 16, 21, 39)
"""PR_GET_DUMPABLE, PR_SET_NAME, PR_GET_NAME, PR_GET_SECCOMP, PR_GET_NO_NEW_PRIVS."""
_IOCTL_ALLOWED: Final = (0x5401, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451)
"""TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIONCLEX, FIOCLEX (Python's own uses)."""


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def _arg_lo(index: int) -> bytes:
    return _ins(_LD_W_ABS, 16 + 8 * index)


def _one_of(nr: int, arg: int, values: tuple[int, ...], deny: int) -> list[bytes]:
    """``nr`` allowed only when argument ``arg`` (low 32 bits) is one of ``values``."""
    body = [_arg_lo(arg)]
    for i, value in enumerate(values):
        body.append(_ins(_JEQ_K, value, len(values) - i, 0))
    body += [_ins(_RET_K, deny), _ins(_RET_K, _RET_ALLOW)]
    return [_ins(_JEQ_K, nr, 0, len(body)), *body]


def _none_of(nr: int, arg: int, mask: int, deny: int) -> list[bytes]:
    """``nr`` allowed only when argument ``arg`` (low 32 bits) has none of ``mask``'s bits."""
    body = [_arg_lo(arg), _ins(_JSET_K, mask, 0, 1), _ins(_RET_K, deny),
            _ins(_RET_K, _RET_ALLOW)]
    return [_ins(_JEQ_K, nr, 0, len(body)), *body]


def seccomp_program(pid: int) -> bytes:
    """The worker's filter as classic BPF (x86-64)."""
    deny = _RET_ERRNO | errno.EPERM
    prog = [
        _ins(_LD_W_ABS, 4),  # seccomp_data.arch
        _ins(_JEQ_K, _AUDIT_ARCH_X86_64, 1, 0),
        _ins(_RET_K, _RET_KILL_PROCESS),
        _ins(_LD_W_ABS, 0),  # seccomp_data.nr
        _ins(_JGE_K, 0x40000000, 0, 1),  # the x32 ABI
        _ins(_RET_K, deny),
    ]
    # mmap first (malloc's hot path keeps its place): anything but MAP_HUGETLB
    prog += _none_of(_MMAP, 3, _MAP_HUGETLB, deny)
    for nr in _ALLOWED.values():
        prog += [_ins(_JEQ_K, nr, 0, 1), _ins(_RET_K, _RET_ALLOW)]
    prog += [_ins(_JEQ_K, _CLONE3, 0, 1), _ins(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    # open for reading only; openat2's flags are behind a pointer: ENOSYS, callers fall back
    prog += _none_of(_OPENAT, 2, _OPEN_WRITING, _RET_ERRNO | errno.EACCES)
    prog += _none_of(_OPEN, 1, _OPEN_WRITING, _RET_ERRNO | errno.EACCES)
    prog += [_ins(_JEQ_K, _OPENAT2, 0, 1), _ins(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    # clone: threads only (CLONE_THREAD set, no namespace flag)
    prog += [_ins(_JEQ_K, _CLONE, 0, 5), _arg_lo(0), _ins(_JSET_K, _CLONE_THREAD, 0, 2),
             _ins(_JSET_K, _CLONE_NAMESPACES, 1, 0), _ins(_RET_K, _RET_ALLOW),
             _ins(_RET_K, deny)]
    prog += _one_of(_KILL, 0, (pid,), deny)
    prog += _one_of(_TGKILL, 0, (pid,), deny)
    prog += _one_of(_SOCKETPAIR, 0, (1,), deny)  # AF_UNIX
    prog += _one_of(_PRLIMIT64, 0, (0, pid), deny)
    prog += _one_of(_PRCTL, 0, _PRCTL_ALLOWED, deny)
    prog += _one_of(_IOCTL, 1, _IOCTL_ALLOWED, deny)
    prog += _one_of(_FCNTL, 1, _FCNTL_ALLOWED, deny)
    prog.append(_ins(_RET_K, deny))
    return b"".join(prog)


def _seccomp(pid: int) -> str:
    if not _X86_64:
        raise _Refused(f"no seccomp allowlist for {_MACHINE} (x86-64 only)")
    program = seccomp_program(pid)
    count = len(program) // 8
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("=HxxxxxxQ", count, ctypes.addressof(filters))
    buffer = ctypes.create_string_buffer(fprog, len(fprog))
    # SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC (there is one thread anyway)
    _check(_sys(_NR_SECCOMP, ctypes.c_uint(1), ctypes.c_uint(1), buffer), "seccomp")
    return (f"default-deny allowlist of {len(_ALLOWED) + 12} syscalls ({count} BPF "
            "instructions): no ptrace, process_vm_*, exec, fork, signals to others, mount, "
            "unshare, setns, bpf, perf_event_open, socket, open for writing, huge pages")


# --- the other layers ------------------------------------------------------------------


def _network(root: bool, uid: int) -> tuple[str, str | None]:
    """Fresh network and IPC namespaces; as a non-root host also a user namespace
    (identity)."""
    if root:
        _check(_libc.unshare(CLONE_NEWNET | CLONE_NEWIPC), "unshare(CLONE_NEWNET|CLONE_NEWIPC)")
        return "own network namespace (no interface up), own IPC namespace", None
    outer_uid, outer_gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC),
           "unshare(CLONE_NEWUSER|CLONE_NEWNET|CLONE_NEWIPC)")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{outer_uid} {outer_uid} 1"),
                       ("gid_map", f"{outer_gid} {outer_gid} 1")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)
    del uid
    return ("own network namespace (no interface up), own IPC namespace",
            "own user namespace (host uid mapped)")


def _identity(uid: int) -> str:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getgroups():
        raise _Refused("the uid did not change")
    return f"uid {uid}, gid {uid}, no supplementary groups"


OOM_SCORE_ADJ: Final = 1000
"""A worker's ``oom_score_adj``: under memory pressure the kernel kills a worker first,
never the host (a worker cannot lower it: that needs ``CAP_SYS_RESOURCE``)."""


def _limits() -> str:
    """Limits that hold without seccomp (on a machine with no allowlist, say): ``MEMLOCK``
    0, since ``mmap(MAP_LOCKED)`` passes seccomp and would pin up to the host's limit (all
    of a run's memory where that is unlimited) of RAM no one can swap out; ``RTPRIO`` and
    ``NICE`` 0, so no ``SCHED_FIFO`` spin or ``nice(-20)`` can starve the host, whatever
    limits it inherited."""
    for limit, value in ((resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_NPROC, NPROC), (resource.RLIMIT_MEMLOCK, 0),
                         (resource.RLIMIT_RTPRIO, 0), (resource.RLIMIT_NICE, 0),
                         (resource.RLIMIT_SIGPENDING, SIGPENDING)):
        resource.setrlimit(limit, (value, value))
    try:  # before Landlock and setuid; where /proc is read-only the report says so
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(OOM_SCORE_ADJ))
        oom = f"oom_score_adj {OOM_SCORE_ADJ}"
    except OSError as exc:
        oom = f"oom_score_adj unchanged ({errno.errorcode.get(exc.errno or 0, exc.errno)})"
    return (f"FSIZE 0, CORE 0, NPROC {NPROC}, MEMLOCK 0, RTPRIO 0, NICE 0, "
            f"SIGPENDING {SIGPENDING}, {oom}; "
            "per run AS and CPU as hard limits (lowered only: see worker._Proc.limit_run)")


def apply(plan: dict[str, Any], extra_dirs: tuple[str, ...] = ()) -> dict[str, list[Any]]:
    """Confine the calling process as ``plan`` says; the report for the ``ready`` frame.

    Must run on the only thread of the process (``unshare`` and Landlock act on the
    calling thread; threads started later inherit them). Every layer is attempted;
    one that fails is reported missing with the reason, never silently skipped. The
    Landlock ruleset :func:`prepare` built (a spare, before its plan) is enforced, or closed
    when the plan confines no files.
    """
    report: dict[str, list[Any]] = {}
    prepared = _take_prepared(extra_dirs)
    if isinstance(prepared, tuple) and (plan.get("mode", "auto") == "off"
                                        or "filesystem" in plan.get("unavailable", ())):
        os.close(prepared[0])
        prepared = None
    staged = _take_staged(extra_dirs)
    if isinstance(staged, rootfs.Staged) and (plan.get("mode", "auto") == "off"
                                              or "mounts" in plan.get("unavailable", ())):
        rootfs.abandon(staged)
        staged = None
    if plan.get("mode", "auto") == "off":
        return {name: [False, "confinement is off"] for name in LAYERS}
    unavailable = set(plan.get("unavailable", ()))
    uid = int(plan.get("uid", UID_BASE))
    root = os.geteuid() == 0

    def attempt(name: str, step: Any, *args: Any) -> Any:
        if name in unavailable:
            report[name] = [False, "unavailable (simulated by CODEMODE_CONFINE_UNAVAILABLE)"]
            return None
        try:
            result = step(*args)
        except (_Refused, OSError) as exc:
            report[name] = [False, str(exc)]
            return None
        report.setdefault(name, [True, result if isinstance(result, str) else result[0]])
        return result

    # Landlock's paths are opened first, while the worker still has the host's uid
    # (a root host's files may be unreadable to the spare uid).
    def ruleset_step() -> tuple[int, str]:
        if isinstance(prepared, Exception):
            raise prepared
        if prepared is not None:
            return prepared
        return _landlock_ruleset((f"/proc/{os.getpid()}", *extra_dirs))

    ruleset = attempt("filesystem", ruleset_step)
    if ruleset is not None:
        del report["filesystem"]
    attempt("rlimits", _limits)
    network = attempt("network", _network, root, uid)
    # Its own root, while it may still mount (root, or its user namespace) and before
    # Landlock, which forbids changing the mount topology.
    def mounts_step() -> str:
        if isinstance(staged, OSError):
            raise staged
        return rootfs.enter(staged if staged is not None
                            else rootfs.build([*_read_paths(), *extra_dirs], os.getpid()))

    attempt("mounts", mounts_step)
    if root:
        attempt("identity", _identity, uid)
    elif network is not None and network[1] is not None:
        report["identity"] = [True, network[1]]
    elif "identity" not in report:
        report["identity"] = [False, "needs a user namespace (refused) or a root host"]
    if "identity" in unavailable:
        report["identity"] = [False, "unavailable (simulated by CODEMODE_CONFINE_UNAVAILABLE)"]

    def dumpable() -> str:
        _check(_prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        return "PR_SET_DUMPABLE 0"

    def no_new_privs() -> str:
        _check(_prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        return "PR_SET_NO_NEW_PRIVS 1"

    attempt("not_dumpable", dumpable)
    attempt("no_new_privs", no_new_privs)
    if ruleset is not None:
        if report["no_new_privs"][0]:
            attempt("filesystem", _landlock_enforce, *ruleset)
        else:
            os.close(ruleset[0])
            report["filesystem"] = [False, "Landlock needs no_new_privs"]
    attempt("syscalls", _seccomp, os.getpid())
    return {name: report.get(name, [False, "not attempted"]) for name in LAYERS}
