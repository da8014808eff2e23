"""Pipeline overhead: ``registry.execute`` vs a direct ``await handler(args)``.

Run: ``python benchmarks/dispatch.py [--calls N] [--reps R]``.

A no-op handler with a typical 4-property schema (required string with
minLength, optional bounded integer, enum, array of strings with maxItems,
additionalProperties false). Every variant is timed in batches of ``--calls``
calls; the batches of all variants are interleaved ``--reps`` times in one
run and the median batch is reported, so machine noise hits all variants
alike. Target: pipeline overhead <= 10 µs per valid call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Import the package, not a sibling script that happens to be named like it.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
        "mode": {"enum": ["text", "json", "raw"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    },
    "required": ["path"],
    "additionalProperties": False,
}
VALID = {"path": "/tmp/notes.txt", "limit": 20, "mode": "text", "tags": ["a", "b"]}
INVALID = {"path": "", "limit": 5000, "mode": "xml", "tags": ["a", 1]}


async def noop(args: Any, ctx: Any) -> str:
    return "ok"


def variants() -> dict[str, Callable[[], Awaitable[Any]]]:
    registry = cm.ToolRegistry()
    tool = cm.define_tool(name="read", parameters=SCHEMA, execute=noop)
    registry.register(tool)
    valid_call = cm.ToolCall(call_id="v", name="read", arguments=VALID)
    invalid_call = cm.ToolCall(call_id="i", name="read", arguments=INVALID)

    async def direct() -> Any:
        return await noop(VALID, None)

    async def valid() -> Any:
        return await registry.execute(valid_call)

    async def invalid() -> Any:
        return await registry.execute(invalid_call)

    async def fast_check() -> Any:
        return tool.validator.is_valid(VALID)

    async def reference_check() -> Any:
        return tool.validator.reference.is_valid(VALID)

    return {
        "direct await handler(args)": direct,
        "execute, valid call": valid,
        "execute, invalid call": invalid,
        "jsonschema-rs is_valid (valid)": fast_check,
        "jsonschema is_valid (valid)": reference_check,
    }


async def measure(calls: int, reps: int) -> dict[str, float]:
    """Median µs per call of each variant, batches interleaved."""
    runs = variants()
    assert not (await runs["execute, valid call"]()).is_error
    assert (await runs["execute, invalid call"]()).is_error
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for rep in range(reps + 1):
        for name, run in runs.items():
            start = time.perf_counter()
            for _ in range(calls):
                await run()
            elapsed = time.perf_counter() - start
            if rep:  # the first round warms caches up
                samples[name].append(elapsed / calls * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed batch")
    parser.add_argument("--reps", type=int, default=15, help="interleaved batches per variant")
    options = parser.parse_args()
    medians = anyio.run(measure, options.calls, options.reps)
    direct = medians["direct await handler(args)"]
    print(
        f"dispatch benchmark: median of {options.reps} interleaved batches of {options.calls} calls"
    )
    print(f"{'variant':34} {'µs/call':>9} {'overhead µs':>12} {'ratio':>8}")
    for name, value in medians.items():
        overhead = value - direct
        print(f"{name:34} {value:9.2f} {overhead:12.2f} {value / direct:7.1f}x")
    valid_overhead = medians["execute, valid call"] - direct
    verdict = "meets" if valid_overhead <= 10 else "MISSES"
    print(f"valid-call pipeline overhead {valid_overhead:.2f} µs: {verdict} the 10 µs target")


if __name__ == "__main__":
    main()
