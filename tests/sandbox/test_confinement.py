"""The kernel layer (issue #11): raw, unrestricted Python inside a real confined worker.

Every payload runs through the host-side runtime seam
``tests.sandbox.attacks.compromised_worker:raw`` (plain Python: the language layer is
assumed broken) in a ``confinement="strict"`` pool, so all kernel layers are active.
Each row asserts the specific refusal *and* that the host-side object was not reached
(the file is absent, the listener got nothing, the secret is not in the output), while a
sibling run, held open on the pool's other worker for the whole payload, finishes with
its own correct result.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import shutil
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from codemode.errors import SandboxError
from codemode.sandbox.executors.confine import LAYERS, UID_BASE, UID_SPAN, Confinement
from codemode.sandbox.executors.pool import WorkerPoolExecutor
from codemode.sandbox.limits import Limits

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

pytestmark = pytest.mark.anyio

RAW = "tests.sandbox.attacks.compromised_worker:raw"
SECRET = "codemode-host-secret-7f3a9c"
VISIBLE_SIZE = 4321
"""The size of ``Host.visible_file``, which only a ``stat`` that reached it could tell."""
LIMITS = Limits(memory=256 * 1024 * 1024, timeout=10)

PRELUDE = """\
import ctypes, errno, os, resource
libc = ctypes.CDLL(None, use_errno=True)
def attempt(action):
    try:
        value = action()
    except OSError as exc:
        return {"denied": True, "errno": errno.errorcode.get(exc.errno), "type": "OSError"}
    except ValueError as exc:
        return {"denied": True, "errno": None, "type": "ValueError", "message": str(exc)}
    return {"denied": False, "value": repr(value)[:300]}
def checked(result):
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result
def syscall(number, *args):  # an action: raw syscall ``number`` (x86-64), ``checked``
    fn = libc.syscall
    fn.restype = ctypes.c_long
    wrapped = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return lambda: checked(fn(ctypes.c_long(number), *wrapped))
def each(actions):  # name -> the errno (or exception type) that refused it, or 'allowed'
    out = {}
    for label, action in actions.items():
        got = attempt(action)
        out[label] = ((got["errno"] or got["type"]) if got["denied"]
                      else "allowed: " + got["value"])
    return out
host = HOST_PID
""".replace("HOST_PID", str(os.getpid()))  # the test process (a worker's parent may be its
# template: tests/sandbox/test_pool_template.py probes that one)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def pool() -> AsyncIterator[WorkerPoolExecutor]:
    async with WorkerPoolExecutor(size=2, runtime=RAW, confinement="strict") as executor:
        await executor.start()
        yield executor


class Host:
    """What the host exposes to a payload, and how the test checks it was not reached."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.secret_file = tmp_path / "secret.txt"
        self.secret_file.write_text(SECRET)
        self.secret_stat = _metadata(self.secret_file)
        self.target = tmp_path / "written-by-payload"
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.buffer = ctypes_buffer()
        self.sibling_pid = 0
        self.before: dict[int, tuple[Any, ...]] = {}
        """The host's and the sibling's ``scheduling`` state, taken before the payload."""
        # a unix socket path must fit in 108 bytes: pytest's tmp_path may not
        self.unix_dir = tempfile.mkdtemp(prefix="cm-")
        self.unix_path = os.path.join(self.unix_dir, "host.sock")
        self.unix = _unix_listener(self.unix_path)
        self.abstract_name = f"\0codemode-host-{os.getpid()}-{id(self)}"
        self.abstract = _unix_listener(self.abstract_name)
        self.shm_target = f"/dev/shm/codemode-confinement-probe-{os.getpid()}"
        # a file any uid may stat (tmp_path's parents are the test uid's alone)
        self.visible_dir = tempfile.mkdtemp(prefix="cm-visible-")
        os.chmod(self.visible_dir, 0o755)
        self.visible_file = os.path.join(self.visible_dir, "sized.bin")
        Path(self.visible_file).write_bytes(b"v" * VISIBLE_SIZE)

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()
        self.unix.close()
        self.abstract.close()
        shutil.rmtree(self.unix_dir, ignore_errors=True)
        shutil.rmtree(self.visible_dir, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.shm_target)

    def tcp_accepted_nothing(self) -> bool:
        try:
            connection, _ = self.tcp.accept()
        except BlockingIOError:
            return True
        connection.close()
        return False

    def unix_accepted_nothing(self) -> bool:
        for listener in (self.unix, self.abstract):
            try:
                connection, _ = listener.accept()
            except BlockingIOError:
                continue
            connection.close()
            return False
        return True

    def files_untouched(self) -> bool:
        """The secret file has its name, content, mode, owner and times, and no entry
        was added beside it."""
        return (os.listdir(self.tmp_path) == [self.secret_file.name]
                and self.secret_file.read_text() == SECRET
                and _metadata(self.secret_file) == self.secret_stat)

    def scheduling_untouched(self) -> bool:
        """The host's and the sibling's policy, priorities, CPUs and OOM score are as
        they were before the payload ran."""
        return bool(self.before) and all(scheduling(pid) == state
                                         for pid, state in self.before.items())

    def udp_received_nothing(self) -> bool:
        try:
            self.udp.recv(100)
        except BlockingIOError:
            return True
        return False


