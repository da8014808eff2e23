"""What ``@cm.tool`` costs a new process and a call, beside ``define_tool`` (issue #18).

    python benchmarks/decorator.py [--reps N]

Three fresh interpreters each import codemode and define the same three tools: with
``define_tool`` and a hand-written schema; with ``@cm.tool`` over plain JSON types (read
without pydantic, ``dispatch.plain_signature``); with ``@cm.tool`` where one parameter is a
``datetime.date`` (pydantic reads the signature). Then, in this process, a direct
``registry.execute`` of a plain ``@cm.tool`` tool and of the ``define_tool`` one.
Best of ``--reps`` fresh processes; per call: the median of rounds of 5,000 calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402

DEFINED = """
import codemode as cm
async def run(args, ctx):
    return {"ok": True}
for name in ("get_user", "list_repos", "add_note"):
    cm.define_tool(name=name, execute=run, parameters={
        "type": "object", "properties": {"key": {"type": "string", "description": "Key."},
        "limit": {"type": "integer", "default": 10}}, "required": ["key"],
        "additionalProperties": False})
"""
DECORATED = """
import codemode as cm
{imports}
@cm.tool
async def get_user(key: str, limit: int = 10{extra}) -> dict:
    '''One user.

    Args:
        key: Key.
    '''
    return {{"ok": True}}
@cm.tool
async def list_repos(key: str, limit: int = 10) -> dict:
    '''Repos.'''
    return {{"ok": True}}
@cm.tool
async def add_note(key: str, tags: list[str] | None = None) -> dict:
    '''A note.'''
    return {{"ok": True}}
"""
VARIANTS = {
    "define_tool (hand-written schema)": DEFINED,
    "@cm.tool, plain JSON types": DECORATED.format(imports="", extra=""),
    "@cm.tool, a datetime.date parameter": DECORATED.format(
        imports="import datetime", extra=", day: datetime.date | None = None"),
}
TIMED = ("import time\nstart = time.perf_counter()\n{body}\n"
         "print((time.perf_counter() - start) * 1e3)\n")


def fresh(body: str, reps: int) -> float:
    """Best wall time (ms) of a fresh interpreter importing codemode and running ``body``."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    best = float("inf")
    for _ in range(reps):
        done = subprocess.run([sys.executable, "-c", TIMED.format(body=body)], env=env,
                              capture_output=True, text=True, check=True, timeout=120)
        best = min(best, float(done.stdout.split()[-1]))
    return best


@cm.tool
async def echo(key: str, limit: int = 10) -> dict[str, object]:
    """Echo.

    Args:
        key: Key.
        limit: Limit.
    """
    return {"key": key, "limit": limit}


async def _echo_plain(args: object, ctx: object) -> object:
    assert isinstance(args, dict | cm.FrozenDict)
    return {"key": args["key"], "limit": args.get("limit", 10)}


async def per_call(registry: cm.ToolRegistry, name: str, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for i in range(5_000):
            await registry.execute(cm.ToolCall(call_id=str(i), name=name,
                                               arguments={"key": "k", "limit": 3}))
        times.append((time.perf_counter() - start) / 5_000 * 1e6)
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    reps = parser.parse_args().reps
    print(f"@cm.tool beside define_tool (python {sys.version.split()[0]}, {os.cpu_count()} "
          f"cpus, load {os.getloadavg()[0]:.2f}; best of {reps} fresh processes)")
    base = None
    for label, body in VARIANTS.items():
        took = fresh(body, reps)
        base = took if base is None else base
        print(f"  import codemode + 3 tools, {label:<38}{took:8.1f} ms  {took / base:5.2f}×")
    registry = cm.ToolRegistry()
    registry.register(echo)
    registry.register(cm.define_tool(name="plain", execute=_echo_plain,
                                     parameters=echo.spec.parameters))
    for name in ("echo", "plain", "echo", "plain"):
        await per_call(registry, name, 1)  # warm
    decorated, plain = await per_call(registry, "echo"), await per_call(registry, "plain")
    print(f"  registry.execute, @cm.tool {decorated:6.1f} µs, define_tool {plain:6.1f} µs "
          f"({decorated / plain:.2f}×)")


if __name__ == "__main__":
    anyio.run(main)
