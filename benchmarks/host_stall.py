"""Host stall benchmark: how long a hostile worker can freeze the host's event loop.

    python benchmarks/host_stall.py [--quick] [word ...]   (only cases whose label has a word)

Each case runs one misbehaving worker (``tests/sandbox/hostile_runtime.py``) while a
heartbeat task on the host loop ticks every 10 ms; a row prints the largest gap between
two ticks (target: no gap past 50 ms beyond the 10 ms tick), how long the run took, how
it ended, and for the flood cases how long a sibling run on another worker waited.
The baseline row (an honest run that sleeps) shows what the machine itself adds: on a
loaded shared machine the OS alone deschedules the host for tens of milliseconds.
``--debug`` logs every loop callback that ran over 20 ms (asyncio debug mode), which
tells the host's own stalls from the machine's.
The queue case runs 50 one-second scripts on a pool of 2 with ``timeout=5`` and prints
when the last one returned and how long it had queued. The script cases time a CodeMode
preparing a new 10 kB and 95 kB script (the host's own parse, preflight and compile).
No asserts: numbers only.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codemode.sandbox.executors.pool import WorkerPoolExecutor
from codemode.sandbox.limits import Limits

HOSTILE = "tests.sandbox.hostile_runtime:run"
TICK = 0.01
TOOLS = ("echo", "big")


class Heartbeat:
    """Ticks every 10 ms on the host loop and keeps the largest gap between ticks."""

    def __init__(self) -> None:
        self.worst = 0.0

    async def run(self) -> None:
        last = time.perf_counter()
        while True:
            await anyio.sleep(TICK)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last)
            last = now


_BIG: dict[int, Any] = {}
"""Results of the ``big`` tool, built before the case runs (building them is not ours)."""


async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    if name == "big":
        return _BIG[int(arguments.get("n", 0))]
    return {"ok": True}


def _ended(result: Any) -> str:
    if result is None:
        return "no result (benchmark gave up after 60 s)"
    if result.error is None:
        return "ok"
    return f"{result.error.type}({result.error.limit or ''}): {result.error.message[:60]}"


async def case(label: str, source: str, *, seconds: float = 5.0, sibling: bool = False) -> None:
    heart = Heartbeat()
    sibling_wait: list[float] = []
    sibling_done = anyio.Event()
    result: Any = None
    async with WorkerPoolExecutor(size=2, runtime=HOSTILE) as pool:
        await pool.start()

        async def sibling_runs() -> None:
            await anyio.sleep(0.3)
            t0 = time.perf_counter()
            await pool.run("echo", call_tool=call_tool, tool_paths=TOOLS,
                           limits=Limits(timeout=30))
            sibling_wait.append(time.perf_counter() - t0)
            sibling_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(heart.run)
            if sibling:
                tg.start_soon(sibling_runs)
            t0 = time.perf_counter()
            with anyio.move_on_after(60):
                result = await pool.run(source, call_tool=call_tool, tool_paths=TOOLS,
                                        limits=Limits(timeout=seconds))
            elapsed = time.perf_counter() - t0
            if sibling:
                with anyio.move_on_after(90):
                    await sibling_done.wait()
            tg.cancel_scope.cancel()
    extra = f"  sibling run {sibling_wait[0]:6.2f} s" if sibling_wait else ""
    print(f"{label:34s} worst gap {heart.worst * 1000:8.1f} ms  run {elapsed:6.2f} s  "
          f"{_ended(result)}{extra}", flush=True)


async def queue_case(count: int) -> None:
    heart = Heartbeat()
    results: list[Any] = []
    async with WorkerPoolExecutor(size=2, runtime=HOSTILE) as pool:
        await pool.start()
        t0 = time.perf_counter()
        finished: list[float] = []

        async def one() -> None:
            results.append(await pool.run("sleep:1000", call_tool=call_tool,
                                          limits=Limits(timeout=5)))
            finished.append(time.perf_counter() - t0)

        async with anyio.create_task_group() as tg:
            tg.start_soon(heart.run)
            async with anyio.create_task_group() as runs:
                for _ in range(count):
                    runs.start_soon(one)
            tg.cancel_scope.cancel()
    failed = sum(r.error is not None for r in results)
    queued = max((getattr(r.usage, "queued", 0.0) for r in results), default=0.0)
    print(f"{f'{count} queued, pool of 2, timeout=5':34s} worst gap {heart.worst * 1000:8.1f} ms  "
          f"last returned after {max(finished):6.2f} s  {failed} timed out  "
          f"longest usage.queued {queued:.2f} s", flush=True)


def long_script(size: int) -> str:
    """A new script of about ``size`` characters: a comprehension per line."""
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < size:
        i = len(lines)
        lines.append(f"x{i} = [j * {i % 7 + 1} for j in range({i % 5 + 3})] + [{i}, 'abc']")
    return "\n".join(lines) + "\nx0\n"


async def prepare_case(size: int) -> None:
    """A CodeMode preparing (parsing, checking, compiling) a long new script: the host
    does that work itself, on a worker thread past ``OFF_LOOP_SOURCE`` characters."""
    from codemode import CodeMode, ToolRegistry
    from codemode.sandbox.executors.inprocess import InProcessExecutor

    heart = Heartbeat()
    async with CodeMode(ToolRegistry(), executor=InProcessExecutor()) as mode, \
            anyio.create_task_group() as tg:
        tg.start_soon(heart.run)
        await anyio.sleep(0.05)
        started = time.perf_counter()
        result = await mode.run(long_script(size))
        elapsed = time.perf_counter() - started
        tg.cancel_scope.cancel()
    print(f"{f'new {size // 1000} kB script (preflight)':34s} worst gap "
          f"{heart.worst * 1000:8.1f} ms  run {elapsed:6.2f} s  {_ended(result)}", flush=True)


async def main(quick: bool, words: list[str]) -> None:
    if "--debug" in sys.argv:  # name every loop callback that ran over 20 ms
        import asyncio
        import logging

        logging.basicConfig(level=logging.WARNING)
        loop = asyncio.get_running_loop()
        loop.set_debug(True)
        loop.slow_callback_duration = 0.02
    n = 1_000_000 if quick else 5_000_000
    cases: list[tuple[str, str, bool]] = [
        ("baseline: an honest 2 s run", "sleep:2000", False),
        (f"wide arguments ([[]] * {n:,})", f"wide-args:{n}", False),
        ("deep arguments (100k deep)", "deep-args:100000", False),
        (f"wide done ([[]] * {n:,})", f"wide-done:{n}", False),
        ("deep done (100k deep)", "deep-done:100000", False),
        ("result of 100 MB (a string)", "big-result:100000000", False),
        (f"result of [[]] * {n:,}", f"big-result:{-n}", False),
        ("call flood (timeout=5)", "flood-calls", True),
        ("stale-id call flood (timeout=5)", "flood-stale", True),
        ("cancel flood (timeout=5)", "flood-cancels", True),
    ]
    for label, source, sibling in cases:
        if not words or any(word in label for word in words):
            if source.startswith("big-result:"):
                size = int(source.split(":")[1])
                _BIG[size] = "x" * size if size > 0 else [[]] * -size
            await case(label, source, sibling=sibling)
            _BIG.clear()
    if not words or "queued" in words:
        await queue_case(20 if quick else 50)
    for size in (10_000, 95_000):
        if not words or "script" in words:
            await prepare_case(size)


if __name__ == "__main__":
    argv = sys.argv[1:]
    anyio.run(main, "--quick" in argv, [a for a in argv if not a.startswith("--")])
