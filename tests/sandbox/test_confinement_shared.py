"""The kernel layer, round 2: the host's liveness and what a worker shares with it.

Like ``test_confinement.py`` (whose ``check_payload`` runs each row: raw Python in a
``confinement="strict"`` worker, a sibling run held open meanwhile), with the language
layer assumed broken. These rows are the attacks a worker would use to starve, outlive
or spy on its host rather than to reach one of its objects: real-time scheduling and
priorities, locked memory, the OOM score, kernel administration syscalls, socket
families, host files' metadata, prctl and seccomp tricks, signals by other routes,
reads that leak the machine, and the descriptors a worker holds. Each row asserts the
refusal of every syscall it names and what it checks on the host side: the host's and
the sibling's scheduling policy, priority, CPUs, I/O priority and OOM score unchanged,
the host's file unchanged, the listeners empty.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from codemode.sandbox.executors.confine import OOM_SCORE_ADJ, SIGPENDING
from codemode.sandbox.executors.pool import WorkerPoolExecutor
from codemode.sandbox.executors.resident import SLACK, Resident, budget
from tests.sandbox.test_confinement import (
    LIMITS,
    PRELUDE,
    RAW,
    Host,
    check_payload,
    no_tool,
    with_sibling,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

pytestmark = pytest.mark.anyio

HOSTNAME = socket.gethostname()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def pool() -> AsyncIterator[WorkerPoolExecutor]:
    async with WorkerPoolExecutor(size=2, runtime=RAW, confinement="strict") as executor:
        await executor.start()
        yield executor


def _all(refusal: str, *names: str, **more: Any) -> dict[str, Any]:
    return {**dict.fromkeys(names, refusal), **more}


def _tracer_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("TracerPid:")[1].split()[0])


def _live(h: Host) -> bool:
    return h.scheduling_untouched() and socket.gethostname() == HOSTNAME


ROWS: list[tuple[str, Callable[[Host], str], dict[str, Any], Callable[[Host], bool]]] = [
    ("real-time scheduling of itself (SCHED_FIFO/RR 99, SCHED_DEADLINE), to spin",
     lambda h: "import struct\n"
               "attr = struct.pack('=IIQiIQQQ', 48, 6, 0, 0, 0, 10**7, 10**8, 10**8)\n"
               "deadline = ctypes.create_string_buffer(attr, 48)\n"
               "result = each({'fifo': syscall(144, 0, 1, ctypes.byref(ctypes.c_int(99))),\n"
               "               'rr': syscall(144, 0, 2, ctypes.byref(ctypes.c_int(99))),\n"
               "               'deadline': syscall(314, 0, deadline, 0)})\n"
               "stat = open('/proc/self/stat').read().rsplit(')', 1)[1].split()\n"
               "result.update(rt_priority=stat[37], policy=stat[38])",
     _all("EPERM", "fifo", "rr", "deadline", rt_priority="0", policy="0"), _live),
    ("priority, CPUs and I/O class of itself, the host and a sibling",
     lambda h: f"sibling = {h.sibling_pid}\n"
               "cpu0 = ctypes.byref(ctypes.c_ulong(1))\n"
               "result = each({'nice(-20)': lambda: os.nice(-20),\n"
               "  'setpriority self -20': syscall(141, 0, 0, -20),\n"
               "  'setpriority host 19': syscall(141, 0, host, 19),\n"
               "  'setpriority sibling 19': syscall(141, 0, sibling, 19),\n"
               "  'sched_setaffinity host': syscall(203, host, 8, cpu0),\n"
               "  'sched_setaffinity sibling': syscall(203, sibling, 8, cpu0),\n"
               "  'ioprio_set host idle': syscall(251, 1, host, 3 << 13),\n"
               "  'ioprio_set sibling idle': syscall(251, 1, sibling, 3 << 13),\n"
               "  'ioprio_set self realtime': syscall(251, 1, 0, 1 << 13)})",
     _all("EPERM", "nice(-20)", "setpriority self -20", "setpriority host 19",
          "setpriority sibling 19", "sched_setaffinity host", "sched_setaffinity sibling",
          "ioprio_set host idle", "ioprio_set sibling idle", "ioprio_set self realtime"),
     _live),
    # r35: MEMLOCK was the host's (8 MiB here, unlimited on many root hosts); RTPRIO and
    # NICE too, which alone stand where seccomp is missing
    ("raise RLIMIT_RTPRIO, RLIMIT_NICE or RLIMIT_MEMLOCK: hard 0 in a worker",
     lambda h: "names = ('RTPRIO', 'NICE', 'MEMLOCK')\n"
               "limit = lambda name: getattr(resource, 'RLIMIT_' + name)\n"
               "result = each({name: (lambda name=name: resource.setrlimit(limit(name),"
               " (99, 99))) for name in names})\n"
               "result['hard'] = [resource.getrlimit(limit(name))[1] for name in names]",
     _all("ValueError", "RTPRIO", "NICE", "MEMLOCK", hard=[0, 0, 0]), _live),
    # r35: mmap(MAP_LOCKED) passed seccomp and pinned up to RLIMIT_MEMLOCK (4096 kB here)
    ("lock RAM (mlockall, mlock, mlock2, mmap MAP_LOCKED): nothing pinned",
     lambda h: "page = ctypes.create_string_buffer(4096)\n"
               "result = each({'mlockall': syscall(151, 3),\n"
               "  'mlock': syscall(149, ctypes.addressof(page), 4096),\n"
               "  'mlock2': syscall(325, ctypes.addressof(page), 4096, 0),\n"
               "  'mmap MAP_LOCKED': syscall(9, 0, 4 << 20, 3, 0x22 | 0x2000, -1, 0)})\n"
               "result['VmLck'] = [line.split()[1] for line in open('/proc/self/status')"
               " if line.startswith('VmLck')]",
     _all("EPERM", "mlockall", "mlock", "mlock2", "mmap MAP_LOCKED", VmLck=["0"]), _live),
    # r35: SIGPENDING was the host's (96367 here): as many kernel allocations per worker
    ("queue real-time signals to itself: at most RLIMIT_SIGPENDING",
     lambda h: "import signal\n"
               "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})\n"
               "sent = [attempt(lambda: os.kill(os.getpid(), signal.SIGRTMIN))['denied']"
               " for _ in range(200)]\n"
               "status = open('/proc/self/status').read()\n"
               "result = {'queued': sent.count(False), 'refused': sent.count(True),\n"
               "          'SigQ': status.split('SigQ:')[1].split()[0]}\n"
               "libc.signal(int(signal.SIGRTMIN), ctypes.c_void_p(1))  # SIG_IGN drops them",
     # kill() past the limit still succeeds (the signal stays pending, its queue entry
     # is not allocated): the count of kernel allocations is what is bounded
     {"queued": 200, "refused": 0, "SigQ": f"{SIGPENDING}/{SIGPENDING}"},
     _live),
    # a fresh worker said "ready" before its main thread blocked signals: SIGRTMIN sent by
    # its first run could reach that thread and end the worker (status -34, under load)
    ("a fresh worker's first run: the main thread already blocks every signal",
     lambda h: "import signal\n"
               "blocked = int(open('/proc/self/status').read().split('SigBlk:')[1].split()[0],"
               " 16)\n"
               "result = {name: bool(blocked >> (int(getattr(signal, name)) - 1) & 1)\n"
               "          for name in ('SIGRTMIN', 'SIGXCPU', 'SIGTERM', 'SIGUSR1')}",
     dict.fromkeys(("SIGRTMIN", "SIGXCPU", "SIGTERM", "SIGUSR1"), True), _live),
    # r35: with 4 huge pages reserved on the machine, one 8 MiB MAP_HUGETLB mmap took all 4
    ("the machine's reserved huge pages (mmap MAP_HUGETLB, 2 MiB and 1 GiB pages)",
     lambda h: "result = each({'2 MiB pages': syscall(9, 0, 8 << 20, 3, 0x22 | 0x40000, -1, 0),\n"
               "  '1 GiB pages': syscall(9, 0, 1 << 30, 3, 0x22 | 0x40000 | (30 << 26), -1, 0)})\n"
               "result['plain mmap'] = syscall(9, 0, 8 << 20, 3, 0x22, -1, 0)() > 0",
     _all("EPERM", "2 MiB pages", "1 GiB pages", **{"plain mmap": True}), _live),
    ("memory placement and other processes' memory; a huge mremap",
     lambda h: "nodes = ctypes.byref(ctypes.c_ulong(1))\n"
               "page = syscall(9, 0, 4096, 3, 0x22, -1, 0)()\n"
               "result = each({'mbind': syscall(237, page, 4096, 2, nodes, 64, 0),\n"
               "  'set_mempolicy': syscall(238, 2, nodes, 64),\n"
               "  'migrate_pages host': syscall(256, host, 64, nodes, nodes),\n"
               "  'move_pages host': syscall(279, host, 0, None, None, None, 0),\n"
               "  'process_madvise': syscall(440, 0, None, 0, 0, 0),\n"
               "  'remap_file_pages': syscall(216, page, 4096, 0, 0, 0),\n"
               "  'mremap to 1 TiB': syscall(25, page, 4096, 1 << 40, 1)})",
     _all("EPERM", "mbind", "set_mempolicy", "migrate_pages host", "move_pages host",
          "process_madvise", "remap_file_pages", **{"mremap to 1 TiB": "ENOMEM"}), _live),
    # r35: a worker's OOM score was the host's (0): the OOM killer picked by size alone
    ("lower its OOM score, or raise the host's, so the host is killed first",
     lambda h: "result = each({'own -1000': lambda: open('/proc/self/oom_score_adj', 'w')"
               ".write('-1000'),\n"
               "  'host 1000': lambda: open(f'/proc/{host}/oom_score_adj', 'w').write('1000')})\n"
               "result['own'] = open('/proc/self/oom_score_adj').read().strip()",
     _all("EACCES", "own -1000", "host 1000", own=str(OOM_SCORE_ADJ)), _live),
    ("kernel administration: modules, kexec, reboot, swap, clocks, hostname, ports, log",
     lambda h: "buf = ctypes.create_string_buffer(4096)\n"
               "path = ctypes.c_char_p(b'/tmp/codemode-confinement-probe')\n"
               "result = each({'personality READ_IMPLIES_EXEC': syscall(135, 0x0400000),\n"
               "  'init_module': syscall(175, buf, 16, ctypes.c_char_p(b'')),\n"
               "  'finit_module': syscall(313, 0, ctypes.c_char_p(b''), 0),\n"
               "  'delete_module': syscall(176, ctypes.c_char_p(b'loop'), 0),\n"
               "  'kexec_load': syscall(246, 0, 0, None, 0),\n"
               "  'kexec_file_load': syscall(320, 0, 0, 0, None, 0),\n"
               "  'reboot (disable Ctrl-Alt-Del)': syscall(169, 0xfee1dead, 672274793, 0,"
               " None),\n"
               "  'swapon': syscall(167, path, 0), 'acct': syscall(163, path),\n"
               "  'settimeofday': syscall(164, None, None),\n"
               "  'clock_settime': syscall(227, 0, None),\n"
               "  'adjtimex': syscall(159, buf),\n"
               "  'sethostname': syscall(170, ctypes.c_char_p(b'pwned'), 5),\n"
               "  'chroot': syscall(161, ctypes.c_char_p(b'/')),\n"
               "  'pivot_root': syscall(155, ctypes.c_char_p(b'/'), ctypes.c_char_p(b'/')),\n"
               "  'setns': syscall(308, 0, 0), 'quotactl': syscall(179, 0, None, 0, None),\n"
               "  'lookup_dcookie': syscall(212, 0, buf, 64), 'vhangup': syscall(153),\n"
               "  'iopl': syscall(172, 3), 'ioperm': syscall(173, 0x80, 1, 1),\n"
               "  'modify_ldt': syscall(154, 1, buf, 16),\n"
               "  'syslog read': syscall(103, 3, buf, 4096)})",
     _all("EPERM", "personality READ_IMPLIES_EXEC", "init_module", "finit_module",
          "delete_module", "kexec_load", "kexec_file_load", "reboot (disable Ctrl-Alt-Del)",
          "swapon", "acct", "settimeofday", "clock_settime", "adjtimex", "sethostname",
          "chroot", "pivot_root", "setns", "quotactl", "lookup_dcookie", "vhangup", "iopl",
          "ioperm", "modify_ldt", "syslog read"),
     lambda h: _live(h) and not os.path.exists("/tmp/codemode-confinement-probe")),
    ("the x32 ABI (syscall numbers | 0x40000000) past the allowlist",
     lambda h: "result = each({'x32 getpid': syscall(0x40000000 | 39),\n"
               "  'x32 socket': syscall(0x40000000 | 41, 2, 1, 0),\n"
               "  'x32 setpriority host': syscall(0x40000000 | 141, 0, host, 19)})",
     _all("EPERM", "x32 getpid", "x32 socket", "x32 setpriority host"),
     lambda h: _live(h) and h.tcp_accepted_nothing()),
    # r35: open/openat were allowed whatever their flags (Landlock alone refused writes)
    ("open for writing what Landlock lets through (its pipes by /proc/self/fd); openat2",
     lambda h: "links = {}\nfor fd in os.listdir('/proc/self/fd'):\n"
               "    try:\n        links[fd] = os.readlink(f'/proc/self/fd/{fd}')\n"
               "    except OSError:\n        pass\n"
               "pipes = sorted(fd for fd, link in links.items() if link.startswith('pipe:'))\n"
               "result = each({f'reopen pipe {n} O_RDWR': (lambda fd=fd: os.open("
               "f'/proc/self/fd/{fd}', os.O_RDWR)) for n, fd in enumerate(pipes)})\n"
               "result['openat2'] = each({'': syscall(437, -100, ctypes.c_char_p(b'/etc/hostname'),"
               " ctypes.create_string_buffer(24), 24)})['']",
     _all("EACCES", "reopen pipe 0 O_RDWR", "reopen pipe 1 O_RDWR", "reopen pipe 2 O_RDWR",
          openat2="ENOSYS"), lambda h: h.files_untouched()),
    ("keyrings, handles and watches on host objects",
     lambda h: "buf = ctypes.create_string_buffer(256)\n"
               "mount_id = ctypes.create_string_buffer(8)\n"
               f"secret = ctypes.c_char_p({str(h.secret_file).encode()!r})\n"
               "result = each({'add_key': syscall(248, ctypes.c_char_p(b'user'),"
               " ctypes.c_char_p(b'k'), ctypes.c_char_p(b'v'), 1, -3),\n"
               "  'request_key': syscall(249, ctypes.c_char_p(b'user'),"
               " ctypes.c_char_p(b'k'), None, -3),\n"
               "  'name_to_handle_at': syscall(303, -100, secret, buf, mount_id, 0),\n"
               "  'fanotify_init': syscall(300, 0, 0), 'inotify_init1': syscall(294, 0),\n"
               "  'kcmp the host': syscall(312, os.getpid(), host, 0, 0, 0)})",
     _all("EPERM", "add_key", "request_key", "name_to_handle_at", "fanotify_init",
          "inotify_init1", "kcmp the host"),
     lambda h: h.files_untouched()),
    ("socket families past socket(); socketpair(AF_UNIX) reaches only itself",
     lambda h: "import socket\n"
               "result = each({'AF_INET6': syscall(41, 10, 1, 0),\n"
               "  'AF_VSOCK': syscall(41, 40, 1, 0), 'AF_ALG': syscall(41, 38, 5, 0),\n"
               "  'AF_BLUETOOTH': syscall(41, 31, 3, 0), 'AF_KEY': syscall(41, 15, 3, 2),\n"
               "  'socketpair AF_INET': syscall(53, 2, 1, 0, ctypes.create_string_buffer(8))})\n"
               "mine, other = socket.socketpair()\n"
               "mine.sendall(b'own')\n"
               "result['socketpair'] = [other.recv(3).decode(), mine.getpeername()]",
     _all("EPERM", "AF_INET6", "AF_VSOCK", "AF_ALG", "AF_BLUETOOTH", "AF_KEY",
          "socketpair AF_INET", socketpair=["own", ""]),
     lambda h: h.tcp_accepted_nothing() and h.unix_accepted_nothing()
     and h.udp_received_nothing()),
    ("a host file's names and metadata (mknod, link, rename, chmod, chown, xattr...)",
     lambda h: f"secret = ctypes.c_char_p({str(h.secret_file).encode()!r})\n"
               f"there = ctypes.c_char_p({str(h.tmp_path / 'planted').encode()!r})\n"
               "result = each({'mknod fifo': syscall(133, there, 0o10666, 0),\n"
               "  'mknod /dev/mem': syscall(133, there, 0o20666, (1 << 8) | 1),\n"
               "  'link': syscall(86, secret, there), 'symlink': syscall(88, secret, there),\n"
               "  'rename': syscall(82, secret, there), 'unlink': syscall(87, secret),\n"
               "  'chmod': syscall(90, secret, 0o777), 'chown': syscall(92, secret, 0, 0),\n"
               "  'utimensat': syscall(280, -100, secret, None, 0),\n"
               "  'setxattr': syscall(188, secret, ctypes.c_char_p(b'user.x'),"
               " ctypes.c_char_p(b'y'), 1, 0),\n"
               "  'truncate': syscall(76, secret, 0)})",
     _all("EPERM", "mknod fifo", "mknod /dev/mem", "link", "symlink", "rename", "unlink",
          "chmod", "chown", "utimensat", "setxattr", "truncate"),
     lambda h: h.files_untouched()),
    ("prctl: death signal, subreaper, PR_SET_MM, any tracer, strict seccomp, ambient caps",
     lambda h: "result = each({'PR_SET_PDEATHSIG': lambda: checked(libc.prctl(1, 9, 0, 0, 0)),\n"
               "  'PR_SET_CHILD_SUBREAPER': lambda: checked(libc.prctl(36, 1, 0, 0, 0)),\n"
               "  'PR_SET_MM': lambda: checked(libc.prctl(35, 8, 0, 0, 0)),\n"
               "  'PR_SET_PTRACER any': lambda: checked(libc.prctl(0x59616d61, -1, 0, 0, 0)),\n"
               "  'PR_SET_SECCOMP strict': lambda: checked(libc.prctl(22, 1, 0, 0, 0)),\n"
               "  'PR_CAP_AMBIENT raise': lambda: checked(libc.prctl(47, 2, 21, 0, 0))})",
     _all("EPERM", "PR_SET_PDEATHSIG", "PR_SET_CHILD_SUBREAPER", "PR_SET_MM",
          "PR_SET_PTRACER any", "PR_SET_SECCOMP strict", "PR_CAP_AMBIENT raise"), _live),
    ("seccomp user notification (NEW_LISTENER) and ptrace(PTRACE_TRACEME)",
     lambda h: "import struct\n"
               "allow = ctypes.create_string_buffer(struct.pack('=HBBI', 6, 0, 0, 0x7fff0000))\n"
               "prog = ctypes.create_string_buffer(struct.pack('=HxxxxxxQ', 1,"
               " ctypes.addressof(allow)))\n"
               "result = each({'seccomp NEW_LISTENER': syscall(317, 1, 8, prog),\n"
               "  'ptrace TRACEME': syscall(101, 0, 0, 0, 0)})\n"
               "status = open('/proc/self/status').read()\n"
               "result['filters'] = status.split('Seccomp_filters:')[1].split()[0]\n"
               "result['tracer'] = status.split('TracerPid:')[1].split()[0]",
     _all("EPERM", "seccomp NEW_LISTENER", "ptrace TRACEME", filters="1", tracer="0"),
     _live),
    ("signals by other routes (tkill, rt_sigqueueinfo, pidfd_send_signal)",
     lambda h: f"sibling = {h.sibling_pid}\n"
               "info = ctypes.create_string_buffer(128)\n"
               "result = each({'tkill host': syscall(200, host, 0),\n"
               "  'tkill sibling': syscall(200, sibling, 9),\n"
               "  'rt_sigqueueinfo host': syscall(129, host, 0, info),\n"
               "  'rt_tgsigqueueinfo sibling': syscall(297, sibling, sibling, 9, info),\n"
               "  'pidfd_send_signal': syscall(424, 0, 9, None, 0)})",
     _all("EPERM", "tkill host", "tkill sibling", "rt_sigqueueinfo host",
          "rt_tgsigqueueinfo sibling", "pidfd_send_signal"), _live),
    ("reads that leak the machine or the host (kmsg, kcore, /sys, /proc/<host>, magic links)",
     lambda h: "reads = {'kmsg': '/dev/kmsg', 'mem': '/dev/mem', 'kcore': '/proc/kcore',\n"
               "  'kallsyms': '/proc/kallsyms', 'hostname': '/proc/sys/kernel/hostname',\n"
               "  'boot_id': '/proc/sys/kernel/random/boot_id', 'notes': '/sys/kernel/notes',\n"
               "  'host cmdline': f'/proc/{host}/cmdline',\n"
               "  'host status': f'/proc/{host}/status', 'host maps': f'/proc/{host}/maps',\n"
               "  'host mountinfo': f'/proc/{host}/mountinfo',\n"
               f"  'secret through /proc/self/root': '/proc/self/root' + {str(h.secret_file)!r}}}\n"
               "lists = {'/sys': '/sys', 'host fd': f'/proc/{host}/fd',\n"
               "  'host cwd': f'/proc/{host}/cwd', 'host root': f'/proc/{host}/root',\n"
               "  'own cwd': '/proc/self/cwd', 'own root': '/proc/self/root'}\n"
               "actions = {k: (lambda p=p: open(p, 'rb').read(4096)) for k, p in reads.items()}\n"
               "actions.update({k: (lambda p=p: os.listdir(p)) for k, p in lists.items()})\n"
               "result = each(actions)",
     # absent from its own root (r42); its own root and cwd (that root) Landlock refuses
     _all("ENOENT", "kmsg", "mem", "kcore", "kallsyms", "hostname", "boot_id", "notes",
          "host cmdline", "host status", "host maps", "host mountinfo",
          "secret through /proc/self/root", "/sys", "host fd", "host cwd", "host root",
          **{"own cwd": "EACCES", "own root": "EACCES"}),
     lambda h: h.files_untouched()),
    # r38: the syscalls past the allowlist no row named yet (all refused before r38)
    ("new mount API, descriptors of others, timers, io_uring, nested Landlock, LSM, splice",
     lambda h: "buf = ctypes.create_string_buffer(128)\n"
               "root = ctypes.c_char_p(b'/')\n"
               "result = each({'fsopen': syscall(430, ctypes.c_char_p(b'tmpfs'), 0),\n"
               "  'open_tree': syscall(428, -100, root, 1),\n"
               "  'move_mount': syscall(429, -100, root, -100, ctypes.c_char_p(b'/tmp'), 0),\n"
               "  'fsmount': syscall(432, 0, 0, 0), 'fspick': syscall(433, -100, root, 0),\n"
               "  'mount_setattr': syscall(442, -100, root, 0, None, 0),\n"
               "  'pidfd_getfd': syscall(438, 0, 0, 0), 'process_mrelease': syscall(448, 0, 0),\n"
               "  'memfd_secret': syscall(447, 0),\n"
               "  'io_uring_enter': syscall(426, 0, 1, 0, 0, None, 0),\n"
               "  'io_uring_register': syscall(427, 0, 0, None, 0),\n"
               "  'timer_create': syscall(222, 1, None, buf),\n"
               "  'timerfd_create': syscall(283, 1, 0),\n"
               "  'setitimer': syscall(38, 0, buf, None), 'alarm': syscall(37, 1000),\n"
               "  'eventfd2': syscall(290, 0, 0), 'signalfd4': syscall(289, -1, buf, 8, 0),\n"
               "  'landlock_create_ruleset': syscall(444, None, 0, 1),\n"
               "  'ptrace SEIZE host': syscall(101, 0x4206, host, 0, 0),\n"
               "  'lsm_get_self_attr': syscall(459, 0, None, None, 0),\n"
               "  'lsm_set_self_attr': syscall(460, 0, None, 0, 0),\n"
               "  'splice': syscall(275, 0, None, 1, None, 1, 0),\n"
               "  'vmsplice': syscall(278, 1, None, 0, 0), 'tee': syscall(276, 0, 1, 1, 0),\n"
               "  'sendfile': syscall(40, 1, 0, None, 1),\n"
               "  'copy_file_range': syscall(326, 0, None, 1, None, 1, 0),\n"
               "  'bind': syscall(49, 0, None, 0), 'connect': syscall(42, 0, None, 0),\n"
               "  'listen': syscall(50, 0, 1), 'accept4': syscall(288, 0, None, None, 0),\n"
               "  'setsid': syscall(112), 'setpgid': syscall(109, 0, 0),\n"
               "  'chdir': syscall(80, root), 'umask': syscall(95, 0),\n"
               "  'flock': syscall(73, 0, 2), 'sync': syscall(162),\n"
               "  'fchmod': syscall(91, 0, 0o777), 'fchown': syscall(93, 0, 0, 0),\n"
               "  'ftruncate': syscall(77, 1, 0), 'fallocate': syscall(285, 1, 0, 0, 1 << 30),\n"
               "  'getpriority host': syscall(140, 0, host),\n"
               "  'sched_getattr host': syscall(315, host, buf, 64, 0),\n"
               "  'kill own process group': syscall(62, 0, 0)})",
     _all("EPERM", "fsopen", "open_tree", "move_mount", "fsmount", "fspick", "mount_setattr",
          "pidfd_getfd", "process_mrelease", "memfd_secret", "io_uring_enter",
          "io_uring_register", "timer_create", "timerfd_create", "setitimer", "alarm",
          "eventfd2", "signalfd4", "landlock_create_ruleset", "ptrace SEIZE host",
          "lsm_get_self_attr", "lsm_set_self_attr", "splice", "vmsplice", "tee", "sendfile",
          "copy_file_range", "bind", "connect", "listen", "accept4", "setsid", "setpgid",
          "chdir", "umask", "flock", "sync", "fchmod", "fchown", "ftruncate", "fallocate",
          "getpriority host", "sched_getattr host", "kill own process group"),
     lambda h: _live(h) and h.files_untouched() and _tracer_of(os.getpid()) == 0),
    ("a sibling worker's memory, environment and tracing",
     lambda h: f"sibling = {h.sibling_pid}\n"
               "class iovec(ctypes.Structure):\n"
               "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
               "out = ctypes.create_string_buffer(64)\n"
               "local = iovec(ctypes.addressof(out), 64)\n"
               "remote = iovec(0x400000, 64)\n"
               "result = each({'environ': lambda: open(f'/proc/{sibling}/environ', 'rb').read(),\n"
               "  'mem': lambda: open(f'/proc/{sibling}/mem', 'rb'),\n"
               "  'maps': lambda: open(f'/proc/{sibling}/maps', 'rb').read(),\n"
               "  'ptrace ATTACH': syscall(101, 16, sibling, 0, 0),\n"
               "  'ptrace SEIZE': syscall(101, 0x4206, sibling, 0, 0),\n"
               "  'process_vm_readv': syscall(310, sibling, ctypes.byref(local), 1,"
               " ctypes.byref(remote), 1, 0),\n"
               "  'pidfd_open': syscall(434, sibling, 0)})",
     _all("ENOENT", "environ", "mem", "maps", **dict.fromkeys(
         ("ptrace ATTACH", "ptrace SEIZE", "process_vm_readv", "pidfd_open"), "EPERM")),
     lambda h: _live(h) and _tracer_of(h.sibling_pid) == 0),
]


@pytest.mark.parametrize(("name", "payload", "expected", "unreached"), ROWS,
                         ids=[row[0] for row in ROWS])
async def test_payload_is_denied(
    pool: WorkerPoolExecutor,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    payload: Callable[[Host], str],
    expected: dict[str, Any],
    unreached: Callable[[Host], bool],
) -> None:
    await check_payload(pool, tmp_path, monkeypatch, name, payload, expected, unreached)


def _links(pid: int | str) -> dict[str, str]:
    """Descriptor -> what it leads to, of process ``pid`` (the test runs as root)."""
    links = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed since
            links[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
    return links


async def test_a_workers_descriptors_lead_only_to_itself_and_its_host(
        pool: WorkerPoolExecutor, tmp_path: Path) -> None:
    """Every descriptor a worker holds is its own ``/proc`` file, ``/dev/null``, its
    event loop's, its own socketpair, or a pipe whose other end the host holds: none
    reaches a host file or socket, or a pipe of the sibling worker."""
    payload = ("links = {}\nfor fd in os.listdir('/proc/self/fd'):\n"
               "    try:\n        links[fd] = os.readlink(f'/proc/self/fd/{fd}')\n"
               "    except OSError:\n        pass\n"
               "result = {'pid': os.getpid(), 'links': links}")
    host = Host(tmp_path)
    try:
        result, sibling = await with_sibling(pool, host, lambda h: payload)
    finally:
        host.close()
    assert result.error is None and sibling.error is None, (result.error, sibling.error)
    links, pid = result.value["links"], result.value["pid"]
    # its /proc files were opened before it left the host's root: their paths are now
    # relative to that (detached) /proc mount
    own = (f"/proc/{pid}/", f"/{pid}/")
    kinds = {target.split(":")[0] if ":" in target else
             "own proc" if target.startswith(own) else target for target in links.values()}
    assert kinds <= {"pipe", "socket", "anon_inode", "own proc", "/dev/null"}, links
    hosts = set(_links("self").values())
    siblings = set(_links(host.sibling_pid).values())
    pipes = {t for t in links.values() if t.startswith("pipe:")}
    sockets = {t for t in links.values() if t.startswith("socket:")}
    assert len(pipes) == 3 and pipes <= hosts, (pipes, hosts)  # stdin, stdout, stderr
    assert not (pipes | sockets) & siblings
    assert not sockets & hosts


async def test_without_seccomp_the_rlimits_alone_refuse_real_time_nice_and_locking(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the syscalls layer is missing (any machine but x86-64: ``codemode doctor``
    says so), ``sched_setscheduler``, ``setpriority`` and ``mlock`` reach the kernel: the
    hard rlimits of 0 refuse them, whatever limits the host has."""
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", "syscalls")
    payload = PRELUDE + (
        "result = each({'fifo': syscall(144, 0, 1, ctypes.byref(ctypes.c_int(99))),\n"
        "  'rr': syscall(144, 0, 2, ctypes.byref(ctypes.c_int(1))),\n"
        "  'setpriority -20': syscall(141, 0, 0, -20),\n"
        "  'mlock 4 MiB': syscall(149, ctypes.addressof(ctypes.create_string_buffer(4 << 20)),"
        " 4 << 20),\n"
        "  'mmap MAP_LOCKED': syscall(9, 0, 4 << 20, 3, 0x22 | 0x2000, -1, 0)})\n"
        "stat = open('/proc/self/stat').read().rsplit(')', 1)[1].split()\n"
        "result.update(nice=stat[16], policy=stat[38])\n"
        "result['VmLck'] = [line.split()[1] for line in open('/proc/self/status')"
        " if line.startswith('VmLck')]")
    async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
        await pool.start()
        assert pool.confinement is not None and pool.confinement.missing == ("syscalls",)
        value = (await pool.run(payload, call_tool=no_tool, limits=LIMITS)).value
    assert value == {"fifo": "EPERM", "rr": "EPERM", "setpriority -20": "EACCES",
                     "mlock 4 MiB": "EPERM", "mmap MAP_LOCKED": "EPERM",
                     "nice": str(os.getpriority(os.PRIO_PROCESS, 0)),  # the host's, unlowered
                     "policy": "0", "VmLck": ["0"]}


