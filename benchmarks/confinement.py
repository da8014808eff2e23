"""Kernel-layer benchmark: confined vs unconfined workers side by side, in one run.

    python benchmarks/confinement.py [--quick]

Rows (targets for confinement in brackets):
  spawn           start one worker until it announced itself, median ms    [≤ +50 ms]:
                  forked from the worker template (what a pool does once this process
                  has one) and booted from scratch (``spare=False``)
  cold run        the 15-line, 3-call script of ``sandbox.py``, median µs  [≤ +10 %]
  per call        a 10,000-call loop, µs per call (best of a few)           [≤ +10 %]
  compute         a 1e6-iteration loop, ratio to plain CPython ``exec``
  every_run cold  the cold run with ``recycle="every_run"`` (a fresh worker per run,
                  pool of 2, runs back to back: the replacement boots while the other
                  worker serves), median µs; and the same with a pause long enough for
                  the replacement to be ready (its best case)
Both pools run in the same process, interleaved, so load from other work hits both.
The spawn row also prints the worker's own cost of ``confine.apply`` (measured in a
fresh interpreter with the worker's imports). On a loaded machine wall times mostly
measure the scheduler, so CPU rows follow: the worker's on-CPU time (``schedstat``) to
boot, and worker plus host CPU per tool call.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sandbox import (  # noqa: E402  (the house benchmark's scripts and tools)
    CALL_LOOP,
    COLD_SCRIPT,
    COMPUTE,
    TOOL_PATHS,
    _plain_exec_seconds,
    call_tool,
)

from codemode.sandbox.executors.pool import WorkerPoolExecutor  # noqa: E402
from codemode.sandbox.limits import Limits  # noqa: E402

PLENTY = Limits(calls=20_000, operations=10**9, timeout=300)
MODES = ("off", "auto")

_APPLY_PROBE = """\
import sys, time, types, json
root = sys.argv[1]
sys.path.insert(0, root)
for name in ("codemode", "codemode.sandbox"):
    package = types.ModuleType(name)
    package.__path__ = [root + "/" + name.replace(".", "/")]
    sys.modules[name] = package
import codemode.sandbox.runtime.runner as runner
runner.warm_up()
start = time.perf_counter()
from codemode.sandbox.executors import confine
imported = time.perf_counter()
report = confine.apply({"mode": "auto", "uid": confine.UID_BASE + 999_999})
done = time.perf_counter()
print(json.dumps([imported - start, done - imported, all(v[0] for v in report.values())]))
"""


async def _run(pool: WorkerPoolExecutor, source: str) -> float:
    start = time.perf_counter()
    result = await pool.run(source, call_tool=call_tool, tool_paths=TOOL_PATHS, limits=PLENTY)
    elapsed = time.perf_counter() - start
    assert result.error is None, result.error
    return elapsed


def _on_cpu(pid: int) -> float:
    """Seconds process ``pid`` spent on a CPU (all its threads; ``/proc/<pid>/schedstat``)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as handle:
            total += int(handle.read().split()[0])
    return total / 1e9


def _worker_pid(pool: WorkerPoolExecutor) -> int:
    return pool._idle[0].process.pid  # a benchmark may look inside


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _spawn(mode: Any, spare: bool = True) -> tuple[float, float]:
    async with WorkerPoolExecutor(size=1, confinement=mode, spare=spare) as pool:
        start = time.perf_counter()
        await pool.start()
        return time.perf_counter() - start, _on_cpu(_worker_pid(pool))


async def _call_cpu(mode: Any, repeats: int) -> float:
    """Worker plus host CPU per call of the 10k-call loop (best of ``repeats``)."""
    best = float("inf")
    async with WorkerPoolExecutor(size=1, confinement=mode) as pool:
        await pool.start()
        pid = _worker_pid(pool)
        await _run(pool, CALL_LOOP)
        for _ in range(repeats):
            worker, host = _on_cpu(pid), _cpu()
            await _run(pool, CALL_LOOP)
            best = min(best, (_on_cpu(pid) - worker + _cpu() - host) / 10_000)
    return best


def _apply_cost() -> tuple[float, float]:
    """(import confine, apply) in ms, medians over a few fresh interpreters."""
    imports, applies = [], []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-I", "-B", "-c", _APPLY_PROBE, str(ROOT)],
                             capture_output=True, text=True, check=True, env={}).stdout
        imported, applied, complete = json.loads(out)
        assert complete, out
        imports.append(imported * 1e3)
        applies.append(applied * 1e3)
    return statistics.median(imports), statistics.median(applies)


