"""Cost of ``CodeMode.run`` with the dialects (issue #13): per call and cold run.

Per call: one script making 2000 calls of a no-op tool, through ``CodeMode.run`` (the
preflight, the dialect plan, the executor, the pipeline). Cold run: the 15-line,
3-call script of ``benchmarks/sandbox.py``, made unique per run (compile-cache miss),
through ``CodeMode.run``. Each row runs with the dialect tolerance on (the default)
and off (``strict=True``) side by side, and prints the change:

    python benchmarks/mode_cold.py [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402
from codemode.sandbox import Executor, InProcessExecutor, WorkerPoolExecutor  # noqa: E402

COLD = """\
user = await tools.get_user(id=7)
repos = await tools.list_repos(owner=user['login'])
names = []
for repo in repos:
    if repo['stars'] > 10:
        names.append(repo['name'].upper())
names.sort()
note = await tools.add_note(text=', '.join(names))
summary = {}
for name in names:
    summary[name] = len(name)
total = 0
for repo in repos:
    total += repo['stars']
{'names': names, 'total': total, 'note': note}
"""
LOOP = "for i in range(2000):\n    await tools.echo(i=i)\n"


def build() -> cm.ToolRegistry:
    registry = cm.ToolRegistry()
    repos = [{"name": f"repo{i}", "stars": i * 3} for i in range(8)]

    def tool(name: str, props: dict[str, Any], value: Any) -> None:
        async def run(args: Any, ctx: cm.ExecContext) -> Any:
            return value

        registry.register(cm.define_tool(
            name=name, execute=run, parameters={
                "type": "object", "properties": props, "required": list(props),
                "additionalProperties": False}))

    tool("get_user", {"id": {"type": "integer"}}, {"login": "ada"})
    tool("list_repos", {"owner": {"type": "string"}}, repos)
    tool("add_note", {"text": {"type": "string"}}, {"ok": True})
    tool("echo", {"i": {"type": "integer"}}, "ok")
    return registry


async def measure(name: str, executor: Executor, repeats: int) -> None:
    """Tolerance on (the default) and off (``strict=True``), interleaved in one run, so
    load from other work hits both alike."""
    modes = {strict: cm.CodeMode(build(), executor=executor, strict=strict,
                                 limits=cm.Limits(calls=5000, timeout=120))
             for strict in (False, True)}
    for mode in modes.values():
        for i in range(10):
            run = await mode.run(f"{COLD}# warm {i}\n")
            assert run.error is None, run.error
    colds: dict[bool, list[float]] = {False: [], True: []}
    per_call: dict[bool, list[float]] = {False: [], True: []}
    for i in range(repeats * 40):
        for strict, mode in modes.items():
            start = time.perf_counter()
            run = await mode.run(f"{COLD}# run {i} {strict}\n")
            colds[strict].append(time.perf_counter() - start)
            assert run.error is None, run.error
    for _ in range(repeats):
        for strict, mode in modes.items():
            start = time.perf_counter()
            run = await mode.run(LOOP)
            per_call[strict].append((time.perf_counter() - start) / 2000)
            assert run.error is None, run.error
    for strict in (True, False):
        label = f"{name} {'strict' if strict else 'tolerant'}"
        print(f"{label:<20} cold run median {statistics.median(colds[strict]) * 1e6:7.0f} µs "
              f"(best {min(colds[strict]) * 1e6:6.0f})   per call best "
              f"{min(per_call[strict]) * 1e6:6.1f} µs "
              f"(median {statistics.median(per_call[strict]) * 1e6:6.1f})")
    for what, rows in (("cold run median", colds), ("per call best", per_call)):
        pick = statistics.median if what.endswith("median") else min
        change = pick(rows[False]) / pick(rows[True]) - 1
        print(f"{name}: tolerance on vs strict, {what}: {change * 100:+.1f} %")


async def main() -> None:
    repeats = 2 if "--quick" in sys.argv else 5
    async with InProcessExecutor() as inprocess:
        await measure("in-process", inprocess, repeats)
    async with WorkerPoolExecutor() as pool:
        await measure("pool", pool, repeats)


if __name__ == "__main__":
    anyio.run(main)
