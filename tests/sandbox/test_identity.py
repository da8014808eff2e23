"""Uid leases (issue #11): no two live workers of any hosts on one machine share a uid.

Two ``UidLeases`` on one directory stand for two host processes: ``flock`` locks belong
to an open file description, so they exclude each other even inside one process. One
test uses a real second process.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from codemode.errors import SandboxError
from codemode.sandbox.executors.confine import UID_BASE, UID_SPAN
from codemode.sandbox.executors.identity import LEASE_DIR, UidLeases
from codemode.sandbox.executors.pool import WorkerPoolExecutor
from codemode.sandbox.limits import Limits

if TYPE_CHECKING:
    from pathlib import Path

ROOT = os.geteuid() == 0
RAW = "tests.sandbox.attacks.compromised_worker:raw"


def _leases(directory: Path) -> UidLeases:
    return UidLeases(str(directory / "uids"))


def test_two_hosts_never_hold_the_same_uid(tmp_path: Path) -> None:
    first, second = _leases(tmp_path), _leases(tmp_path)
    held = [first.claim() for _ in range(50)]
    second._next = first._next - 50  # worst case: the second host starts on the same uids
    others = [second.claim() for _ in range(50)]
    assert {lease.uid for lease in held}.isdisjoint({lease.uid for lease in others})
    assert all(UID_BASE <= lease.uid < UID_BASE + UID_SPAN for lease in held + others)


def test_a_released_uid_is_reused_by_its_host_and_not_taken_by_another(
        tmp_path: Path) -> None:
    first, second = _leases(tmp_path), _leases(tmp_path)
    lease = first.claim()
    lease.release()
    lease.release()  # idempotent
    second._next = lease.uid - UID_BASE
    assert second.claim().uid != lease.uid  # still locked: kept for the first host
    assert first.claim().uid == lease.uid


def test_a_closed_host_frees_its_uids(tmp_path: Path) -> None:
    first, second = _leases(tmp_path), _leases(tmp_path)
    lease = first.claim()
    lease.release()
    first.close()
    second._next = lease.uid - UID_BASE
    assert second.claim().uid == lease.uid


def test_a_lease_held_by_another_process_is_skipped(tmp_path: Path) -> None:
    directory = tmp_path / "uids"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from codemode.sandbox.executors.identity import UidLeases\n"
         "lease = UidLeases(sys.argv[1]).claim(); print(lease.uid, flush=True)\n"
         "sys.stdin.read()", str(directory)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        taken = int(holder.stdout.readline())
        mine = _leases(tmp_path)
        mine._next = taken - UID_BASE
        assert mine.claim().uid == taken + 1
    finally:
        holder.communicate("")
    after = _leases(tmp_path)
    after._next = taken - UID_BASE
    assert after.claim().uid == taken  # the kernel dropped the lock when the holder exited


@pytest.mark.parametrize("mode", [0o777, 0o720, 0o702])
def test_a_lease_directory_others_can_write_is_refused(tmp_path: Path, mode: int) -> None:
    directory = tmp_path / "uids"
    directory.mkdir()
    directory.chmod(mode)
    with pytest.raises(SandboxError, match="writable by nobody else"):
        UidLeases(str(directory)).claim()
    assert list(directory.iterdir()) == []


def test_a_symlinked_lease_directory_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "uids").symlink_to(target)
    with pytest.raises(SandboxError, match="must be a directory"):
        _leases(tmp_path).claim()
    assert list(target.iterdir()) == []


def test_without_a_directory_leases_are_plain_numbers() -> None:
    leases = UidLeases(None)
    uids = [leases.claim().uid for _ in range(3)]
    assert len(set(uids)) == 3


@pytest.mark.skipif(not ROOT, reason="a host that is not root uses a user namespace, "
                    "not a leased uid (tested in test_confinement)")
@pytest.mark.anyio
async def test_a_live_workers_uid_is_locked_machine_wide() -> None:
    async with WorkerPoolExecutor(size=1, runtime=RAW, confinement="strict") as pool:
        result = await pool.run("import os\nresult = os.getuid()", call_tool=_no_tool,
                                limits=Limits(timeout=10))
        uid = result.value
        assert UID_BASE <= uid < UID_BASE + UID_SPAN, result
        fd = os.open(os.path.join(LEASE_DIR, str(uid)), os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)


async def _no_tool(path: str, args: dict[str, object]) -> object:
    raise AssertionError(f"no tool call expected, got {path}")