async def test_an_i386_syscall_kills_the_worker_before_it_runs(pool: WorkerPoolExecutor) -> None:
    """``int 0x80`` from a 64-bit process is the i386 ABI, with other syscall numbers:
    the filter kills the process on the architecture check, before any number is looked
    at (the x32 ABI is refused by its own row above). The pool reports it and goes on."""
    payload = PRELUDE + (
        "address = syscall(9, 0, 4096, 7, 0x22, -1, 0)()  # PROT_READ|WRITE|EXEC\n"
        "code = b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3'  # mov eax, 20 (getpid); int 0x80\n"
        "ctypes.memmove(address, code, len(code))\n"
        "result = {'ran': ctypes.CFUNCTYPE(ctypes.c_int)(address)()}")
    result = await pool.run(payload, call_tool=no_tool, limits=LIMITS)
    assert result.error is not None and result.error.type == "SandboxError", result
    # SIGSYS from the filter; SIGSEGV on a kernel built without i386 emulation
    assert result.error.message in (f"the worker process died unexpectedly (status {-n})"
                                    for n in (signal.SIGSYS, signal.SIGSEGV))
    after = await pool.run("result = 6 * 7", call_tool=no_tool, limits=LIMITS)
    assert after.value == 42


async def test_writing_into_the_stack_reservation_is_stopped_by_the_host(
        pool: WorkerPoolExecutor) -> None:
    """``RLIMIT_AS`` counts the script thread's 2 GiB C stack reservation, untouched: raw
    code that writes 1 GiB into it passes every limit inside the worker (it held 1.07 GB
    resident under a 256 MiB limit and the run succeeded). The host reads the worker's
    resident size itself and stops it past ``resident.budget``."""
    payload = PRELUDE + (
        "spans = [tuple(int(x, 16) for x in line.split()[0].split('-'))\n"
        "         for line in open('/proc/self/maps') if line.split()[1].startswith('rw')]\n"
        "low, high = next((lo, hi) for lo, hi in spans if hi - lo >= 1 << 30)\n"
        "libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]\n"
        "libc.memset(low + (1 << 20), 1, 1 << 30)\n"
        "result = 'wrote 1 GiB'")
    result = await pool.run(payload, call_tool=no_tool, limits=LIMITS)
    assert result.value is None, result.value
    assert result.error is not None and result.error.limit == "memory", result.error
    assert "read and stopped by the host" in result.error.message
    grown = int(result.error.message.split("grew to ")[1].split()[0])
    assert grown > LIMITS.memory  # the worker's own limits had not stopped it
    after = await pool.run("result = 6 * 7", call_tool=no_tool, limits=LIMITS)
    assert after.value == 42


