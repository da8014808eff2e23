"""The ``codemode`` command: run, check, prompt and sdk against a tools object.

``--tools MODULE:OBJECT`` names a ToolRegistry, a CodeMode, a list of tools,
or a zero-argument callable returning one of those; MODULE is a dotted module
name or a path to a ``.py`` file. It is repeatable, and ``--config FILE`` adds the tools
of MCP servers (the file ``codemode serve`` reads); with neither, scripts have no tools.

Exit codes: 0 success; 1 the script failed (runtime error); 2 bad usage (including
an unreadable script file and an invalid ``--config``); 3 the tools could not be loaded
(an MCP server that did not start included); 4 the script failed preflight (nothing ran);
5 a run limit tripped; 141 standard output was closed early (``| head``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio

from codemode.dispatch.registry import ToolRegistry
from codemode.errors import GatewayConfigError, ToolsLoadError
from codemode.mode.code_mode import CodeMode
from codemode.sandbox import InProcessExecutor, Limits, ScriptResult

from .parsing import Parser, positive_seconds, version
from .targets import load_all

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Sequence

__all__ = ["main"]

EXIT_OK, EXIT_SCRIPT, EXIT_USAGE, EXIT_TOOLS, EXIT_PREFLIGHT, EXIT_LIMIT = 0, 1, 2, 3, 4, 5
EXIT_PIPE = 141
"""Standard output closed before everything was written (128 + SIGPIPE, as ``yes | head``)."""


@contextlib.asynccontextmanager
async def _opened(args: argparse.Namespace) -> AsyncIterator[CodeMode]:
    """The CodeMode of ``--tools`` (any number, merged) and ``--config`` (MCP servers,
    started here and stopped on leaving); no tools at all is an empty registry (a script
    may compute without any). ``check`` and ``prompt`` run nothing: no worker pool boots."""
    loaded = load_all(args.tools)
    timeout = getattr(args, "timeout", None)
    limits = Limits(timeout=timeout) if timeout is not None else None
    executor: InProcessExecutor | None = None
    if getattr(args, "executor", "inprocess") == "inprocess":
        executor = InProcessExecutor()
    if not args.config:
        mode = loaded if isinstance(loaded, CodeMode) else CodeMode(
            loaded if loaded is not None else ToolRegistry(), limits=limits, executor=executor)
        try:
            yield mode
        finally:
            await mode.aclose()
        return
    from codemode.integrations.gateway import Gateway, load_config

    try:
        servers = load_config(args.config)
    except GatewayConfigError as exc:
        raise _ConfigInvalid(f"invalid config {args.config}: {exc}") from None
    if isinstance(loaded, CodeMode):
        gateway = Gateway(servers, mode=loaded, startup_timeout=args.startup_timeout)
    else:
        gateway = Gateway(servers, registry=loaded, executor=executor, limits=limits,
                          startup_timeout=args.startup_timeout)
    try:
        async with gateway:
            failed = [status for status in gateway.status() if status.state != "up"]
            if failed:
                raise ToolsLoadError("MCP server(s) of --config failed to start: " + "; ".join(
                    f"{status.name}: {status.error}" for status in failed))
            yield gateway.mode
    finally:
        if isinstance(loaded, CodeMode):  # the gateway closes only a mode it made
            await loaded.aclose()


class _ScriptUnreadable(Exception):
    """Internal: the script file could not be read (a usage error, exit 2)."""


class _ConfigInvalid(Exception):
    """Internal: ``--config`` is not a valid MCP servers file (a usage error, exit 2)."""


def _read_script(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise _ScriptUnreadable(f"cannot read script {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _ScriptUnreadable(
            f"cannot read script {path}: not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None


_CONTROLS: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters a terminal acts on (all but newline and tab): ESC and the C1 CSI
start escape sequences that move the cursor, retitle the window, set the clipboard."""


