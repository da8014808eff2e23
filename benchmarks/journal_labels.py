"""Per-call cost of journals and labels through ``CodeMode.run`` (issue #16), side by side.

One script makes N calls of a no-op tool (``await tools.echo(i=i)`` in a loop) on the
in-process executor and on the worker pool. Rows, each the median of several runs,
reported per call:

- ``plain``: no journal, no labels (the baseline);
- ``journal, recording``: a fresh in-memory journal each run (every call recorded);
- ``journal, file``: the same, written to a JSONL file;
- ``journal, replaying``: the journal of a failed run of the same script, so every call
  is answered from it (no handler, no pipeline);
- ``labels``: the tool returns a label and refuses another one, so every call is stamped
  with the run's labels and checked at the pipeline.

A first table isolates the host side of one call (no sandbox, no executor): the run's
ledger around ``registry.execute``, with the same rows; it is far less noisy than the
end-to-end table on a loaded machine.

    python benchmarks/journal_labels.py [N]
    python benchmarks/journal_labels.py preflight     # the last table only

Measured 2026-12-01 on a 2-core machine shared by 7 agents (load average 10-12: absolute
numbers are inflated several times; compare within a column), ``N=300``:

    host side, 900 calls, µs per call       through CodeMode.run, µs per call
      registry.execute     211                                 in-process    pool
      plain (ledger)       227              plain                    3235    8129
      journal, recording   499              journal, recording       4488    8436
      journal, replaying   224              journal, file            3312    9146
      labels               376              journal, replaying       2710    7754
                                            labels                   3596    8472

Host side, a run's ledger costs ~7% over ``registry.execute``; recording a call in a
journal about 1.3x a dispatch more (canonical JSON, one encoded line); a replayed call
costs about what a live no-op call does; labels (stamping and the refusal check) ~0.7x a
dispatch more. Through ``CodeMode.run`` these are inside the noise of the run itself.

A last table is approve before run (the policy preflight, on by default when the registry
has policy): per run, scripts of 3 and 30 top-level calls the preflight resolves, with no
hooks (no dry pass), a no-op ``pre_execute`` hook with the preflight off, and on. Same
machine, same load, µs per run:

                              ledger only      CodeMode.run, in-process      pool
    row                    3 calls  30 calls      3 calls   30 calls   3 calls 30 calls
    no hooks (no dry pass)     4.1       4.4         9925      34085     15780    78943
    hook, preflight off        4.7       5.5        11581      34334     14067    87665
    hook, preflight on       615.7    4069.2        14857      42690     17756    71648

The dry pass costs ~0.13 ms per statically known call here (a dispatch costs ~0.2 ms):
about half is finding the static calls (two walks of the tree), half the hooks' dry pass.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402
from codemode.dispatch.context import Token  # noqa: E402
from codemode.mode.ledger import RunLedger, open_ledger  # noqa: E402
from codemode.sandbox import Executor, InProcessExecutor, WorkerPoolExecutor  # noqa: E402

REPEATS = 5


def registry(*, labels: bool) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def echo(args: Any) -> int:
        return int(args["i"])

    reg.register(cm.define_tool(
        name="echo", execute=echo, output_schema={"type": "integer"},
        parameters={"i": {"type": "integer", "required": True}},
        labels={"untrusted"} if labels else (), refuses={"secret"} if labels else ()))
    return reg


async def once(executor: Executor, n: int, row: str, path: Path) -> float:
    """Seconds per call of one run of the loop script, as ``row`` configures it."""
    script = f"for i in range({n}):\n    await tools.echo(i=i)\n"
    mode = cm.CodeMode(registry(labels=row == "labels"), executor=executor,
                       limits=cm.Limits(timeout=120, calls=n + 10))
    journal: cm.Journal | None = None
    if row.startswith("journal"):
        journal = cm.Journal(path if row == "journal, file" else None,
                             max_entries=n + 10, max_bytes=10**9)
    if row == "journal, replaying":
        await mode.run(script + "1 / 0", journal=journal)
    start = time.perf_counter()
    result = await mode.run(script, journal=journal)
    elapsed = time.perf_counter() - start
    assert result.error is None, result.error
    if row == "journal, replaying":
        assert isinstance(result, cm.RunResult) and len(result.replayed) == n
    return elapsed / n


async def host_side(row: str, n: int) -> float:
    """Seconds per call of ``n`` direct calls through a run's ledger, as ``row`` says."""
    reg = registry(labels=row == "labels")
    calls = [cm.ToolCall(call_id=f"c{i}", name="echo", arguments={"i": i}) for i in range(n)]
    resume = None
    if row.startswith("journal"):
        journal = cm.Journal(max_entries=n + 1, max_bytes=10**9)
        if row == "journal, replaying":
            recorder = RunLedger(reg, resume=journal.begin("bench"))
            for call in calls:
                await recorder.execute(call)
            recorder.finish(None)
        resume = journal.begin("bench")
    go = reg.execute if row == "registry.execute" else RunLedger(reg, resume=resume).execute
    start = time.perf_counter()
    for call in calls:
        await go(call)
    return (time.perf_counter() - start) / n


