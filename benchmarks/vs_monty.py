"""codemode against its anchors, side by side in one process run (issue #18).

    python benchmarks/vs_monty.py [--quick]

Anchors: plain CPython ``exec`` (no sandbox), pydantic-monty (its worker pool) and
smolagents' ``LocalPythonExecutor``; both are in the ``bench`` extra
(``pip install -e .[bench]``). An anchor that is not installed is skipped with a line
that says so. codemode runs through ``CodeMode.run`` (preflight, dialects, compile,
executor, the dispatch pipeline), with the worker pool and in-process.

Rows: a new 15-line script making 3 calls (unique text per run: no compile-cache hit),
the same script again (cache hit; Monty reuses its session), per host call (a
10,000-call loop), compute (``s += i*i``, 1e6, ratio to CPython), a 303-line script
compiled and run (unique per run), a new host object to its first result (in this
process, imports done; for the pool with the spare worker the earlier rows' pool left,
and without one: ``spare=False``), a fresh process to its first result (imports
included) and, in a fresh process that asked for the prompt and then waited out a model's
turn (``MODEL_TURN``), its first run alone (the pool's workers booted meanwhile; Monty: its
pool made before the wait), and ``while True`` stopped at 1 s. Bytecode for ``codemode``
and ``sdk_gen`` is written first (:func:`precompile`), as a wheel install does: a worker
starts with ``-B`` and a host environment may set ``PYTHONDONTWRITEBYTECODE``, and either
way a module edited since its ``.pyc`` was written would be compiled again in every fresh
process and worker boot.
Medians (per call: best of a few loops; stop: the worst). Ratios are codemode/CPython and
codemode/Monty per row.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

TEMPLATE = """\
import json
user = {aw}{ns}get_user(id=7)
repos = {aw}{ns}list_repos(owner=user['name'])
names = []
for repo in repos:
    if repo['stars'] > 10:
        names.append(repo['name'])
