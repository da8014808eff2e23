"""``raw_server.py`` (an MCP server speaking the raw protocol) as a ``codemode serve``
config: the upstream the serve tests connect to."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

PY = sys.executable
RAW = str(Path(__file__).resolve().parent / "raw_server.py")


def raw_config(log: Path) -> dict[str, Any]:
    """One upstream, ``raw``, that writes what it receives to ``log``."""
    return {"mcpServers": {"raw": {"command": PY, "args": [RAW, str(log)]}}}
