"""The cold path of a new script, piece by piece (issue #18).

    python benchmarks/cold_path.py [--quick]

``benchmarks/vs_monty.py`` is the reference table; this one splits its cold rows into
their parts, each a median over unique scripts (no compile-cache hit):

- ``mode.check()`` (preflight, dialect plan, compile) of the 15-line and 303-line
  scripts, split into its steps (parse, dialect plan, preflight, policy, compile), and
  ``compile_script`` alone;
- ``CodeMode.run`` of a 0-call script (the 15-line script's shape without its calls)
  and of the 303-line script, in-process and in the worker pool;
- a 0-call and a 1-call run with 10 and with 1,000 registered tools (per-run cost
  flat in the registry);
- a worker's boot (spawn to ready) and a new ``CodeMode`` to its first result.
"""

from __future__ import annotations

import ast
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor  # noqa: E402

# codemode is imported: benchmarks/codemode.py can no longer shadow it
sys.path.insert(0, str(Path(__file__).resolve().parent))
import vs_monty  # noqa: E402

from codemode.mode.dialects import plan  # noqa: E402
from codemode.mode.preflight import check_script  # noqa: E402
from codemode.sandbox.language.compile import compile_script  # noqa: E402
from codemode.sandbox.language.meter import SCRIPT_FILENAME  # noqa: E402
from codemode.sandbox.language.policy import SandboxPolicy  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

SHORT = """\
import json
user = {'name': 'ada'}
repos = [{'name': 'r' + str(i), 'stars': i * 3} for i in range(8)]
names = []
for repo in repos:
    if repo['stars'] > 10:
        names.append(repo['name'])
names = sorted(names)
summary = {'user': user['name'], 'count': len(names)}
x = json.dumps(summary)
note = 'found ' + str(len(names))
total = 0
for repo in repos:
    total += repo['stars']
{'names': names, 'total': total, 'note': note}
"""
ONE_CALL = "x = await tools.t0(i=1)\nx\n"


LONG = vs_monty.LONG
_unique = iter(range(10**9))


def fresh(script: str) -> str:
    """``script`` made unique (a comment line), so no cache answers it."""
    return f"{script}# {next(_unique)}\n"


def registry(tools: int) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def execute(args: Any, ctx: cm.ExecContext) -> Any:
        return args["i"]

    for n in range(tools):
        reg.register(cm.define_tool(name=f"t{n}", description=f"Tool {n}.", execute=execute,
                                    parameters={"type": "object",
                                                "properties": {"i": {"type": "integer"}},
                                                "required": ["i"],
                                                "additionalProperties": False}))
    return reg


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def timed(fn: Callable[[], object], n: int) -> float:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return median_us(samples)


async def atimed(fn: Callable[[], Awaitable[object]], n: int) -> float:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return median_us(samples)


def row(label: str, value: float) -> None:
    shown = f"{value / 1000:8.2f} ms" if value >= 10_000 else f"{value:8.0f} µs"
    print(f"  {label:<48}{shown}")


async def runs(label: str, executor: cm.Executor, n: int) -> None:
    mode = cm.CodeMode(registry(10), executor=executor)

    async def run(script: str) -> None:
        result = await mode.run(fresh(script))
        assert result.error is None, result.error

    for _ in range(10):
        await run(SHORT)
    row(f"{label}: run, 15 lines, 0 calls", await atimed(lambda: run(SHORT), n))
    row(f"{label}: run, 303 lines, 0 calls", await atimed(lambda: run(LONG), max(5, n // 5)))
    for tools in (10, 1000):
        big = cm.CodeMode(registry(tools), executor=executor)
        big.sdk()

        async def go(script: str, big: cm.CodeMode = big) -> None:
            result = await big.run(fresh(script))
            assert result.error is None, result.error

        for _ in range(5):
            await go(ONE_CALL)
        row(f"{label}: {tools:>4} tools, 0-call run", await atimed(lambda: go(SHORT), n))
        row(f"{label}: {tools:>4} tools, 1-call run", await atimed(lambda: go(ONE_CALL), n))


def steps(label: str, mode: cm.CodeMode, script: str, n: int) -> None:
    """``check()``'s steps one by one (medians over unique scripts): where its time goes."""
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    tools, arguments = sdk.names.tools, sdk.names.arguments
    parts: dict[str, list[float]] = {name: [] for name in (
        "parse", "dialect plan", "preflight", "policy", "compile")}
    for _ in range(n):
        source = fresh(script)
        marks = [time.perf_counter()]
        tree = ast.parse(source, mode="exec")
        marks.append(time.perf_counter())
        found = plan(source, tree, tools=tools, arguments=arguments, specs=specs)
        marks.append(time.perf_counter())
        check_script(source, tools=tools, arguments=arguments, specs=specs, tree=tree,
                     tool_of=found.tool_of, orders=found.prelude.orders, parents=found.parents,
                     kinds=found.kinds)
        marks.append(time.perf_counter())
        SandboxPolicy(kinds=found.kinds).visit(tree)
        marks.append(time.perf_counter())
        compile(tree, SCRIPT_FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                dont_inherit=True)
        marks.append(time.perf_counter())
        for samples, start, end in zip(parts.values(), marks, marks[1:], strict=False):
            samples.append(end - start)
    print(f"  {label}: " + ", ".join(f"{name} {median_us(samples):.0f}"
                                     for name, samples in parts.items()) + " µs")


async def main() -> None:
    n = 60 if "--quick" in sys.argv else 300
    print(f"cold path (python {sys.version.split()[0]}, load "
          f"{__import__('os').getloadavg()[0]:.2f}, n={n})")
    mode = cm.CodeMode(registry(10), executor=InProcessExecutor())
    for _ in range(10):
        mode.check(fresh(SHORT))
    row("check(), 15 lines", timed(lambda: mode.check(fresh(SHORT)), n))
    row("check(), 303 lines", timed(lambda: mode.check(fresh(LONG)), max(5, n // 5)))
    steps("check() steps, 15 lines", mode, SHORT, n)
    steps("check() steps, 303 lines", mode, LONG, max(5, n // 5))
    row("compile_script, 15 lines", timed(lambda: compile_script(fresh(SHORT)), n))
    row("compile_script, 303 lines", timed(lambda: compile_script(fresh(LONG)), max(5, n // 5)))
    async with InProcessExecutor() as inprocess:
        await runs("in-process", inprocess, n)
    async with WorkerPoolExecutor() as pool:
        await pool.start()
        await runs("pool", pool, n)

    async def boot() -> None:
        async with WorkerPoolExecutor(size=1) as one:
            await one.start()

    row("worker boot (spawn to ready, 1 worker)", await atimed(boot, 3 if n < 100 else 5))

    async def first(pool: bool) -> None:
        made = cm.CodeMode(registry(10), executor=None if pool else InProcessExecutor())
        result = await made.run(SHORT)
        assert result.error is None, result.error
        await made.aclose()

    row("new CodeMode to first result, pool", await atimed(lambda: first(True), 3))
    row("new CodeMode to first result, in-process", await atimed(lambda: first(False), 5))


if __name__ == "__main__":
    anyio.run(main)
