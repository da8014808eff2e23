"""``codemode sdk --tools MODULE:OBJECT -o DIR [--check]``: write or verify a generated SDK.

``OBJECT`` is a registry (anything with ``.specs()``), a CodeMode (anything with
``.registry``), or a list of ``ToolSpec`` values / MCP-style dicts (or a callable returning
one of those). ``--check`` writes nothing and exits 1 when ``DIR`` is out of date.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from codemode.errors import CodemodeError

from ._generate import generate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._specs import SpecLike

__all__ = ["load_specs", "main_sdk"]


def load_specs(target: str) -> list[SpecLike]:
    """Resolve ``MODULE:OBJECT`` (dotted attribute path allowed) to a list of specs.

    The working directory is importable while resolving, as with ``python -m``.
    """
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected MODULE:OBJECT, got {target!r}")
    cwd = os.getcwd()
    added = cwd not in sys.path and "" not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    finally:
        if added:
            sys.path.remove(cwd)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return _specs_of(obj)


def _specs_of(obj: Any) -> list[SpecLike]:
    if hasattr(obj, "registry") and not hasattr(obj, "specs"):
        obj = obj.registry
    if hasattr(obj, "specs") and callable(obj.specs):
        obj = obj.specs()
    elif callable(obj) and not isinstance(obj, type):
        obj = obj()
    if isinstance(obj, str | bytes) or not isinstance(obj, Iterable):
        raise ValueError(f"not a registry, CodeMode or list of tool specs: {type(obj).__name__}")
    return list(obj)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codemode sdk",
        description="Write the typed tool SDK (module, stub, prompt) for inspection.",
    )
    parser.add_argument("--tools", required=True, metavar="MODULE:OBJECT")
    parser.add_argument("-o", "--output", required=True, metavar="DIR")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if DIR is out of date; write nothing"
    )
    return parser


def main_sdk(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``codemode sdk``; returns the process exit code."""
    args = _parser().parse_args(argv)
    try:
        sdk = generate(load_specs(args.tools))
    except (ImportError, AttributeError, ValueError, CodemodeError) as exc:
        print(f"codemode sdk: {exc}", file=sys.stderr)
        return 2
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