names = sorted(names)
summary = {{'user': user['name'], 'count': len(names)}}
x = json.dumps(summary)
note = {aw}{ns}add_note(text='found ' + str(len(names)))
total = 0
for repo in repos:
    total += repo['stars']
{{'names': names, 'total': total, 'note': note}}
"""
CANONICAL = TEMPLATE.format(aw="await ", ns="tools.")
BARE = TEMPLATE.format(aw="", ns="")
assert len(CANONICAL.splitlines()) == 15
LOOP_N = 10_000
LOOP = f"for i in range({LOOP_N}):\n    {{aw}}{{ns}}echo(i=i)\n"
COMPUTE = "s = 0\nfor i in range(1000000):\n    s += i * i\ns\n"
SPIN = "while True:\n    pass\n"


def long_script() -> str:
    """303 lines of plain code: assignments, comprehensions, branches, a function."""
    lines = ["def score(values):", "    return sum(v * 2 for v in values) % 97", "total = 0"]
    for i in range(100):
        lines += [f"x{i} = [j * {i % 7 + 1} for j in range({i % 5 + 3})]",
                  f"if score(x{i}) > {i % 50}:",
                  f"    total += len(x{i}) + x{i}[-1]"]
    assert len(lines) == 303
    return "\n".join(lines) + "\ntotal\n"


LONG = long_script()
UNIQUE = itertools.count()
"""Tags that make each script text unique in the whole process run: codemode's compile cache
is per process, so a text the pool's row compiled would be a cache hit for the in-process
row measured after it."""
REPOS = [{"name": f"repo{i}", "stars": i * 3} for i in range(8)]
ANSWERS: dict[str, Callable[..., Any]] = {
    "get_user": lambda id: {"id": id, "name": "ada"},
    "list_repos": lambda owner: REPOS,
    "add_note": lambda text: {"ok": True},
    "echo": lambda i: i,
}
Row = dict[str, float | None]


def _median(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


# ------------------------------------------------------------------ anchors


def cpython(n: int) -> Row:
    space = dict(ANSWERS)

    def run(source: str) -> None:
        exec(compile(source, "<plain>", "exec"), dict(space))

    colds = []
    for _i in range(n):
        start = time.perf_counter()
        run(f"{BARE}# {next(UNIQUE)}\n")
        colds.append(time.perf_counter() - start)
    loop = compile(LOOP.format(aw="", ns=""), "<plain>", "exec")
    start = time.perf_counter()
    exec(loop, dict(space))
    per_call = (time.perf_counter() - start) / LOOP_N
    longs = []
    for _i in range(max(5, n // 10)):
        start = time.perf_counter()
        run(f"{LONG}# {next(UNIQUE)}\n")
        longs.append(time.perf_counter() - start)
    return {"cold": _median(colds), "hit": None, "per_call": per_call * 1e6,
            "compute": best_compute_seconds(), "long": _median(longs)}


def best_compute_seconds() -> float:
    code = compile(COMPUTE, "<plain>", "exec")
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        exec(code, {})
        best = min(best, time.perf_counter() - start)
    return best


def monty(n: int) -> Row | str:
    try:
        import pydantic_monty
    except ImportError:
        return "pydantic-monty is not installed (pip install -e .[bench]): Monty skipped"
    quiet = {"print_callback": lambda *a: None}
    start = time.perf_counter()
    with pydantic_monty.Monty() as pool:
        with pool.checkout() as session:
            session.feed_run(BARE, external_lookup=ANSWERS, **quiet)
        first = time.perf_counter() - start
        for _i in range(10):
            with pool.checkout() as session:
                session.feed_run(f"{BARE}# warm {next(UNIQUE)}\n", external_lookup=ANSWERS,
                                 **quiet)
        colds = []
        for _i in range(n):
            start = time.perf_counter()
            with pool.checkout() as session:
                session.feed_run(f"{BARE}# {next(UNIQUE)}\n", external_lookup=ANSWERS, **quiet)
            colds.append(time.perf_counter() - start)
        hits = []
        with pool.checkout(limits={"max_suspensions": 10 * LOOP_N}) as session:
            for _ in range(n):
                start = time.perf_counter()
                session.feed_run(BARE, external_lookup=ANSWERS, **quiet)
                hits.append(time.perf_counter() - start)
            loops = []
            for _ in range(3):
                start = time.perf_counter()
                session.feed_run(LOOP.format(aw="", ns=""), external_lookup=ANSWERS)
                loops.append((time.perf_counter() - start) / LOOP_N)
            computes = []
            for _ in range(3):
                start = time.perf_counter()
                session.feed_run(COMPUTE)
                computes.append(time.perf_counter() - start)
        longs = []
        for _i in range(max(5, n // 10)):
            start = time.perf_counter()
            with pool.checkout() as session:
                session.feed_run(f"{LONG}# {next(UNIQUE)}\n")
            longs.append(time.perf_counter() - start)
        start = time.perf_counter()
        with pool.checkout(limits={"max_feed_duration_secs": 1.0}) as session, \
                contextlib.suppress(pydantic_monty.MontyRuntimeError):
            session.feed_run(SPIN)
        stop = time.perf_counter() - start
    return {"cold": _median(colds), "hit": _median(hits), "per_call": min(loops) * 1e6,
            "compute": min(computes), "long": _median(longs), "first": first * 1e6,
            "stop": stop}


def smolagents(n: int) -> Row | str:
    try:
        from smolagents.local_python_executor import LocalPythonExecutor
    except ImportError:
        return "smolagents is not installed (pip install -e .[bench]): smolagents skipped"

    def executor(timeout: int = 600) -> Any:
        made = LocalPythonExecutor(["json"], additional_functions=dict(ANSWERS),
                                   timeout_seconds=timeout)
        made.send_tools({})
        return made

    run = executor()
    colds = []
    for _i in range(n):
        start = time.perf_counter()
        run(f"{BARE}# {next(UNIQUE)}\n")
        colds.append(time.perf_counter() - start)
    start = time.perf_counter()
    run(LOOP.format(aw="", ns=""))
    per_call = (time.perf_counter() - start) / LOOP_N
    start = time.perf_counter()
    run(COMPUTE)
    compute = time.perf_counter() - start
    longs = []
    for _i in range(max(3, n // 20)):
        start = time.perf_counter()
        run(f"{LONG}# {next(UNIQUE)}\n")
        longs.append(time.perf_counter() - start)
    start = time.perf_counter()
    with contextlib.suppress(Exception):
        executor(timeout=1)(SPIN)
    stop = time.perf_counter() - start
    return {"cold": _median(colds), "hit": None, "per_call": per_call * 1e6,
            "compute": compute, "long": _median(longs), "stop": stop}


# ------------------------------------------------------------------ codemode


def registry() -> cm.ToolRegistry:
    reg = cm.ToolRegistry()
    props = {"get_user": {"id": {"type": "integer"}}, "list_repos": {"owner": {"type": "string"}},
             "add_note": {"text": {"type": "string"}}, "echo": {"i": {"type": "integer"}}}
    for name, fields in props.items():
        answer = ANSWERS[name]

        async def execute(args: Any, ctx: cm.ExecContext, answer: Any = answer) -> Any:
            return answer(**args)

        reg.register(cm.define_tool(name=name, execute=execute, parameters={
            "type": "object", "properties": fields, "required": list(fields),
            "additionalProperties": False}))
    return reg


async def codemode_row(executor: cm.Executor, n: int) -> Row:
    plenty = cm.Limits(calls=LOOP_N + 10, operations=10**9, timeout=900)
    mode = cm.CodeMode(registry(), executor=executor, limits=plenty)

    async def timed(source: str, limits: cm.Limits = plenty) -> float:
        start = time.perf_counter()
        result = await mode.run(source, limits=limits)
        elapsed = time.perf_counter() - start
        if source is not SPIN:
            assert result.error is None, result.error
        return elapsed

    for _i in range(20):
        await timed(f"{CANONICAL}# warm {next(UNIQUE)}\n")
    if isinstance(executor, WorkerPoolExecutor):
        await anyio.sleep(0.5)  # the spare the first run started boots (once) before rows
    colds = [await timed(f"{CANONICAL}# {next(UNIQUE)}\n") for i in range(n)]
    hits = [await timed(CANONICAL) for _ in range(n)]
    loop = LOOP.format(aw="await ", ns="tools.")
    per_call = min([await timed(loop) for _ in range(1 if n < 100 else 3)]) / LOOP_N
    compute = min([await timed(f"{COMPUTE}# {next(UNIQUE)}\n") for i in range(3)])
    longs = [await timed(f"{LONG}# {next(UNIQUE)}\n") for i in range(max(5, n // 10))]
    if isinstance(executor, WorkerPoolExecutor):
        await executor.start()
    stop = await timed(SPIN, cm.Limits(timeout=1.0, operations=10**12))
    return {"cold": _median(colds), "hit": _median(hits), "per_call": per_call * 1e6,
            "compute": compute, "long": _median(longs), "stop": stop}


async def first_result(kind: str) -> float:
    """A new CodeMode (its own executor) to the first result, in this process: ``pool`` is
    the default pool, which takes the spare worker the earlier rows' pool left
    (``sandbox.spare_workers``); ``boot`` a pool with ``spare=False``, whose workers start
    from nothing; ``inprocess``."""
    start = time.perf_counter()
    executor: cm.Executor | None = (None if kind == "pool" else InProcessExecutor()
                                    if kind == "inprocess" else WorkerPoolExecutor(spare=False))
    mode = cm.CodeMode(registry(), executor=executor)
    result = await mode.run(CANONICAL)
    elapsed = time.perf_counter() - start
    assert result.error is None, result.error
    await mode.aclose()
    if executor is not None:
        await executor.aclose()
    return elapsed * 1e6


FRESH = """\
import time, sys
start = time.perf_counter()
{body}
print((time.perf_counter() - start) * 1e6)
"""
FRESH_TOOLS = f"""\
import codemode as cm
REPOS = {REPOS!r}
ANSWERS = {{"get_user": lambda id: {{"id": id, "name": "ada"}},
           "list_repos": lambda owner: REPOS, "add_note": lambda text: {{"ok": True}}}}
