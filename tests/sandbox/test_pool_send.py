"""The pool's pipe writes: a frame bigger than the pipe, senders queued behind it, and
a worker whose pipe closes before or halfway through a frame."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections import deque
from typing import TYPE_CHECKING

import anyio
import pytest

from codemode.sandbox.executors import pool as pool_module

if TYPE_CHECKING:
    from collections.abc import Iterator

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
PIPE = 4096


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """A small non-blocking pipe (4 KiB): (read end, write end)."""
    read, write = os.pipe()
    for fd in (read, write):
        os.set_blocking(fd, False)
    fcntl.fcntl(write, F_SETPIPE_SZ, PIPE)
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def _writer(write_fd: int) -> pool_module._Worker:
    """The write side of a ``_Worker`` over ``write_fd``, without a process behind it."""
    worker = object.__new__(pool_module._Worker)
    worker._write_fd = write_fd
    worker._outgoing = deque()
    return worker


async def _drain(read_fd: int, size: int, into: bytearray) -> None:
    while len(into) < size:
        await anyio.wait_readable(read_fd)
        with contextlib.suppress(BlockingIOError):
            into += os.read(read_fd, 1000)  # slower than the writer: many partial writes


async def test_a_frame_bigger_than_the_pipe_arrives_whole_with_later_frames_behind_it(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    worker = _writer(write)
    big = bytes(range(256)) * 64  # 16 KiB: four pipes full
    small = b"second frame"
    got = bytearray()
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.send, big)
            await anyio.wait_all_tasks_blocked()  # the pipe is full, the rest is queued
            assert not worker.clean
            await worker.send(small)  # queued behind the first: returns at once
            assert not worker.clean
            tg.start_soon(_drain, read, len(big) + len(small), got)
    assert bytes(got) == big + small
    assert worker.clean


async def test_a_closed_pipe_before_the_first_byte_means_the_worker_is_gone(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    os.close(read)
    worker = _writer(write)
    with pytest.raises(pool_module._WorkerGone):
        await worker.send(b"frame")
    assert worker.clean  # nothing was written: nothing left half-sent


async def test_a_pipe_closed_halfway_through_a_frame_leaves_the_worker_unclean(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    worker = _writer(write)
    failure: list[BaseException] = []

    async def send() -> None:
        try:
            await worker.send(b"x" * (4 * PIPE))
        except pool_module._WorkerGone as exc:
            failure.append(exc)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            await anyio.wait_all_tasks_blocked()
            assert os.read(read, PIPE) == b"x" * PIPE  # the first pipe-full arrived
            os.close(read)  # the worker dies with most of the frame unsent
    assert len(failure) == 1
    assert not worker.clean, "a half-sent frame: the pool must not reuse this worker"
