"""Instructions per cache-hit run, layer by layer, under callgrind (issue #18).

    python benchmarks/run_instructions.py [--quick] [--rows in-process/executor.run,pool host]

What a run of an already compiled script costs, outside compiling: ``vs_monty``'s "same
script again" row. Each row is the difference between a child process that makes ``k``
runs and one that makes none (the same warm-up, the cyclic collector off, hash seed fixed:
walls on this loaded 2-core VM drift 2x, counts do not), divided by ``k``, for scripts
making 0, 1 and 3 tool calls (the 3-call one is ``vs_monty.CANONICAL``):

- ``in-process``: ``CodeMode.run`` (the whole run: prepared-script cache, ledger, bridge,
  the registry's pipeline per call), ``executor.run`` (the executor, its script thread and
  the runner, calls answered by a bare ``call_tool``) and ``run_script`` (the runner alone,
  on the host's own loop: no thread, calls answered by a ``CallBroker`` at once);
  callgrind counts every thread;
- ``pool host``: the same two outer layers of a ``WorkerPoolExecutor``, the host process
  only (its worker runs natively, unmeasured: a worker started as valgrind running Python
  does not boot, exit status 1 before it is ready).

At dfb20af -> 2aad14a (3.11, k=20), 0 / 1 / 3 calls: in-process ``CodeMode.run`` 0.90 /
1.17 / 2.25M -> 0.66 / 0.98 / 2.07M, ``executor.run`` 0.79 / 0.92 / 1.54M -> 0.55 / 0.73 /
1.35M, ``run_script`` 0.35 / 0.41 / 0.83M -> 0.30 / 0.37 / 0.79M; pool host ``CodeMode.run``
at 2aad14a (k=5) 1.08 / 1.36 / 2.37M. At a1ad2b4 -> perf26 (3.11, k=100, one child per
count): pool host ``CodeMode.run`` 0 / 3 calls 1.055 / 2.316M -> 0.569 / 1.879M (no task
group or events per run; measured without the pipe poll, which came back: it adds what it
spins while the worker works), in-process ``executor.run`` 0 calls 0.549 ->
0.488M and ``run_script`` 0.293 -> 0.245M (the prelude line remembered, the result
measured once). At ``--quick`` (k=5) the pool host's rows drift by ~0.4M between
children on a loaded machine (its start-up waits on workers): use k=100 for them.

Instruction counts leave out what the kernel does (context switches, wake-ups), which a
wall time holds: ``benchmarks/hop_floor.py`` measures those floors. Skipped with a line
when valgrind is not installed.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402

# codemode is imported: benchmarks/codemode.py can no longer shadow it
sys.path.insert(0, str(Path(__file__).resolve().parent))
import vs_monty  # noqa: E402

from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor  # noqa: E402
from codemode.sandbox.executors import inprocess  # noqa: E402
from codemode.sandbox.executors.broker import CallBroker  # noqa: E402
from codemode.sandbox.runtime.runner import RunControl, run_script  # noqa: E402

SCRIPTS = {
    0: "n = 7\n{'n': n}\n",
    1: "user = await tools.get_user(id=7)\nuser['name']\n",
    3: vs_monty.CANONICAL,
}
WARM = 5
LIMITS = cm.Limits(calls=100, operations=10**9, timeout=900)


async def _answer(name: str, args: dict[str, Any]) -> Any:
    return vs_monty.ANSWERS[name](**args)


_answer.fresh_results = True  # type: ignore[attr-defined]  # what CodeMode's bridge says


async def _child(executor_kind: str, layer: str, calls: int, k: int) -> None:
    executor: cm.Executor = (InProcessExecutor() if executor_kind == "in"
                             else WorkerPoolExecutor(size=1))
    async with executor:
        mode = cm.CodeMode(vs_monty.registry(), executor=executor, limits=LIMITS)
        paths = tuple(mode.sdk().names.tools)
        prepared = {n: mode._prepare(text, None)[1] for n, text in SCRIPTS.items()}

        async def once(n: int) -> None:
            if layer == "CodeMode.run":
                result = await mode.run(SCRIPTS[n])
                assert result.error is None, result.error
            elif layer == "executor.run":
                done = await executor.run(prepared[n], call_tool=_answer, tool_paths=paths,
                                          limits=LIMITS)
                assert done.error is None, done.error
            else:
                broker = CallBroker(_answer, LIMITS, paths)
                outcome = await run_script(prepared[n], call=broker.answer_json,
                                           tool_paths=paths, limits=LIMITS,
                                           control=RunControl())
                assert outcome.error is None, outcome.error

        if executor_kind == "in":
            # Under callgrind a run takes ~50x its time: the host's 5 ms watcher would tick
            # in every run, and a call's reply would miss the script thread's direct wait,
            # which natively neither does.
            for name in ("WATCH_INTERVAL", "DIRECT_WAIT"):
                setattr(inprocess, name, 60.0)
        for _ in range(WARM):
            for n in SCRIPTS:
                await once(n)
        gc.collect()
        gc.disable()
        for _ in range(k):
            await once(calls)
        gc.enable()
        await mode.aclose()


def _count(valgrind: str, args: list[str]) -> int:
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--child", *args], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1))


def main() -> None:
    valgrind = shutil.which("valgrind")
    k = 5 if "--quick" in sys.argv else 20
    if valgrind is None:
        print("run instructions: valgrind is not installed (skipped)")
        return
    rows = [("in-process", "in", layer) for layer in ("CodeMode.run", "executor.run", "run_script")]
    rows += [("pool host", "pool", layer) for layer in ("CodeMode.run", "executor.run")]
    if "--rows" in sys.argv:  # e.g. ``--rows in-process/executor.run,pool host``
        wanted = sys.argv[sys.argv.index("--rows") + 1].split(",")
        rows = [row for row in rows if row[0] in wanted or f"{row[0]}/{row[2]}" in wanted]
    jobs = {}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as threads:
        for _, kind, layer in rows:
            for calls in (None, *SCRIPTS):
                args = [kind, layer, str(calls or 0), "0" if calls is None else str(k)]
                jobs[(kind, layer, calls)] = threads.submit(_count, valgrind, args)
    print(f"instructions per cache-hit run (python {sys.version.split()[0]}, callgrind, "
          f"k={k})")
    for label, kind, layer in rows:
        base = jobs[(kind, layer, None)].result()
        per = {calls: (jobs[(kind, layer, calls)].result() - base) / k for calls in SCRIPTS}
        cells = [f"{calls} calls {count / 1e6:.3f}M" for calls, count in per.items()]
        print(f"  {label:12} {layer:13} " + ", ".join(cells))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        kind, layer, calls, k = sys.argv[2:6]
        anyio.run(_child, kind, layer, int(calls), int(k))
    else:
        main()