FIELDS = {{"get_user": {{"id": {{"type": "integer"}}}},
          "list_repos": {{"owner": {{"type": "string"}}}},
          "add_note": {{"text": {{"type": "string"}}}}}}
def registry():
    reg = cm.ToolRegistry()
    for name, fields in FIELDS.items():
        async def execute(args, ctx, answer=ANSWERS[name]):
            return answer(**args)
        reg.register(cm.define_tool(name=name, execute=execute, parameters={{
            "type": "object", "properties": fields, "required": list(fields),
            "additionalProperties": False}}))
    return reg
CANONICAL = {CANONICAL!r}
"""
"""What a fresh process's user writes: codemode and three tools, nothing of this harness
(importing ``vs_monty`` would charge codemode with the harness's own imports: both
executors, ``statistics``, ``subprocess``)."""
FRESH_CODEMODE = FRESH_TOOLS.replace("{", "{{").replace("}", "}}") + """
import anyio
async def main():
    mode = cm.CodeMode(registry(){executor})
    assert (await mode.run(CANONICAL)).error is None
    print((time.perf_counter() - start) * 1e6)
    await mode.aclose()
    sys.exit(0)
anyio.run(main)
"""
MODEL_TURN = 1.0
"""Seconds a model takes to write the script after reading the prompt (a short turn)."""
FRESH_CODEMODE_PROMPTED = f"""\
{FRESH_TOOLS}
import anyio
async def main():
    global start
    mode = cm.CodeMode(registry())
    assert "Available tools" in mode.prompt()
    await anyio.sleep({MODEL_TURN})
    start = time.perf_counter()
    assert (await mode.run(CANONICAL)).error is None
    print((time.perf_counter() - start) * 1e6)
    await mode.aclose()
    sys.exit(0)
