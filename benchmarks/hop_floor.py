"""The floors under codemode's per-call and per-run costs on this machine (issue #18).

    python benchmarks/hop_floor.py [--n N]

A tool call crosses from the script to the host and back. In-process the script runs on a
thread of its own (the host's loop must never run script code), so a call costs at least
one wake-up of the host's asyncio loop from another thread and one wake-up of the script
thread; in the pool it costs a pipe write each way between processes. This prints those
bare hand-overs, measured with nothing of codemode in them, beside codemode's own per-call
numbers from the same run, so each codemode row reads as "floor + codemode's share":

- ``thread hop``: a thread hands the host's loop a callback (``call_soon_threadsafe``) and
  blocks on a lock the callback releases: the in-process call's floor;
- ``thread hop, host polls``: the same, but the host polls a queue from its loop
  (``call_soon``) instead of being woken; the two threads then fight for the GIL (why
  the in-process executor does not poll, while the pool's host does);
- ``pipe hop``: a process writes a byte to a blocked child and reads its one-byte answer:
  the pool call's floor;
- ``codemode in-process`` / ``pool``: ``executor.run`` of a loop of calls to a tool
  that answers at once (the broker and JSON crossing included, no ``CodeMode``).

Wall µs per hop and the host thread's CPU µs per hop (``thread_time``), medians of
``--reps`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable


async def _hops(n: int, send: Callable[[threading.Lock], None]) -> tuple[float, float]:
    """``n`` hand-overs from a thread: each ``send``s a held lock the host releases."""
    loop = asyncio.get_running_loop()
    done = anyio.Event()

    def script() -> None:
        for _ in range(n):
            reply = threading.Lock()
            reply.acquire()
            send(reply)
            reply.acquire()
        loop.call_soon_threadsafe(done.set)

    wall, cpu = time.perf_counter(), time.thread_time()
    threading.Thread(target=script).start()
    await done.wait()
    return (time.perf_counter() - wall) / n, (time.thread_time() - cpu) / n


async def thread_hop(n: int) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    return await _hops(n, lambda reply: loop.call_soon_threadsafe(reply.release))


async def polled_thread_hop(n: int, window: float = 200e-6) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    queue: collections.deque[threading.Lock] = collections.deque()
    guard = threading.Lock()
    state = {"polling": False, "until": 0.0}

    def answer(reply: threading.Lock) -> None:
        reply.release()
        with guard:
            if not state["polling"]:
                state["polling"] = True
                loop.call_soon(poll)
        state["until"] = time.perf_counter() + window

    def poll() -> None:
        with guard:
            items = list(queue)
            queue.clear()
            if not items and time.perf_counter() > state["until"]:
                state["polling"] = False
                return
        for item in items:
            answer(item)
        loop.call_soon(poll)

    def send(reply: threading.Lock) -> None:
        with guard:
            if state["polling"]:
                queue.append(reply)
                return
        loop.call_soon_threadsafe(answer, reply)

    return await _hops(n, send)


def pipe_hop(n: int) -> tuple[float, float]:
    to_child, from_parent = os.pipe()
    from_child, to_parent = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child answers each byte until it reads q
        while os.read(to_child, 1) != b"q":
            os.write(to_parent, b"k")
        os._exit(0)
    wall, cpu = time.perf_counter(), time.thread_time()
    for _ in range(n):
        os.write(from_parent, b"x")
        os.read(from_child, 1)
    took = (time.perf_counter() - wall) / n, (time.thread_time() - cpu) / n
    os.write(from_parent, b"q")
    os.waitpid(pid, 0)
    for fd in (to_child, from_parent, from_child, to_parent):
        os.close(fd)
    return took


async def answer(path: str, args: dict[str, Any]) -> Any:
    return args["i"]


async def codemode_hop(executor: cm.Executor, n: int) -> tuple[float, float]:
    script = f"for i in range({n}):\n    await tools.echo(i=i)\n"
    limits = cm.Limits(calls=n + 10, operations=10**9, timeout=900)
    wall, cpu = time.perf_counter(), time.thread_time()
    result = await executor.run(script, call_tool=answer, tool_paths=("echo",), limits=limits)
    took = (time.perf_counter() - wall) / n, (time.thread_time() - cpu) / n
    assert result.error is None, result.error
    return took


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--reps", type=int, default=5)
    options = parser.parse_args()
    n, reps = options.n, options.reps
    samples: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for _ in range(reps):  # first: a fork while this process has one thread
        samples["pipe hop"].append(pipe_hop(n))
    async with cm.InProcessExecutor() as inprocess, cm.WorkerPoolExecutor(size=1) as pool:
        await codemode_hop(inprocess, 100)
        await codemode_hop(pool, 100)
        for _ in range(reps):
            samples["thread hop"].append(await thread_hop(n))
            samples["thread hop, host polls"].append(await polled_thread_hop(n))
            samples["codemode in-process"].append(await codemode_hop(inprocess, n))
            samples["codemode pool"].append(await codemode_hop(pool, n))
    print(f"hop floors (python {sys.version.split()[0]}, {os.cpu_count()} cpus, load "
          f"{os.getloadavg()[0]:.2f}, {n} hops, median of {reps})")
    print(f"  {'':<26}{'wall µs':>10}{'host CPU µs':>13}{'/ floor':>9}")
    floors = {"codemode in-process": "thread hop", "codemode pool": "pipe hop"}
    medians = {name: (statistics.median(w for w, _ in rows) * 1e6,
                      statistics.median(c for _, c in rows) * 1e6)
               for name, rows in samples.items()}
    for name, (wall, cpu) in medians.items():
        floor = floors.get(name)
        ratio = f"{wall / medians[floor][0]:8.2f}×" if floor else ""
        print(f"  {name:<26}{wall:10.1f}{cpu:13.1f} {ratio}")


if __name__ == "__main__":
    anyio.run(main)
