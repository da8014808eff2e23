"""The ticker of the stall tests (``host_ticks``) still reports a loop that could not run.

It discounts the time the machine did not schedule the process; a stall is CPU time spent
while the loop cannot tick, so a C call holding the GIL (on the loop's thread, or on
another, as a script thread in-process) must show as starved at any load, and a thread
that computes in bytecode, giving the GIL up every 5 ms, must not.
"""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from tests.sandbox.host_ticks import host_ticks

HELD = 5 * 10**7
"""``sum(range(HELD))`` is one C call: 0.6-0.8 s of CPU with the GIL held (3.11-3.13)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _hold_the_gil() -> float:
    started = time.thread_time()
    sum(range(HELD))
    return time.thread_time() - started


def _compute_in_bytecode() -> float:
    started = time.thread_time()
    while time.thread_time() - started < 0.4:
        pass
    return time.thread_time() - started


async def test_a_c_call_on_the_loop_thread_is_a_stall() -> None:
    async with host_ticks() as ticks:
        held = _hold_the_gil()
    assert ticks.count == 0
    assert ticks.stall >= held
    assert ticks.starved, ticks


async def test_the_loop_waiting_for_a_c_call_on_another_thread_is_a_stall() -> None:
    """The loop's thread waits for the GIL-holding call (as it waits for the GIL an
    in-process script holds): the other thread's CPU time is the stall."""
    held: list[float] = []
    holder = threading.Thread(target=lambda: held.append(_hold_the_gil()))
    async with host_ticks() as ticks:
        holder.start()
        holder.join()
    assert ticks.count == 0
    assert ticks.stall >= held[0]
    assert ticks.starved, (ticks, held)


async def test_bytecode_on_another_thread_is_no_stall() -> None:
    async with host_ticks() as ticks:
        computed = await anyio.to_thread.run_sync(_compute_in_bytecode)
    assert ticks.stall >= computed
    assert not ticks.starved, ticks
