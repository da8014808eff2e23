"""A worker template's (or an idle spare's) mount namespace does not pin the host's
filesystems.

A root template stages its workers' root (``rootfs.build`` with ``pid`` 0) in a mount
namespace that lives as long as its host, and a spare that adopted it may wait as long
for its plan. Where the host's mounts are shared (a systemd machine), those namespaces
are the host's slaves: a filesystem the host unmounts afterwards is gone from them too,
instead of staying mounted there (device busy) until the host exits. The child below
plays that machine in a mount namespace of its own (nothing of the test machine's
changes): ``/`` shared, a ``tmpfs`` mounted, a template staged and adopted, the
``tmpfs`` unmounted again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="a mount namespace with shared mounts needs a root test process")

ROOT = str(Path(__file__).resolve().parents[2])

CHILD = textwrap.dedent("""\
    import ctypes, os, sys
    sys.path.insert(0, sys.argv[1])
    from codemode.sandbox.executors import rootfs
    libc = ctypes.CDLL(None, use_errno=True)
    probe = sys.argv[2].encode()
    assert libc.unshare(0x20000) == 0  # CLONE_NEWNS: the machine this child plays
    assert libc.mount(None, b"/", None, (1 << 20) | 16384, None) == 0  # MS_SHARED|MS_REC
    assert libc.mount(b"tmpfs", probe, b"tmpfs", 0, None) == 0
    staged, unmounted = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:  # the template, and a spare that adopted its root (in-process: a copy)
        root = rootfs.build([os.path.dirname(os.__file__)], 0)
        rootfs.adopt(root, os.getpid())
        os.write(staged[1], b"s")
        os.read(unmounted[0], 1)
        print("pinned" if os.path.ismount(sys.argv[2]) else "released", flush=True)
        os._exit(0)
    os.read(staged[0], 1)
    assert libc.umount2(probe, 0) == 0  # the host unmounts it
    os.write(unmounted[1], b"u")
    os.waitpid(pid, 0)
""")


def test_a_templates_namespace_lets_go_of_what_the_host_unmounts(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run([sys.executable, "-I", "-c", CHILD, ROOT, str(probe)],
                          capture_output=True, text=True, timeout=60, env={})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "released\n", done
    assert not os.path.ismount(probe)
