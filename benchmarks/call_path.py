"""The per-call path and the per-run host overhead (issue #18), wall and host CPU.

    python benchmarks/call_path.py [--calls N] [--reps R]

Levels, each on both executors where it applies:

- ``dispatch``: ``registry.execute`` alone (the pipeline, no sandbox);
- ``executor``: ``executor.run`` of a loop of ``await tools.echo(i=i)`` with a bare
  ``call_tool`` callback (the hop between script and host, the broker);
- ``mode``: the same loop through ``CodeMode.run`` (bridge, ledger, pipeline too);
- ``run``: a cache-hit ``CodeMode.run`` of the 3-call script of ``vs_monty.py``;
- ``trivial``: ``x = 1`` through ``executor.run`` and through ``CodeMode.run`` (the
  per-run overhead with no call);
- ``1 call, N tools``: a 1-call ``CodeMode.run`` with 10 and with 1,000 tools registered
  (the per-run cost should not grow with the registry).

Per call (or per run): the best of ``--reps`` wall times, and the host's CPU over
the same stretch: ``thread_time`` of the host thread (in-process, the script thread is
another thread of this process) and ``process_time`` of this process (pool: the
workers are other processes, so this is the host alone). With pydantic-monty
installed (the ``bench`` extra), its per-call and reused-session rows are printed
beside, with codemode/Monty ratios. The load average is printed: these numbers are
worth what the machine was doing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor  # noqa: E402

sys.path.insert(0, str(_HERE))  # codemode is imported: benchmarks/codemode.py cannot shadow it
import vs_monty  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

SCRIPT = """\
import json
user = await tools.get_user(id=7)
repos = await tools.list_repos(owner=user['name'])
names = sorted(r['name'] for r in repos if r['stars'] > 10)
note = await tools.add_note(text='found ' + str(len(names)))
{'names': names, 'note': note, 'x': json.dumps({'n': len(names)})}
"""
ANSWERS = vs_monty.ANSWERS


def loop_script(n: int) -> str:
    return f"for i in range({n}):\n    await tools.echo(i=i)\n"


async def measure(work: Callable[[], Awaitable[Any]], per: int, reps: int) -> tuple[float, ...]:
    """Best wall, host-thread CPU and process CPU of ``reps`` runs, in µs per ``per``."""
    best = (float("inf"),) * 3
    for _ in range(reps):
        w, t, p = time.perf_counter(), time.thread_time(), time.process_time()
        await work()
        sample = (time.perf_counter() - w, time.thread_time() - t, time.process_time() - p)
        if sample[0] < best[0]:
            best = sample
    return tuple(x / per * 1e6 for x in best)


async def direct_echo(path: str, args: dict[str, Any]) -> Any:
    return ANSWERS[path](**args)


async def rows(executor: cm.Executor, label: str, calls: int, reps: int) -> list[tuple[Any, ...]]:
    limits = cm.Limits(calls=calls + 10, operations=10**9, timeout=900)
    loop = loop_script(calls)
    out: list[tuple[Any, ...]] = []

    async def bare() -> None:
        result = await executor.run(loop, call_tool=direct_echo, tool_paths=("echo",),
                                    limits=limits)
        assert result.error is None, result.error

    await bare()
    out.append((f"executor {label}", "call", *await measure(bare, calls, reps)))
    mode = cm.CodeMode(registry(), executor=executor, limits=limits)

    async def through_mode() -> None:
        result = await mode.run(loop)
        assert result.error is None, result.error

    async def hit() -> None:
        result = await mode.run(SCRIPT)
        assert result.error is None, result.error

    await through_mode()
    out.append((f"mode {label}", "call", *await measure(through_mode, calls, reps)))
    for _ in range(20):
        await hit()

    async def hits() -> None:
        for _ in range(50):
            await hit()

    out.append((f"run (3 calls, hit) {label}", "run", *await measure(hits, 50, reps)))

    async def trivial_executor() -> None:
        for _ in range(50):
            result = await executor.run("x = 1", call_tool=direct_echo, tool_paths=("echo",),
                                        limits=limits)
            assert result.error is None, result.error

    async def trivial_mode() -> None:
        for _ in range(50):
            result = await mode.run("x = 1")
            assert result.error is None, result.error

    for name, work in (("executor", trivial_executor), ("mode", trivial_mode)):
        await work()
        out.append((f"trivial {name} {label}", "run", *await measure(work, 50, reps)))
    for size in (10, 1000):
        wide = cm.CodeMode(registry(size - 4), executor=executor, limits=limits)

        async def one_call(wide: cm.CodeMode = wide) -> None:
            for _ in range(50):
                result = await wide.run("await tools.echo(i=1)")
                assert result.error is None, result.error

        await one_call()
        out.append((f"1 call, {size} tools {label}", "run", *await measure(one_call, 50, reps)))
    await mode.aclose()
    return out


def registry(extra: int = 0) -> cm.ToolRegistry:
    """vs_monty's four tools, plus ``extra`` more that no script calls."""
    reg = vs_monty.registry()
    for i in range(extra):
        reg.register(cm.define_tool(name=f"extra_{i}", execute=lambda args: None, parameters={
            "type": "object", "properties": {"a": {"type": "integer"}}}))
    return reg


