"""The environment a ``codemode serve`` a test spawns needs to import this checkout's
``codemode``: the MCP SDK's stdio client passes the child only a few variables (``HOME``,
``PATH`` ...), so without ``PYTHONPATH`` a worktree's test served the installed copy."""

from __future__ import annotations

from pathlib import Path

ENV = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}