async def main() -> None:
    repeats = 2 if "--quick" in sys.argv else 5
    rows: dict[str, dict[str, float]] = {mode: {} for mode in MODES}
    spawns: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    boots: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    for _ in range(repeats * 2):
        for mode in MODES:
            spawns[mode].append(await _spawn(mode))
            boots[mode].append(await _spawn(mode, spare=False))
    for mode in MODES:
        rows[mode]["spawn"] = statistics.median(wall for wall, _ in spawns[mode]) * 1e3
        rows[mode]["spawn_cpu"] = statistics.median(cpu for _, cpu in spawns[mode]) * 1e3
        rows[mode]["boot"] = statistics.median(wall for wall, _ in boots[mode]) * 1e3
        rows[mode]["boot_cpu"] = statistics.median(cpu for _, cpu in boots[mode]) * 1e3
        rows[mode]["call_cpu"] = await _call_cpu(mode, repeats) * 1e6

    async with WorkerPoolExecutor(confinement="off") as off, \
            WorkerPoolExecutor(confinement="auto") as auto:
        pools = {"off": off, "auto": auto}
        for pool in pools.values():
            await pool.start()
            for _ in range(20):
                await _run(pool, COLD_SCRIPT)
        colds: dict[str, list[float]] = {mode: [] for mode in MODES}
        for i in range(repeats * 40):
            for mode, pool in pools.items():
                colds[mode].append(await _run(pool, f"{COLD_SCRIPT}# run {i} {mode}\n"))
        calls: dict[str, list[float]] = {mode: [] for mode in MODES}
        for _ in range(repeats):
            for mode, pool in pools.items():
                calls[mode].append(await _run(pool, CALL_LOOP) / 10_000)
        plains: list[float] = []
        computes: dict[str, list[float]] = {mode: [] for mode in MODES}
        for i in range(repeats * 2):
            plains.append(_plain_exec_seconds())
            for mode, pool in pools.items():
                computes[mode].append(await _run(pool, f"{COMPUTE}# run {i}\n"))
        for mode in MODES:
            rows[mode]["cold"] = statistics.median(colds[mode]) * 1e6
            rows[mode]["per_call"] = min(calls[mode]) * 1e6
            rows[mode]["compute"] = min(computes[mode]) / min(plains)

    for mode in MODES:
        async with WorkerPoolExecutor(confinement=mode, recycle="every_run") as pool:
            await pool.start()
            back_to_back = [await _run(pool, f"{COLD_SCRIPT}# every {i}\n")
                            for i in range(repeats * 4)]
            paused = []
            for i in range(repeats * 4):
                await pool.start()  # wait until the replacement is up (not timed)
                paused.append(await _run(pool, f"{COLD_SCRIPT}# paused {i}\n"))
        rows[mode]["every_run"] = statistics.median(back_to_back) * 1e6
        rows[mode]["every_run_ready"] = statistics.median(paused) * 1e6

    imported, applied = _apply_cost()
    load = os.getloadavg()[0]
    print(f"confinement benchmark (python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
          f"load {load:.2f})")
    print(f"{'':30}{'off':>12}{'auto (all)':>12}{'change':>10}{'target':>12}")
    lines = [
        ("worker spawn (from template)", "spawn", "{:.1f} ms", "≤ +50 ms"),
        ("worker spawn (booted)", "boot", "{:.1f} ms", "≤ +50 ms"),
        ("cold 15-line, 3 calls", "cold", "{:.0f} µs", "≤ +10 %"),
        ("per call (10k loop)", "per_call", "{:.1f} µs", "≤ +10 %"),
        ("compute 1e6 vs exec", "compute", "{:.2f}×", ""),
        ("every_run cold, back to back", "every_run", "{:.0f} µs", ""),
        ("every_run cold, worker ready", "every_run_ready", "{:.0f} µs", ""),
        ("worker CPU to start (template)", "spawn_cpu", "{:.1f} ms", ""),
        ("worker CPU to boot", "boot_cpu", "{:.1f} ms", ""),
        ("CPU per call (worker + host)", "call_cpu", "{:.1f} µs", ""),
    ]
    for label, key, fmt, target in lines:
        off_value, on_value = rows["off"][key], rows["auto"][key]
        absolute = key in ("spawn", "spawn_cpu", "boot", "boot_cpu")
        change = (f"{on_value - off_value:+.1f} ms" if absolute
                  else f"{(on_value / off_value - 1) * 100:+.1f} %")
        print(f"{label:30}{fmt.format(off_value):>12}{fmt.format(on_value):>12}"
              f"{change:>10}{target:>12}")
    print(f"inside a worker: import confine {imported:.1f} ms, confine.apply {applied:.1f} ms")


if __name__ == "__main__":
    anyio.run(main)
