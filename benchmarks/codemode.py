"""End-to-end cost of a nested call through ``run_code``, per executor.

Measured side by side in one run: N calls of a no-op tool made by a script
(through run_code → sandbox → pipeline) vs the same N calls made directly
with ``registry.execute``. Prints µs per call and the ratio.

    python benchmarks/codemode.py [N]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

# This file is named like the package it measures: keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402
from codemode.sandbox import Executor, InProcessExecutor, WorkerPoolExecutor  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["path"],
    "additionalProperties": False,
}


async def noop(args: Any, ctx: cm.ExecContext) -> str:
    return "ok"


def build() -> cm.ToolRegistry:
    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="noop", parameters=SCHEMA, execute=noop))
    return registry


async def direct(registry: cm.ToolRegistry, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        await registry.execute(
            cm.ToolCall(call_id=f"d{i}", name="noop", arguments={"path": "x", "limit": 5})
        )
    return (time.perf_counter() - start) / n


async def scripted(registry: cm.ToolRegistry, n: int, mode: cm.CodeMode) -> float:
    code = f"for i in range({n}):\n    await tools.noop(path='x', limit=5)\n"
    start = time.perf_counter()
    result = await registry.execute(
        cm.ToolCall(call_id="s", name="run_code", arguments={"code": code})
    )
    elapsed = time.perf_counter() - start
    assert not result.is_error, result.text
    return elapsed / n


async def measure(name: str, executor: Executor, n: int, rounds: int) -> None:
    registry = build()
    mode = cm.CodeMode(registry, executor=executor, limits=cm.Limits(calls=n + 1, timeout=120))
    registry.register(mode.as_tool())
    await scripted(registry, 10, mode)
    direct_us, script_us = [], []
    for _ in range(rounds):
        direct_us.append(await direct(registry, n) * 1e6)
        script_us.append(await scripted(registry, n, mode) * 1e6)
    d, s = statistics.median(direct_us), statistics.median(script_us)
    print(
        f"{name:<10} direct {d:8.1f} µs/call   via run_code {s:8.1f} µs/call   "
        f"ratio {s / d:5.1f}×   added {s - d:7.1f} µs/call"
    )


async def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print(f"nested no-op calls, {n} per round, median of 5 rounds")
    async with InProcessExecutor() as inprocess:
        await measure("inprocess", inprocess, n, 5)
    async with WorkerPoolExecutor() as pool:
        await measure("pool", pool, n, 5)


if __name__ == "__main__":
    anyio.run(main)