anyio.run(main)
"""
"""A fresh process asks for the prompt, the model takes its turn, then the first run
(timed alone): what a host feels of a cold start when a model is in the loop."""
MONTY_WORK = f"""\
REPOS = {REPOS!r}
ANSWERS = {{"get_user": lambda id: {{"id": id, "name": "ada"}},
           "list_repos": lambda owner: REPOS, "add_note": lambda text: {{"ok": True}}}}
BARE = {BARE!r}
"""
"""The fresh Monty process's work: the same 15-line script and three answers as
codemode's ``CANONICAL`` (the rows compare the same work)."""
FRESH_MONTY_PROMPTED = f"""\
import pydantic_monty
{MONTY_WORK}
with pydantic_monty.Monty() as pool:
    time.sleep({MODEL_TURN})
    start = time.perf_counter()
    with pool.checkout() as session:
        session.feed_run(BARE, external_lookup=ANSWERS, print_callback=lambda *a: None)
    print((time.perf_counter() - start) * 1e6)
sys.exit(0)
"""
FRESH_MONTY = f"""\
import pydantic_monty
{MONTY_WORK}
with pydantic_monty.Monty() as pool:
    with pool.checkout() as session:
        session.feed_run(BARE, external_lookup=ANSWERS, print_callback=lambda *a: None)
    print((time.perf_counter() - start) * 1e6)
sys.exit(0)
"""


def precompile() -> None:
    """Write current bytecode for the packages a fresh process and a worker import."""
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("codemode", "sdk_gen"):
        compileall.compile_dir(root / package, quiet=1)


