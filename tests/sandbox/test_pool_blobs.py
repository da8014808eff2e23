"""Blob frames (issue #18): the host's compiled code crosses as raw bytes, host to worker
only; no decoder of the host accepts one, and a worker uses a blob for the run it came
with and no other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from codemode.errors import WorkerProtocolError
from codemode.sandbox import WorkerPoolExecutor
from codemode.sandbox.executors import pool as pool_module
from codemode.sandbox.executors.protocol import (
    BLOB,
    MAX_FRAME,
    FrameDecoder,
    encode,
    encode_blob,
)
from codemode.sandbox.language import compile as compile_module
from codemode.sandbox.language.compile import cached_script, compile_script

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

_unique = iter(range(10**9))


def fresh(source: str) -> str:
    """``source`` no cache has seen."""
    return f"{source}\n# blob test {next(_unique)}\n"


async def no_tool(name: str, arguments: dict[str, Any]) -> Any:
    return None


@pytest.fixture(scope="module")
async def pool() -> AsyncIterator[WorkerPoolExecutor]:
    async with WorkerPoolExecutor(size=1, confinement="off") as made:
        yield made


def test_a_workers_decoder_returns_blobs_in_order_with_messages() -> None:
    data = bytes(range(256)) * 3  # every byte value, NUL and brackets included
    stream = encode(["a", 1]) + encode_blob(data) + encode(["run", {}]) + encode_blob(b"")
    decoder = FrameDecoder(blobs=True)
    got = [message for i in range(0, len(stream), 7) for message in
           decoder.feed(stream[i : i + 7])]
    assert got == [["a", 1], [BLOB, data], ["run", {}], [BLOB, b""]]
    assert decoder.pending == 0


@pytest.mark.parametrize("decoder", [
    FrameDecoder(bounded=True),
    FrameDecoder(bounded=True, blobs=True),
    FrameDecoder(),
], ids=["host", "host-asking-for-blobs", "default"])
def test_only_a_workers_decoder_takes_a_blob_frame(decoder: FrameDecoder) -> None:
    with pytest.raises(WorkerProtocolError, match="exceeds the frame cap"):
        decoder.feed(encode_blob(b"[\"call\",1,\"t\",{}]"))


def test_a_blob_is_capped_like_any_frame() -> None:
    header = ((1 << 31) | (MAX_FRAME + 1)).to_bytes(4, "big")
    with pytest.raises(WorkerProtocolError, match="exceeds the frame cap"):
        FrameDecoder(blobs=True).feed(header)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every frame the host writes to a worker, in order."""
    frames: list[bytes] = []
    send = pool_module._Worker.send

    async def spy(worker: Any, frame: bytes) -> None:
        frames.append(frame)
        await send(worker, frame)

    monkeypatch.setattr(pool_module._Worker, "send", spy)
    return frames


async def test_a_blob_serves_the_run_it_came_with_and_no_later_one(
        pool: WorkerPoolExecutor, sent: list[bytes]) -> None:
    # The host's cache says the first source compiles to ``40 + 2`` (its blob says so);
    # the second source was never compiled by the host, so it comes without a blob and
    # the worker compiles it: a worker that kept the first blob would answer 42 again.
    shipped = fresh("1 + 1")
    compile_module._remember(shipped, compile_script(fresh("40 + 2")))
    first = await pool.run(shipped, call_tool=no_tool)
    plain = fresh("2 + 3")
    second = await pool.run(plain, call_tool=no_tool)
    assert (first.value, second.value) == (42, 5)
    assert cached_script(plain) is None
    blobs = [frame for frame in sent if frame[0] & 0x80]
    assert len(blobs) == 1 and len(sent) == 2  # the blob and its run, in one write


async def test_a_worker_is_sent_a_scripts_code_once(
        pool: WorkerPoolExecutor, sent: list[bytes]) -> None:
    # The host compiled the source; the first run ships its code, the second and third
    # (same worker, same source) come without it and the worker runs what it adopted: the
    # host's code says ``40 + 2``, so a worker that compiled the source would answer 2.
    source = fresh("1 + 1")
    compile_module._remember(source, compile_script(fresh("40 + 2")))
    values = [(await pool.run(source, call_tool=no_tool)).value for _ in range(3)]
    assert values == [42, 42, 42]
    assert [bool(frame[0] & 0x80) for frame in sent] == [True, False, False]
