"""The kernel layer on a host that is not root (issue #11): the user-namespace path.

CI runs as root, where a worker drops to a leased spare uid. A host that is not root
takes the other path of ``confine.apply``: its own user namespace (host uid mapped)
together with the network namespace. To run that path for real here, a child process
becomes an unprivileged uid first, with no capability left. A real unprivileged host
reads its own Python; here the interpreter may sit under ``/root`` (mode 700), so the
child, while still root, lays a ``tmpfs`` (mode 755) over each directory on the way it
could not search (to the interpreter, and to the virtual environment whose
``site-packages`` a ``.pth`` file imported from while the child was still root: CI's
sits in a ``mktemp -d``, mode 700), in a mount namespace of its own, holding only the
entry that leads on (bound back at its path); the host's own directories are not changed.
The child confines itself exactly as a worker does, then tries each payload as raw
Python; the parent checks the targets.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from codemode.sandbox.executors.confine import LAYERS

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="becoming an unprivileged uid needs a root test process; "
    "on a non-root machine the worker pool tests already take this path")

ROOT = str(Path(__file__).resolve().parents[2])
UNPRIVILEGED = 2_999_999
SECRET = "codemode-unprivileged-secret-51d2"

CHILD = textwrap.dedent("""\
    import ctypes, errno, json, os, socket, sys
    sys.path.insert(0, sys.argv[5])  # this checkout's codemode (-I ignores PYTHONPATH)
    from codemode.sandbox.executors import confine
    libc = ctypes.CDLL(None, use_errno=True)
    uid, port, secret_file, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    assert libc.unshare(0x20000) == 0  # CLONE_NEWNS: the child's own view, as root
    assert libc.mount(None, b"/", None, (1 << 18) | 16384, None) == 0  # MS_PRIVATE|MS_REC
    def searchable(path):
        parts = path.split("/")[1:]
        for depth in range(1, len(parts)):
            above = "/" + "/".join(parts[:depth])
            if os.stat(above).st_mode & 0o001 == 0:
                entry = "/" + "/".join(parts[:depth + 1])
                fd = os.open(entry, os.O_PATH)
                assert libc.mount(b"tmpfs", above.encode(), b"tmpfs", 0, b"mode=0755") == 0
                os.mkdir(entry)
                assert libc.mount(f"/proc/self/fd/{fd}".encode(), entry.encode(), None,
                                  4096 | 16384, None) == 0  # MS_BIND|MS_REC
                os.close(fd)
    searchable(os.path.realpath(sys.base_prefix))
    searchable(os.path.realpath(sys.prefix))
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # every capability gone
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE 1, as a process started by that uid is
    host = os.getppid()
    before = {"secret size": os.stat(secret_file).st_size,
              "host /proc entry": os.stat(f"/proc/{host}").st_ino > 0}
    report = confine.apply({"mode": "strict", "uid": uid, "unavailable": json.loads(sys.argv[6])})
    def attempt(action):
        try:
            value = action()
        except OSError as exc:
            return {"denied": True, "errno": errno.errorcode.get(exc.errno)}
        return {"denied": False, "value": repr(value)[:200]}
    def checked(result):
        if result == -1:
            raise OSError(ctypes.get_errno(), "")
        return result
    def connect():
        with socket.socket() as sock:
            sock.connect(("127.0.0.1", port))
    probes = {
        "read /etc/passwd": attempt(lambda: open("/etc/passwd").read()),
        "read a host file": attempt(lambda: open(secret_file).read()),
        "stat a host file": attempt(lambda: os.stat(secret_file).st_size),
        "stat the host's /proc entry": attempt(lambda: os.stat(f"/proc/{host}").st_uid),
        "list /": attempt(lambda: os.listdir("/")),
        "write a file": attempt(lambda: open(target, "w").write("x")),
        "TCP to a loopback listener": attempt(connect),
        "host environ": attempt(lambda: open(f"/proc/{host}/environ", "rb").read()),
        "host mem": attempt(lambda: open(f"/proc/{host}/mem", "rb").read(1)),
        "ptrace the host": attempt(lambda: checked(libc.ptrace(16, host, 0, 0))),
        "kill(host, 0)": attempt(lambda: os.kill(host, 0)),
        "fork": attempt(os.fork),
        "unshare a new user namespace": attempt(lambda: checked(libc.unshare(0x10000000))),
    }
    print(json.dumps({"report": report, "probes": probes, "uid": os.getuid(), "before": before,
                      "euid_outside": open("/proc/self/uid_map").read().split()}))
""")


def _confined_child(tmp_path: Path, unavailable: list[str]) -> dict[str, Any]:
    """Run ``CHILD`` on a secret file it could ``stat`` before it confined itself; its
    report and probes. The TCP listener it tries is checked not reached."""
    shared = Path(tempfile.mkdtemp(prefix="cm-unpriv-"))  # searchable by the child's uid
    shared.chmod(0o755)
    secret = shared / "secret.txt"
    secret.write_text(SECRET)
    target = tmp_path / "written"
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", CHILD, str(UNPRIVILEGED),
             str(listener.getsockname()[1]), str(secret), str(target), ROOT,
             json.dumps(unavailable)],
            capture_output=True, text=True, timeout=60, cwd="/", env={})
        assert done.returncode == 0, done.stderr
        value: dict[str, Any] = json.loads(done.stdout)
        with pytest.raises(BlockingIOError):
            listener.accept()  # the listener was not reached
    finally:
        listener.close()
        shutil.rmtree(shared)
    assert value["before"] == {"secret size": len(SECRET), "host /proc entry": True}
    assert SECRET not in done.stdout
    assert not target.exists()
    return value


def test_a_non_root_host_gets_every_layer_and_each_payload_is_denied(tmp_path: Path) -> None:
    value = _confined_child(tmp_path, [])
    report = value["report"]
    assert {name: report[name][0] for name in LAYERS} == dict.fromkeys(LAYERS, True), report
    assert report["identity"][1] == "own user namespace (host uid mapped)"
    assert value["uid"] == UNPRIVILEGED
    assert value["euid_outside"] == [str(UNPRIVILEGED), str(UNPRIVILEGED), "1"]
    probes = value["probes"]
    assert all(probe["denied"] for probe in probes.values()), probes
    # its own root: the host's files are absent, not merely unreadable (size not told)
    assert probes["read /etc/passwd"]["errno"] == "ENOENT"
    assert probes["read a host file"]["errno"] == "ENOENT"
    assert probes["stat a host file"] == {"denied": True, "errno": "ENOENT"}
    assert probes["stat the host's /proc entry"] == {"denied": True, "errno": "ENOENT"}
    assert probes["list /"]["errno"] == "EACCES"  # Landlock: the new root is no rule's
    assert probes["kill(host, 0)"]["errno"] == "EPERM"
    assert probes["fork"]["errno"] == "EPERM"


def test_without_a_user_namespace_a_non_root_host_reports_mounts_missing(
        tmp_path: Path) -> None:
    """Not root and no user namespace (the network step that makes it is left out): the
    kernel refuses the mount namespace, the report says so, and the host's file is
    really still there to ``stat`` (missing means missing, not silently less)."""
    value = _confined_child(tmp_path, ["network"])
    mounts = value["report"]["mounts"]
    assert mounts[0] is False and "unshare(CLONE_NEWNS): EPERM" in mounts[1], mounts
    probes = value["probes"]
    assert probes["stat a host file"] == {"denied": False, "value": str(len(SECRET))}
    assert probes["read a host file"]["errno"] == "EACCES"  # Landlock still holds
