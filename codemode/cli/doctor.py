"""``codemode doctor``: what the sandbox's kernel layer does on this machine.

Starts one worker the way ``WorkerPoolExecutor`` does (``confinement="auto"``), reads
what it reported it applied and prints each layer, active or missing with the reason::

    codemode doctor [--strict] [--json]

Exit status: 0, or 1 under ``--strict`` when a layer is missing (or no worker started).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import TYPE_CHECKING

import anyio

from codemode.errors import SandboxError
from codemode.sandbox.executors.confine import landlock_abi
from codemode.sandbox.executors.pool import WorkerPoolExecutor

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codemode.sandbox.executors.confine import Confinement

__all__ = ["main_doctor"]


async def _probe() -> Confinement | None:
    async with WorkerPoolExecutor(size=1, confinement="auto", spare=False) as pool:
        await pool.start()
        return pool.confinement


def _print(confinement: Confinement) -> None:
    release = os.uname()
    print(f"kernel {release.sysname} {release.release} ({release.machine}), "
          f"Landlock ABI {landlock_abi()}, host uid {os.geteuid()}")
    width = max(len(name) for name in confinement.layers)
    for name, layer in confinement.layers.items():
        status = "active " if layer.active else "MISSING"
        print(f"  {name:<{width}}  {status}  {layer.detail}")
    if confinement.complete:
        print("all kernel layers active: confinement='strict' will start")
    else:
        print(f"missing: {', '.join(confinement.missing)} "
              "(confinement='auto' runs with a warning; 'strict' refuses)")


def main_doctor(argv: Sequence[str]) -> int:
    """``codemode doctor`` (``argv`` without the subcommand)."""
    parser = argparse.ArgumentParser(prog="codemode doctor", description=__doc__.split("\n")[0])
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 unless every kernel layer is active")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    sandbox_log = logging.getLogger("codemode.sandbox")
    level = sandbox_log.level
    sandbox_log.setLevel(logging.ERROR)  # the table says it; the level is put back after
    try:
        confinement = anyio.run(_probe)
    except SandboxError as exc:
        print(f"codemode doctor: no sandbox worker started: {exc}", file=sys.stderr)
        return 1
    finally:
        sandbox_log.setLevel(level)
    if confinement is None:
        print("codemode doctor: the worker did not report its confinement", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(confinement.to_json(), indent=2))
    else:
        _print(confinement)
    return 1 if args.strict and not confinement.complete else 0
