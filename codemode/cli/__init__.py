"""The ``codemode`` command line: ``run``, ``check``, ``prompt`` and ``sdk`` (see docs/cli.md).

``commands`` parses and dispatches, ``targets`` resolves ``--tools MODULE:OBJECT``,
``sdk`` writes or checks a generated SDK. A new subcommand gets its own module here.
"""

from __future__ import annotations

from .commands import main as main

__all__ = ["main"]