def _metadata(path: Path) -> tuple[int, ...]:
    st = path.stat()
    return (st.st_ino, st.st_mode, st.st_uid, st.st_gid, st.st_nlink, st.st_size,
            st.st_mtime_ns, st.st_ctime_ns)


def scheduling(pid: int) -> tuple[Any, ...]:
    """What a payload could change of another process to starve or outlive the host."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ioprio = libc.syscall(252, 1, pid)  # ioprio_get(IOPRIO_WHO_PROCESS, pid), x86-64
    oom = Path(f"/proc/{pid}/oom_score_adj").read_text().strip()
    return (os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority,
            os.getpriority(os.PRIO_PROCESS, pid), sorted(os.sched_getaffinity(pid)), ioprio,
            oom)


def _unix_listener(address: str) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen()
    listener.setblocking(False)
    return listener


def ctypes_buffer() -> Any:
    import ctypes

    return ctypes.create_string_buffer(SECRET.encode())


HOST_NOFILE = resource.getrlimit(resource.RLIMIT_NOFILE)
"""The test process's descriptor limit, which no payload may change."""
SHM_KEY = 0x0C0DE37
"""The SysV key a payload asks for: no segment with it may exist afterwards."""


def _shm_key_exists(key: int) -> bool:
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return any(row.split()[0] == str(key) for row in rows)


def _addr(host: Host) -> str:
    import ctypes

    return str(ctypes.addressof(host.buffer))