def test_the_resident_budget_leaves_an_honest_run_its_whole_limit() -> None:
    """The meter stops an honest script at one limit's growth: the host's budget is past
    that by another limit and ``SLACK``, and a worker whose size the host cannot read
    (no procfs, gone) is never stopped for it."""
    memory = 256 * 1024 * 1024
    assert budget(30_000_000, memory) == 30_000_000 + 2 * memory + SLACK
    assert Resident(2**22 + 1).read() is None  # pid_max is at most 2**22: no such process


IPC_KEY = 0x636D3335
"""The System V key the IPC payload uses (the host checks its own namespace for it)."""


def _host_ipc_keys() -> set[int]:
    """Keys of the System V objects in the host's IPC namespace (key is each line's first
    field, in decimal)."""
    keys = set()
    for kind in ("shm", "msg", "sem"):
        for line in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]:
            keys.add(int(line.split()[0]))
    return keys


def _remove_host_ipc(key: int) -> None:
    """Remove what an unconfined payload left in the host's namespace (on failure only)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for get, ctl, args in ((29, 31, (0, 0)), (68, 71, (0,)), (64, 66, (0, 0))):
        ident = libc.syscall(get, key, *args)
        if ident >= 0:
            libc.syscall(ctl, ident, 0, None)  # IPC_RMID


async def test_without_seccomp_ipc_objects_stay_in_the_workers_own_namespace(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the syscalls layer is missing, ``shmget``/``msgget``/``semget`` reach the
    kernel. In the host's IPC namespace their objects outlived the worker (a shared memory
    segment holds its pages after the worker detached and died: memory no rlimit counts);
    in the worker's own namespace they are invisible to the host and die with it."""
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", "syscalls")
    payload = PRELUDE + (
        f"key = {IPC_KEY}\n"
        "result = {'shm': syscall(29, key, 1 << 20, 0o1600)(),\n"
        "          'msg': syscall(68, key, 0o1600)(), 'sem': syscall(64, key, 1, 0o1600)()}")
    assert IPC_KEY not in _host_ipc_keys()
    try:
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            await pool.start()
            assert pool.confinement is not None
            assert "own IPC namespace" in pool.confinement.network.detail
            value = (await pool.run(payload, call_tool=no_tool, limits=LIMITS)).value
            alive = _host_ipc_keys()  # the worker that made them is still in the pool
        assert set(value) == {"shm", "msg", "sem"} and all(
            isinstance(ident, int) and ident >= 0 for ident in value.values()), value
        assert IPC_KEY not in alive
        assert IPC_KEY not in _host_ipc_keys()
    finally:
        _remove_host_ipc(IPC_KEY)


