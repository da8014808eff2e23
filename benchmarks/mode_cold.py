"""Cost of ``CodeMode.run`` with the dialects (issue #13): per call and cold run.

Per call: one script making 2000 calls of a no-op tool, through ``CodeMode.run`` (the
preflight, the dialect plan, the executor, the pipeline). Cold run: the 15-line,
3-call script of ``benchmarks/sandbox.py``, made unique per run (compile-cache miss),
through ``CodeMode.run``. Run it on two trees to compare (it uses no new API):

    python benchmarks/mode_cold.py            # this tree
    PYTHONPATH=<old tree> python <old tree>/benchmarks/mode_cold.py
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
    mode = cm.CodeMode(build(), executor=executor, limits=cm.Limits(calls=5000, timeout=120))
    for i in range(10):
        run = await mode.run(f"{COLD}# warm {i}\n")
        assert run.error is None, run.error
    colds = []
    for i in range(repeats * 40):
        start = time.perf_counter()
        run = await mode.run(f"{COLD}# run {i}\n")
        colds.append(time.perf_counter() - start)
        assert run.error is None, run.error
    per_call = []
    for _ in range(repeats):
        start = time.perf_counter()
        run = await mode.run(LOOP)
        per_call.append((time.perf_counter() - start) / 2000)
        assert run.error is None, run.error
    print(f"{name:<11} cold run median {statistics.median(colds) * 1e6:7.0f} µs "
          f"(best {min(colds) * 1e6:6.0f})   per call best {min(per_call) * 1e6:6.1f} µs "
          f"(median {statistics.median(per_call) * 1e6:6.1f})")


async def main() -> None:
    repeats = 2 if "--quick" in sys.argv else 5
    async with InProcessExecutor() as inprocess:
        await measure("in-process", inprocess, repeats)
    async with WorkerPoolExecutor() as pool:
        await measure("pool", pool, repeats)


if __name__ == "__main__":
    anyio.run(main)