PAYLOADS: list[tuple[str, Callable[[Host], str], dict[str, Any], Callable[[Host], bool]]] = [
    ("read /etc/passwd",
     lambda h: "result = attempt(lambda: open('/etc/passwd').read())",
     {"denied": True, "errno": "ENOENT"}, lambda h: True),
    ("read a host file outside the allowlist",
     lambda h: f"result = attempt(lambda: open({str(h.secret_file)!r}).read())",
     {"denied": True, "errno": "ENOENT"}, lambda h: True),
    ("list the host's temp dir",
     lambda h: f"result = attempt(lambda: os.listdir({str(h.tmp_path)!r}))",
     {"denied": True, "errno": "ENOENT"}, lambda h: True),
    # r42: the worker's own root; a host path is absent (ENOENT), its size and times untold
    ("stat, lstat, readlink of host paths (size, owner, times) and other /proc entries",
     lambda h: f"visible = {h.visible_file!r}\n"
               "result = each({'stat': lambda: os.stat(visible).st_size,\n"
               "  'lstat': lambda: os.lstat(visible).st_size,\n"
               "  'host /proc': lambda: os.stat(f'/proc/{host}').st_uid,\n"
               f"  'sibling /proc': lambda: os.stat('/proc/{h.sibling_pid}').st_uid,\n"
               "  'readlink': lambda: os.readlink('/proc/1/exe')})",
     dict.fromkeys(("stat", "lstat", "host /proc", "sibling /proc", "readlink"), "ENOENT"),
     lambda h: h.files_untouched()),
    # r43: what was open before pivot_root and the links to the old root lead nowhere
    ("climb out of the own root: descriptors from before the pivot, /proc/self/root, "
     "cwd, map_files",
     lambda h: f"secret = {str(h.secret_file)!r}\n"
               "climbs = set()\n"
               "for fd in os.listdir('/proc/self/fd'):\n"
               "    got = attempt(lambda: os.open('..', os.O_RDONLY, dir_fd=int(fd)))\n"
               "    climbs.add(got.get('errno') or got.get('type') or 'opened')\n"
               "    got = attempt(lambda: os.fchdir(int(fd)))\n"
               "    climbs.add(got.get('errno') or got.get('type') or 'entered')\n"
               "maps = os.listdir('/proc/self/map_files')\n"
               "result = each({'root': lambda: os.listdir('/proc/self/root'),\n"
               "  'root secret': lambda: open('/proc/self/root' + secret).read(),\n"
               "  'cwd up': lambda: os.listdir(os.getcwd() + '/..'),\n"
               "  'map_files': lambda: open('/proc/self/map_files/' + maps[0], 'rb'),\n"
               "  'handle': syscall(303, -100, secret.encode(), ctypes.create_string_buffer(136),\n"
               "                    ctypes.byref(ctypes.c_int()), 0)})\n"
               "result['climbs'] = sorted(climbs)",
     {"root": "EACCES", "root secret": "ENOENT", "cwd up": "EACCES", "map_files": "EPERM",
      "handle": "EPERM", "climbs": ["EBADF", "ENOTDIR", "EPERM"]},
     lambda h: h.files_untouched()),
    ("list the worker's own root (no Landlock rule for it)",
     lambda h: "result = attempt(lambda: os.listdir('/'))",
     {"denied": True, "errno": "EACCES"}, lambda h: True),
    ("undo the root: detach, pivot, chroot, new or host mount namespace, mount API, rw",
     lambda h: "attr = ctypes.create_string_buffer(32)\n"
               "result = each({'umount2': syscall(166, b'/', 2),\n"
               "  'pivot_root': syscall(155, b'/proc', b'/proc'),\n"
               "  'chroot': syscall(161, b'/proc'),\n"
               "  'unshare': lambda: checked(libc.unshare(0x20000)),\n"
               "  'setns': syscall(308, 0, 0x20000),\n"
               "  'open_tree': syscall(428, -100, b'/', 1),\n"
               "  'fsopen': syscall(430, b'tmpfs', 0),\n"
               "  'move_mount': syscall(429, -100, b'/proc', -100, b'/', 0),\n"
               "  'mount_setattr': syscall(442, -100, b'/', 0x8000, attr, 32)})",
     dict.fromkeys(("umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree",
                    "fsopen", "move_mount", "mount_setattr"), "EPERM"), lambda h: True),
    ("write a file",
     lambda h: f"result = attempt(lambda: open({str(h.target)!r}, 'w').write('x'))",
     {"denied": True, "errno": "EACCES"}, lambda h: not h.target.exists()),
    ("write a file in /tmp",
     lambda h: "result = attempt(lambda: open('/tmp/codemode-confinement-probe', 'w'))",
     {"denied": True, "errno": "EACCES"},
     lambda h: not os.path.exists("/tmp/codemode-confinement-probe")),
    ("TCP to a loopback listener",
     lambda h: "import socket\n"
               "result = attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)"
               f".connect(('127.0.0.1', {h.tcp.getsockname()[1]})))",
     {"denied": True, "errno": "EPERM"}, lambda h: h.tcp_accepted_nothing()),
    ("UDP to a loopback listener",
     lambda h: "import socket\n"
               "result = attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
               f".sendto(b'x', ('127.0.0.1', {h.udp.getsockname()[1]})))",
     {"denied": True, "errno": "EPERM"}, lambda h: h.udp_received_nothing()),
    ("raw socket syscall, AF_INET",
     lambda h: "result = attempt(lambda: checked(libc.socket(2, 1, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: h.tcp_accepted_nothing()),
    ("read /proc/<host>/environ",
     lambda h: "result = attempt(lambda: open(f'/proc/{host}/environ', 'rb').read())",
     {"denied": True, "errno": "ENOENT"}, lambda h: True),
    ("read /proc/<host>/mem",
     lambda h: "result = attempt(lambda: open(f'/proc/{host}/mem', 'rb'))",
     {"denied": True, "errno": "ENOENT"}, lambda h: True),
    ("ptrace(PTRACE_ATTACH) the host",
     lambda h: "result = attempt(lambda: checked(libc.ptrace(16, host, 0, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: _tracer_pid() == 0),
    ("process_vm_readv the host",
     lambda h: "class iovec(ctypes.Structure):\n"
               "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
               "out = ctypes.create_string_buffer(64)\n"
               "local = iovec(ctypes.addressof(out), 64)\n"
               f"remote = iovec({_addr(h)}, 64)\n"
               "result = attempt(lambda: checked(libc.process_vm_readv(host, ctypes.byref(local),"
               " 1, ctypes.byref(remote), 1, 0)))\n"
               "result['read'] = out.raw.rstrip(b'\\0').decode('latin-1')",
     {"denied": True, "errno": "EPERM", "read": ""}, lambda h: True),
    ("kill(host, 0)",
     lambda h: "result = attempt(lambda: os.kill(host, 0))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("kill(-1, SIGKILL): every process it may signal",
     lambda h: "result = attempt(lambda: os.kill(-1, 9))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("fork",
     lambda h: "result = attempt(os.fork)",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("clone3 (glibc's first choice) reports ENOSYS",
     lambda h: "result = attempt(lambda: checked(libc.syscall(435, None, 0)))",
     {"denied": True, "errno": "ENOSYS"}, lambda h: True),
    ("exec /bin/sh",
     lambda h: "result = attempt(lambda: os.execv('/bin/sh', ['sh', '-c', 'true']))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("spawn /bin/sh (posix_spawn)",
     lambda h: "result = attempt(lambda: os.posix_spawn('/bin/sh', ['sh'], {}))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("raise RLIMIT_AS past the run's limit",
     lambda h: "hard = resource.getrlimit(resource.RLIMIT_AS)[1]\n"
               "result = attempt(lambda: resource.setrlimit(resource.RLIMIT_AS, "
               "(hard + (1 << 30), hard + (1 << 30))))\n"
               "result['hard_is_cap'] = hard == resource.getrlimit(resource.RLIMIT_AS)[0]",
     {"denied": True, "type": "ValueError", "message": "not allowed to raise maximum limit",
      "hard_is_cap": True}, lambda h: True),
    ("raise RLIMIT_CPU past the run's limit",
     lambda h: "soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
               "result = attempt(lambda: resource.setrlimit(resource.RLIMIT_CPU, "
               "(hard + 100, hard + 100)))\n"
               "result['bounded'] = hard != resource.RLIM_INFINITY",
     {"denied": True, "type": "ValueError", "message": "not allowed to raise maximum limit",
      "bounded": True}, lambda h: True),
    ("open a sibling worker's pipe",
     lambda h: f"result = attempt(lambda: os.open('/proc/{h.sibling_pid}/fd/0', os.O_WRONLY))",
     {"denied": True, "errno": "EACCES"}, lambda h: True),
    ("list a sibling worker's descriptors",
     lambda h: f"result = attempt(lambda: os.listdir('/proc/{h.sibling_pid}/fd'))",
     {"denied": True, "errno": "ENOENT"}, lambda h: True),
    ("signal a sibling worker",
     lambda h: f"result = attempt(lambda: os.kill({h.sibling_pid}, 9))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("new namespaces (unshare)",
     lambda h: "result = attempt(lambda: checked(libc.unshare(0x10000000)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("mount",
     lambda h: "result = attempt(lambda: checked(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("bpf",
     lambda h: "result = attempt(lambda: checked(libc.syscall(321, 0, None, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("perf_event_open",
     lambda h: "result = attempt(lambda: checked(libc.syscall(298, None, 0, -1, -1, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("I/O signals to the host (fcntl F_SETOWN)",
     lambda h: "result = attempt(lambda: checked(libc.fcntl(0, 8, host)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("inject input into a terminal (ioctl TIOCSTI)",
     lambda h: "result = attempt(lambda: checked(libc.ioctl(0, 0x5412, b'x')))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    # r27: what a full language-layer bypass would try next, each refused by the kernel
    ("AF_UNIX to the host's socket file",
     lambda h: "import socket\n"
               "result = attempt(lambda: socket.socket(socket.AF_UNIX).connect("
               f"{h.unix_path!r}))",
     {"denied": True, "errno": "EPERM"}, lambda h: h.unix_accepted_nothing()),
    ("AF_UNIX to the host's abstract socket",
     lambda h: "import socket\n"
               "result = attempt(lambda: socket.socket(socket.AF_UNIX).connect("
               f"{h.abstract_name!r}))",
     {"denied": True, "errno": "EPERM"}, lambda h: h.unix_accepted_nothing()),
    ("AF_NETLINK (routing, audit, uevents)",
     lambda h: "result = attempt(lambda: checked(libc.socket(16, 3, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("AF_PACKET (raw frames)",
     lambda h: "result = attempt(lambda: checked(libc.socket(17, 3, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("io_uring_setup (syscalls past seccomp)",
     lambda h: "params = ctypes.create_string_buffer(120)\n"
               "result = attempt(lambda: checked(libc.syscall(425, 8, params)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("userfaultfd (race kernel copies)",
     lambda h: "result = attempt(lambda: checked(libc.syscall(323, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("keyctl: read the session keyring",
     lambda h: "result = attempt(lambda: checked(libc.syscall(250, 0, -3, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("pidfd_open the host (then pidfd_getfd its descriptors)",
     lambda h: "result = attempt(lambda: checked(libc.syscall(434, host, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("process_vm_writev into the host",
     lambda h: "class iovec(ctypes.Structure):\n"
               "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
               "data = ctypes.create_string_buffer(b'overwritten', 64)\n"
               "local = iovec(ctypes.addressof(data), 11)\n"
               f"remote = iovec({_addr(h)}, 11)\n"
               "result = attempt(lambda: checked(libc.process_vm_writev(host, ctypes.byref(local),"
               " 1, ctypes.byref(remote), 1, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: h.buffer.value == SECRET.encode()),
    ("memfd_create (stage an executable)",
     lambda h: "result = attempt(lambda: checked(libc.syscall(319, b'x', 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("raw clone with CLONE_NEWUSER",
     lambda h: "result = attempt(lambda: checked(libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("open_by_handle_at (walk past Landlock by inode)",
     lambda h: "result = attempt(lambda: checked(libc.syscall(304, -100, None, 0)))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("become dumpable again",
     lambda h: "result = attempt(lambda: checked(libc.prctl(4, 1, 0, 0, 0)))\n"
               "result['dumpable'] = libc.prctl(3, 0, 0, 0, 0)",
     {"denied": True, "errno": "EPERM", "dumpable": 0}, lambda h: True),
    ("read /proc/1/environ",
     lambda h: "result = attempt(lambda: open('/proc/1/environ', 'rb').read())",
     {"denied": True, "errno": "ENOENT"}, lambda h: True),
    ("the host's environment is not the worker's",
     lambda h: "result = {'named': 'CODEMODE_CONFINEMENT_TEST_SECRET' in os.environ,\n"
               "          'environ': dict(os.environ)}",
     {"named": False}, lambda h: True),
    ("write a file in /dev/shm (a tmpfs the host shares)",
     lambda h: f"result = attempt(lambda: open({h.shm_target!r}, 'w').write('x'))",
     {"denied": True, "errno": "EACCES"}, lambda h: not os.path.exists(h.shm_target)),
    ("become root again",
     lambda h: "result = attempt(lambda: os.setuid(0))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    # r37: the host's own process through the calls that name a pid besides kill/ptrace
    ("tgkill the host's main thread",
     lambda h: "result = attempt(syscall(234, host, host, 10))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("prlimit64: cut the host's descriptor limit to 1",
     lambda h: "limit = (ctypes.c_ulong * 2)(1, 1)\n"
               "result = attempt(syscall(302, host, 7, limit, None))",
     {"denied": True, "errno": "EPERM"},
     lambda h: resource.getrlimit(resource.RLIMIT_NOFILE) == HOST_NOFILE),
    ("get_robust_list of the host (an address in its memory)",
     lambda h: "head = ctypes.c_void_p(); size = ctypes.c_size_t()\n"
               "result = attempt(syscall(274, host, ctypes.byref(head), ctypes.byref(size)))\n"
               "result['head'] = head.value",
     {"denied": True, "errno": "EPERM", "head": None}, lambda h: True),
    ("move_pages of the host (where its memory is)",
     lambda h: "pages = (ctypes.c_void_p * 1)(" + _addr(h) + ")\n"
               "status = (ctypes.c_int * 1)(12345)\n"
               "result = attempt(syscall(279, host, 1, pages, None, status, 0))\n"
               "result['status'] = status[0]",
     {"denied": True, "errno": "EPERM", "status": 12345}, lambda h: True),
    # r37: kernel objects that outlive the worker (its memory limit does not cover them)
    ("SysV shared memory that outlives the worker",
     lambda h: f"result = attempt(syscall(29, {SHM_KEY}, 1 << 30, 0o1600))",
     {"denied": True, "errno": "EPERM"}, lambda h: not _shm_key_exists(SHM_KEY)),
    ("POSIX message queue that outlives the worker",
     lambda h: "result = attempt(syscall(240, b'codemode-probe', 0o100 | 2, 0o600, None))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
    ("lock all its memory (mlockall)",
     lambda h: "result = attempt(syscall(151, 3))",
     {"denied": True, "errno": "EPERM"}, lambda h: True),
]


def _tracer_pid() -> int:
    status = Path("/proc/self/status").read_text()
    return int(status.split("TracerPid:")[1].split()[0])


async def with_sibling(pool: WorkerPoolExecutor, host: Host,
                        payload: Callable[[Host], str]) -> tuple[Any, Any]:
    """Run the payload while a sibling run is held open on the pool's other worker."""
    entered = anyio.Event()
    release = anyio.Event()
    sibling: dict[str, Any] = {}

    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        host.sibling_pid = arguments["pid"]
        host.before = {pid: scheduling(pid) for pid in (os.getpid(), host.sibling_pid)}
        entered.set()
        await release.wait()
        return {"token": "sibling-token"}

    async def run_sibling() -> None:
        source = ("import json, os\n"
                  "reply = await call('hold', json.dumps({'pid': os.getpid()}))\n"
                  "result = {'reply': reply, 'pid': os.getpid()}")
        sibling["result"] = await pool.run(source, call_tool=call_tool, tool_paths=["hold"],
                                           limits=LIMITS)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_sibling)
        await entered.wait()
        result = await pool.run(PRELUDE + payload(host), call_tool=call_tool,
                                tool_paths=[], limits=LIMITS)
        release.set()
    return result, sibling["result"]


@pytest.mark.parametrize(("name", "payload", "expected", "unreached"), PAYLOADS,
                         ids=[row[0] for row in PAYLOADS])
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


async def check_payload(pool: WorkerPoolExecutor, tmp_path: Path,
                        monkeypatch: pytest.MonkeyPatch, name: str,
                        payload: Callable[[Host], str], expected: dict[str, Any],
                        unreached: Callable[[Host], bool]) -> None:
    """Run one row: the refusal as ``expected``, the host object ``unreached``, the sibling
    held open meanwhile untouched, and the pool still serving after it."""
    monkeypatch.setenv("CODEMODE_CONFINEMENT_TEST_SECRET", SECRET)
    host = Host(tmp_path)
    try:
        result, sibling = await with_sibling(pool, host, payload)
        assert result.error is None, result.error
        value = result.value
        assert isinstance(value, dict), value
        for key, want in expected.items():
            assert value.get(key) == want, (name, value)
        assert SECRET not in json.dumps(value), value
        assert unreached(host), name
    finally:
        host.close()
    # the sibling, held open during the payload, got its own reply, untouched
    assert sibling.error is None, sibling.error
    assert sibling.value["reply"] == {"value": {"token": "sibling-token"}} or \
        "sibling-token" in json.dumps(sibling.value["reply"])
    assert sibling.value["pid"] == host.sibling_pid
    # the host process is intact and the pool still serves
    after = await pool.run("result = 6 * 7", call_tool=no_tool, limits=LIMITS)
    assert after.value == 42


async def no_tool(name: str, arguments: dict[str, Any]) -> Any:
    raise AssertionError("no tool is called")


async def test_every_layer_is_active_and_reported(pool: WorkerPoolExecutor) -> None:
    confinement = pool.confinement
    assert isinstance(confinement, Confinement)
    assert confinement.complete, confinement.describe_missing()
    assert confinement.mode == "strict"
    probe = PRELUDE + (
        "status = open('/proc/self/status').read()\n"
        "field = lambda key: status.split(key + ':')[1].split()[0]\n"
        "result = {'nnp': field('NoNewPrivs'), 'seccomp': field('Seccomp'),\n"
        "          'uid': os.getuid(), 'groups': os.getgroups(),\n"
        "          'dumpable': checked(libc.prctl(3, 0, 0, 0, 0)),\n"
        "          'as': resource.getrlimit(resource.RLIMIT_AS),\n"
        "          'fsize': resource.getrlimit(resource.RLIMIT_FSIZE),\n"
        "          'nproc': resource.getrlimit(resource.RLIMIT_NPROC),\n"
        "          'core': resource.getrlimit(resource.RLIMIT_CORE)}\n"
        "result['interfaces'] = open('/proc/self/net/dev').read().count(':') "
        "if os.path.exists('/proc/self/net/dev') else -1"
    )
    value = (await pool.run(probe, call_tool=no_tool, limits=LIMITS)).value
    assert value["nnp"] == "1"
    assert value["seccomp"] == "2"
    assert UID_BASE <= value["uid"] < UID_BASE + UID_SPAN
    assert value["groups"] == []
    assert value["dumpable"] == 0
    assert value["as"][0] == value["as"][1] != -1
    assert value["fsize"] == [0, 0]
    assert value["core"] == [0, 0]
    assert value["nproc"][0] == value["nproc"][1] < 100
    assert value["interfaces"] in (-1, 1)  # at most the namespace's own lo, down


async def test_workers_have_distinct_uids(pool: WorkerPoolExecutor, tmp_path: Path) -> None:
    host = Host(tmp_path)
    try:
        result, sibling = await with_sibling(pool, host, lambda h: "result = os.getuid()")
    finally:
        host.close()
    uid_sibling = (await pool.run("import os\nresult = os.getuid()", call_tool=no_tool,
                                  limits=LIMITS)).value
    assert result.value != sibling.value["pid"]
    assert {result.value, uid_sibling} <= set(range(UID_BASE, UID_BASE + UID_SPAN))


def _processes_of(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        if int(status.split("Uid:")[1].split()[0]) == uid:
            found.append(int(entry))
    return found


async def test_no_process_outlives_the_pool(tmp_path: Path) -> None:
    payload = PRELUDE + (
        "forks = [attempt(os.fork) for _ in range(3)]\n"
        "clone = attempt(lambda: checked(libc.syscall(56, 17, 0, 0, 0, 0)))\n"  # SIGCHLD
        "vfork = attempt(lambda: checked(libc.syscall(58)))\n"
        "import threading\n"
        "def linger():\n"  # a thread that would keep the worker alive if it were not killed
        "    t = threading.Thread(target=lambda: __import__('time').sleep(3600), daemon=True)\n"
        "    t.start()\n"
        "try:\n"
        "    linger()\n"
        "    thread = 'started'\n"
        "except RuntimeError as exc:\n"  # a thread stack past the hard RLIMIT_AS
        "    thread = str(exc)\n"
        "result = {'forks': forks, 'clone': clone, 'vfork': vfork, 'uid': os.getuid(),\n"
        "          'pid': os.getpid(), 'thread': thread}"
    )
    async with WorkerPoolExecutor(size=1, runtime=RAW, confinement="strict") as pool:
        value = (await pool.run(payload, call_tool=no_tool, limits=LIMITS)).value
    assert "forks" in value, value  # else the payload raised: ``value`` says what
    assert all(fork["errno"] == "EPERM" for fork in value["forks"]), value
    assert value["clone"]["errno"] == "EPERM"
    assert value["vfork"]["errno"] == "EPERM"
    assert _processes_of(value["uid"]) == []
    assert str(value["pid"]) not in os.listdir("/proc")


async def test_worker_stderr_goes_to_logging(caplog: pytest.LogCaptureFixture,
                                             capfd: pytest.CaptureFixture[str]) -> None:
    payload = "import sys\nsys.stderr.write('payload says ' + 'x' * 10 + '\\n')\n" \
              "sys.stderr.flush()\nresult = 1"
    with caplog.at_level(logging.WARNING, logger="codemode.worker"):
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            assert (await pool.run(payload, call_tool=no_tool, limits=LIMITS)).value == 1
    assert any("payload says xxxxxxxxxx" in record.getMessage() for record in caplog.records)
    assert "payload says" not in capfd.readouterr().err


async def test_worker_stderr_is_logged_without_terminal_controls(
        caplog: pytest.LogCaptureFixture) -> None:
    """A compromised worker's ESC/CSI sequences reach the host's log handlers (``codemode
    serve`` prints warnings on its stderr) as ``\\xNN`` text, not as controls a terminal
    acts on (erase the line, write a status line of its own, retitle the window)."""
    forged = "\x1b[2K\x1b[1Gcodemode serve: upstream x: up\r\x1b]0;pwned\x07\u009b31m"
    payload = f"import os\nos.write(2, {forged.encode()!r} + b'\\n')\nresult = 1"
    with caplog.at_level(logging.WARNING, logger="codemode.worker"):
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            assert (await pool.run(payload, call_tool=no_tool, limits=LIMITS)).value == 1
    logged = [r.getMessage() for r in caplog.records if "upstream x: up" in r.getMessage()]
    assert logged, [r.getMessage() for r in caplog.records]
    assert not any(ch in text for text in logged for ch in "\x1b\r\x07\u009b"), logged
    assert "\\x1b[2K\\x1b[1Gcodemode serve: upstream x: up\\x0d" in logged[0], logged


async def test_stderr_flood_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    payload = ("import sys\nwritten = 0\nfor _ in range(400):\n"
               "    try:\n        written += sys.stderr.write('e' * 4096)\n"
               "        sys.stderr.flush()\n    except BlockingIOError:\n        pass\n"
               "result = 'done'")
    with caplog.at_level(logging.WARNING, logger="codemode.worker"):
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            result = await pool.run(payload, call_tool=no_tool, limits=LIMITS)
            assert result.value == "done", result
            assert (await pool.run("result = 2", call_tool=no_tool, limits=LIMITS)).value == 2
    logged = sum(len(r.getMessage()) for r in caplog.records if r.name == "codemode.worker")
    assert 0 < logged <= 2 * (64 * 1024 + 200)


async def test_auto_names_a_missing_layer(monkeypatch: pytest.MonkeyPatch,
                                          caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", "filesystem")
    with caplog.at_level(logging.WARNING, logger="codemode.sandbox"):
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            await pool.start()
            confinement = pool.confinement
            value = (await pool.run(PRELUDE + "result = attempt(lambda: "
                                    "os.listdir('/') and 'listed')",
                                    call_tool=no_tool, limits=LIMITS)).value
    assert confinement is not None
    assert confinement.missing == ("filesystem",)
    assert not confinement.filesystem.active
    assert "simulated" in confinement.filesystem.detail
    assert confinement.syscalls.active and confinement.network.active
    warnings = [r.getMessage() for r in caplog.records if r.name == "codemode.sandbox"]
    assert len(warnings) == 1 and "filesystem" in warnings[0]
    # really missing: without Landlock its own root is listable (seccomp still holds)
    assert value == {"denied": False, "value": "'listed'"}


OWN_ROOT = PRELUDE + """\
import sys
imported = {m.__file__.split('/')[1] for m in list(sys.modules.values())
            if isinstance(getattr(m, '__file__', None), str) and m.__file__.startswith('/')}
result = {'root': sorted(os.listdir('/')), 'imported': sorted(imported),
          'proc': sorted(os.listdir('/proc')), 'pid': os.getpid(),
          'stat': attempt(lambda: os.stat(SECRET_FILE).st_size),
          'host': attempt(lambda: os.stat(f'/proc/{host}').st_uid),
          'passwd': attempt(lambda: open('/etc/passwd').read())}
"""


@pytest.mark.parametrize("spare", [True, False], ids=["adopted from the template", "booted"])
async def test_own_root_holds_only_what_it_imported(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path, spare: bool) -> None:
    """Landlock off (so the root can be listed): the root holds the top directories of
    what the worker imported and ``/proc`` with only its own entry; the host's file is
    absent (its size untold), as are the host's ``/proc`` entry and ``/etc``. A file it
    could have read is now not there to read, though Landlock is missing. Both ways a
    worker gets its root: a fork adopting its template's, a booted worker building its
    own."""
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", "filesystem")
    host = Host(tmp_path)
    try:
        async with WorkerPoolExecutor(size=1, runtime=RAW, spare=spare) as pool:
            await pool.start()
            assert pool.confinement is not None and pool.confinement.mounts.active
            source = OWN_ROOT.replace("SECRET_FILE", repr(host.visible_file))
            value = (await pool.run(source, call_tool=no_tool, limits=LIMITS)).value
        assert host.files_untouched()
    finally:
        host.close()
    assert value["root"] == sorted({*value["imported"], "proc"}), value
    assert "etc" not in value["root"] and "home" not in value["root"]
    assert value["proc"] == sorted([str(value["pid"]), "self"])
    assert value["stat"] == {"denied": True, "errno": "ENOENT", "type": "OSError"}
    assert value["host"] == {"denied": True, "errno": "ENOENT", "type": "OSError"}
    assert value["passwd"]["errno"] == "ENOENT"


async def test_without_mounts_a_host_file_is_there_to_stat(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    """The mounts layer is what hides it: missing (the test seam), the report says so and
    ``stat`` tells the size of the very file the full worker cannot see."""
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", "mounts")
    host = Host(tmp_path)
    try:
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            await pool.start()
            confinement = pool.confinement
            value = (await pool.run(PRELUDE + "result = attempt(lambda: os.stat("
                                    f"{host.visible_file!r}).st_size)",
                                    call_tool=no_tool, limits=LIMITS)).value
    finally:
        host.close()
    assert confinement is not None and confinement.missing == ("mounts",)
    assert "simulated" in confinement.mounts.detail
    assert value == {"denied": False, "value": repr(VISIBLE_SIZE)}


async def test_auto_with_every_layer_warns_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="codemode.sandbox"):
        async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
            await pool.start()
            assert pool.confinement is not None and pool.confinement.complete
    assert not [r for r in caplog.records if r.name == "codemode.sandbox"]


@pytest.mark.parametrize("layer", LAYERS)
async def test_strict_refuses_when_a_layer_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                      layer: str) -> None:
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", layer)
    async with WorkerPoolExecutor(size=1, runtime=RAW, confinement="strict") as pool:
        with pytest.raises(SandboxError, match=f"strict.*missing {layer}"):
            await pool.start()
        with pytest.raises(SandboxError, match=f"missing {layer}"):
            await pool.run("result = 1", call_tool=no_tool, limits=LIMITS)


async def test_off_applies_nothing_and_runs() -> None:
    async with WorkerPoolExecutor(size=1, runtime=RAW, confinement="off") as pool:
        await pool.start()
        assert pool.confinement == Confinement.off()
        value = (await pool.run(PRELUDE + "result = [os.getuid(), "
                                "open('/proc/self/status').read().count('NoNewPrivs:\\t0')]",
                                call_tool=no_tool, limits=LIMITS)).value
    assert value == [os.getuid(), 1]


async def test_recycle_every_run_gives_each_run_a_fresh_worker() -> None:
    async with WorkerPoolExecutor(size=1, runtime=RAW, recycle="every_run") as pool:
        pids = [(await pool.run("import os\nresult = os.getpid()", call_tool=no_tool,
                                limits=LIMITS)).value for _ in range(3)]
        leftover = await pool.run("result = globals().get('planted')", call_tool=no_tool,
                                  limits=LIMITS)
    assert len(set(pids)) == 3
    assert leftover.value is None


async def test_reused_worker_keeps_state_without_every_run() -> None:
    """Why ``every_run`` exists: a reused worker carries what escaped code left behind."""
    async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
        await pool.run("import builtins\nbuiltins.planted = 'left behind'\nresult = 1",
                       call_tool=no_tool, limits=LIMITS)
        reused = await pool.run("import builtins\nresult = getattr(builtins, 'planted', None)",
                                call_tool=no_tool, limits=LIMITS)
    async with WorkerPoolExecutor(size=1, runtime=RAW, recycle="every_run") as pool:
        await pool.run("import builtins\nbuiltins.planted = 'left behind'\nresult = 1",
                       call_tool=no_tool, limits=LIMITS)
        fresh = await pool.run("import builtins\nresult = getattr(builtins, 'planted', None)",
                               call_tool=no_tool, limits=LIMITS)
    assert reused.value == "left behind"
    assert fresh.value is None


async def test_memory_cap_is_hard_and_still_reports_the_limit() -> None:
    source = PRELUDE + (
        "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        "raised = attempt(lambda: resource.setrlimit(resource.RLIMIT_AS, (hard, hard)))\n"
        "blob = bytearray(512 * 1024 * 1024)\n"
        "result = 'allocated past the cap'"
    )
    async with WorkerPoolExecutor(size=1, runtime=RAW) as pool:
        result = await pool.run(source, call_tool=no_tool, limits=LIMITS)
        after = await pool.run("result = 'next run fine'", call_tool=no_tool, limits=LIMITS)
    assert result.value != "allocated past the cap"
    assert result.value == {"raised": "MemoryError", "errno": None, "message": ""} or \
        (result.error is not None and result.error.limit == "memory"), result
    assert after.value == "next run fine"


async def test_a_larger_memory_limit_gets_a_worker_that_can_give_it() -> None:
    """Hard caps only go down, so a reused worker capped by a small run is not handed a
    run with a larger memory limit: that run gets its whole limit from another worker."""
    small = Limits(memory=64 * 1024 * 1024, timeout=10)
    large = Limits(memory=512 * 1024 * 1024, timeout=10)
    grow = "blob = bytearray(300 * 1024 * 1024)\nimport os\nresult = [len(blob), os.getpid()]"
    async with WorkerPoolExecutor(size=1, runtime=RAW, confinement="strict") as pool:
        first = await pool.run("import os\nresult = os.getpid()", call_tool=no_tool,
                               limits=small)
        grown = await pool.run(grow, call_tool=no_tool, limits=large)
        again = await pool.run(grow, call_tool=no_tool, limits=large)
    assert grown.error is None, grown.error
    assert grown.value[0] == 300 * 1024 * 1024 and grown.value[1] != first.value
    assert again.error is None and again.value[1] == grown.value[1]  # that worker is reused


async def test_restricted_scripts_run_confined() -> None:
    """The real runner, confined: the examples' kind of script works, with tool calls."""
    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        return {"echo": arguments}

    source = ("import json, re, math, asyncio\n"
              "replies = await asyncio.gather(*[tools.echo(i=i) for i in range(5)])\n"
              "print('printed', len(replies))\n"
              "'x'.encode('latin-1')\n"
              "{'n': len(replies), 'pi': round(math.pi, 2), 'm': re.findall('a+', 'caaab'),\n"
              " 'j': json.dumps(replies[0])}")
    async with WorkerPoolExecutor(size=1, confinement="strict") as pool:
        result = await pool.run(source, call_tool=call_tool, tool_paths=["echo"])
        failing = await pool.run("def f():\n    return 1 / 0\nf()", call_tool=call_tool)
    assert result.error is None, result.error
    assert result.value["n"] == 5 and result.value["m"] == ["aaa"]
    assert result.output == "printed 5\n"
    assert failing.error is not None and failing.error.type == "ZeroDivisionError"
    assert failing.error.line == 2


def test_a_report_the_worker_did_not_send_is_missing() -> None:
    """The host never assumes a layer: absent or garbled entries count as missing."""
    report = {"no_new_privs": [True, "PR_SET_NO_NEW_PRIVS 1"], "network": "yes",
              "syscalls": [1, "truthy but not a bool"]}
    confinement = Confinement.from_report("auto", report)
    assert confinement.no_new_privs.active
    assert set(confinement.missing) == set(LAYERS) - {"no_new_privs"}
    assert confinement.network.detail == "not reported by the worker"
    assert Confinement.from_report("strict", None).missing == LAYERS


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="confinement"):
        WorkerPoolExecutor(confinement="on")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="recycle"):
        WorkerPoolExecutor(recycle="sometimes")  # type: ignore[arg-type]


def test_worker_stderr_never_reaches_an_unconfigured_hosts_stderr(tmp_path: Path) -> None:
    """Without logging configured, ``logging.lastResort`` would print warnings to stderr."""
    import subprocess
    import sys

    host_script = tmp_path / "host.py"
    host_script.write_text(
        "import anyio\n"
        "from codemode.sandbox.executors.pool import WorkerPoolExecutor\n"
        "async def tool(name, arguments):\n    return None\n"
        "async def main():\n"
        f"    async with WorkerPoolExecutor(size=1, runtime={RAW!r}) as pool:\n"
        "        result = await pool.run(\"import sys\\nsys.stderr.write('worker noise\\\\n')\\n"
        "sys.stderr.flush()\\nresult = 'ran'\", call_tool=tool)\n"
        "        print(result.value)\n"
        "anyio.run(main)\n")
    done = subprocess.run([sys.executable, str(host_script)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60, check=False)
    assert done.stdout.strip() == "ran", done
    assert "worker noise" not in done.stderr
    assert "Traceback" not in done.stderr
