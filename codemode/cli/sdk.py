"""``codemode sdk --tools MODULE:OBJECT -o DIR [--check]``: write or verify a generated SDK.

``OBJECT`` is a registry (anything with ``.specs()``), a CodeMode (its script-visible
tools), a tool or a list of tools, ``ToolSpec`` values or MCP-style dicts (or a callable
returning one of those). ``--check`` writes nothing and exits 1 when ``DIR`` is out of
date; a ``--tools`` target that cannot be loaded exits 3, like every ``codemode`` command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from codemode.errors import CodemodeError, ToolsLoadError
from sdk_gen import generate

from .parsing import Parser
from .targets import call_factory, resolve_target

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sdk_gen import SpecLike

__all__ = ["load_specs", "main_sdk"]


def load_specs(target: str) -> list[SpecLike]:
    """Resolve ``MODULE:OBJECT`` to a list of specs, the way every ``codemode`` subcommand
    resolves ``--tools`` (MODULE dotted, importable from the working directory, or a
    ``.py`` path)."""
    return _specs_of(resolve_target(target), target)


def _specs_of(obj: Any, target: str) -> list[SpecLike]:
    visible = getattr(obj, "visible_specs", None)
    if callable(visible):
        return list(visible())
    if hasattr(obj, "registry") and not hasattr(obj, "specs"):
        obj = obj.registry
    if hasattr(obj, "specs") and callable(obj.specs):
        obj = obj.specs()
    elif callable(obj) and not isinstance(obj, type) and not hasattr(obj, "spec"):
        return _specs_of(call_factory(target, obj), target)
    if hasattr(obj, "spec"):
        obj = [obj]
    if isinstance(obj, str | bytes) or not isinstance(obj, Iterable):
        raise ValueError(f"not a registry, CodeMode or list of tool specs: {type(obj).__name__}")
    return [item.spec if hasattr(item, "spec") else item for item in obj]


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="codemode sdk",
        description="Write the typed tool SDK (module, stub, prompt) for inspection.",
    )
    parser.add_argument("--tools", required=True, metavar="MODULE:OBJECT")
    parser.add_argument("-o", "--output", required=True, metavar="DIR")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if DIR is out of date; write nothing"
    )
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="draw a progress bar on stderr while typing the tools (default: when a terminal)",
    )
    return parser


class ProgressBar:
    """``progress(done, total)`` drawn on one line of ``stream``, redrawn every 2 %."""

    def __init__(self, stream: TextIO, *, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // max(total, 1)
        if percent // 2 == self._shown // 2 and done < total:
            return
        self._shown = percent
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        end = "\n" if done >= total else ""
        self.stream.write(f"\rcodemode sdk: [{bar}] {done}/{total} tools{end}")
        self.stream.flush()


def main_sdk(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``codemode sdk``; returns the process exit code."""
    args = _parser().parse_args(argv)
    try:
        specs = load_specs(args.tools)
    except ToolsLoadError as exc:
        print(f"codemode sdk: {exc}", file=sys.stderr)
        return 3
    except ValueError as exc:
        print(f"codemode sdk: {args.tools}: {exc}", file=sys.stderr)
        return 3
    show = sys.stderr.isatty() if args.progress is None else args.progress
    try:
        sdk = generate(specs)
        sdk.render_files(progress=ProgressBar(sys.stderr) if show and specs else None)
    except CodemodeError as exc:
        print(f"codemode sdk: {exc}", file=sys.stderr)
        return 1
    if args.check:
        stale = sdk.stale_files(args.output)
        if stale:
            listed = ", ".join(stale)
            print(f"codemode sdk: out of date in {args.output}: {listed}", file=sys.stderr)
            return 1
        print(f"codemode sdk: {args.output} is up to date")
        return 0
    for path in sdk.write(args.output):
        print(path)
    for warning in sdk.warnings:
        print(f"codemode sdk: warning: {warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main_sdk())