PREFLIGHT_ROWS = ("no hooks (no dry pass)", "hook, preflight off", "hook, preflight on")


def policed(row: str, executor: Executor | None = None) -> cm.CodeMode:
    """A CodeMode over ``echo`` for a preflight row (a no-op hook unless "no hooks")."""
    reg = registry(labels=False)
    if row != PREFLIGHT_ROWS[0]:
        reg.pre_execute(lambda ctx: None)
    return cm.CodeMode(reg, policy_preflight=False if row == PREFLIGHT_ROWS[1] else None,
                       limits=cm.Limits(timeout=120), executor=executor)


def straight(calls: int) -> str:
    """``calls`` top-level statements, each a call the preflight resolves."""
    return "".join(f"await tools.echo(i={i})\n" for i in range(calls))


async def preflight_alone(row: str, calls: int, runs: int) -> float:
    """Seconds per run of opening a run's ledger (where the dry pass happens)."""
    mode = policed(row)
    sdk = mode.sdk()
    script = straight(calls)
    start = time.perf_counter()
    for n in range(runs):
        ledger = await open_ledger(
            mode.registry, script, tools=sdk.names.tools, arguments=sdk.names.arguments,
            token=Token(), agent=None, call_id=f"r{n}", journal=None, resume=None,
            policy=mode.policy_preflight, approve=None)
        assert isinstance(ledger, RunLedger)
    return (time.perf_counter() - start) / runs


async def preflight_run(executor: Executor, row: str, calls: int) -> float:
    """Seconds of one ``CodeMode.run`` of the straight script."""
    mode = policed(row, executor)
    start = time.perf_counter()
    result = await mode.run(straight(calls))
    elapsed = time.perf_counter() - start
    assert result.error is None, result.error
    return elapsed


async def preflight_tables() -> None:
    print("approve before run: the dry pass, per run (µs), median of 7 (rows interleaved)")
    print(f"{'':24} {'ledger only':>23} {'CodeMode.run, in-process':>26} {'pool':>17}")
    print(f"{'row':24} {'3 calls':>11} {'30 calls':>11} {'3 calls':>13} {'30 calls':>12}"
          f" {'3 calls':>8} {'30 calls':>8}")
    alone: dict[tuple[str, int], list[float]] = {}
    runs: dict[tuple[str, int, str], list[float]] = {}
    async with InProcessExecutor() as inproc, WorkerPoolExecutor(size=1) as pool:
        for _ in range(7):
            for row in PREFLIGHT_ROWS:
                for calls in (3, 30):
                    alone.setdefault((row, calls), []).append(
                        await preflight_alone(row, calls, 200))
                    for kind, executor in (("in-process", inproc), ("pool", pool)):
                        runs.setdefault((row, calls, kind), []).append(
                            await preflight_run(executor, row, calls))
    for row in PREFLIGHT_ROWS:
        cells = [statistics.median(alone[(row, c)]) * 1e6 for c in (3, 30)]
        cells += [statistics.median(runs[(row, c, k)]) * 1e6
                  for k in ("in-process", "pool") for c in (3, 30)]
        print(f"{row:24} {cells[0]:11.1f} {cells[1]:11.1f} {cells[2]:13.0f} {cells[3]:12.0f}"
              f" {cells[4]:8.0f} {cells[5]:8.0f}")


async def main() -> None:
    if sys.argv[1:] == ["preflight"]:
        await preflight_tables()
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    direct = ["registry.execute", "plain", "journal, recording", "journal, replaying", "labels"]
    samples: dict[str, list[float]] = {row: [] for row in direct}
    for _ in range(7):
        for row in direct:
            samples[row].append(await host_side(row, 3 * n))
    print(f"host side: {3 * n} calls, median of 7 (rows interleaved), µs per call")
    for row in direct:
        print(f"  {row:22} {statistics.median(samples[row]) * 1e6:7.1f}")
    rows = ["plain", "journal, recording", "journal, file", "journal, replaying", "labels"]
    print(f"through CodeMode.run: {n} calls per run, median of {REPEATS} runs "
          "(rows interleaved), µs per call")
    print(f"{'row':22} {'in-process':>11} {'pool':>8}")
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        async with InProcessExecutor() as inproc, WorkerPoolExecutor(size=1) as pool:
            for attempt in range(REPEATS):
                for kind, executor in (("in-process", inproc), ("pool", pool)):
                    for row in rows:
                        path = Path(folder) / f"{kind}-{attempt}.jsonl"
                        times.setdefault((row, kind), []).append(
                            await once(executor, n, row, path))
    for row in rows:
        a, b = (statistics.median(times[(row, kind)]) * 1e6 for kind in ("in-process", "pool"))
        print(f"{row:22} {a:11.1f} {b:8.1f}")
    await preflight_tables()


if __name__ == "__main__":
    anyio.run(main)
