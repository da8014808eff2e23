"""A background-task tool: a slow, shell-free job that answers with a task id at once.

`count_primes(limit)` starts counting the primes below `limit` in chunks, writing a
line of output per chunk; the model (or a script) follows it with the generic task
tools `task_status`, `task_output` and `task_cancel`. When the count ends, the owning
agent session gets a notice (`session.drain()` in the harness).

    registry, tasks = build_registry(), cm.TaskManager()
    async with tasks, cm.AgentSession("main") as session:
        registry.tasks = tasks
        await registry.execute(call, session=session)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import anyio

import codemode as cm

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["CHUNK", "build_registry", "count_primes_tool", "primes_below"]

CHUNK = 2_000
"""Numbers checked per chunk (one output line, one pause)."""


def primes_below(stop: int, start: int = 2) -> int:
    """How many primes p satisfy start <= p < stop."""
    return sum(1 for n in range(max(start, 2), stop)
               if all(n % d for d in range(2, math.isqrt(n) + 1)))


def _present_call(args: Mapping[str, Any]) -> cm.GenericCard:
    return cm.GenericCard(title=f"Count primes below {args['limit']:,} (background)",
                          kind="think", raw_input=dict(args))


def _present_result(args: Mapping[str, Any], result: cm.CardResult) -> cm.GenericCard:
    if result.is_error:
        return cm.GenericCard(title="Count primes: not started", content=result.error)
    task = (result.meta or {}).get("task")
    return cm.GenericCard(title=f"Count primes below {args['limit']:,}: started {task}",
                          kind="think")


def count_primes_tool(*, pause: float = 0.01) -> cm.Tool:
    """The tool; `pause` is the wait between chunks (what makes the job slow)."""

    async def count_primes(args: Mapping[str, Any], ctx: cm.ExecContext) -> cm.Envelope:
        limit = int(args["limit"])

        async def job(io: cm.TaskIO) -> dict[str, int]:
            found = 0
            for start in range(2, limit, CHUNK):
                stop = min(start + CHUNK, limit)
                found += primes_below(stop, start)
                io.write(f"checked {stop - 1:,}: {found:,} primes so far\n")
                await anyio.sleep(pause)
            return {"limit": limit, "primes": found}

        task = ctx.tasks.start(kind="count_primes", label=f"primes below {limit:,}",
                               run=cm.background(job, max_output=8_000))
        return cm.Envelope(
            {"task": task, "note": f"counting primes below {limit:,}; follow it with "
             "task_status / task_output, a notice arrives when it ends"},
            meta={"task": task})

    return cm.define_tool(
        name="count_primes",
        description="Start counting the primes below `limit` as a background task; returns "
        "the task id at once. Use task_status / task_output / task_cancel with that id.",
        parameters={"type": "object", "properties": {
            "limit": {"type": "integer", "minimum": 3, "maximum": 10_000_000,
                      "description": "Count the primes below this number."}},
            "required": ["limit"], "additionalProperties": False},
        execute=count_primes,
        present_call=_present_call,
        present_result=_present_result,
    )


def build_registry(*, pause: float = 0.01) -> cm.ToolRegistry:
    """`count_primes` and the generic task tools (set `registry.tasks` before calling)."""
    registry = cm.ToolRegistry()
    registry.register(count_primes_tool(pause=pause))
    for made in cm.task_tools():
        registry.register(made)
    return registry
