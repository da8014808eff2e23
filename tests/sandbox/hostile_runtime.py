"""A script runtime for a worker that attacks its host over the protocol.

Loaded by ``WorkerPoolExecutor(runtime="tests.sandbox.hostile_runtime:run")`` in
``test_host_robustness.py`` and ``benchmarks/host_stall.py``. The script source names
the misbehaviour, ``mode`` or ``mode:n``. Raw frames are written straight to the
worker's end of the pipe (the bound ``call`` is the worker's channel method), so the
host sees exactly what a worker whose sandbox was broken could send.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import struct
import threading
import time
from typing import TYPE_CHECKING, Any

from codemode.sandbox.executors.protocol import MAX_FRAME, encode_call
from codemode.sandbox.runtime.result import RunOutcome

if TYPE_CHECKING:
    from collections.abc import Collection

    from codemode.sandbox.executors.worker import ScriptCall
    from codemode.sandbox.limits import Limits


def _frame(body: str | bytes) -> bytes:
    data = body.encode() if isinstance(body, str) else body
    return struct.pack(">I", len(data)) + data


def _write(call: ScriptCall, data: bytes) -> None:
    """Write raw bytes on the worker's pipe to the host (blocking, like the channel)."""
    channel: Any = call.__self__  # type: ignore[attr-defined]
    channel._write(data)


def _wide(n: int) -> str:
    return "[" + "[]," * (n - 1) + "[]]"


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _stall(seconds: float) -> None:
    """Block the worker's script thread, event loop and all: it never yields again."""
    time.sleep(seconds)


def _run_id(call: ScriptCall) -> int:
    channel: Any = call.__self__  # type: ignore[attr-defined]
    return int(getattr(channel, "_run", 0) or 0)


async def run(
    source: str, *, call: ScriptCall, tool_paths: Collection[str], limits: Limits
) -> RunOutcome:
    """Misbehave as ``source`` asks."""
    mode, _, arg = source.partition(":")
    n = int(arg) if arg else 0
    if mode == "echo":
        return RunOutcome(value=await call("echo", '{"x": 1}'))
    if mode == "pid":
        return RunOutcome(value=os.getpid())
    if mode == "wide-args":  # a few MB that decode to millions of lists
        reply = await call("echo", '{"x":' + _wide(n) + "}")
        return RunOutcome(value=sorted(reply))
    if mode == "deep-args":
        reply = await call("echo", '{"x":' + _deep(n) + "}")
        return RunOutcome(value=sorted(reply))
    if mode in ("wide-args-raw", "deep-args-raw"):  # past the worker's own check of a call
        shape = _wide(n) if mode == "wide-args-raw" else _deep(n)
        _write(call, encode_call(1, "echo", '{"x":' + shape + "}"))
        await asyncio.sleep(3600)
    if mode == "wide-done":
        _write(call, _frame('["done",{"value":' + _wide(n) + "},null,false]"))
        await asyncio.sleep(3600)
    if mode == "deep-done":
        _write(call, _frame('["done",{"value":' + _deep(n) + "},null,false]"))
        await asyncio.sleep(3600)
    if mode == "big-result":  # the host's tool answers with a huge value
        reply = await call("big", f'{{"n": {n}}}')
        return RunOutcome(value=sorted(reply))
    if mode == "flood-calls":  # fresh call frames, never waiting for a reply
        base = _run_id(call) << 32
        next_id = base
        for _ in range(n or 10**4):
            frames = []
            for _ in range(1000):
                next_id += 1
                frames.append(_frame(f'["call",{next_id},"echo",{{}}]'))
            _write(call, b"".join(frames))
        await asyncio.sleep(3600)
    if mode == "flood-stale":  # call frames with ids that are not this run's
        batch = b"".join(_frame(f'["call",{i},"echo",{{}}]') for i in range(1, 1001))
        for _ in range(n or 10**4):
            _write(call, batch)
        await asyncio.sleep(3600)
    if mode == "flood-cancels":  # cancels of a call already answered, forever
        await call("echo", "{}")
        first = (_run_id(call) << 32) + 1
        batch = _frame(f'["cancel",{first}]') * 1000
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            _write(call, batch)
    if mode == "done-then-call":  # a call frame that arrives after the run's done
        def later() -> None:
            time.sleep(n / 1000 if n else 0.3)
            _write(call, _frame('["call",1,"echo",{"late":true}]'))

        threading.Thread(target=later, daemon=True).start()
        return RunOutcome(value="done")
    if mode == "double-done":  # a done of this run, then the worker's own
        _write(call, _frame(f'["done",{{"value":"first"}},null,false,{_run_id(call)}]'))
        return RunOutcome(value="second")
    if mode == "foreign-done":  # a done that names no run
        _write(call, _frame('["done",{"value":"forged"},null,false]'))
        await asyncio.sleep(3600)
    if mode == "junk":
        _write(call, _frame("not json"))
        await asyncio.sleep(3600)
    if mode == "sleep":  # an honest, slow script
        await asyncio.sleep(n / 1000)
        return RunOutcome(value="slept")
    if mode == "exit":
        os._exit(3)
    if mode == "huge-length":  # a header that claims 4 GiB, then nothing
        _write(call, b"\xff\xff\xff\xff")
        await asyncio.sleep(3600)
    if mode == "endless-frame":  # a header within the cap, then its body a byte at a time
        _write(call, struct.pack(">I", MAX_FRAME) + b'["done",{"value":"')
        while True:
            _write(call, b"x" * 64)
            _stall(0.001)
    if mode == "mute":  # closes both its pipes and lives on
        channel: Any = call.__self__  # type: ignore[attr-defined]
        os.close(channel._write_fd)
        os.close(channel._read_fd)
        _stall(3600)
    if mode == "deaf":  # ignores or blocks every signal it can, then sleeps
        libc = ctypes.CDLL(None)
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
            libc.signal(int(number), ctypes.c_void_p(1))  # SIG_IGN, from any thread
        signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        _stall(3600)
    return RunOutcome(value="unknown mode")
