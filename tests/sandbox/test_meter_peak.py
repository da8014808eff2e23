"""The meter's resident high-water reset keeps its ``clear_refs`` descriptor open, and a
forked child never writes through its parent's (issue #18)."""

from __future__ import annotations

import mmap
import os
import sys

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
