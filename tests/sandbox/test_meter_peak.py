"""The meter's resident high-water reset keeps its ``clear_refs`` descriptor open, and a
forked child never writes through its parent's (issue #18)."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
from typing import Any, Final

import pytest

from codemode.sandbox.language import meter as meter_module
from codemode.sandbox.language.meter import reset_peak_memory

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not os.path.exists("/proc/self/clear_refs"),
    reason="needs Linux /proc/self/clear_refs")


def _peak() -> int:
    with open("/proc/self/status", "rb") as status:
        text = status.read()
    start = text.index(b"VmHWM:") + 6
    return int(text[start : text.index(b"kB", start)])


def _resident() -> int:
    with open("/proc/self/status", "rb") as status:
        text = status.read()
    start = text.index(b"VmRSS:") + 6
    return int(text[start : text.index(b"kB", start)])


def test_a_reset_lowers_the_peak_and_reuses_its_descriptor() -> None:
    reset_peak_memory()
    kept = meter_module._clear_refs
    assert kept is not None and kept[0] == os.getpid()
    # its own mapping, written: resident until unmapped (a bytearray may reuse memory the
    # process freed earlier and is already resident, which left the peak where it was)
    block = mmap.mmap(-1, 64 << 20)
    block.write(b"\x01" * (64 << 20))
    block.close()
    assert _peak() > _resident() + (32 << 10)
    reset_peak_memory()
    assert _peak() < _resident() + (32 << 10)
    assert meter_module._clear_refs == kept


def test_a_descriptor_kept_by_another_process_is_never_written(
        monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    try:
        os.set_blocking(read_end, False)
        monkeypatch.setattr(meter_module, "_clear_refs", (os.getpid() + 1, write_end))
        reset_peak_memory()
        kept = meter_module._clear_refs
        assert kept is not None and kept[0] == os.getpid() and kept[1] != write_end
        os.close(kept[1])  # opened for this test only (the patch puts the old one back)
        with pytest.raises(BlockingIOError):
            os.read(read_end, 1)  # nothing went through the "parent's" descriptor
    finally:
        os.close(read_end)
        os.close(write_end)


_TWO_RUNS = """
import json, sys
import anyio
import codemode as cm
from codemode.sandbox import InProcessExecutor
from codemode.sandbox.language import meter

if sys.argv[1] == "no-trim":
    meter._MALLOC_TRIM = None  # the control: what the host saw before the trim

HEAVY = "x = [' ' * 10**7 + str(i) for i in range(30)]\\nlen(x)"

async def no_tools(name, arguments):
    raise AssertionError(name)

async def main():
    async with InProcessExecutor() as executor:
        first = await executor.run(HEAVY, limits=cm.Limits(timeout=20, memory=512 << 20),
                                   call_tool=no_tools)
        held = meter._MALLINFO2().fordblks if meter._MALLINFO2 is not None else None
        with open("/proc/self/statm") as statm:
            resident = int(statm.read().split()[1]) * 4096
        second = await executor.run(HEAVY, limits=cm.Limits(timeout=20, memory=64 << 20),
                                    call_tool=no_tools)
    print(json.dumps([first.value, second.value, second.error and second.error.limit]))
    print(json.dumps({"free held before the second run": held,
                      "resident before the second run": resident,
                      "second run": repr(second.usage)}))

anyio.run(main)
"""

_KEEPS_FREED_MEMORY: Final = {
    # glibc keeps every freed block resident, as a long-lived host's fragmented heap does:
    # one arena for all threads (a host with many threads shares arenas), no trim of the
    # heap's top, no mmap for blocks under 32 MiB (glibc's most; its dynamic threshold
    # climbs there by itself once a large block is freed)
    "GLIBC_TUNABLES": "glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=33554432:"
                      "glibc.malloc.trim_threshold=4294967296",
}


@pytest.mark.parametrize(("trim", "second"), [
    pytest.param("trim", [None, "memory"], id="trimmed-the-second-run-trips"),
    pytest.param("no-trim", [30, None], id="control-reused-memory-went-unseen"),
])
def test_a_run_cannot_hide_in_memory_the_host_freed(trim: str, second: list[Any]) -> None:
    """In-process a run's memory is the process's resident growth; memory an earlier run
    freed and the allocator kept resident must not be free room for the next run."""
    env = {**os.environ, **_KEEPS_FREED_MEMORY}
    done = subprocess.run([sys.executable, "-c", _TWO_RUNS, trim], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    outcome, seen = done.stdout.splitlines()
    assert json.loads(outcome) == [30, *second], (seen, done.stderr)
