"""Run one example script end to end, the way a model's ``run_code`` call runs.

    python -m examples.demo [SCRIPT] [--in-process] [--workspace DIR]

The script (a name from ``examples/scripts/``, default ``revenue_by_country``)
is sent as ``run_code``'s ``code`` argument through ``registry.execute``; the
demo prints the result text the model would read, then one line per nested
tool call taken from the registry's events: each names the ``run_code`` call's
token as its parent.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from codemode import CodeMode, ToolCall, ToolEvent
from examples.local_tools import DATA_DIR, build_registry, ensure_seeded

if TYPE_CHECKING:
    from codemode import ToolResult
    from codemode.sandbox import Executor

__all__ = ["SCRIPTS", "DemoRun", "demo", "main"]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
"""The model-style example scripts."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DemoRun:
    """What one demo run produced."""

    result: ToolResult
    """The ``run_code`` result, as the model receives it."""
    events: tuple[ToolEvent, ...]
    """Every event the registry emitted during the run."""

    @property
    def run_token(self) -> str:
        """Token of the ``run_code`` dispatch."""
        return next(e.token for e in self.events
                    if e.type == "tool/call" and e.name == "run_code")

    def nested_lines(self) -> list[str]:
        """One line per nested call: id, tool, whether its parent is the run, ok/error."""
        token = self.run_token
        lines = []
        for event in self.events:
            if event.type != "tool/result" or event.name == "run_code":
                continue
            parent = "run_code" if event.parent == token else f"OTHER ({event.parent})"
            state = f"error: {event.error}" if event.is_error else "ok"
            lines.append(f"{event.call_id:<14} {event.name:<18} parent={parent:<9} {state}")
        return lines

    def report(self) -> str:
        """The text ``main`` prints."""
        return "\n".join([
            "--- run_code result (model-visible) ---",
            self.result.text,
            f"--- nested calls (tool/result events; run_code token {self.run_token}) ---",
            *self.nested_lines(),
        ])


async def demo(script: str = "revenue_by_country", *, root: Path | None = None,
               executor: Executor | None = None) -> DemoRun:
    """Run ``examples/scripts/<script>.py`` via ``run_code`` over the example workspace."""
    source = (SCRIPTS / f"{script}.py").read_text(encoding="utf-8")
    registry = build_registry(ensure_seeded(root or DATA_DIR))
    events: list[ToolEvent] = []
    registry.subscribe(events.append)
    async with CodeMode(registry, executor=executor) as mode:
        registry.register(mode.as_tool())
        result = await registry.execute(ToolCall(
            call_id="demo", name="run_code", arguments={"code": source}))
    return DemoRun(result=result, events=tuple(events))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: run a script, print the report; exit 1 if the run failed."""
    parser = argparse.ArgumentParser(prog="python -m examples.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    names = sorted(p.stem for p in SCRIPTS.glob("*.py"))
    parser.add_argument("script", nargs="?", default="revenue_by_country", choices=names)
    parser.add_argument("--workspace", type=Path, default=None,
                        help=f"workspace directory (default: {DATA_DIR}, seeded if absent)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the script in this process instead of a worker process")
    args = parser.parse_args(argv)
    executor = None
    if args.in_process:
        from codemode.sandbox import InProcessExecutor

        executor = InProcessExecutor()
    run = anyio.run(lambda: demo(args.script, root=args.workspace, executor=executor))
    print(run.report())
    return 1 if run.result.is_error else 0


if __name__ == "__main__":
    sys.exit(main())