def _existing(paths: list[str]) -> list[str]:
    return [path for path in paths if os.path.exists(path)]


async def test_without_landlock_seccomp_still_creates_no_file(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Landlock is missing (``codemode doctor`` says so), the spare uid may still
    create files in every world-writable directory: empty ones (``RLIMIT_FSIZE`` 0) but
    as many as it likes, outliving the worker. seccomp lets ``open``/``openat`` read only."""
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", "filesystem")
    targets = [f"{where}/codemode-confinement-created-{os.getpid()}"
               for where in ("/tmp", "/dev/shm", "/var/tmp")]
    payload = PRELUDE + (
        f"targets = {targets!r}\n"
        "result = each({t: (lambda t=t: open(t, 'w')) for t in targets})\n"
        "result['/dev/null O_RDWR'] = each({'': lambda: os.open('/dev/null', os.O_RDWR)})['']\n"
        "result['read'] = len(open('/proc/self/status').read()) > 0")
    try:
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            await pool.start()
            assert pool.confinement is not None
            assert pool.confinement.missing == ("filesystem",)
            value = (await pool.run(payload, call_tool=no_tool, limits=LIMITS)).value
        assert value == {**dict.fromkeys(targets, "EACCES"), "/dev/null O_RDWR": "EACCES",
                         "read": True}
        assert _existing(targets) == []
    finally:
        for target in targets:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