async def dispatch_row(calls: int, reps: int) -> tuple[Any, ...]:
    reg = registry()
    call = cm.ToolCall(call_id="c", name="echo", arguments={"i": 1})

    async def many() -> None:
        for _ in range(calls):
            await reg.execute(call)

    await many()
    return ("dispatch (registry.execute)", "call", *await measure(many, calls, reps))


def monty_rows(calls: int, reps: int) -> list[tuple[Any, ...]] | str:
    try:
        import pydantic_monty
    except ImportError:
        return "pydantic-monty is not installed (pip install -e .[bench]): Monty skipped"
    bare = SCRIPT.replace("await tools.", "")
    loop = loop_script(calls).replace("await tools.", "")
    out: list[tuple[Any, ...]] = []
    with pydantic_monty.Monty() as pool, \
            pool.checkout(limits={"max_suspensions": 10 * calls}) as session:
        for name, source, per in (("call", loop, calls), ("run", bare, 1)):
            best = (float("inf"),) * 3
            for _ in range(reps):
                w, t, p = time.perf_counter(), time.thread_time(), time.process_time()
                session.feed_run(source, external_lookup=ANSWERS,
                                 print_callback=lambda *a: None)
                sample = (time.perf_counter() - w, time.thread_time() - t,
                          time.process_time() - p)
                best = min(best, sample)
            out.append((f"monty {name}", name, *(x / per * 1e6 for x in best)))
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--reps", type=int, default=3)
    opts = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}, {opts.calls} calls per loop, best of {opts.reps}")
    table = [await dispatch_row(opts.calls, opts.reps)]
    async with InProcessExecutor() as inproc:
        table += await rows(inproc, "in-process", opts.calls, opts.reps)
    async with WorkerPoolExecutor(size=1) as pool:
        await pool.start()
        table += await rows(pool, "pool", opts.calls, opts.reps)
    monty = monty_rows(opts.calls, opts.reps)
    reference = {} if isinstance(monty, str) else {row[1]: row[2] for row in monty}
    print(f"{'':32} {'wall µs':>10} {'host thread':>12} {'process':>10} {'/ Monty':>8}")
    for name, unit, wall, thread, proc in table + ([] if isinstance(monty, str) else monty):
        ratio = f"{wall / reference[unit]:.2f}x" if unit in reference else ""
        print(f"{name + ' per ' + unit:32} {wall:10.1f} {thread:12.1f} {proc:10.1f} {ratio:>8}")
    if isinstance(monty, str):
        print(monty)


if __name__ == "__main__":
    anyio.run(main)