def fresh_process(body: str) -> float | None:
    """A fresh interpreter to its first result, imports included (best of three)."""
    best = None
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", FRESH.format(body=body)],
                              capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0 or not done.stdout.strip():
            print(done.stderr[-500:], file=sys.stderr)
            return None
        took = float(done.stdout.split()[0])
        best = took if best is None else min(best, took)
    return best


# ------------------------------------------------------------------ table


def _fmt(key: str, value: float | None) -> str:
    if value is None:
        return "–"
    if key == "compute":
        return f"{value:.2f}×"
    if key == "stop":
        return f"{value:.3f} s"
    if value >= 10_000:
        return f"{value / 1000:,.1f} ms"
    return f"{value:,.1f} µs" if value < 100 else f"{value:,.0f} µs"


def _ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}"


async def main() -> None:
    n = 40 if "--quick" in sys.argv else 200
    precompile()
    columns: dict[str, Row] = {"CPython": cpython(n)}
    skipped = []
    for name, anchor in (("Monty", monty), ("smolagents", smolagents)):
        got = anchor(n)
        if isinstance(got, str):
            skipped.append(got)
        else:
            columns[name] = got
    async with WorkerPoolExecutor() as pool:
        await pool.start()
        columns["cm pool"] = await codemode_row(pool, n)
    async with InProcessExecutor() as inprocess:
        columns["cm in-proc"] = await codemode_row(inprocess, n)
    columns["cm pool"]["first"] = await first_result("pool")
    columns["cm pool"]["boot"] = await first_result("boot")
    columns["cm in-proc"]["first"] = await first_result("inprocess")
    for key in ("cm pool", "cm in-proc"):
        executor = "" if key == "cm pool" else ", executor=cm.InProcessExecutor()"
        columns[key]["fresh"] = fresh_process(FRESH_CODEMODE.format(executor=executor))
    columns["cm pool"]["prompted"] = fresh_process(FRESH_CODEMODE_PROMPTED)
    if "Monty" in columns:
        columns["Monty"]["fresh"] = fresh_process(FRESH_MONTY)
        columns["Monty"]["prompted"] = fresh_process(FRESH_MONTY_PROMPTED)
    base = columns["CPython"]["compute"]
    assert base is not None
    for row in columns.values():
        compute = row.get("compute")
        if compute is not None:
            row["compute"] = compute / base
    rows = [("new 15-line script, 3 calls", "cold"), ("same script again (cache hit)", "hit"),
            ("per host call (10k loop)", "per_call"), ("compute s += i*i, 1e6", "compute"),
            ("303-line script, compile+run", "long"), ("new host object + first run", "first"),
            ("  the same, no spare worker", "boot"),
            ("fresh process to first result", "fresh"),
            (f"  first run {MODEL_TURN:.0f} s after the prompt", "prompted"),
            ("stop while True at 1 s", "stop")]
    print(f"codemode vs anchors (python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
          f"load {os.getloadavg()[0]:.2f}, n={n})")
    for line in skipped:
        print(f"  skipped: {line}")
    names = list(columns)
    ratios = [("pool/CPy", "cm pool", "CPython"), ("pool/Monty", "cm pool", "Monty"),
              ("inproc/CPy", "cm in-proc", "CPython"), ("inproc/Monty", "cm in-proc", "Monty")]
    print(f"{'':31}" + "".join(f"{name:>12}" for name in names)
          + "".join(f"{label:>13}" for label, _, _ in ratios))
    for label, key in rows:
        cells = [_fmt(key, columns[name].get(key)) for name in names]
        ratio_cells = [_ratio(columns[a].get(key), columns.get(b, {}).get(key))
                       for _, a, b in ratios]
        print(f"{label:31}" + "".join(f"{c:>12}" for c in cells)
              + "".join(f"{c:>13}" for c in ratio_cells))


if __name__ == "__main__":
    anyio.run(main)
