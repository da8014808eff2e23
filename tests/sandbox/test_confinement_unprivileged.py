"""The kernel layer on a host that is not root (issue #11): the user-namespace path.

CI runs as root, where a worker drops to a leased spare uid. A host that is not root
takes the other path of ``confine.apply``: its own user namespace (host uid mapped)
together with the network namespace. To run that path for real here, a child process
becomes an unprivileged uid first, keeping only ``CAP_DAC_READ_SEARCH`` so it can still
read the interpreter under ``/root`` (a real unprivileged host reads its own Python);
``unshare(CLONE_NEWUSER)`` drops that capability for the parent namespace, so the
payloads below run with no privilege at all. The child confines itself exactly as a
worker does, then tries each payload as raw Python; the parent checks the targets.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from codemode.sandbox.executors.confine import LAYERS

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="becoming an unprivileged uid needs a root test process; "
    "on a non-root machine the worker pool tests already take this path")

UNPRIVILEGED = 2_999_999
SECRET = "codemode-unprivileged-secret-51d2"

CHILD = textwrap.dedent("""\
    import ctypes, errno, json, os, socket, struct, sys
    from codemode.sandbox.executors import confine
    libc = ctypes.CDLL(None, use_errno=True)
    uid, port, secret_file, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    libc.prctl(8, 1, 0, 0, 0)  # PR_SET_KEEPCAPS: keep the permitted set across setuid
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    header = ctypes.create_string_buffer(struct.pack("=Ii", 0x20080522, 0))
    data = ctypes.create_string_buffer(struct.pack("=6I", 1 << 2, 1 << 2, 0, 0, 0, 0))
    assert libc.syscall(126, header, data) == 0, ctypes.get_errno()  # capset
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE 1, as a process started by that uid is
    report = confine.apply({"mode": "strict", "uid": uid})
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
    host = os.getppid()
    def connect():
        with socket.socket() as sock:
            sock.connect(("127.0.0.1", port))
    probes = {
        "read /etc/passwd": attempt(lambda: open("/etc/passwd").read()),
        "read a host file": attempt(lambda: open(secret_file).read()),
        "write a file": attempt(lambda: open(target, "w").write("x")),
        "TCP to a loopback listener": attempt(connect),
        "host environ": attempt(lambda: open(f"/proc/{host}/environ", "rb").read()),
        "host mem": attempt(lambda: open(f"/proc/{host}/mem", "rb").read(1)),
        "ptrace the host": attempt(lambda: checked(libc.ptrace(16, host, 0, 0))),
        "kill(host, 0)": attempt(lambda: os.kill(host, 0)),
        "fork": attempt(os.fork),
        "unshare a new user namespace": attempt(lambda: checked(libc.unshare(0x10000000))),
    }
    print(json.dumps({"report": report, "probes": probes, "uid": os.getuid(),
                      "euid_outside": open("/proc/self/uid_map").read().split()}))
""")


def test_a_non_root_host_gets_every_layer_and_each_payload_is_denied(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    target = tmp_path / "written"
    tmp_path.chmod(0o755)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", CHILD, str(UNPRIVILEGED),
             str(listener.getsockname()[1]), str(secret), str(target)],
            capture_output=True, text=True, timeout=60, cwd="/",
            env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        assert done.returncode == 0, done.stderr
        value: dict[str, Any] = json.loads(done.stdout)
        with pytest.raises(BlockingIOError):
            listener.accept()  # the listener was not reached
    finally:
        listener.close()
    report = value["report"]
    assert {name: report[name][0] for name in LAYERS} == dict.fromkeys(LAYERS, True), report
    assert report["identity"][1] == "own user namespace (host uid mapped)"
    assert value["uid"] == UNPRIVILEGED
    assert value["euid_outside"] == [str(UNPRIVILEGED), str(UNPRIVILEGED), "1"]
    probes = value["probes"]
    assert all(probe["denied"] for probe in probes.values()), probes
    assert probes["read /etc/passwd"]["errno"] == "EACCES"
    assert probes["read a host file"]["errno"] == "EACCES"
    assert probes["kill(host, 0)"]["errno"] == "EPERM"
    assert probes["fork"]["errno"] == "EPERM"
    assert SECRET not in done.stdout
    assert not target.exists()