def _shown(text: str) -> str:
    """``text`` a script wrote (its output, an error message), safe for a terminal: each
    control character spelled as a ``\\xNN`` escape (``--json`` keeps the text exact)."""
    return _CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def _print_result(result: ScriptResult, as_json: bool) -> int:
    if as_json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2, default=str))
    else:
        if result.output:
            print("--- output ---")
            print(_shown(result.output.rstrip("\n")))
        print("--- calls ---")
        for record in result.calls:
            status = "ok" if record.ok else f"error: {record.error}"
            print(_shown(
                f"{record.index + 1:>3}. {record.name}({json.dumps(record.arguments)}) "
                f"{record.duration * 1000:.1f} ms {status}"
            ))
        if result.error is None:
            print("--- value ---")
            print(_shown(json.dumps(result.value, ensure_ascii=False, indent=2, default=str)))
        else:
            error = result.error
            where = f" (line {error.line})" if error.line else ""
            print(f"--- error ---\n{error.type}{where}: {_shown(error.message)}",
                  file=sys.stderr)
    if result.error is None:
        return EXIT_OK
    if result.error.type == "PreflightError":
        return EXIT_PREFLIGHT
    if result.error.limit is not None:
        return EXIT_LIMIT
    return EXIT_SCRIPT


async def _run(args: argparse.Namespace) -> int:
    script = _read_script(args.script)
    async with _opened(args) as mode:
        result = await mode.run(script)
    return _print_result(result, args.json)


async def _check(args: argparse.Namespace) -> int:
    script = _read_script(args.script)
    async with _opened(args) as mode:
        problems = mode.check(script)
    for problem in problems:
        print(f"{args.script}:{problem.line}:{problem.column}: {problem.message}")
    if not problems:
        print(f"{args.script}: ok")
    return EXIT_PREFLIGHT if problems else EXIT_OK


async def _prompt(args: argparse.Namespace) -> int:
    async with _opened(args) as mode:
        prompt = mode.prompt()
    print(prompt)
    return EXIT_OK


TOOLS_HELP: Final = ("the tools: a ToolRegistry, CodeMode, tool, list of tools, or a "
                     "zero-argument callable returning one (MODULE dotted or a .py path); "
                     "repeatable")
CONFIG_HELP: Final = ('MCP servers whose tools scripts call: {"mcpServers": {name: {command, '
                      'args, env} | {url, headers}}} (as for codemode serve)')


def _tool_sources(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tools", metavar="MODULE:OBJECT", action="append", default=[],
                        help=TOOLS_HELP)
    parser.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    parser.add_argument("--startup-timeout", type=positive_seconds, default=30.0,
                        metavar="SECONDS",
                        help="seconds each MCP server of --config may take to start "
                             "(default 30)")


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="codemode", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"codemode {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a script against tools")
    run.add_argument("script", help="script file, or - for stdin")
    _tool_sources(run)
    run.add_argument("--json", action="store_true", help="print the whole result as JSON")
    run.add_argument("--timeout", type=positive_seconds, help="wall-time limit in seconds (> 0)")
    run.add_argument("--executor", choices=("pool", "inprocess"), default="pool",
                     help="where the script runs: the sandboxed worker pool (default) or "
                          "in-process (trusted code only)")
    check = sub.add_parser("check", help="static preflight of a script (nothing runs)")
    check.add_argument("script", help="script file, or - for stdin")
    _tool_sources(check)
    prompt = sub.add_parser("prompt", help="print the model-facing prompt")
    _tool_sources(prompt)
    sub.add_parser(
        "sdk", help="write the generated SDK (see `codemode sdk --help`)", add_help=False
    )
    sub.add_parser(
        "serve", help="serve MCP servers and tools as one MCP server with run_code "
        "(see `codemode serve --help`)", add_help=False
    )
    sub.add_parser(
        "doctor", help="show the sandbox's kernel layers on this machine "
        "(see `codemode doctor --help`)", add_help=False
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``codemode`` console script."""
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # here, where a closed pipe can still be answered quietly
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_PIPE
    except KeyboardInterrupt:  # every subcommand: typing tools, starting servers, a run
        print("codemode: interrupted", file=sys.stderr)
        return 130
    return code


def _drop_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no real file (an embedding's stream)
        pass


def _main(argv: list[str]) -> int:
    if argv and argv[0] == "sdk":
        from .sdk import main_sdk

        return main_sdk(argv[1:])
    if argv and argv[0] == "serve":
        from .serve import main_serve

        return main_serve(argv[1:])
    if argv and argv[0] == "doctor":
        from .doctor import main_doctor

        return main_doctor(argv[1:])
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return anyio.run(_run, args)
        if args.command == "check":
            return anyio.run(_check, args)
        return anyio.run(_prompt, args)
    except ToolsLoadError as exc:
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_TOOLS
    except (_ScriptUnreadable, _ConfigInvalid) as exc:
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
