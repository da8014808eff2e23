"""``codemode sdk [--tools MODULE:OBJECT]... [--config FILE] -o DIR [--check]``: write or
verify a generated SDK.

``OBJECT`` is a registry (anything with ``.specs()``), a CodeMode (its script-visible
tools), a tool or a list of tools, ``ToolSpec`` values or MCP-style dicts (or a callable
returning one of those). ``--tools`` is repeatable and ``--config`` adds the tools of MCP
servers (started, listed and stopped), as for ``run``: the SDK is the one their scripts
see. ``--check`` writes nothing and exits 1 when ``DIR`` is out of date; tools that cannot
be loaded (a tool given twice, an MCP server that did not start) exit 3, an invalid
``--config`` 2, like every ``codemode`` command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from codemode.errors import CodemodeError, GatewayConfigError, ToolsLoadError
from sdk_gen import generate

from .parsing import Parser, positive_seconds
from .targets import call_factory, resolve_target

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sdk_gen import SpecLike

__all__ = ["load_specs", "main_sdk"]

EXIT_USAGE, EXIT_TOOLS = 2, 3


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


def _spec_name(spec: SpecLike) -> str:
    return str(spec["name"] if isinstance(spec, Mapping) else spec.name)


def _merged(sources: Sequence[tuple[str, list[SpecLike]]]) -> list[SpecLike]:
    """The specs of every source as one list; a name in two sources is a load error (the
    SDK would silently keep one of them)."""
    origin: dict[str, int] = {}
    merged: list[SpecLike] = []
    for number, (where, specs) in enumerate(sources):
        for spec in specs:
            name = _spec_name(spec)
            if origin.setdefault(name, number) != number:
                raise ToolsLoadError(f"tool {name!r} is in both {sources[origin[name]][0]} "
                                     f"and {where}: give each tool once")
            merged.append(spec)
    return merged


class _ConfigInvalid(Exception):
    """Internal: ``--config`` is not a valid MCP servers file (a usage error, exit 2)."""


async def _server_specs(config: str, startup_timeout: float) -> list[SpecLike]:
    """The script-visible specs of the MCP servers of ``config``: started, listed, stopped.
    A server that does not start is a load error (an SDK without its tools would look
    complete)."""
    from codemode.dispatch.registry import ToolRegistry
    from codemode.integrations.gateway import Gateway, load_config
    from codemode.sandbox import InProcessExecutor

    try:
        servers = load_config(config)
    except GatewayConfigError as exc:
        raise _ConfigInvalid(f"invalid config {config}: {exc}") from None
    gateway = Gateway(servers, registry=ToolRegistry(), executor=InProcessExecutor(),
                      startup_timeout=startup_timeout)
    async with gateway:
        failed = [status for status in gateway.status() if status.state != "up"]
        if failed:
            raise ToolsLoadError("MCP server(s) of --config failed to start: " + "; ".join(
                f"{status.name}: {status.error}" for status in failed))
        return list(gateway.mode.visible_specs())


def _all_specs(args: argparse.Namespace) -> list[SpecLike]:
    sources: list[tuple[str, list[SpecLike]]] = []
    for target in args.tools:
        try:
            sources.append((target, load_specs(target)))
        except ValueError as exc:
            raise ToolsLoadError(f"{target}: {exc}") from None
    if args.config:
        specs = anyio.run(_server_specs, args.config, args.startup_timeout)
        sources.append((args.config, specs))
    return _merged(sources)


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="codemode sdk",
        description="Write the typed tool SDK (module, stub, prompt) for inspection.",
    )
    parser.add_argument("--tools", metavar="MODULE:OBJECT", action="append", default=[],
                        help="the tools: a registry, CodeMode, tool, list of tools or specs, "
                             "or a zero-argument callable returning one; repeatable")
    parser.add_argument("--config", metavar="FILE",
                        help="MCP servers whose tools the SDK types (the file codemode "
                             "serve reads)")
    parser.add_argument("--startup-timeout", type=positive_seconds, default=30.0,
                        metavar="SECONDS",
                        help="seconds each MCP server of --config may take to start "
                             "(default 30)")
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
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.tools and not args.config:
        parser.error("no tools: give --tools MODULE:OBJECT and/or --config FILE")
    try:
        specs = _all_specs(args)
    except _ConfigInvalid as exc:
        print(f"codemode sdk: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ToolsLoadError as exc:
        print(f"codemode sdk: {exc}", file=sys.stderr)
        return EXIT_TOOLS
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
